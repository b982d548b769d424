"""Reading the cache: PRs as DataFrames for tables and charts, and as whole PRRecords for analysis.

DataFrames are built from plain tuples (see StoreBase._frame). Most of their cost is Python's sqlite3
making one object per cell: the 3,000-PR frame takes several times what pandas.read_csv of the same
rows does. So a repository's whole PR frame is also kept as an Arrow IPC (Feather) snapshot, written
by pyarrow, tagged with the repository's generation (bumped by every PR write in its transaction);
an unfiltered `prs(repo)` decodes that instead of the rows while the generation is current
(benchmarks/bench_store.py measures both paths against pandas.read_csv).
"""

from __future__ import annotations

import io
import json
import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import closing
from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pandas loads with the first DataFrame read, not with the store (`workbench --help`)
    import pandas as pd

from ..config import WorkbenchError
from ..records import PRRecord
from .base import StoreBase
from .values import iso_utc

PR_COLUMNS = [
    "repo", "number", "title", "state", "draft", "author",
    "created_at", "updated_at", "merged_at", "closed_at",
    "additions", "deletions", "changed_files", "comments", "review_comments", "reviews", "commits",
    "labels", "title_tags", "kind", "breaking", "revert",
    "source", "files_truncated", "commits_truncated", "extra_json",
]  # fmt: skip
TIME_COLUMNS = ["created_at", "updated_at", "merged_at", "closed_at"]
BOOL_COLUMNS = ["draft", "breaking", "revert", "files_truncated", "commits_truncated"]
COUNT_COLUMNS = ["additions", "deletions", "changed_files", "comments", "review_comments", "reviews", "commits"]  # fmt: skip


# One declared type per column, whatever the rows hold (an all-NULL column would otherwise come out as
# object or float): the frame is then the same on every read and survives the Arrow round trip intact.
# Text takes pandas' own default for strings (Arrow-backed "str" in pandas 3, object before); counts
# are nullable because a clone or facts-only PR does not know them.
# Built on first use (FRAME_DTYPES below), since the text dtype is pandas' own.
@cache
def frame_dtypes() -> dict[str, Any]:
    import pandas as pd

    text = pd.Series([""]).dtype
    return {
        c: "int64" if c == "number"
        else "datetime64[us, UTC]" if c in TIME_COLUMNS
        else "Int64" if c in COUNT_COLUMNS
        else "bool" if c in BOOL_COLUMNS
        else text
        for c in PR_COLUMNS
    }  # fmt: skip


@cache
def _frame_types() -> list[tuple[str, Any]]:
    import pandas as pd

    return [(c, pd.api.types.pandas_dtype(t)) for c, t in frame_dtypes().items()]


def __getattr__(name: str) -> Any:  # FRAME_DTYPES, without importing pandas with the module
    if name == "FRAME_DTYPES":
        return frame_dtypes()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_PR_SELECT = ", ".join("r.full_name AS repo" if c == "repo" else f"p.{c}" for c in PR_COLUMNS)
_PR_FROM = "FROM prs p JOIN repos r ON r.pk=p.repo_pk"
_PR_ORDER = "ORDER BY r.full_name, p.number DESC"


class ReadsMixin(StoreBase):
    def prs(
        self,
        repo: str | None = None,
        *,
        state: str | None = None,
        numbers: Iterable[int] | None = None,
        since: str | None = None,
        merged_since: str | None = None,
        source: str | None = None,
        author: str | None = None,
        limit: int | None = None,
    ) -> pd.DataFrame:
        """One row per PR (PR_COLUMNS typed as FRAME_DTYPES: times as UTC datetimes, flags as booleans,
        counts as nullable Int64). `since` filters on updated_at (or merged_at when unknown); `state` is
        open | closed | merged | all (closed means closed without merging)."""
        filtered = state not in (None, "all") or numbers is not None
        if repo and not (filtered or since or merged_since or source or author or limit):
            # The whole repository: the one frame read often enough to be worth a snapshot.
            return self._whole_frame(self._require_repo(repo))
        where, args = self._pr_where(repo, state, numbers, since, merged_since, source, author)
        sql = f"SELECT {_PR_SELECT} {_PR_FROM} WHERE {' AND '.join(where)} {_PR_ORDER}"
        if limit:
            sql += f" LIMIT {int(limit)}"
        return _typed(self._frame(sql, args))

    def pr_numbers(
        self,
        repo: str,
        *,
        state: str | None = None,
        numbers: Iterable[int] | None = None,
        since: str | None = None,
    ) -> list[int]:
        """The numbers `prs` would return, newest first, without building a DataFrame (nor importing
        pandas: a one-PR command stays quick)."""
        where, args = self._pr_where(repo, state, numbers, since, None, None, None)
        sql = f"SELECT p.number {_PR_FROM} WHERE {' AND '.join(where)} {_PR_ORDER}"
        return [int(r[0]) for r in self.conn.execute(sql, args)]

    def _pr_where(self, repo, state, numbers, since, merged_since, source, author) -> tuple[list[str], list]:
        where, args = ["p.deleted_at IS NULL"], []
        if repo:
            where.append("p.repo_pk=?")
            args.append(self._require_repo(repo))
        if state and state != "all":
            where.append("p.state=?")
            args.append(state)
        if numbers is not None:
            nums = [int(x) for x in numbers]
            where.append(f"p.number IN ({','.join('?' * len(nums)) or 'NULL'})")
            args.extend(nums)
        if since:
            where.append("coalesce(p.updated_at, p.merged_at, p.created_at) >= ?")
            args.append(iso_utc(since))
        if merged_since:
            where.append("p.merged_at >= ?")
            args.append(iso_utc(merged_since))
        if source:
            where.append("instr(p.source, ?) > 0")
            args.append(source)
        if author:
            where.append("p.author=?")
            args.append(author)
        return where, args

    def _whole_frame(self, pk: int) -> pd.DataFrame:
        """A repository's whole PR frame: the snapshot if it is of the current generation, else the rows
        (then snapshotted for the next reader)."""
        sql = f"SELECT {_PR_SELECT} {_PR_FROM} WHERE p.deleted_at IS NULL AND p.repo_pk=? {_PR_ORDER}"
        if self.conn.in_transaction:  # the caller's own transaction may yet roll back: no snapshot
            return _typed(self._frame(sql, (pk,)))
        generation, snap_generation, payload = self.conn.execute(
            "SELECT r.generation, f.generation, f.payload FROM repos r "
            "LEFT JOIN pr_frames f ON f.repo_pk=r.pk WHERE r.pk=?",
            (pk,),
        ).fetchone()
        if payload is not None and snap_generation == generation:
            df = _decode(payload)
            if df is not None:
                return df
        # The generation is read before the rows, with no read transaction held across both (the UI's
        # autosave thread shares this connection and opens its own): a write committed in between makes
        # the rows newer than their label, and generations only grow, so such a snapshot is never used.
        df = _typed(self._frame(sql, (pk,)))
        self._save_snapshot(pk, generation, df)
        return df

    def _save_snapshot(self, pk: int, generation: int, df: pd.DataFrame) -> None:
        """Best effort: a read-only file or a sync holding the write lock just means no snapshot this
        time (a notebook read must not wait behind a sync). A frame is labelled with the generation read
        before its rows, so its rows are never older than its label; the guard only keeps a frame that a
        write has since outdated from replacing a current snapshot another reader stored meanwhile."""
        buf = io.BytesIO()
        df.to_feather(buf)
        try:
            # Its own connection with no busy wait: the shared one keeps its timeout for real writes
            # (the UI's autosave thread writes through it).
            with closing(sqlite3.connect(self.path, timeout=0, isolation_level=None)) as c:
                c.execute(
                    "INSERT INTO pr_frames(repo_pk, generation, payload) SELECT ?, ?, ? "
                    "WHERE (SELECT generation FROM repos WHERE pk=?)=? ON CONFLICT(repo_pk) DO UPDATE "
                    "SET generation=excluded.generation, payload=excluded.payload",
                    (pk, generation, buf.getvalue(), pk, generation),
                )
        except sqlite3.Error:
            pass

    def pr(self, repo: str, number: int) -> PRRecord:
        pk = self._require_repo(repo)
        row = self.conn.execute("SELECT * FROM prs WHERE repo_pk=? AND number=?", (pk, number)).fetchone()
        if row is None:
            raise WorkbenchError(
                f"{repo}#{number} is not in the cache: sync it with `workbench sync {repo} --number {number}`"
            )
        full_name = self.conn.execute("SELECT full_name FROM repos WHERE pk=?", (pk,)).fetchone()[0]
        pr = json.loads(row["detail_json"] or "{}")
        if row["extra_json"]:
            pr["_extra"] = json.loads(row["extra_json"])
        files = self._files(pk, number, row["files_key"])
        q = self.conn.execute
        return PRRecord(
            repo=full_name,
            number=number,
            pr=pr,
            files=files,
            issue_comments=_raw(q, "issue_comments", pk, number, "created_at, id", "AND deleted_at IS NULL"),
            reviews=_raw(q, "reviews", pk, number, "submitted_at, id"),
            review_comments=[
                _review_comment(r)
                for r in q(
                    "SELECT raw_json, thread_resolved FROM review_comments WHERE repo_pk=? AND number=? "
                    "ORDER BY created_at, id",
                    (pk, number),
                )
            ],
            commits=_raw(q, "commits", pk, number, "position"),
            source=row["source"],
            field_sources=json.loads(row["field_sources"] or "{}"),
            files_truncated=bool(row["files_truncated"]),
            commits_truncated=bool(row["commits_truncated"]),
        )

    def _files(self, pk: int, number: int, files_key: str | None) -> list[dict]:
        q = "SELECT raw_json, patch, patch_status FROM pr_files WHERE repo_pk=? AND number=? AND files_key=? ORDER BY position"
        rows = self.conn.execute(q, (pk, number, files_key)).fetchall()
        if not rows:  # e.g. API metadata arrived but its files did not: show what a clone gave
            latest = self.conn.execute(
                "SELECT files_key FROM pr_files WHERE repo_pk=? AND number=? ORDER BY rowid DESC LIMIT 1",
                (pk, number),
            ).fetchone()
            rows = self.conn.execute(q, (pk, number, latest[0])).fetchall() if latest else []
        out = []
        for raw, patch, status in rows:
            f = json.loads(raw)
            f["patch"] = patch
            f["patch_status"] = status
            out.append(f)
        return out

    def records(self, repo: str, numbers: Iterable[int] | None = None) -> Iterator[PRRecord]:
        """Whole records, newest number first unless `numbers` says otherwise."""
        if numbers is None:
            numbers = [
                r[0]
                for r in self.conn.execute(
                    "SELECT number FROM prs WHERE repo_pk=? AND deleted_at IS NULL ORDER BY number DESC",
                    (self._require_repo(repo),),
                )
            ]
        for n in list(numbers):
            yield self.pr(repo, int(n))

    def known_prs(self, repo: str) -> dict[int, tuple[str, str]]:
        """number -> (title, state): what analysis needs to resolve cross-references, without I/O of its own."""
        pk = self.repo_pk(repo)
        if pk is None:
            return {}
        return {
            int(r[0]): (r[1] or "", r[2] or "")
            for r in self.conn.execute(
                "SELECT number, title, state FROM prs WHERE repo_pk=? AND deleted_at IS NULL", (pk,)
            )
        }

    # Flat reads for trend charts: one query each, no raw JSON decoded (a record per PR is ~100x slower).
    def reviews_frame(self, repo: str) -> pd.DataFrame:
        """One row per review: repo, number, author, state, submitted_at (UTC), commit_id."""
        pk = self._require_repo(repo)
        df = self._frame(
            "SELECT ? AS repo, v.number, v.author, v.state, v.submitted_at, v.commit_id FROM reviews v "
            "JOIN prs p ON p.repo_pk=v.repo_pk AND p.number=v.number AND p.deleted_at IS NULL "
            "WHERE v.repo_pk=? ORDER BY v.number, v.submitted_at, v.id",
            (repo, pk),
        )
        df["submitted_at"] = _utc(df["submitted_at"])
        return df

    def comments_frame(self, repo: str) -> pd.DataFrame:
        """One row per issue comment or review comment: repo, number, author, created_at (UTC), kind."""
        pk = self._require_repo(repo)
        df = self._frame(
            "SELECT ? AS repo, c.number, c.author, c.created_at, c.kind FROM ("
            " SELECT number, author, created_at, 'issue' AS kind, repo_pk FROM issue_comments WHERE deleted_at IS NULL"
            " UNION ALL SELECT number, author, created_at, 'review' AS kind, repo_pk FROM review_comments) c "
            "JOIN prs p ON p.repo_pk=c.repo_pk AND p.number=c.number AND p.deleted_at IS NULL "
            "WHERE c.repo_pk=? ORDER BY c.number, c.created_at",
            (repo, pk),
        )
        df["created_at"] = _utc(df["created_at"])
        return df

    def files_frame(self, repo: str) -> pd.DataFrame:
        """One row per file in each PR's current file set: repo, number, filename, additions, deletions.
        Like `pr()`, falls back to the newest file set when the current key has none."""
        pk = self._require_repo(repo)
        return self._frame(
            "SELECT ? AS repo, f.number, f.filename, f.additions, f.deletions FROM pr_files f "
            "JOIN prs p ON p.repo_pk=f.repo_pk AND p.number=f.number AND p.deleted_at IS NULL "
            "WHERE f.repo_pk=? AND f.files_key=coalesce("
            " (SELECT p.files_key WHERE EXISTS (SELECT 1 FROM pr_files g WHERE g.repo_pk=p.repo_pk"
            "  AND g.number=p.number AND g.files_key=p.files_key)),"
            " (SELECT g.files_key FROM pr_files g WHERE g.repo_pk=p.repo_pk AND g.number=p.number"
            "  ORDER BY g.rowid DESC LIMIT 1)) "
            "ORDER BY f.number, f.position",
            (repo, pk),
        )

    def pr_count(self, repo_pk: int) -> int:
        return self.conn.execute("SELECT count(*) FROM prs WHERE repo_pk=?", (repo_pk,)).fetchone()[0]

    def api_files_cached(self, repo_pk: int, number: int, head: str | None) -> tuple[bool, bool]:
        """(the API's files for this head SHA are cached, they were truncated): lets a re-sync skip /files."""
        if not head:
            return False, False
        row = self.conn.execute(
            "SELECT head_sha, files_truncated FROM prs WHERE repo_pk=? AND number=? AND instr(source,'api')>0",
            (repo_pk, number),
        ).fetchone()
        if row is None or row[0] != head:
            return False, False
        has = self.conn.execute(
            "SELECT 1 FROM pr_files WHERE repo_pk=? AND number=? AND files_key=? LIMIT 1",
            (repo_pk, number, head),
        ).fetchone()
        return has is not None, bool(row[1])

    def pr_updated_at(self, repo_pk: int, number: int) -> str | None:
        row = self.conn.execute(
            "SELECT updated_at, source FROM prs WHERE repo_pk=? AND number=?", (repo_pk, number)
        ).fetchone()
        return row["updated_at"] if row and "api" in row["source"] else None


def _utc(times: pd.Series) -> pd.Series:
    """The store's ISO 8601 text times as UTC timestamps."""
    import pandas as pd

    return pd.to_datetime(times, utc=True, format="ISO8601")


def _typed(df: pd.DataFrame) -> pd.DataFrame:
    for col in TIME_COLUMNS:
        df[col] = _utc(df[col])
    for col in BOOL_COLUMNS:
        df[col] = df[col].fillna(0).astype(bool)
    return df.astype(frame_dtypes())


def _decode(payload: bytes) -> pd.DataFrame | None:
    """The snapshot as a frame, or None when it cannot be used (the rows are the truth). Feather, unlike
    pickle, runs no code on load, so a damaged or planted payload can at worst fail to decode."""
    import pandas as pd

    try:
        df = pd.read_feather(io.BytesIO(payload))
    except Exception:
        return None
    # Written by another release with other columns or types: not ours to return.
    return df if list(df.dtypes.items()) == _frame_types() else None


def _raw(q, table: str, pk: int, number: int, order: str, where: str = "") -> list[dict]:
    """A PR's child rows as GitHub sent them (their raw JSON), in a stable order."""
    sql = f"SELECT raw_json FROM {table} WHERE repo_pk=? AND number=? {where} ORDER BY {order}"
    return [json.loads(r[0]) for r in q(sql, (pk, number))]


def _review_comment(r: sqlite3.Row) -> dict:
    # REST does not say whether a thread is resolved; GraphQL does, and we keep it beside the raw JSON.
    d = json.loads(r[0])
    if r[1] is not None:
        d["thread_resolved"] = bool(r[1])
    return d
