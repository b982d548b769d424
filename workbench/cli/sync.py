"""`workbench sync`: from the GitHub API, or from a local clone (--from-git)."""

from __future__ import annotations

import sys

from .common import add_cache, add_selection, cache_arg


def register(sub) -> None:
    p = sub.add_parser(
        "sync",
        help="cache PRs from GitHub (PyGithub) or from a local clone",
        description="Sync PRs into the cache. Incremental: a re-run fetches only what changed. "
        "Token from GITHUB_TOKEN or GH_TOKEN (never stored).",
    )
    add_cache(p)
    add_selection(p, "only PRs updated (from a clone: merged) since")
    p.add_argument("--state", choices=["open", "closed", "all"], default="all")
    p.add_argument("--limit", type=int, metavar="N", help="at most N PRs this pass (a rerun continues)")
    p.add_argument(
        "--no-wait",
        action="store_true",
        help="when the rate limit is spent, stop cleanly instead of waiting for the reset",
    )
    p.add_argument(
        "--api-url",
        metavar="URL",
        help="GitHub Enterprise or compatible API root (default: $GITHUB_API_URL or api.github.com)",
    )
    p.add_argument(
        "--from-git",
        metavar="PATH",
        help="backfill merged PRs from a local clone (bare or not): zero API calls",
    )
    p.set_defaults(run=run)


def run(args) -> int:
    from ..timespan import since_iso

    since = since_iso(args.since)  # a bad value is an error before the cache is touched
    if args.from_git:
        return _backfill(args, since)
    from ..sources.github import format_reset, sync_repo
    from ..store import Store

    store = Store(cache_arg(args))
    try:
        res = sync_repo(
            store,
            args.repo,
            state=args.state,
            since=since,
            limit=args.limit,
            numbers=args.number,
            wait=not args.no_wait,
            api_url=args.api_url,
        )
    finally:
        store.close()
    print(res.summary())
    for e in res.errors[:20]:
        print(f"  error: {e}", file=sys.stderr)
    if res.reset_at is not None:
        print(
            f"workbench sync: stopped: the GitHub rate limit is spent; it resets at {format_reset(res.reset_at)}. "
            "What was written is kept; rerun then to resume.",
            file=sys.stderr,
        )
        return 3
    return 1 if res.errors else 0


def _backfill(args, since: str | None) -> int:
    from ..sources.git import backfill, check_repo
    from ..store import Store

    check_repo(args.from_git)  # a bad path must not even create an empty cache
    store = Store(cache_arg(args))
    try:
        result = backfill(
            store, args.repo, args.from_git, since=since, limit=args.limit, numbers=args.number, progress=True
        )
    finally:
        store.close()
    print(result.summary())
    if result.prs_written == 0:
        print("no commit looked like a PR (subject 'title (#N)' or 'Merge pull request #N from ...')")
    return 0
