"""Cold PRs of the cache shared among processes (analysis/stored.py): the same analyses, memo entries,
verdicts and CLI output as one process gives, whoever analysed which chunk; a helper that cannot start
or dies costs speed, never results. Real spawned processes over a real SQLite cache (the bundled sample)."""

from __future__ import annotations

import json
import os
import pickle
from pathlib import Path

import pytest

from workbench.analysis import stored
from workbench.analysis.conventions import load_conventions
from workbench.analysis.memo import AnalysisMemo, refresh_cross_refs
from workbench.analysis.stored import stored_analyses, stored_verdicts
from workbench.cli import main
from workbench.sources.sample import load_sample
from workbench.store import Store

REPO = "example-org/minirl"


@pytest.fixture(scope="module")
def sample_cache(tmp_path_factory):
    path = tmp_path_factory.mktemp("shared") / "cache"
    with Store(path) as store:
        load_sample(store)
    return path


@pytest.fixture
def small_chunks(monkeypatch):
    """Sharing from a handful of PRs on, in chunks of two: the sample's PRs make many chunks."""
    monkeypatch.setattr(stored, "MIN_PRS_PER_WORKER", 1)
    monkeypatch.setattr(stored, "WORKER_CHUNK", 2)


def _entries(memo: AnalysisMemo, known_prs: dict | None = None) -> dict:
    """Entries as comparable values: the pickled Analysis by what it holds, not by its bytes, as a hit
    serves it (resolved against the cache's PR list)."""
    return {
        n: (e[0], refresh_cross_refs(memo.load_entry(e), known_prs).to_dict(), e[2], e[3])
        for n, e in memo.entries.items()
    }


def _analysed(store, numbers, conv, workers):
    memo = AnalysisMemo(None, conv)
    known = store.known_prs(REPO)
    out = [a.to_dict() for a in stored_analyses(store, REPO, numbers, memo, known_prs=known, workers=workers)]
    return out, memo


def test_shared_analysis_equals_one_process(sample_cache, small_chunks):
    conv = load_conventions(REPO)
    with Store(sample_cache, create=False) as store:
        numbers = [int(n) for n in store.prs(REPO)["number"]]
        assert len(numbers) >= 10  # enough for several chunks
        known = store.known_prs(REPO)
        alone, alone_memo = _analysed(store, numbers, conv, 1)
        shared, shared_memo = _analysed(store, numbers, conv, 3)
    assert [a["number"] for a in shared] == numbers
    assert shared == alone
    assert _entries(shared_memo, known) == _entries(alone_memo, known)
    assert shared_memo.misses == len(numbers)


def test_a_helper_computes_the_entries_this_process_would(sample_cache):
    """What a helper runs, run here: its entries are the memo's own (fingerprint, analysis, stamp key,
    summary), made without the cache's PR list as a memo entry may be, so an adopted entry serves later
    runs like one computed in this process."""
    conv = load_conventions(REPO)
    with Store(sample_cache, create=False) as store:
        numbers = [int(n) for n in store.prs(REPO)["number"]][:4]
        stamps = store.pr_stamps(REPO, numbers)
        here = AnalysisMemo(None, conv)
        for record in store.prs_records(REPO, numbers):
            here.analyze(record, stamp=stamps[record.number])
    try:
        stored._start_worker(str(sample_cache / "workbench.db"), REPO, pickle.loads(pickle.dumps(conv)))
        entries, problems = stored._worker_batch(numbers, stamps, False)
    finally:
        stored._worker = None
    helper = AnalysisMemo(None, conv)
    helper.adopt(entries)
    assert problems == [] and _entries(helper) == _entries(here)
    assert helper.stamped(REPO, stamps).keys() == set(numbers)  # found by stamp next time


def test_shared_verdicts_equal_one_process(sample_cache, small_chunks):
    conv = load_conventions(REPO)
    with Store(sample_cache, create=False) as store:
        numbers = [int(n) for n in store.prs(REPO)["number"]]
        alone = stored_verdicts(store, REPO, numbers, AnalysisMemo(None, conv), workers=1)
        shared = stored_verdicts(store, REPO, numbers, AnalysisMemo(None, conv), workers=2)
    assert shared == alone and alone[1] == [] and len(alone[0]) == len(numbers)


class _Unreachable:
    """A store whose helpers cannot open it (its path names no database); this process reads fine."""

    def __init__(self, store: Store, path):
        self._store, self.path = store, path

    def __getattr__(self, name):
        return getattr(self._store, name)


def test_helpers_that_cannot_start_cost_speed_not_results(sample_cache, small_chunks, tmp_path):
    conv = load_conventions(REPO)
    with Store(sample_cache, create=False) as store:
        numbers = [int(n) for n in store.prs(REPO)["number"]]
        alone, _ = _analysed(store, numbers, conv, 1)
        broken = _Unreachable(store, tmp_path / "nowhere" / "workbench.db")
        memo = AnalysisMemo(None, conv)
        known = store.known_prs(REPO)
        shared = [
            a.to_dict() for a in stored_analyses(broken, REPO, numbers, memo, known_prs=known, workers=2)
        ]
    assert shared == alone and memo.misses == len(numbers)


def test_no_processes_on_this_system_means_one(sample_cache, small_chunks, monkeypatch):
    def refused(*a, **k):
        raise OSError("no semaphores here")

    monkeypatch.setattr(stored, "ProcessPoolExecutor", refused)
    conv = load_conventions(REPO)
    with Store(sample_cache, create=False) as store:
        numbers = [int(n) for n in store.prs(REPO)["number"]]
        alone, _ = _analysed(store, numbers, conv, 1)
        shared, _ = _analysed(store, numbers, conv, 2)
    assert shared == alone


def test_cli_jobs(sample_cache, small_chunks, tmp_path, capsys, monkeypatch):
    import shutil

    cache = tmp_path / "cache"
    shutil.copytree(sample_cache, cache)
    outputs = []
    for jobs in ("1", "2"):
        shutil.rmtree(cache / "analysis-memo", ignore_errors=True)  # cold, both times
        assert main(["--cache", str(cache), "analyze", REPO, "--format", "json", "--jobs", jobs]) == 0
        outputs.append(json.loads(capsys.readouterr().out))
    assert outputs[0] == outputs[1] and len(outputs[0]) >= 10
    with pytest.raises(SystemExit):
        main(["--cache", str(cache), "analyze", REPO, "--jobs", "0"])
    assert "0 is not a positive number" in capsys.readouterr().err


def test_a_script_without_the_main_guard_still_finishes(sample_cache, tmp_path):
    """A spawned helper imports the caller's script; one without `if __name__ == "__main__"` kills its
    helper while it starts. The caller must go on alone, not wait on it forever."""
    import subprocess
    import sys
    import textwrap

    script = tmp_path / "unguarded.py"
    script.write_text(
        textwrap.dedent(
            f"""
            from workbench.analysis import stored
            from workbench.analysis.conventions import load_conventions
            from workbench.analysis.memo import AnalysisMemo, refresh_cross_refs
            from workbench.store import Store

            stored.MIN_PRS_PER_WORKER, stored.WORKER_CHUNK = 1, 2
            store = Store({str(sample_cache)!r}, create=False)
            numbers = [int(n) for n in store.prs({REPO!r})["number"]]
            memo = AnalysisMemo(None, load_conventions({REPO!r}))
            known = store.known_prs({REPO!r})
            got = list(stored.stored_analyses(store, {REPO!r}, numbers, memo, known_prs=known, workers=2))
            print("analysed", len(got), "of", len(numbers))
            """
        )
    )
    root = str(Path(__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))}
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120, env=env)
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("analysed")]
    assert done.returncode == 0, done.stderr[-2000:]
    n = lines[-1].split()[1]
    assert lines[-1] == f"analysed {n} of {n}" and int(n) >= 10


def test_trend_verdicts_shared_equal_one_process(sample_cache, small_chunks, tmp_path):
    """`workbench report --jobs`: the trends' verdict frame is the same whoever analysed the PRs."""
    import shutil

    from workbench.trends.load import compute_verdicts

    frames = []
    for workers in (1, 2):
        cache = tmp_path / f"cache{workers}"
        shutil.copytree(sample_cache, cache)
        with Store(cache, create=False) as store:
            numbers = [int(n) for n in store.prs(REPO)["number"]]
            frame, problems = compute_verdicts(store, REPO, numbers, workers)
        assert problems == []
        frames.append(frame.sort_values("number").reset_index(drop=True))
    assert frames[0].equals(frames[1]) and len(frames[0]) == len(numbers)


def test_an_interrupted_run_keeps_what_it_analysed(sample_cache, tmp_path, monkeypatch):
    """Ctrl-C during a long cold run: the PRs analysed so far are in the memo, and the rerun starts
    after them."""
    import shutil

    monkeypatch.setattr(stored, "READ_BATCH", 4)  # a long run reads and analyses batch by batch

    from workbench.analysis.stored import analyze_cached

    cache = tmp_path / "cache"
    shutil.copytree(sample_cache, cache)

    def interrupted_after_5(items, total):
        for i, item in enumerate(items):
            if i == 5:
                raise KeyboardInterrupt
            yield item

    with Store(cache, create=False) as store:
        numbers = [int(n) for n in store.prs(REPO)["number"]]
        with pytest.raises(KeyboardInterrupt):
            analyze_cached(store, REPO, numbers, cache=cache, progress=interrupted_after_5)
        memo = AnalysisMemo.for_repo(REPO, load_conventions(REPO, cache=cache), cache)
        kept = len(memo.entries)
        assert 5 <= kept < len(numbers)
        list(stored_analyses(store, REPO, numbers, memo))
        assert (memo.hits, memo.misses) == (kept, len(numbers) - kept)


def test_interrupted_trend_verdicts_keep_what_was_analysed(sample_cache, tmp_path, monkeypatch):
    import shutil

    from workbench.analysis import memo as analysis_memo
    from workbench.trends.load import compute_verdicts

    cache = tmp_path / "cache"
    shutil.copytree(sample_cache, cache)
    real, calls = analysis_memo.analyze, []

    def interrupted_at_6(record, **kw):
        calls.append(record.number)
        if len(calls) == 6:
            raise KeyboardInterrupt
        return real(record, **kw)

    monkeypatch.setattr(analysis_memo, "analyze", interrupted_at_6)
    with Store(cache, create=False) as store:
        numbers = [int(n) for n in store.prs(REPO)["number"]]
        with pytest.raises(KeyboardInterrupt):
            compute_verdicts(store, REPO, numbers)
    memo = AnalysisMemo.for_repo(REPO, load_conventions(REPO, cache=cache), cache)
    assert sorted(memo.entries) == sorted(calls[:5])


@pytest.mark.parametrize("workers", [1, 2])
def test_a_number_asked_twice_is_answered_twice(sample_cache, small_chunks, workers):
    conv = load_conventions(REPO)
    with Store(sample_cache, create=False) as store:
        numbers = [int(n) for n in store.prs(REPO)["number"]]
        twice = numbers + numbers[:3]
        got, memo = _analysed(store, twice, conv, workers)
        alone, _ = _analysed(store, numbers, conv, 1)
        summaries, _ = stored_verdicts(store, REPO, twice, AnalysisMemo(None, conv), workers=workers)
    assert [a["number"] for a in got] == twice and got[: len(numbers)] == alone
    assert got[len(numbers) :] == alone[:3] and memo.misses == len(numbers)
    assert [s.number for s in summaries] == twice
