"""Sync bookkeeping: where the next sync of a repository resumes (watermark, cursor), HTTP validators
for conditional requests, and the log of sync runs."""

from __future__ import annotations

import json
import os
import socket
import sqlite3
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # only annotations here; pandas loads with the first DataFrame read
    import pandas as pd

from .base import StoreBase
from .values import dumps, utcnow


class RunsMixin(StoreBase):
    def repo_state(self, full_name: str) -> dict[str, Any]:
        row = self.conn.execute("SELECT * FROM repos WHERE full_name=?", (full_name,)).fetchone()
        if row is None:
            return {}
        return {
            "pk": row["pk"],
            "full_name": row["full_name"],
            "github_id": row["github_id"],
            "watermark": row["watermark"],
            "cursor": json.loads(row["cursor_json"]) if row["cursor_json"] else None,
        }

    def set_watermark(self, repo_pk: int, watermark: str | None) -> None:
        with self.transaction() as c:
            c.execute("UPDATE repos SET watermark=? WHERE pk=?", (watermark, repo_pk))

    def set_cursor(self, repo_pk: int, cursor: dict | None) -> None:
        with self.transaction() as c:
            c.execute("UPDATE repos SET cursor_json=? WHERE pk=?", (dumps(cursor), repo_pk))

    # ---- HTTP validators --------------------------------------------------------------------------
    def validator(self, url: str) -> tuple[str | None, str | None]:
        row = self.conn.execute(
            "SELECT etag, last_modified FROM http_validators WHERE url=?", (url,)
        ).fetchone()
        return (row["etag"], row["last_modified"]) if row else (None, None)

    def set_validator(self, url: str, etag: str | None, last_modified: str | None) -> None:
        with self.transaction() as c:
            c.execute(
                "INSERT INTO http_validators(url, etag, last_modified, updated_at) VALUES (?,?,?,?) "
                "ON CONFLICT(url) DO UPDATE SET etag=excluded.etag, last_modified=excluded.last_modified, updated_at=excluded.updated_at",
                (url, etag, last_modified, utcnow()),
            )

    # ---- sync runs ----------------------------------------------------------------------------------
    def start_run(self, repo_pk: int | None, kind: str) -> int:
        self.close_dead_runs()
        with self.transaction() as c:
            cur = c.execute(
                "INSERT INTO sync_runs(repo_pk, kind, started_at, status, pid, host) "
                "VALUES (?,?,?, 'running', ?, ?)",
                (repo_pk, kind, utcnow(), os.getpid(), socket.gethostname()),
            )
            return int(cur.lastrowid)

    def close_dead_runs(self) -> int:
        """Mark "interrupted" the runs still "running" whose process on this machine has ended (killed or
        crashed: it never wrote its end). Runs of another machine, or from before v5 (no pid), are left
        as they are: nothing here can tell whether they still go. Returns how many were closed."""
        host = socket.gethostname()
        rows = self.conn.execute(
            "SELECT id, pid FROM sync_runs WHERE status='running' AND host=? AND pid IS NOT NULL", (host,)
        ).fetchall()
        dead = [(r["id"], r["pid"]) for r in rows if not _alive(r["pid"])]
        if dead:
            with self.transaction() as c:
                for run_id, pid in dead:
                    c.execute(
                        "UPDATE sync_runs SET status='interrupted', ended_at=?, note=? "
                        "WHERE id=? AND status='running'",
                        (
                            utcnow(),
                            f"process {pid} ended without finishing the run (killed or crashed)",
                            run_id,
                        ),
                    )
        return len(dead)

    def finish_run(
        self,
        run_id: int,
        status: str,
        *,
        rest_requests: int = 0,
        not_modified: int = 0,
        graphql_points: int = 0,
        prs_written: int = 0,
        errors: list[str] | None = None,
        note: str | None = None,
    ) -> None:
        with self.transaction() as c:
            c.execute(
                "UPDATE sync_runs SET ended_at=?, status=?, rest_requests=?, not_modified=?, graphql_points=?, "
                "prs_written=?, errors=?, note=? WHERE id=?",
                (utcnow(), status, rest_requests, not_modified, graphql_points, prs_written,
                 dumps(errors or []), note, run_id),
            )  # fmt: skip

    def has_finished_run(self, repo_pk: int, kind: str, note: str) -> bool:
        """Whether a run of this kind with this note ended well (e.g. this exact sample file was loaded)."""
        row = self.conn.execute(
            "SELECT 1 FROM sync_runs WHERE repo_pk=? AND kind=? AND status='ok' AND note=? LIMIT 1",
            (repo_pk, kind, note),
        ).fetchone()
        return row is not None

    def sync_runs(self) -> pd.DataFrame:
        try:
            self.close_dead_runs()  # so the log never shows a dead run as still going
        except sqlite3.OperationalError:  # a read-only cache file: show the log as it is
            pass
        return self._frame(
            "SELECT s.*, r.full_name AS repo FROM sync_runs s LEFT JOIN repos r ON r.pk=s.repo_pk ORDER BY s.id"
        )


def _alive(pid: int) -> bool:
    """Whether a process with this id exists on this machine (signal 0 checks, sends nothing)."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: it exists
        return True
    except OSError:
        return True  # cannot tell: leave the run as it is
    return True
