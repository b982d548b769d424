"""PR Workbench: read other people's pull requests fast, and write reading briefs for your team.

Data flows one way: sources -> store -> analysis -> drafting -> UI/export.
    sources/   GitHub (PyGithub) sync, clone backfill, bundled sample   -> store/ (SQLite cache)
    analysis/  diff model and heuristics                                pure functions over PRRecord
    brief.py, drafting/ (offline, llm, context, prompts/)               pure, except the LLM call
    ui/ (review app), trends/, report.py, cli/ (the command layer)      orchestration only

The names below load on first use, not on `import workbench`: the store brings pandas, and a command
like `workbench --help` must not pay for it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .config import WorkbenchError

if TYPE_CHECKING:
    from .records import PRRecord
    from .store import Store, open_cache

__version__ = "0.1.0"

_LAZY = {"Store": ".store", "open_cache": ".store", "PRRecord": ".records"}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name], __name__), name)
        globals()[name] = value  # later lookups are plain attribute reads
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def sync(repo: str, **kwargs):
    """Sync a repository into the cache from a notebook (progress renders as a widget).
    See `workbench.sources.github.sync` for the arguments."""
    from .sources.github import sync

    return sync(repo, **kwargs)


__all__ = ["open_cache", "Store", "PRRecord", "WorkbenchError", "sync", "__version__"]
