"""The open cache: one SQLite connection in WAL mode, transactions, and the repositories every other
part of the store is keyed by."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Self

if TYPE_CHECKING:  # pandas loads on the first DataFrame read, not with the store (`workbench --help`)
    import pandas as pd

from ..config import WorkbenchError, db_path
from . import schema
from .values import dumps, utcnow

# How long a write waits for another process's write transaction (a sync) before giving up.
BUSY_TIMEOUT_MS = 30000


class StoreBase:
    """The open connection and the repositories that every other part of the store is keyed by."""

    def __init__(self, path: str | os.PathLike | None = None, *, create: bool = True):
        self.path = db_path(path)
        if not self.path.exists():
            if not create:
                raise WorkbenchError(
                    f"no cache at {self.path}: run `workbench sync` or `workbench sample` first"
                )
            self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self.conn = sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
            self.conn.row_factory = sqlite3.Row
            self.conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
            current = schema.refuse_foreign(self.conn, self.path)
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute("PRAGMA synchronous=NORMAL")
            self.conn.execute("PRAGMA foreign_keys=ON")
            schema.migrate(self.conn, self.path, current)
        except sqlite3.DatabaseError as e:
            raise WorkbenchError(
                f"cache file {self.path} is not a usable SQLite database ({e}); it was left untouched — "
                f"move it aside or point --cache / WORKBENCH_CACHE at another directory"
            ) from None
        self._in_tx = 0

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """BEGIN IMMEDIATE … COMMIT; nested calls join the outer transaction."""
        if self._in_tx:
            self._in_tx += 1
            try:
                yield self.conn
            finally:
                self._in_tx -= 1
            return
        self.conn.execute("BEGIN IMMEDIATE")
        self._in_tx = 1
        try:
            yield self.conn
        except BaseException:
            self._in_tx = 0
            self.conn.execute("ROLLBACK")
            raise
        else:
            self._in_tx = 0
            self.conn.execute("COMMIT")

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _frame(self, sql: str, params: Sequence[Any] = ()) -> pd.DataFrame:
        """A query's result as a DataFrame, typed as pandas.read_sql_query types it. The rows come back
        as plain tuples: sqlite3.Row (the connection's default) costs a Python call per cell."""
        cur = self.conn.cursor()
        cur.row_factory = None
        try:
            rows = cur.execute(sql, params).fetchall()
            columns = [d[0] for d in cur.description]
        finally:
            cur.close()
        import pandas as pd

        return pd.DataFrame.from_records(rows, columns=columns, coerce_float=True)

    # ---- repositories ---------------------------------------------------------------------------
    def upsert_repo(self, full_name: str, github_id: int | None = None, raw: dict | None = None) -> int:
        """Return the repo's pk; a known github_id under a new name is a rename, and the name follows."""
        with self.transaction() as c:
            row = None
            if github_id is not None:
                row = c.execute("SELECT pk, full_name FROM repos WHERE github_id=?", (github_id,)).fetchone()
            if row is None:
                row = c.execute("SELECT pk, full_name FROM repos WHERE full_name=?", (full_name,)).fetchone()
            if row is None:
                cur = c.execute(
                    "INSERT INTO repos(full_name, github_id, raw_json, updated_at) VALUES (?,?,?,?)",
                    (full_name, github_id, dumps(raw), utcnow()),
                )
                return int(cur.lastrowid)
            pk = int(row["pk"])
            if row["full_name"].lower() != full_name.lower():
                # The old name may linger as a separate clone-only entry; leave it, rename this one.
                clash = c.execute(
                    "SELECT pk FROM repos WHERE full_name=? AND pk<>?", (full_name, pk)
                ).fetchone()
                if clash is None:
                    # The frame's `repo` column changes with the name: a new generation.
                    c.execute(
                        "UPDATE repos SET full_name=?, generation=generation+1 WHERE pk=?", (full_name, pk)
                    )
            c.execute(
                "UPDATE repos SET github_id=coalesce(?, github_id), raw_json=coalesce(?, raw_json), updated_at=? WHERE pk=?",
                (github_id, dumps(raw), utcnow(), pk),
            )
            return pk

    def repo_pk(self, full_name: str) -> int | None:
        row = self.conn.execute("SELECT pk FROM repos WHERE full_name=?", (full_name,)).fetchone()
        return int(row["pk"]) if row else None

    def _require_repo(self, full_name: str) -> int:
        pk = self.repo_pk(full_name)
        if pk is None:
            known = ", ".join(self.repos()["full_name"]) or "none"
            raise WorkbenchError(f"repository {full_name} is not in the cache {self.path} (cached: {known})")
        return pk

    def repos(self) -> pd.DataFrame:
        return self._frame(
            "SELECT r.full_name, r.github_id, r.watermark, count(p.number) AS prs FROM repos r "
            "LEFT JOIN prs p ON p.repo_pk=r.pk AND p.deleted_at IS NULL GROUP BY r.pk ORDER BY r.full_name"
        )


def bump_generation(c: sqlite3.Connection, repo_pk: int) -> None:
    """Called inside every transaction that changes a repository's PR rows: the cached DataFrame
    snapshot of an older generation is then simply not used (see ReadsMixin.prs)."""
    c.execute("UPDATE repos SET generation=generation+1 WHERE pk=?", (repo_pk,))
