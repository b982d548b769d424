"""Headless drafting: `workbench draft` / `workbench digest`, and `draft_many` for notebooks.

The one rule that matters: a re-run never overwrites a brief a person edited. A brief whose latest
version was saved by a person (source "human") or marked final is left alone, whatever the flags;
a machine draft is redrafted only with --force (or when --llm replaces an offline draft). Saves name
the version they replace (`base_version`), so an edit made meanwhile in a notebook wins.

With --llm, PRs go to the model a few at a time (WORKBENCH_LLM_CONCURRENCY, default 3); after
WORKBENCH_LLM_BREAKER (default 3) PRs in a row failed, the server is not called again in this run and
the rest get the offline draft. Each request waits at most WORKBENCH_LLM_TIMEOUT seconds (default 120,
a hung stream included) and is retried WORKBENCH_LLM_RETRIES times (default 2), so one PR costs at most
(retries + 1) x timeout. The summary counts "by the model / fell back offline / kept"; the command
exits 1 when any PR fell back, so a script notices a run where the model never answered.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from typing import Any

from ..brief import check_lang, render_brief
from ..config import WorkbenchError, llm_settings
from ..store import StaleEditError, Store
from ..timespan import since_iso
from .context import DEFAULT_BUDGET, Example, build_context
from .offline import draft_offline


def _conventions(repo: str, store: Store):
    try:
        from ..analysis.conventions import load_conventions

        return load_conventions(repo, cache=store.path.parent)
    except WorkbenchError:
        raise
    except Exception:  # a repository without conventions drafts with the defaults
        return None


def _analyze(record, conv, known):
    from ..analysis.pipeline import analyze

    return analyze(record, conventions=conv, known_prs=known)


def final_examples(store: Store, repo: str, conv=None, *, limit: int = 20) -> list[Example]:
    """The team's final briefs as few-shot examples, with the areas of the PR each one describes."""
    try:
        df = store.briefs(repo)
    except WorkbenchError:
        return []
    out: list[Example] = []
    for n in sorted((int(x) for x in df[df["is_final"] == 1]["number"]), reverse=True):
        latest = store.latest_brief(repo, n)
        if latest is None or not latest.is_final:
            continue
        areas = latest.meta.get("areas")
        if areas is None:
            try:
                areas = _analyze(store.pr(repo, n), conv, None).areas
            except WorkbenchError:
                areas = []
        out.append(Example(number=n, text=latest.text, areas=list(areas), repo=repo))
        if len(out) >= limit:
            break
    return out


def _selection(store: Store, repo: str, numbers: Iterable[int] | None, since: str | None) -> list[int]:
    df = store.prs(repo, numbers=list(numbers) if numbers else None, since=since)
    found = [int(x) for x in df["number"]]
    if numbers:
        missing = sorted(set(int(n) for n in numbers) - set(found))
        if missing and not since:
            raise WorkbenchError(
                f"{repo}: PR(s) {', '.join('#' + str(n) for n in missing)} not in the cache: "
                f"run `workbench sync {repo} --number {' '.join(map(str, missing))}`"
            )
        order = {int(n): i for i, n in enumerate(numbers)}
        found.sort(key=lambda n: order.get(n, 0))
    return found


@dataclass
class PRDraft:
    """What happened to one PR in a batch."""

    number: int
    outcome: str  # model | fallback | offline | kept | shown
    action: str  # the one line a person reads, e.g. "drafted (llm)", "kept: edited by a person"
    version: int | None = None
    error: str | None = None  # why the model's draft is missing (outcome "fallback")
    tokens: int | None = None  # the context's size (outcome "shown")
    left_out: list[str] = field(default_factory=list)  # files the model would not see (outcome "shown")
    context: str | None = None  # the rendered messages (outcome "shown")


@dataclass
class DraftSummary:
    repo: str
    prs: list[PRDraft]
    breaker_open: bool = False  # the server failed `breaker` PRs in a row: the rest were not sent

    def count(self, outcome: str) -> int:
        return sum(1 for p in self.prs if p.outcome == outcome)

    @property
    def fell_back(self) -> int:
        return self.count("fallback")

    def line(self) -> str:
        """'3 by the model, 1 fell back offline, 2 kept' (only the parts that happened)."""
        parts = [
            (self.count("model"), "by the model"),
            (self.fell_back, "fell back offline"),
            (self.count("offline"), "drafted offline"),
            (self.count("kept"), "kept"),
            (self.count("shown"), "contexts shown"),
        ]
        text = ", ".join(f"{n} {what}" for n, what in parts if n) or "no PRs selected"
        return text + (
            "; the server failed too often in a row, the rest were not sent" if self.breaker_open else ""
        )


class Breaker:
    """Stops calling a server after `limit` consecutive PRs failed: a dead or hung server then costs
    `limit` PRs' worth of timeouts, not every PR's. Shared by the batch's threads."""

    def __init__(self, limit: int):
        self.limit = max(1, limit)
        self.failures = 0
        self._lock = threading.Lock()

    @property
    def open(self) -> bool:
        return self.failures >= self.limit

    def record(self, ok: bool) -> None:
        with self._lock:
            self.failures = 0 if ok else self.failures + 1


def draft_many(
    store: Store,
    repo: str,
    numbers: Iterable[int] | None = None,
    *,
    since: str | None = None,
    llm: bool = False,
    lang: str | None = None,
    budget: int | None = None,
    force: bool = False,
    progress: bool = True,
    settings=None,
    show_context: bool = False,
    drafter=None,
    concurrency: int | None = None,
    seed: int | None = None,
) -> DraftSummary:
    """Draft briefs for a selection of cached PRs.

    Model calls run `concurrency` at a time (default: the settings', 3); after `settings.breaker`
    consecutive failures the remaining PRs are not sent and get the offline draft. Saving stays on
    this thread (one SQLite connection). `seed` fixes the fence tag of shown contexts (golden files)."""
    from tqdm.auto import tqdm

    since = since_iso(since)
    nums = _selection(store, repo, numbers, since)
    conv = _conventions(repo, store)
    lang = check_lang(lang or getattr(conv, "lang", None) or "zh")
    budget = int(budget or DEFAULT_BUDGET)
    known = store.known_prs(repo)
    examples = final_examples(store, repo, conv) if (llm or show_context) else []
    if llm and drafter is None:
        from .llm import LLMDrafter

        settings = settings or llm_settings()
        if not settings.configured:
            raise WorkbenchError(f"--llm: {settings.why_not()}")
        drafter = LLMDrafter(settings, budget=budget, examples=examples)
    settings = settings or getattr(drafter, "settings", None)
    workers = max(1, int(concurrency or getattr(settings, "concurrency", 3)))
    breaker = Breaker(int(getattr(settings, "breaker", 3)))

    summary = DraftSummary(repo, [])
    bar = tqdm(
        total=len(nums),
        desc=f"draft {repo}",
        unit="PR",
        disable=not progress or show_context,
        file=sys.stderr,
    )

    def done(row: PRDraft) -> None:
        summary.prs.append(row)
        bar.update(1)
        bar.set_postfix_str(
            f"model {summary.count('model')} · fell back {summary.fell_back} · kept {summary.count('kept')}"
            + (" · server off (breaker)" if breaker.open else "")
        )

    jobs = []  # (record, analysis, latest) for the model
    for n in nums:
        rec = store.pr(repo, n)
        analysis = _analyze(rec, conv, known)
        if show_context:
            ctx = build_context(rec, analysis, lang=lang, budget=budget, examples=examples, seed=seed)
            done(PRDraft(n, "shown", "shown", tokens=ctx.tokens, left_out=ctx.left_out, context=ctx.render()))
            continue
        latest = store.latest_brief(repo, n)
        if latest is not None and (latest.source == "human" or latest.is_final):
            why = "kept: edited by a person" if latest.source == "human" else "kept: final"
            done(PRDraft(n, "kept", why, latest.version))
            continue
        if latest is not None and not force and not (llm and latest.source == "offline"):
            done(PRDraft(n, "kept", "kept: a draft exists (use --force to redraft)", latest.version))
            continue
        if llm:
            jobs.append((rec, analysis, latest))
        else:
            done(_save(store, rec, analysis, latest, draft_offline(rec, analysis, lang), lang, {}))

    def call(job):
        rec, analysis, _latest = job
        if breaker.open:
            from .llm import DraftResult

            why = f"not sent: the server failed {breaker.limit} PRs in a row (check it, then rerun)"
            return job, DraftResult(None, f"{why}; the offline draft is kept", {"error": why}, None)
        res = drafter.draft(rec, analysis, lang=lang)
        breaker.record(res.brief is not None)
        return job, res

    with ThreadPoolExecutor(max_workers=workers) as pool:
        for fut in as_completed([pool.submit(call, job) for job in jobs]):
            (rec, analysis, latest), res = fut.result()
            meta = dict(res.meta)
            if res.brief is not None:
                done(_save(store, rec, analysis, latest, res.brief, lang, meta))
                continue
            if latest is not None:
                done(
                    PRDraft(
                        rec.number,
                        "fallback",
                        "kept: the model failed, the existing draft stays",
                        latest.version,
                        res.error,
                    )
                )
                continue
            meta["llm_error"] = res.error
            row = _save(
                store, rec, analysis, latest, res.offline or draft_offline(rec, analysis, lang), lang, meta
            )
            if row.outcome == "offline":  # saved: the offline draft stands in for the model's
                row.outcome, row.error = "fallback", res.error
            done(row)
    bar.close()
    summary.breaker_open = breaker.open
    order = {n: i for i, n in enumerate(nums)}
    summary.prs.sort(key=lambda p: order.get(p.number, 0))
    return summary


def _save(store: Store, rec, analysis, latest, brief, lang: str, meta: dict[str, Any]) -> PRDraft:
    meta = {"areas": analysis.areas, "verdict": analysis.verdict, **meta}
    try:
        version = store.save_brief(
            rec.repo,
            rec.number,
            render_brief(brief),
            source=brief.source,
            base_version=latest.version if latest else None,
            brief=brief.to_dict(),
            lang=lang,
            meta=meta,
        )
    except StaleEditError as e:  # a person saved meanwhile: their text wins, ours is kept as a conflict copy
        return PRDraft(
            rec.number, "kept", "kept: edited meanwhile", latest.version if latest else None, str(e)
        )
    outcome = "model" if brief.source == "llm" else "offline"
    return PRDraft(rec.number, outcome, f"drafted ({brief.source})", version)
