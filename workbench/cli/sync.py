"""`workbench sync` (from the GitHub API, or from a local clone with --from-git) and `workbench status`."""

from __future__ import annotations

import argparse
import sys

from ..config import WorkbenchError
from .common import add_cache, add_repo, add_selection, cache_arg, positive_int

BUSY_EXIT = 4  # another sync is writing this repository into this cache
RATE_LIMIT_EXIT = 3  # stopped at a spent rate limit (--no-wait); a rerun resumes


def _api_url(text: str) -> str:
    from ..config import check_api_url

    try:
        return check_api_url(text)
    except WorkbenchError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def register(sub) -> None:
    p = sub.add_parser(
        "sync",
        help="cache PRs from GitHub (PyGithub) or from a local clone",
        description="Sync PRs into the cache. Incremental: a re-run fetches only what changed. "
        "Token from GITHUB_TOKEN or GH_TOKEN (never stored).",
        epilog="One writer per repository and cache: while a sync (or --from-git backfill) of a repository "
        "is running, a second one for the same repository and cache refuses at once with a message naming "
        "the first (exit code 4) instead of doing the work twice; rerun it when the first has finished. "
        "Readers (notebooks, other commands) never wait. A PR that keeps failing is recorded, the pass goes "
        "on, and the next sync retries it first (exit code 1). Exit code 3: stopped at the rate limit "
        "(--no-wait). `workbench status OWNER/REPO` shows what the cache holds.",
    )
    add_cache(p)
    add_selection(
        p,
        "only PRs updated (from a clone: merged) since; such a pass never counts as the full history "
        "(default: since the last full pass)",
    )
    p.add_argument("--state", choices=["open", "closed", "all"], default="all")
    p.add_argument(
        "--limit", type=positive_int, metavar="N", help="at most N PRs this pass (a rerun continues)"
    )
    p.add_argument(
        "--no-wait",
        action="store_true",
        help="when the rate limit is spent, stop cleanly instead of waiting for the reset",
    )
    p.add_argument(
        "--api-url",
        metavar="URL",
        type=_api_url,
        help="GitHub Enterprise or compatible API root (default: $GITHUB_API_URL or api.github.com)",
    )
    p.add_argument(
        "--from-git",
        metavar="PATH",
        help="backfill merged PRs from a local clone (bare or not): zero API calls",
    )
    p.set_defaults(run=run)

    p = sub.add_parser(
        "status",
        help="what the cache holds for a repository and how it was synced",
        description="PRs by state and source, the oldest and newest, whether the full history has been "
        "synced, unfinished passes, PRs owed after a failure, and the last sync of each kind.",
    )
    add_cache(p)
    add_repo(p)
    p.set_defaults(run=run_status)


def run(args) -> int:
    from ..store import SyncBusy

    try:
        if args.from_git:
            return _backfill(args)
        return _sync(args)
    except SyncBusy as e:
        print(f"workbench sync: {e}", file=sys.stderr)
        return BUSY_EXIT


def _sync(args) -> int:
    from ..sources.github import check_sync_args, format_reset, sync_repo

    # Everything the user typed is checked before anything is requested or written.
    check_sync_args(args.repo, state=args.state, since=args.since, limit=args.limit, numbers=args.number)
    # The cache path, not an open Store: a new cache is created only once GitHub has confirmed the
    # repository (a typo or a bad token leaves nothing behind).
    res = sync_repo(
        cache_arg(args),
        args.repo,
        state=args.state,
        since=args.since,
        limit=args.limit,
        numbers=args.number,
        wait=not args.no_wait,
        api_url=args.api_url,
    )
    print(res.summary())
    for note in res.notes:
        print(f"  note: {note}")
    for n, why in sorted(res.failed.items())[:20]:
        print(f"  failed: #{n}: {why}", file=sys.stderr)
    for e in [e for e in res.errors if not e.startswith(tuple(f"#{n}:" for n in res.failed))][:20]:
        print(f"  error: {e}", file=sys.stderr)
    if res.reset_at is not None:
        print(
            f"workbench sync: stopped: the GitHub rate limit is spent; it resets at {format_reset(res.reset_at)}. "
            "What was written is kept; rerun then to resume.",
            file=sys.stderr,
        )
        return RATE_LIMIT_EXIT
    return 1 if res.errors or res.failed else 0


def _backfill(args) -> int:
    from ..sources.git import backfill, check_repo
    from ..store import Store

    check_repo(args.from_git)  # a bad path must not even create an empty cache
    store = Store(cache_arg(args))
    try:
        result = backfill(
            store,
            args.repo,
            args.from_git,
            since=args.since,
            limit=args.limit,
            numbers=args.number,
            progress=True,
        )
    finally:
        store.close()
    print(result.summary())
    if result.prs_written == 0:
        print("no commit looked like a PR (subject 'title (#N)' or 'Merge pull request #N from ...')")
    return 0


def run_status(args) -> int:
    """`workbench status OWNER/REPO`: what the cache holds for the repository, in plain words."""
    from ..store import open_cache
    from ..store.schema import damaged_cache_as_error

    store = open_cache(cache_arg(args))
    try:
        with damaged_cache_as_error(store.path):
            st = store.sync_status(args.repo)
    finally:
        store.close()
    for line in status_lines(st):
        print(line)
    return 0


_SOURCE_WORDS = {"api": "the API", "git": "a clone", "git+api": "clone + API", "facts": "facts only"}


def status_lines(st) -> list[str]:
    states = ", ".join(f"{n} {s}" for s, n in sorted(st.prs_by_state.items())) or "none"
    sources = ", ".join(f"{n} from {_SOURCE_WORDS.get(s, s)}" for s, n in sorted(st.prs_by_source.items()))
    lines = [f"{st.repo}: {st.total} PRs cached ({states})" + (f"; {sources}" if sources else "")]
    if st.oldest:
        lines.append(
            f"  oldest: #{st.oldest[0]} ({st.oldest[1]}); newest update: #{st.newest[0]} ({st.newest[1]})"
        )
    if st.full_history:
        lines.append(
            f"  full history: synced from GitHub; the next plain sync lists PRs updated since {st.watermark}"
        )
    else:
        lines.append(
            "  full history: NOT synced from the GitHub API yet (a clone, --since, --state, --number or "
            f"--limit pass covers only part of it): a plain `workbench sync {st.repo}` completes it"
        )
    for scope in st.unfinished:
        lines.append(f"  unfinished pass ({scope}): a rerun with the same options resumes it")
    if st.failed:
        shown = ", ".join(f"#{n}" for n, _ in st.failed[:10])
        lines.append(f"  {len(st.failed)} PRs owed (failed; the next sync retries them first): {shown}")
        for n, why in st.failed[:5]:
            lines.append(f"    #{n}: {why}")
    for name, run in st.last_runs.items():
        did = f"{run.prs_written} PRs written, {run.rest_requests} REST requests, {run.graphql_points} GraphQL points"
        if run.failed_prs:
            did += f", {run.failed_prs} PRs failed"
        scope = f" [{run.scope}]" if run.scope else ""
        lines.append(f"  last {name} run: {run.status}{scope}, started {run.started_at}: {did}")
        if run.note:
            lines.append(f"    {run.note[:300]}")
    return lines
