"""The SQLite cache: schema, migrations, crash-safe writes and reads as records and DataFrames.

Why SQLite in WAL mode: a notebook kernel reads a consistent snapshot while a sync process writes.
Why raw JSON beside typed columns: every derived column can be rebuilt offline; typed columns are
what charts and filters need fast. A PR and its children are written in one transaction (whole or
absent); rows are upserted on natural keys and never deleted.

One job per module; `Store` is their sum:
    schema.py  DDL per version, migrations (backup first), refusing foreign or newer files
    base.py    the connection, transactions, repositories (StoreBase)
    prs.py     writing PRs: upsert with children, merging sources field by field
    reads.py   PRs as DataFrames (an Arrow snapshot per repository) and PRRecords; trend frames
    briefs.py  brief versions and stale-edit conflicts
    runs.py    sync bookkeeping: watermark, cursor, HTTP validators, sync runs
    values.py  UTC times and compact JSON
"""

from __future__ import annotations

import os

from .base import StoreBase
from .briefs import BriefsMixin, BriefVersion, StaleEditError
from .prs import SOURCE_RANK, PRWritesMixin
from .reads import PR_COLUMNS, TIME_COLUMNS, ReadsMixin
from .runs import RepoState, RunsMixin, RunSummary, SyncBusy, SyncStatus
from .schema import MIGRATIONS, SCHEMA_VERSION
from .values import iso_utc, utcnow


class Store(PRWritesMixin, ReadsMixin, BriefsMixin, RunsMixin, StoreBase):
    """One SQLite file. Cheap to open; each method is its own transaction unless inside `transaction()`."""


def __getattr__(name: str):  # FRAME_DTYPES needs pandas: built on first use, not on import
    if name == "FRAME_DTYPES":
        from .reads import frame_dtypes

        return frame_dtypes()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def open_cache(path: str | os.PathLike | None = None, *, create: bool = False) -> Store:
    """The notebook entry point: `open_cache()` reads cache/ (or $WORKBENCH_CACHE)."""
    return Store(path, create=create)


__all__ = [
    "Store",
    "open_cache",
    "StaleEditError",
    "BriefVersion",
    "iso_utc",
    "utcnow",
    "SCHEMA_VERSION",
    "MIGRATIONS",
    "PR_COLUMNS",
    "FRAME_DTYPES",
    "TIME_COLUMNS",
    "SOURCE_RANK",
    "SyncBusy",
    "SyncStatus",
    "RunSummary",
    "RepoState",
]
