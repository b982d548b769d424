"""Read a PR like a senior reviewer: signals with evidence, then deep read / skim / skip.

`analyze(record)` is pure: a PRRecord in, an Analysis out; no network, no database. It gathers signals
(workbench/signals.py for the diff, describe.py and discussion.py for the people's text), then concludes with
workbench/conclusions.py, where every verdict rule lives in one ordered table, `VERDICT_RULES`.
A record with no patch text (a clone's facts, corpus metadata) is analysed from file stats, title and
description, and says so in `truncated`.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable
from operator import itemgetter
from typing import Any

from ..records import PRRecord
from .conclusions import (
    READ_COST,
    VERDICT_RULES,
    Facts,
    Rule,
    decide,
    effort_and_minutes,
    named_paths,
    open_items_of,
    pick_key_symbols,
    rank_files,
)
from .conventions import Conventions, default_conventions, load_conventions
from .description import description_signals, read_description
from .diff import Concat, parse_files
from .discussion import cross_refs, read_discussion
from .model import Analysis, Evidence, Signal
from .signals import (
    RISK_ROLES,
    CodeFacts,
    scan_defaults,
    scan_deps,
    scan_symbols,
    scan_themes,
    text_theme_evidence,
    theme_signals,
)

# role -> the "X-only" signal a PR whose readable files all have that role gets
_ONLY_SIGNALS = {
    "docs": ("docs_only", "docs-only"),
    "ci": ("ci_only", "CI-only"),
    "build": ("deps_only", "build/dependency files only"),
    "test": ("tests_only", "tests only"),
}
_REVERT_BODY = re.compile(r"This reverts commit|Reverts\s+[\w.-]+/[\w.-]+#(\d+)|^Revert\b", re.M)


def analyze(
    record: PRRecord, *, conventions: Conventions | None = None, known_prs: dict | None = None
) -> Analysis:
    conv = conventions or default_conventions(record.repo)
    n_ev = int(conv.threshold("max_evidence", 3))
    title = record.title
    parts = conv.parse_title(title)
    files = parse_files(record.files)
    signals: list[Signal] = []
    truncated: list[str] = []

    # ---- scope and size -------------------------------------------------------------------------
    # One pass over the files for every per-role tally below (plain dicts, not Counters: Counter() and
    # most_common cost more than the loop for a handful of files).
    roles: dict[str, int] = {}
    area_lines: dict[str, int] = {}
    readable: list = []  # neither generated nor binary, in file order
    test_files: list = []
    generated: list = []
    has_patches = False
    for fd in files:
        role, changes = fd.role, fd.changes
        roles[role] = roles.get(role, 0) + changes
        if fd.patch:
            has_patches = True
        if role == "generated":
            generated.append(fd)
        elif role != "binary":
            readable.append(fd)
            if role == "test":
                test_files.append(fd)
            area = conv.area_of(fd.filename)
            area_lines[area] = area_lines.get(area, 0) + max(1, changes) * (2 if role == "code" else 1)
    scope = frozenset(r for r in roles if r not in ("generated", "binary"))
    if not scope and any(
        fd.role == "binary" and fd.filename.lower().startswith(("docs/", "doc/")) for fd in files
    ):
        scope = frozenset({"docs"})
    churn = sum(v for r, v in roles.items() if r not in ("generated", "binary"))
    read_lines = sum(READ_COST.get(r, 1.0) * v for r, v in roles.items())
    code_lines = roles.get("code", 0) + roles.get("notebook", 0)
    biggest = sorted(readable, key=lambda f: -f.changes)[:n_ev]
    shown = biggest or files[:n_ev]
    size_ev = [Evidence(fd.filename, None, f"{fd.role}: +{fd.additions}/-{fd.deletions}") for fd in shown]
    size_label = f"{churn} changed lines in {len(files)} files"
    if code_lines >= conv.threshold("huge_lines", 2000):
        weight = conv.weight("size.large") + 0.5
        signals.append(Signal("size.large", f"very large change: {size_label}", weight, size_ev))
    elif code_lines >= conv.threshold("large_lines", 500):
        signals.append(
            Signal("size.large", f"large change: {size_label}", conv.weight("size.large"), size_ev)
        )
    elif code_lines >= conv.threshold("medium_lines", 80):
        signals.append(
            Signal("size.medium", f"medium change: {size_label}", conv.weight("size.medium"), size_ev)
        )
    elif churn <= conv.threshold("tiny_lines", 10) and files:
        signals.append(Signal("size.tiny", f"tiny change: {size_label}", conv.weight("size.tiny"), size_ev))

    # ---- tests and scope signals ----------------------------------------------------------------
    if code_lines and test_files:
        signals.append(
            Signal(
                "tests.added",
                f"code change comes with test changes ({len(test_files)} files)",
                conv.weight("tests.added"),
                [Evidence(fd.filename, None, f"+{fd.additions}/-{fd.deletions}") for fd in test_files[:n_ev]],
            )
        )
    elif code_lines >= conv.threshold("tests_missing_min_lines", 20) and not test_files:
        signals.append(
            Signal(
                "tests.missing",
                f"{code_lines} lines of code changed, no test changed",
                conv.weight("tests.missing"),
                [
                    Evidence(fd.filename, None, f"code: +{fd.additions}/-{fd.deletions}, no test beside it")
                    for fd in sorted(files, key=lambda f: -f.changes)
                    if fd.role in ("code", "notebook")
                ][:n_ev],
            )
        )
    if len(scope) == 1:  # only a one-role scope can be "X-only"
        only = _ONLY_SIGNALS.get(next(iter(scope)))
        if only:
            name, label = only
            signals.append(
                Signal(name, label, 0.0, [Evidence(fd.filename, None, fd.role) for fd in files[:n_ev]])
            )
    if generated:
        signals.append(
            Signal(
                "generated",
                f"{len(generated)} generated/vendored/lock file(s), not read",
                0.0,
                [Evidence(fd.filename, None, "generated") for fd in generated[:n_ev]],
            )
        )

    # ---- title kind, breaking, revert -----------------------------------------------------------
    if parts.kind and f"kind.{parts.kind}" in conv.weights:
        signals.append(
            Signal(
                f"kind.{parts.kind}",
                f"title says {parts.kind}",
                conv.weight(f"kind.{parts.kind}"),
                [Evidence(None, None, title)],
            )
        )
    body = record.body
    desc = read_description(title, body, conv)
    dtext = desc.text
    if parts.breaking or "[BREAKING]" in dtext or "breaking change" in dtext.lower():
        signals.append(
            Signal(
                "api.breaking",
                "marked as breaking",
                conv.weight("api.breaking"),
                [Evidence(None, None, title if parts.breaking else "description mentions a breaking change")],
            )
        )
    head = body[:2000]
    # the regex has no literal prefix (an alternation with ^ in multiline mode): gate on its literals
    revert_m = _REVERT_BODY.search(head) if "Revert" in head or "This reverts commit" in head else None
    revert = parts.revert or bool(revert_m) or title.lower().startswith("revert")
    if revert:
        signals.append(
            Signal(
                "revert",
                "reverts earlier work",
                conv.weight("revert"),
                [Evidence(None, None, title if parts.revert or not revert_m else revert_m.group(0))],
            )
        )

    # ---- the diff ---------------------------------------------------------------------------------
    facts = CodeFacts()
    if has_patches:
        cat = Concat(files, RISK_ROLES)
        scan_themes(cat, facts)
        signals += scan_symbols(files, facts, conv)
        signals += scan_defaults(files, conv)
    signals += scan_deps(files, title, conv)

    # ---- what the people say --------------------------------------------------------------------
    signals += description_signals(desc, conv)
    signals += theme_signals(facts, text_theme_evidence([title, desc.text[:4000]]), conv)
    disc, disc_signals = read_discussion(record, conv)
    signals += disc_signals
    texts = [title, desc.text] + [c.get("body") or "" for c in record.issue_comments[:50]]
    refs = cross_refs(record.repo, record.number, texts, known_prs)
    if revert_m and revert_m.group(1):
        n = int(revert_m.group(1))
        ref = next((r for r in refs if r.number == n), None)
        if ref:
            ref.relation = "reverts"
        else:
            from .model import CrossRef

            t, s = (known_prs or {}).get(n, (None, None))
            refs.append(CrossRef(n, "reverts", t, s, None))

    # ---- truncation: say what the data lacks ------------------------------------------------------
    if record.files_truncated:
        truncated.append("file list truncated (GitHub lists at most 3,000 files)")
    if record.commits_truncated:
        truncated.append("commit list truncated (GitHub lists at most 250 commits)")
    missing = [fd for fd in files if fd.patch_missing]
    if files and not has_patches:
        truncated.append("no patch text: judged from file stats, title and description")
    elif missing:
        truncated.append(f"{len(missing)} patch(es) omitted: " + ", ".join(fd.filename for fd in missing[:3]))
    odd = [fd.filename for fd in files if "malformed" in fd.flags]
    if odd:
        truncated.append(f"malformed patch text in {len(odd)} file(s): " + ", ".join(odd[:3]))
    if not files:
        truncated.append("no file list")

    # ---- conclusions ------------------------------------------------------------------------------
    score = sum(s.weight for s in signals)
    dominant = None
    if area_lines:
        top, lines = max(area_lines.items(), key=itemgetter(1))  # the first of equals, as most_common(1)
        if lines >= 0.8 * sum(area_lines.values()):
            dominant = top
    f = Facts(
        files,
        dict(roles),
        scope,
        churn,
        read_lines,
        score,
        signals,
        parts.kind,
        revert,
        has_patches,
        dominant,
    )
    verdict, audience, audience_key, deciding = decide(f, conv)
    effort, minutes = effort_and_minutes(f, verdict, conv)
    named = named_paths(desc, record)
    key_files = rank_files(files, facts, named, conv)
    key_symbols = pick_key_symbols(facts, desc, cat.text if has_patches else "", conv)
    areas = [a for a, _ in sorted(area_lines.items(), key=itemgetter(1), reverse=True)]  # = most_common()
    for t in parts.tags:
        if t not in areas:
            areas.append(t)

    return Analysis(
        repo=record.repo,
        number=record.number,
        verdict=verdict,
        audience=audience,
        effort=effort,
        minutes=minutes,
        deciding=deciding,
        signals=sorted(signals, key=lambda s: -abs(s.weight)),
        key_files=key_files,
        key_symbols=key_symbols,
        open_items=open_items_of(signals, desc, disc, truncated, facts, n_ev),
        cross_refs=refs,
        areas=areas,
        roles=dict(roles),
        description=desc,
        discussion=disc,
        truncated=truncated,
        kind=parts.kind,
        tags=list(parts.tags),
        score=round(score, 2),
        audience_key=audience_key,
    )


# ---- many PRs ---------------------------------------------------------------------------------------

FRAME_COLUMNS = [
    "repo",
    "number",
    "verdict",
    "audience",
    "effort",
    "minutes",
    "score",
    "kind",
    "key_files",
    "key_symbols",
    "flags",
    "deciding",
    "areas",
    "open_items",
]


def analysis_frame(analyses: Iterable[Analysis]):
    """One row per PR; list columns stay lists (charts and filters use them directly)."""
    import pandas as pd

    rows = []
    for a in analyses:
        rows.append(
            {
                "repo": a.repo,
                "number": a.number,
                "verdict": a.verdict,
                "audience": a.audience,
                "effort": a.effort,
                "minutes": a.minutes,
                "score": a.score,
                "kind": a.kind,
                "key_files": [k.filename for k in a.key_files],
                "key_symbols": list(a.key_symbols),
                "flags": [s.name for s in a.signals] + (["truncated"] if a.truncated else []),
                "deciding": list(a.deciding),
                "areas": list(a.areas[:5]),
                "open_items": len(a.open_items),
            }
        )
    return pd.DataFrame(rows, columns=FRAME_COLUMNS)


def run_cli(args: Any) -> int:
    """`workbench analyze OWNER/REPO [--since] [--number ...] [--format table|csv|json]`."""
    import json

    from ..config import WorkbenchError
    from ..store import Store
    from .memo import AnalysisMemo

    repo = args.repo
    if "/" not in repo:
        raise WorkbenchError(
            f"{repo!r} is not OWNER/REPO: name the repository as on GitHub, e.g. verl-project/verl"
        )
    store = Store(getattr(args, "cache", None), create=False)
    try:
        if store.repo_pk(repo) is None:
            raise WorkbenchError(
                f"{repo} is not in the cache: run `workbench sync {repo}` (or `workbench sample`) first"
            )
        numbers = store.prs(repo, numbers=args.number, since=args.since)["number"].tolist()
        known = store.known_prs(repo)
        conv = load_conventions(repo, getattr(args, "conventions", None), cache=getattr(args, "cache", None))
        it = store.records(repo, numbers)
        if len(numbers) > 50 and sys.stderr.isatty() or len(numbers) > 200:
            from tqdm import tqdm

            it = tqdm(it, total=len(numbers), desc=f"analyze {repo}", unit="PR", file=sys.stderr)
        # Unchanged PRs come from the memo beside the cache (see analysis_memo.py); analysis stays pure.
        memo = AnalysisMemo.for_repo(repo, conv, getattr(args, "cache", None))
        df = analysis_frame(memo.analyze(r, known_prs=known) for r in it)
    finally:
        store.close()
    try:
        memo.save()
    except OSError as e:  # a read-only cache still answers; the next run analyses again
        print(f"note: analysis memo not saved ({e})", file=sys.stderr)
    fmt = getattr(args, "format", "table") or "table"
    if fmt == "json":
        print(json.dumps(df.to_dict(orient="records"), ensure_ascii=False, indent=1, default=str))
        return 0
    flat = df.copy()
    for col in ("key_files", "key_symbols", "flags", "deciding", "areas"):
        flat[col] = flat[col].map(lambda v: "; ".join(v))
    if fmt == "csv":
        sys.stdout.write(flat.to_csv(index=False))
        return 0
    if flat.empty:
        print(f"no cached PRs of {repo} match")
        return 0
    view = flat[
        ["number", "verdict", "audience", "effort", "minutes", "key_files", "key_symbols", "flags"]
    ].copy()
    view["audience"] = view["audience"].fillna("")
    for col, width in (("key_files", 60), ("key_symbols", 40), ("flags", 60)):
        view[col] = view[col].map(lambda s, w=width: s if len(s) <= w else s[: w - 1] + "…")
    print(view.to_string(index=False))
    return 0


__all__ = [
    "analyze",
    "analysis_frame",
    "decide",
    "VERDICT_RULES",
    "run_cli",
    "load_conventions",
    "Facts",
    "Rule",
]
