"""`workbench report`: the trends report, one HTML file that opens offline."""

from __future__ import annotations

from .common import add_cache, add_jobs, add_repo, add_since, cache_arg, jobs_arg, nothing_selected


def register(sub) -> None:
    p = sub.add_parser(
        "report",
        help="write the trends report: one HTML file that opens offline",
        description="Plotly charts on PR flow in one standalone HTML file (plotly.js embedded).",
    )
    add_cache(p)
    add_repo(p)
    add_since(p)
    p.add_argument(
        "-o", "--output", metavar="FILE", help="output file (default: ./exports/<owner>-<repo>-report.html)"
    )
    p.add_argument("--png", metavar="DIR", help="also write static PNG images (kaleido + chromium)")
    add_jobs(p)
    p.set_defaults(run=run)


def run(args) -> int:
    from ..report import write_report
    from ..selection import select_prs
    from ..store import open_cache

    store = open_cache(cache_arg(args))
    try:
        if args.since:
            selection = select_prs(store, args.repo, since=args.since)
            if selection.empty:
                return nothing_selected("report", selection)
        out = write_report(
            store, args.repo, args.output, since=args.since, png_dir=args.png, workers=jobs_arg(args)
        )
    finally:
        store.close()
    print(f"wrote {out} ({out.stat().st_size / 1e6:.1f} MB, opens offline)")
    if args.png:
        print(f"wrote PNG images to {args.png}")
    return 0
