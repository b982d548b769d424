"""`workbench sync` (from a clone with --from-git, or from the GitHub API) and `workbench status`:
the command glue that checks arguments, calls one library function and prints its result."""

from __future__ import annotations

import sys

from ..config import WorkbenchError

BUSY_EXIT = 4  # another sync is writing this repository into this cache


def run_sync(args) -> int:
    from ..store import Store, SyncBusy

    try:
        if args.from_git:
            from .git import check_repo, run_backfill_cli

            check_repo(args.from_git)  # a bad path must not even create an empty cache
            store = Store(args.cache)
            return run_backfill_cli(store, args)
        from .github import check_sync_args, run_sync_cli

        # Everything the user typed is checked before anything is requested or written.
        check_sync_args(args.repo, state=args.state, since=args.since, limit=args.limit, numbers=args.number)
        return run_sync_cli(args.cache, args)
    except SyncBusy as e:
        print(f"workbench sync: {e}", file=sys.stderr)
        return BUSY_EXIT


def run_status(args) -> int:
    """`workbench status OWNER/REPO`: what the cache holds for the repository, in plain words."""
    import sqlite3

    from ..store import open_cache
    from ..store.schema import corrupt_cache_message

    store = open_cache(args.cache)
    try:
        st = store.sync_status(args.repo)
    except sqlite3.DatabaseError as e:
        if isinstance(e, sqlite3.OperationalError):
            raise
        raise WorkbenchError(corrupt_cache_message(store.path, e)) from None
    finally:
        store.close()
    for line in status_lines(st):
        print(line)
    return 0


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


_SOURCE_WORDS = {"api": "the API", "git": "a clone", "git+api": "clone + API", "facts": "facts only"}

__all__ = ["run_sync", "run_status", "status_lines", "BUSY_EXIT", "WorkbenchError"]
