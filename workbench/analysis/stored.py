"""Analyses of the PRs in the cache: from the memo when the stored PR is unchanged, else read in bulk and
analysed, by several processes when there are many.

`store` is a workbench Store (duck-typed: path, pr_stamps, prs_records, known_prs), read, never written.

A cold run (a history's first analysis, new heuristics, new conventions) analyses every PR, and on one
core that is most of its time. With `workers` > 1, this process shares the cold PRs with `workers` - 1
spawned helper processes (concurrent.futures): each opens the cache itself, reads its chunks and returns
memo entries (fingerprint, pickled Analysis, stamp key, verdict summary). Entries are what the memo
keeps anyway, so nothing is pickled twice, and a verdict needs no unpickling. Spawned, not forked: a
caller may hold threads (a progress bar's monitor, a Jupyter kernel's), which a fork copies in whatever
state they are. Like any spawning code, a script passing `workers` > 1 needs the
`if __name__ == "__main__":` guard; without it the helpers die while starting and this process does the
work alone.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any

from .conventions import Conventions, load_conventions
from .memo import AnalysisMemo, VerdictSummary, refresh_cross_refs
from .model import Analysis

# PRs per bulk read in this process (as Store.records does).
READ_BATCH = 400
# PRs per chunk when processes share them: small enough that they finish together and a progress bar
# moves, large enough that handing one over costs little.
WORKER_CHUNK = 50
# A helper starts a Python and imports the analysis (~0.4 s): each process must have this many cold PRs
# to analyse (~1.5 ms each) for a helper to pay for itself; fewer are analysed in this process alone.
MIN_PRS_PER_WORKER = 300


def available_cores() -> int:
    """The cores this process may run on (a container's or taskset's limit, not the machine's)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


@dataclass
class _Batch:
    """Cold PRs analysed: number -> its Analysis, or None when a worker computed it (its memo entry
    holds it); and the PRs that failed, one line each (only when failures are tolerated)."""

    done: dict[int, Analysis | None]
    problems: list[str]


def _analyse_records(
    records: Iterable[Any], memo: AnalysisMemo, known_prs: dict | None, stamps: dict, tolerant: bool
) -> _Batch:
    batch = _Batch({}, [])
    for record in records:
        try:
            a = memo.analyze(record, known_prs=known_prs, stamp=stamps.get(record.number))
        except Exception as e:  # noqa: BLE001 - one odd PR costs its own verdict, not everyone's
            if not tolerant:
                raise
            batch.problems.append(f"#{record.number}: {type(e).__name__}: {e}")
            continue
        batch.done[record.number] = a
    return batch


def _cold_batches(
    store: Any,
    repo: str,
    cold: list[int],
    memo: AnalysisMemo,
    stamps: dict,
    known_prs: dict | None,
    workers: int,
    tolerant: bool,
) -> Iterator[_Batch]:
    """The cold PRs analysed batch by batch, in order; each batch's entries are in the memo."""

    def here(chunk: list[int]) -> _Batch:
        return _analyse_records(store.prs_records(repo, chunk), memo, known_prs, stamps, tolerant)

    helpers = min(workers, len(cold) // MIN_PRS_PER_WORKER) - 1
    pool = _start_helpers(helpers, store, repo, memo) if helpers > 0 else None
    if pool is None:
        for i in range(0, len(cold), READ_BATCH):
            yield here(cold[i : i + READ_BATCH])
        return
    # This process works too. It hands the helpers chunks in order while each has fewer than two in
    # hand (one running, one queued: never idle, never far ahead), and takes the next chunk itself
    # otherwise: its share is never pickled across, and one process fewer starts. Batches go out in
    # order, each once every chunk before it is done. No task is ever cancelled (cancelling races
    # with a helper's death in Python 3.11's pool, and can leave a result never set).
    chunks = [cold[i : i + WORKER_CHUNK] for i in range(0, len(cold), WORKER_CHUNK)]
    tasks: dict[int, Future] = {}
    mine: dict[int, _Batch] = {}

    def adopted(i: int) -> _Batch:
        if i in mine:
            return mine.pop(i)
        try:
            entries, problems = tasks.pop(i).result()
        except BrokenProcessPool:  # a helper died or could not start: its chunk is done here
            return here(chunks[i])
        memo.adopt(entries)
        return _Batch(dict.fromkeys(entries), problems)

    taken = sent = 0
    try:
        while sent < len(chunks):
            while taken < len(chunks) and sum(not t.done() for t in tasks.values()) < 2 * helpers:
                try:
                    chunk = chunks[taken]
                    tasks[taken] = pool.submit(
                        _worker_batch, chunk, {n: stamps.get(n) for n in chunk}, tolerant
                    )
                except BrokenProcessPool:  # no helper left: the rest is done here
                    break
                taken += 1
            if taken < len(chunks):
                mine[taken] = here(chunks[taken])
                taken += 1
            while sent < taken and (sent in mine or tasks[sent].done() or taken == len(chunks)):
                yield adopted(sent)
                sent += 1
    finally:
        pool.shutdown()  # waits for the few chunks in the helpers' hands, if the caller stopped early


def _start_helpers(n: int, store: Any, repo: str, memo: AnalysisMemo) -> Executor | None:
    """A pool of `n` spawned helper processes, or None where this system cannot start one (no
    semaphores in a sandbox, no `spawn`): the work is then done in this process alone."""
    import multiprocessing

    try:
        return ProcessPoolExecutor(
            n,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_start_worker,
            # small: a spawned process reads these before it has imported anything, and a parent whose
            # helper dies then (a script without the `__main__` guard) must not block on a full pipe
            initargs=(str(store.path), repo, memo.conventions),
        )
    except (OSError, ImportError, NotImplementedError, ValueError):
        return None


# A helper's state, set once when it starts: the cache it reads and the conventions. It analyses without
# the cache's PR list (`known_prs`): like every memo hit, its analyses are resolved against the caller's.
_worker: tuple[Any, str, Conventions | None] | None = None


def _start_worker(db: str, repo: str, conventions: Conventions | None) -> None:
    global _worker
    from ..store import Store

    _worker = (Store(db, create=False), repo, conventions)


def _worker_batch(numbers: list[int], stamps: dict, tolerant: bool) -> tuple[dict[int, tuple], list[str]]:
    store, repo, conventions = _worker
    memo = AnalysisMemo(None, conventions)  # a fresh one per chunk: only this chunk's entries go back
    batch = _analyse_records(store.prs_records(repo, numbers), memo, None, stamps, tolerant)
    return memo.entries, batch.problems


def stored_analyses(
    store: Any,
    repo: str,
    numbers: Iterable[int],
    memo: AnalysisMemo,
    *,
    known_prs: dict | None = None,
    workers: int = 1,
) -> Iterator[Analysis]:
    """The Analysis of each cached PR in `numbers`, in that order. A PR whose stored stamp matches its
    entry is neither read nor fingerprinted; the others are read in bulk and analysed (by up to
    `workers` processes: see the module's note), or found by fingerprint."""
    numbers = [int(n) for n in numbers]
    stamps = store.pr_stamps(repo, numbers)
    current = memo.stamped(repo, stamps)
    cold = list(dict.fromkeys(n for n in numbers if n not in current))  # a number asked twice is read once
    batches = _cold_batches(store, repo, cold, memo, stamps, known_prs, workers, tolerant=False)
    ready: dict[int, Analysis | None] = {}
    try:
        for n in numbers:
            entry = current.get(n)
            if entry is not None:
                a = memo.load_entry(entry)
                if a is None:  # an unreadable pickle: analyse the PR again
                    a = memo.analyze(
                        store.prs_records(repo, [n])[0], known_prs=known_prs, stamp=stamps.get(n)
                    )
                else:
                    memo.hits += 1
                    a = refresh_cross_refs(a, known_prs)
                yield a
                continue
            while n not in ready:
                ready.update(next(batches).done)
            a = ready[n]
            # a helper's analysis was made without the cache's PR list: resolved against it here
            yield a if a is not None else refresh_cross_refs(memo.load_entry(memo.entries[n]), known_prs)
    finally:
        batches.close()


def stored_verdicts(
    store: Any, repo: str, numbers: Iterable[int], memo: AnalysisMemo, *, workers: int = 1
) -> tuple[list[VerdictSummary], list[str]]:
    """(verdict, audience and minutes of each cached PR in `numbers`; problems). Entries whose stamp
    matches are answered from the memo without unpickling; a PR whose analysis fails costs its own
    verdict (named in the problems), not the others'. No `known_prs`: they only name the PRs a
    cross-reference points at, which no verdict reads (and every hit re-resolves them)."""
    numbers = [int(n) for n in numbers]
    stamps = store.pr_stamps(repo, numbers)
    current = memo.stamped(repo, stamps)
    out = {n: VerdictSummary(n, *current[n][3]) for n in numbers if n in current}
    memo.hits += len(out)
    cold = list(dict.fromkeys(n for n in numbers if n not in out))
    problems: list[str] = []
    for batch in _cold_batches(store, repo, cold, memo, stamps, None, workers, tolerant=True):
        for n in batch.done:
            out[n] = VerdictSummary(n, *memo.entries[n][3])
        problems += batch.problems
    return [out[n] for n in numbers if n in out], problems


@dataclass
class CachedAnalyses:
    """Analyses of cached PRs, in the order asked for; `note` says why the memo could not be saved."""

    analyses: list[Analysis]
    note: str | None = None


def analyze_cached(
    store: Any,
    repo: str,
    numbers: Iterable[int],
    *,
    cache: Any = None,
    conventions: str | None = None,
    progress: Callable[[Iterable[Any], int], Iterable[Any]] | None = None,
    workers: int = 1,
) -> CachedAnalyses:
    """Analyse cached PRs of `repo`; unchanged PRs come from the memo beside the cache (memo.py), so
    analysis itself stays pure. `progress(iterable, total)` may wrap the records (a progress bar);
    `workers`: how many processes may share the cold PRs (see the module's note)."""
    numbers = [int(n) for n in numbers]
    known = store.known_prs(repo)
    conv = load_conventions(repo, conventions, cache=cache)
    memo = AnalysisMemo.for_repo(repo, conv, cache)
    found: Iterable[Analysis] = stored_analyses(store, repo, numbers, memo, known_prs=known, workers=workers)
    if progress is not None:
        found = progress(found, len(numbers))
    with memo.kept_if_interrupted():
        analyses = list(found)
    try:
        memo.save()
    except OSError as e:  # a read-only cache still answers; the next run analyses again
        return CachedAnalyses(analyses, f"analysis memo not saved ({e})")
    return CachedAnalyses(analyses)


__all__ = [
    "CachedAnalyses",
    "analyze_cached",
    "available_cores",
    "stored_analyses",
    "stored_verdicts",
]
