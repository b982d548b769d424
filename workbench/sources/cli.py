"""`workbench sync`: from a clone (--from-git) or from the GitHub API."""

from __future__ import annotations

from ..store import Store


def run_sync(args) -> int:
    if args.from_git:
        from .git import check_repo, run_backfill_cli

        check_repo(args.from_git)  # a bad path must not even create an empty cache
        store = Store(args.cache)

        return run_backfill_cli(store, args)
    store = Store(args.cache)
    from .github import run_sync_cli

    return run_sync_cli(store, args)
