"""PR Workbench: read other people's pull requests fast, and write reading briefs for your team.

Data flows one way: sources -> store -> analysis -> drafting -> UI/export.
    sources/   GitHub (PyGithub) sync, clone backfill, bundled sample   -> store/ (SQLite cache)
    diff.py, heuristics.py (-> analysis.py dataclasses)                  pure functions over PRRecord
    brief.py, drafting/ (offline, llm, context, prompts/)               pure, except the LLM call
    ui/ (review app), trends.py, report.py, cli.py                      orchestration only
"""

from .config import WorkbenchError
from .records import PRRecord
from .store import Store, open_cache

__version__ = "0.1.0"


def sync(repo: str, **kwargs):
    """Sync a repository into the cache from a notebook (progress renders as a widget).
    See `workbench.sources.github.sync` for the arguments."""
    from .sources.github import sync

    return sync(repo, **kwargs)


__all__ = ["open_cache", "Store", "PRRecord", "WorkbenchError", "sync", "__version__"]
