"""Sync bookkeeping: where the next sync of a repository resumes (watermark, cursors), HTTP validators
for conditional requests, PRs that failed, the log of sync runs, and the one-writer rule.

One writer per repository and cache: a sync (API, clone backfill or sample load) records its run as
"running" with its process id before it writes anything; a second one for the same repository then
refuses with a message naming the first (the run row is the lock, so kill -9 frees it: a dead
process's run is marked interrupted). Readers never wait: they take no part in this.
"""

from __future__ import annotations

import json
import os
import socket
import sqlite3
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # only annotations here; pandas loads with the first DataFrame read
    import pandas as pd

from ..config import WorkbenchError
from .base import StoreBase
from .values import dumps, utcnow

FULL_SCOPE = "all"  # the cursor key of a pass over the whole history: the only one that moves the watermark
# A running run of another machine, silent for this long, is taken as dead (no pid check can reach it).
FOREIGN_RUN_STALE = timedelta(hours=2)


class SyncBusy(WorkbenchError):
    """Another sync is writing this repository into this cache."""


@dataclass
class RunSummary:
    """One row of the run log, as `workbench status` shows it."""

    id: int
    kind: str
    scope: str | None
    status: str
    started_at: str
    ended_at: str | None
    prs_written: int
    rest_requests: int
    graphql_points: int
    failed_prs: int
    note: str | None


@dataclass
class RepoState:
    """One repository's row: its names, the watermark of the last complete full-history pass, and where
    each interrupted pass resumes."""

    pk: int
    full_name: str
    github_id: int | None
    watermark: str | None  # updated_at the next full-history pass lists down to
    cursors: dict[str, dict] = field(default_factory=dict)  # scope -> the page a rerun resumes from

    @property
    def cursor(self) -> dict | None:
        """The full-history pass's cursor (the one that moves the watermark)."""
        return self.cursors.get(FULL_SCOPE)


@dataclass
class SyncStatus:
    """What the cache holds for one repository and how it got there."""

    repo: str
    prs_by_state: dict[str, int]
    prs_by_source: dict[str, int]
    oldest: tuple[int, str] | None  # (number, created_at or merged_at) of the oldest PR held
    newest: tuple[int, str] | None  # (number, updated_at) of the most recently updated PR held
    full_history: bool  # a pass over every PR completed once: the watermark is set
    watermark: str | None
    unfinished: list[str] = field(default_factory=list)  # scopes of passes a rerun resumes
    failed: list[tuple[int, str]] = field(default_factory=list)  # (number, error) owed to the next pass
    last_runs: dict[str, RunSummary] = field(default_factory=dict)  # "api full", "api since", "git", ...

    @property
    def total(self) -> int:
        return sum(self.prs_by_state.values())


class RunsMixin(StoreBase):
    def repo_state(self, full_name: str) -> RepoState | None:
        """The repository's row, or None when the cache has never held it."""
        row = self.conn.execute("SELECT * FROM repos WHERE full_name=?", (full_name,)).fetchone()
        if row is None:
            return None
        return RepoState(
            pk=row["pk"],
            full_name=row["full_name"],
            github_id=row["github_id"],
            watermark=row["watermark"],
            cursors=_cursors(row["cursor_json"], row["watermark"]),
        )

    def set_watermark(self, repo_pk: int, watermark: str | None) -> None:
        with self.transaction() as c:
            c.execute("UPDATE repos SET watermark=? WHERE pk=?", (watermark, repo_pk))

    def set_cursor(self, repo_pk: int, cursor: dict | None, scope: str = FULL_SCOPE) -> None:
        """Where the pass of this scope resumes (None: it is done). Passes of other scopes keep theirs,
        so a --since pass never takes over, or ends, the full-history pass (and the reverse)."""
        with self.transaction() as c:
            row = c.execute("SELECT cursor_json, watermark FROM repos WHERE pk=?", (repo_pk,)).fetchone()
            cursors = _cursors(row["cursor_json"], row["watermark"]) if row else {}
            if cursor is None:
                cursors.pop(scope, None)
            else:
                cursors[scope] = cursor
            c.execute("UPDATE repos SET cursor_json=? WHERE pk=?", (dumps(cursors or None), repo_pk))

    def clear_cursors(self, repo_pk: int) -> None:
        with self.transaction() as c:
            c.execute("UPDATE repos SET cursor_json=NULL WHERE pk=?", (repo_pk,))

    # ---- PRs that failed ----------------------------------------------------------------------------
    def record_failure(self, repo_pk: int, number: int, error: str) -> None:
        now = utcnow()
        with self.transaction() as c:
            c.execute(
                "INSERT INTO sync_failures(repo_pk, number, error, attempts, first_failed_at, last_failed_at) "
                "VALUES (?,?,?,1,?,?) ON CONFLICT(repo_pk, number) DO UPDATE SET error=excluded.error, "
                "attempts=sync_failures.attempts+1, last_failed_at=excluded.last_failed_at",
                (repo_pk, number, error, now, now),
            )

    def clear_failure(self, repo_pk: int, number: int) -> None:
        with self.transaction() as c:
            c.execute("DELETE FROM sync_failures WHERE repo_pk=? AND number=?", (repo_pk, number))

    def failures(self, repo_pk: int) -> list[tuple[int, str]]:
        """(number, last error) of the PRs a pass could not sync, oldest failure first."""
        rows = self.conn.execute(
            "SELECT number, error FROM sync_failures WHERE repo_pk=? ORDER BY first_failed_at, number",
            (repo_pk,),
        ).fetchall()
        return [(int(r["number"]), r["error"]) for r in rows]

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
    def start_run(
        self,
        repo_pk: int | None,
        kind: str,
        *,
        repo_name: str | None = None,
        scope: str | None = None,
    ) -> int:
        """Record a run as running, before it writes anything. Raises SyncBusy when another live run
        is writing the same repository (by pk, or by the name as typed before the lookup)."""
        self.close_dead_runs()
        now = utcnow()
        with self.transaction() as c:
            holder = self._live_writer(c, repo_pk, repo_name, exclude=None)
            busy = _busy_message(repo_name or self._repo_name(repo_pk), holder) if holder else None
            # A refused run is logged too (ended at once), so the log shows the collision.
            cur = c.execute(
                "INSERT INTO sync_runs(repo_pk, repo_name, kind, scope, started_at, updated_at, status, pid, "
                "host, ended_at, note) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                (repo_pk, repo_name, kind, scope, now, now, "refused" if busy else "running", os.getpid(),
                 socket.gethostname(), now if busy else None, busy),
            )  # fmt: skip
        if busy:
            raise SyncBusy(busy)
        return int(cur.lastrowid)

    def attach_run(self, run_id: int, repo_pk: int) -> None:
        """The run now knows its repository (after the lookup): claim it, or raise SyncBusy when another
        run holds it under another spelling (a renamed repository, a different case)."""
        self.close_dead_runs()
        with self.transaction() as c:
            holder = self._live_writer(c, repo_pk, None, exclude=run_id)
            if holder is not None:
                raise SyncBusy(_busy_message(self._repo_name(repo_pk), holder))
            c.execute("UPDATE sync_runs SET repo_pk=?, updated_at=? WHERE id=?", (repo_pk, utcnow(), run_id))

    def _live_writer(
        self, c: sqlite3.Connection, repo_pk: int | None, repo_name: str | None, exclude: int | None
    ) -> sqlite3.Row | None:
        if repo_pk is None and not repo_name:
            return None  # a run with no repository (tests, tools) claims nothing
        rows = c.execute(
            "SELECT s.id, s.pid, s.host, s.kind, s.started_at, s.updated_at FROM sync_runs s "
            "WHERE s.status='running' AND s.pid IS NOT NULL AND s.id IS NOT ? AND ("
            "  s.repo_pk=? OR lower(s.repo_name)=lower(?) "
            "  OR s.repo_pk IN (SELECT pk FROM repos WHERE full_name=?) "
            "  OR lower(s.repo_name) IN (SELECT lower(full_name) FROM repos WHERE pk=?))",
            (exclude, repo_pk, repo_name, repo_name, repo_pk),
        ).fetchall()
        host = socket.gethostname()
        for r in rows:
            if r["host"] == host:
                if _alive(r["pid"]):
                    return r
            elif _recent(r["updated_at"] or r["started_at"]):
                return r
        return None

    def _repo_name(self, repo_pk: int | None) -> str:
        row = self.conn.execute("SELECT full_name FROM repos WHERE pk=?", (repo_pk,)).fetchone()
        return row["full_name"] if row else "this repository"

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
                    # The note it left (e.g. "waiting 600 s: rate limit") stays: it says where it died.
                    c.execute(
                        "UPDATE sync_runs SET status='interrupted', ended_at=?, "
                        "note=coalesce(note || '; ', '') || ? WHERE id=? AND status='running'",
                        (
                            utcnow(),
                            f"process {pid} ended without finishing the run (killed or crashed)",
                            run_id,
                        ),
                    )
        return len(dead)

    def update_run(
        self,
        run_id: int,
        *,
        rest_requests: int = 0,
        not_modified: int = 0,
        graphql_points: int = 0,
        prs_written: int = 0,
        failed_prs: int = 0,
        note: str | None = None,
    ) -> None:
        """What a running run has done so far, so a killed run still shows it."""
        with self.transaction() as c:
            c.execute(
                "UPDATE sync_runs SET updated_at=?, rest_requests=?, not_modified=?, graphql_points=?, "
                "prs_written=?, failed_prs=?, note=coalesce(?, note) WHERE id=? AND status='running'",
                (
                    utcnow(),
                    rest_requests,
                    not_modified,
                    graphql_points,
                    prs_written,
                    failed_prs,
                    note,
                    run_id,
                ),
            )

    def finish_run(
        self,
        run_id: int,
        status: str,
        *,
        rest_requests: int = 0,
        not_modified: int = 0,
        graphql_points: int = 0,
        prs_written: int = 0,
        failed_prs: int = 0,
        errors: list[str] | None = None,
        note: str | None = None,
    ) -> None:
        now = utcnow()
        with self.transaction() as c:
            c.execute(
                "UPDATE sync_runs SET ended_at=?, updated_at=?, status=?, rest_requests=?, not_modified=?, "
                "graphql_points=?, prs_written=?, failed_prs=?, errors=?, note=? WHERE id=?",
                (now, now, status, rest_requests, not_modified, graphql_points, prs_written, failed_prs,
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
            "SELECT s.*, coalesce(r.full_name, s.repo_name) AS repo FROM sync_runs s "
            "LEFT JOIN repos r ON r.pk=s.repo_pk ORDER BY s.id"
        )

    # ---- what the cache holds ----------------------------------------------------------------------
    def sync_status(self, repo: str) -> SyncStatus:
        """`workbench status OWNER/REPO`: PRs by state and source, the oldest and newest, whether the
        full history was synced, passes a rerun resumes, PRs owed, and the last run of each kind."""
        try:
            self.close_dead_runs()
        except sqlite3.OperationalError:
            pass
        pk = self._require_repo(repo)
        state = self.repo_state(self._repo_name(pk))
        q = self.conn.execute
        by_state = {
            r[0]: r[1]
            for r in q(
                "SELECT state, count(*) FROM prs WHERE repo_pk=? AND deleted_at IS NULL GROUP BY state", (pk,)
            )
        }
        by_source = {
            r[0]: r[1]
            for r in q(
                "SELECT source, count(*) FROM prs WHERE repo_pk=? AND deleted_at IS NULL GROUP BY source",
                (pk,),
            )
        }
        oldest = q(
            "SELECT number, coalesce(created_at, merged_at) AS t FROM prs WHERE repo_pk=? AND deleted_at IS NULL "
            "AND t IS NOT NULL ORDER BY t, number LIMIT 1",
            (pk,),
        ).fetchone()
        newest = q(
            "SELECT number, coalesce(updated_at, merged_at) AS t FROM prs WHERE repo_pk=? AND deleted_at IS NULL "
            "AND t IS NOT NULL ORDER BY t DESC, number DESC LIMIT 1", (pk,)).fetchone()  # fmt: skip
        last: dict[str, RunSummary] = {}
        for r in q("SELECT * FROM sync_runs WHERE repo_pk=? ORDER BY id", (pk,)):
            run = RunSummary(
                id=r["id"], kind=r["kind"], scope=r["scope"], status=r["status"], started_at=r["started_at"],
                ended_at=r["ended_at"], prs_written=r["prs_written"] or 0, rest_requests=r["rest_requests"] or 0,
                graphql_points=r["graphql_points"] or 0, failed_prs=r["failed_prs"] or 0, note=r["note"],
            )  # fmt: skip
            last[_run_class(r["kind"], r["scope"])] = run
        return SyncStatus(
            repo=state.full_name,
            prs_by_state=by_state,
            prs_by_source=by_source,
            oldest=(int(oldest[0]), oldest[1]) if oldest else None,
            newest=(int(newest[0]), newest[1]) if newest else None,
            full_history=state.watermark is not None,
            watermark=state.watermark,
            unfinished=sorted(state.cursors),
            failed=self.failures(pk),
            last_runs=last,
        )


def _run_class(kind: str, scope: str | None) -> str:
    """'api full', 'api since', 'api numbers', 'api state', 'git', 'sample': one line each in status."""
    if kind != "api" or not scope:
        return kind
    return f"{kind} {scope.split()[0]}"


def _cursors(raw: str | None, watermark: str | None) -> dict[str, dict]:
    """The cursors by scope. A v5 cache held one flat cursor: it was a full-history pass only when its
    floor was the watermark (a --since pass's floor is its date), else it is dropped, never adopted."""
    data = json.loads(raw) if raw else None
    if not data:
        return {}
    if "page_url" in data:  # the v5 shape
        full = data.get("state") == "all" and data.get("floor") == watermark
        return {FULL_SCOPE: data} if full else {}
    return data


def _recent(when: str | None) -> bool:
    if not when:
        return False
    t = datetime.fromisoformat(when.replace("Z", "+00:00"))
    return datetime.now(UTC) - t < FOREIGN_RUN_STALE


def _busy_message(repo: str, holder: sqlite3.Row) -> str:
    return (
        f"another sync of {repo} is writing to this cache (process {holder['pid']} on {holder['host']}, "
        f"{holder['kind']}, started {holder['started_at']}): this one stops before writing anything. "
        f"Rerun when it has finished (a rerun picks up whatever it leaves), or stop it first"
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
