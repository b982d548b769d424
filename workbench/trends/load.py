"""Read what the trend frames need from the cache: a handful of flat queries, no raw JSON decoded.

Work follows the window: with `since`, the flat reads and the verdicts cover only the PRs the window
shows (active since then, or open). Verdicts come from the analysis memo by each PR's stored stamp
(no record read for an unchanged PR); only the PRs the memo lacks are read, in bulk, and analysed.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pandas as pd

from ..store import Store
from .frames import DEFAULT_BOTS, TrendData, as_timestamp, build_trend_data, in_window

VERDICT_FRAME_COLUMNS = ["number", "verdict", "audience", "minutes"]


def compute_verdicts(
    store: Store, repo: str, numbers: Iterable[int], workers: int = 1
) -> tuple[pd.DataFrame, list[str]]:
    """Verdicts of these PRs: (frame of number, verdict, audience, minutes; problems). Without the
    heuristics the frame is empty and the problem says so. `workers`: as `stored_verdicts` takes it."""
    try:
        from ..analysis.conventions import load_conventions
        from ..analysis.memo import AnalysisMemo
        from ..analysis.stored import stored_verdicts
    except ImportError as e:
        return pd.DataFrame(columns=VERDICT_FRAME_COLUMNS), [f"heuristics unavailable ({e})"]
    try:
        conventions = load_conventions(repo, cache=store.path.parent)  # as `workbench analyze` does
    except Exception as e:  # a broken conventions file must not hide the charts
        return pd.DataFrame(columns=VERDICT_FRAME_COLUMNS), [f"conventions for {repo}: {e}"]
    # The memo (one file beside the cache) answers unchanged PRs without reading them.
    memo = AnalysisMemo.for_repo(repo, conventions, store.path.parent)
    with memo.kept_if_interrupted():
        summaries, problems = stored_verdicts(store, repo, numbers, memo, workers=workers)
    try:
        memo.save()
    except OSError as e:  # a read-only cache directory costs speed next time, not the charts
        problems.append(f"analysis memo not saved: {e}")
    frame = pd.DataFrame(
        [(s.number, s.verdict, s.audience, s.minutes) for s in summaries], columns=VERDICT_FRAME_COLUMNS
    )
    return frame, problems


def load_trend_data(
    store: Store,
    repo: str,
    *,
    since: Any = None,
    as_of: Any = None,
    verdicts: bool = True,
    bots: Iterable[str] = DEFAULT_BOTS,
    workers: int = 1,
) -> TrendData:
    """All frames for one cached repository, from `since` on (a date or a span like 30d) when given.
    `verdicts=False` skips the heuristics (the slow part when the analysis memo is cold); `workers`
    processes may share the PRs the memo lacks (analysis/stored.py)."""
    prs = store.prs(repo)
    since_ts = as_timestamp(since)  # once: a relative span must mean the same instant everywhere below
    window = None if since_ts is None else prs.loc[in_window(prs, since_ts), "number"].tolist()
    files = store.files_frame(repo, window)
    reviews = store.reviews_frame(repo, window)
    comments = store.comments_frame(repo, window)
    briefs = store.briefs(repo)
    area_of, aliases = None, None
    try:  # the repository's conventions name areas by path, alias tags and list extra bots
        from ..analysis.conventions import default_conventions

        conv = default_conventions(repo)
        area_of, aliases, bots = conv.area_of, conv.tag_aliases, frozenset(bots) | set(conv.bots)
    except ImportError:
        pass
    verdict_frame, problems = None, []
    if verdicts:
        with_diff = sorted(set(files["number"]))  # facts-only PRs have no diff to judge
        if with_diff:
            verdict_frame, problems = compute_verdicts(store, repo, with_diff, workers)
    data = build_trend_data(
        repo, prs, reviews=reviews, comments=comments, files=files, briefs=briefs,
        verdicts=verdict_frame, since=since_ts, as_of=as_of, bots=bots, area_of=area_of, tag_aliases=aliases,
    )  # fmt: skip
    if problems and "verdicts" not in data.lacks:
        data.lacks["verdict_errors"] = f"Verdicts missing for {len(problems)} PRs: {problems[0]}"
    elif problems:
        data.lacks["verdicts"] += f" ({problems[0]})"
    return data
