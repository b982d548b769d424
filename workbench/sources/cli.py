"""`workbench sync`: from a clone (--from-git) or from the GitHub API."""

from __future__ import annotations

from ..store import Store


def run_sync(args) -> int:
    store = Store(args.cache)
    if args.from_git:
        from .git import run_backfill_cli

        return run_backfill_cli(store, args)
    from .github import run_sync_cli

    return run_sync_cli(store, args)
