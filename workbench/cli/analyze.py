"""`workbench analyze`: deep read / skim / skip for cached PRs, as a table, CSV or JSON.

Rows are built here from the Analysis dataclasses with the standard library (csv, json), so a one-PR
analyze never loads pandas for its output.
"""

from __future__ import annotations

import csv
import json
import sys

from .common import add_cache, add_selection, cache_arg, note, nothing_selected, tqdm_progress

# The columns of every format, in order (the same as analysis.pipeline.FRAME_COLUMNS).
COLUMNS = (
    "repo", "number", "verdict", "audience", "effort", "minutes", "score", "kind",
    "key_files", "key_symbols", "flags", "deciding", "areas", "open_items",
)  # fmt: skip
LIST_COLUMNS = ("key_files", "key_symbols", "flags", "deciding", "areas")
TABLE_COLUMNS = ("number", "verdict", "audience", "effort", "minutes", "key_files", "key_symbols", "flags")
TABLE_WIDTHS = {"key_files": 60, "key_symbols": 40, "flags": 60}


def register(sub) -> None:
    p = sub.add_parser(
        "analyze",
        help="recommend deep read / skim / skip for cached PRs",
        description="Run the heuristics over cached PRs; one row per PR.",
    )
    add_cache(p)
    add_selection(p)
    p.add_argument("--format", choices=["table", "csv", "json"], default="table")
    p.set_defaults(run=run)


def row(a) -> dict:
    return {
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


def run(args) -> int:
    from ..analysis.pipeline import analyze_cached
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
        )
    finally:
        store.close()
    if done.note:
        note("analyze", done.note)
    rows = [row(a) for a in done.analyses]
    write_rows(rows, args.format, sys.stdout)
    return 0


def _flat(value) -> str:
    if value is None:
        return ""
    if isinstance(value, list):
        return "; ".join(str(v) for v in value)
    return str(value)


def write_rows(rows: list[dict], fmt: str, out) -> None:
    if fmt == "json":
        out.write(json.dumps(rows, ensure_ascii=False, indent=1, default=str) + "\n")
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
