"""`workbench analyze`: deep read / skim / skip for cached PRs, as a table, CSV or JSON.

Rows are built here from the Analysis dataclasses with the standard library (csv, json), so a one-PR
analyze never loads pandas for its output.
"""

from __future__ import annotations

import csv
import json
import sys

from .common import (
    add_cache,
    add_jobs,
    add_selection,
    cache_arg,
    jobs_arg,
    note,
    nothing_selected,
    tqdm_progress,
)

# The fields of every format, in order (issue 10: what a reader and a script need per PR).
COLUMNS = ("repo", "number", "verdict", "audience", "key_files", "key_symbols", "risks", "reverts",
           "related_prs", "open_items", "effort", "minutes", "deciding")  # fmt: skip
TABLE_COLUMNS = (
    "number",
    "verdict",
    "audience",
    "effort",
    "minutes",
    "key_files",
    "risks",
    "reverts",
    "deciding",
)
TABLE_WIDTHS = {"audience": 30, "key_files": 60, "risks": 40, "deciding": 60}


def register(sub) -> None:
    p = sub.add_parser(
        "analyze",
        help="recommend deep read / skim / skip for cached PRs",
        description="Run the heuristics over cached PRs; one row per PR.",
    )
    add_cache(p)
    add_selection(p)
    p.add_argument("--format", choices=["table", "csv", "json"], default="table")
    add_jobs(p)
    p.set_defaults(run=run)


def row(a) -> dict:
    """Plain JSON values only (None, never NaN); lists where a reader expects several."""
    return {
        "repo": a.repo,
        "number": a.number,
        "verdict": a.verdict,
        "audience": list(a.audiences) or ["everyone"],
        "key_files": [k.filename for k in a.key_files],
        "key_symbols": list(a.key_symbols),
        "risks": [
            {
                "kind": r.kind,
                "why": r.why,
                "evidence": [{"file": e.file, "line": e.line, "text": e.text} for e in r.evidence],
            }
            for r in a.risks
        ],
        "reverts": a.reverts,
        "related_prs": [r.name for r in a.cross_refs if r.number != a.reverts or r.repo],
        "open_items": list(a.open_items),
        "effort": a.effort,
        "minutes": a.minutes,
        "deciding": list(a.deciding),
    }


def run(args) -> int:
    from ..analysis.stored import analyze_cached
    from ..selection import select_prs
    from ..store import Store

    store = Store(cache_arg(args), create=False)
    try:
        selection = select_prs(store, args.repo, since=args.since, numbers=args.number)
        if selection.empty:
            return nothing_selected("analyze", selection)
        done = analyze_cached(
            store,
            args.repo,
            selection.numbers,
            cache=cache_arg(args),
            conventions=getattr(args, "conventions", None),
            progress=tqdm_progress(f"analyze {args.repo}"),
            workers=jobs_arg(args),
        )
    finally:
        store.close()
    if done.note:
        note("analyze", done.note)
    rows = [row(a) for a in done.analyses]
    write_rows(rows, args.format, sys.stdout)
    return 0


def _flat(value) -> str:
    """A cell of CSV or the table: lists joined with "; ", a risk as kind@file:line."""
    if value is None:
        return ""
    if isinstance(value, list):
        return "; ".join(_flat_item(v) for v in value)
    return str(value)


def _flat_item(v) -> str:
    if isinstance(v, dict):  # a risk
        e = v["evidence"][0] if v["evidence"] else None
        where = f"@{e['file']}" + (f":{e['line']}" if e["line"] else "") if e and e["file"] else ""
        return v["kind"] + where
    return str(v)


def write_rows(rows: list[dict], fmt: str, out) -> None:
    if fmt == "json":
        # strict and compact: NaN is refused (a script's JSON parser would choke on it), no indentation
        # (a whole history's output is read by programs, not people)
        out.write(json.dumps(rows, ensure_ascii=False, allow_nan=False, separators=(",", ":")) + "\n")
        return
    if fmt == "csv":
        w = csv.writer(out, lineterminator="\n")
        w.writerow(COLUMNS)
        w.writerows([_flat(r[c]) for c in COLUMNS] for r in rows)
        return
    cells = []
    for r in rows:
        line = []
        for c in TABLE_COLUMNS:
            s = _flat(r[c])
            width = TABLE_WIDTHS.get(c)
            line.append(s if width is None or len(s) <= width else s[: width - 1] + "…")
        cells.append(line)
    widths = [max(len(c), *(len(line[i]) for line in cells)) for i, c in enumerate(TABLE_COLUMNS)]
    # numbers right-aligned, text left-aligned, as a person reads a table
    right = {"number", "minutes"}
    for line in [list(TABLE_COLUMNS), *cells]:
        out.write(
            "  ".join(
                s.rjust(w) if c in right else s.ljust(w)
                for c, s, w in zip(TABLE_COLUMNS, line, widths, strict=True)
            ).rstrip()
            + "\n"
        )
