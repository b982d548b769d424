"""Read what the trend frames need from the cache: a handful of flat queries, no raw JSON decoded,
except for verdicts, which need each PR's diff and so are computed only for PRs that have one."""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from typing import Any

import pandas as pd

from ..store import Store
from .frames import DEFAULT_BOTS, TrendData, build_trend_data


def compute_verdicts(store: Store, repo: str, numbers: Iterable[int]) -> tuple[pd.DataFrame, list[str]]:
    """Run the heuristics over these PRs: (frame of number, verdict, audience, minutes; problems).
    Without the heuristics module the frame is empty and the problem says so."""
    try:
        heuristics = importlib.import_module("workbench.analysis.pipeline")
    except ImportError as e:
        return pd.DataFrame(columns=["number", "verdict"]), [f"heuristics unavailable ({e})"]
    conventions = None
    loader = getattr(heuristics, "load_conventions", None)
    if loader is not None:
        try:
            conventions = loader(repo)
        except Exception as e:  # a broken conventions file must not hide the charts
            return pd.DataFrame(columns=["number", "verdict"]), [f"conventions for {repo}: {e}"]
    known = store.known_prs(repo)
    # The memo (one file beside the cache) makes a re-run cost about what decoding the records does.
    from ..analysis.memo import AnalysisMemo

    memo = AnalysisMemo.for_repo(repo, conventions, store.path.parent)
    rows, problems = [], []
    for n in numbers:
        try:
            a = memo.analyze(store.pr(repo, int(n)), known_prs=known)
        except Exception as e:  # one odd PR should cost its own verdict, not the chart
            problems.append(f"#{n}: {type(e).__name__}: {e}")
            continue
        rows.append({"number": int(n), "verdict": a.verdict, "audience": a.audience, "minutes": a.minutes})
    try:
        memo.save()
    except OSError as e:  # a read-only cache directory costs speed next time, not the charts
        problems.append(f"analysis memo not saved: {e}")
    return pd.DataFrame(rows, columns=["number", "verdict", "audience", "minutes"]), problems


def load_trend_data(
    store: Store,
    repo: str,
    *,
    since: Any = None,
    as_of: Any = None,
    verdicts: bool = True,
    bots: Iterable[str] = DEFAULT_BOTS,
) -> TrendData:
    """All frames for one cached repository. `verdicts=False` skips the heuristics (the slow part:
    one record read and analysis per PR with a diff)."""
    prs = store.prs(repo)
    files = store.files_frame(repo)
    reviews = store.reviews_frame(repo)
    comments = store.comments_frame(repo)
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
        with_diff = sorted(set(files["number"]))
        if with_diff:
            verdict_frame, problems = compute_verdicts(store, repo, with_diff)
    data = build_trend_data(
        repo, prs, reviews=reviews, comments=comments, files=files, briefs=briefs,
        verdicts=verdict_frame, since=since, as_of=as_of, bots=bots, area_of=area_of, tag_aliases=aliases,
    )  # fmt: skip
    if problems and "verdicts" not in data.lacks:
        data.lacks["verdict_errors"] = f"Verdicts missing for {len(problems)} PRs: {problems[0]}"
    elif problems:
        data.lacks["verdicts"] += f" ({problems[0]})"
    return data
