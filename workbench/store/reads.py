"""Reading the cache: PRs as DataFrames for tables and charts, and as whole PRRecords for analysis.

DataFrames are built column by column from plain tuples, each column made once in its declared type
(times come out of SQLite as Unix seconds, so no text is parsed). Most of the remaining cost is
Python's sqlite3 making one object per cell, several times what pandas.read_csv of the same rows
costs. So each repository's whole PR frame is also kept as an Arrow IPC (Feather) snapshot, written
by pyarrow, tagged with the repository's generation (bumped by every PR write in its transaction);
an unfiltered `prs(repo)` decodes that instead of the rows while the generation is current, and
`prs()` with no repository joins the repositories' snapshots (benchmarks/bench_store.py measures
both paths against pandas.read_csv).

Whole records are read in bulk (`prs_records`): one query per table for a batch of PRs, not the
~8 queries per PR of `pr()`.
"""

from __future__ import annotations

import io
import json
import os
import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import closing
from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pandas loads with the first DataFrame read, not with the store (`workbench --help`)
    import pandas as pd

from ..config import WorkbenchError
from ..records import KnownPRs, PRRecord
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


# Times as Unix seconds: SQLite reads its own ISO text in C, and pandas takes integers without parsing.
_PR_SELECT = ", ".join(
    "r.full_name AS repo" if c == "repo" else f"unixepoch(p.{c})" if c in TIME_COLUMNS else f"p.{c}"
    for c in PR_COLUMNS
)
_PR_FROM = "FROM prs p JOIN repos r ON r.pk=p.repo_pk"
_PR_ORDER = "ORDER BY r.full_name, p.number DESC"
_FILES_COLUMNS = ["repo", "number", "filename", "additions", "deletions"]
# PRs per bulk read in `records()`: a few hundred PRs' patches in memory, not a whole history's.
RECORDS_BATCH = 400


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
        if not (filtered or since or merged_since or source or author or limit):
            # Whole repositories: the frames read often enough to be worth a snapshot each.
            if repo:
                return self._whole_frame(self._require_repo(repo))
            return self._all_frames()
        where, args = self._pr_where(repo, state, numbers, since, merged_since, source, author)
        sql = f"SELECT {_PR_SELECT} {_PR_FROM} WHERE {' AND '.join(where)} {_PR_ORDER}"
        if limit:
            sql += f" LIMIT {int(limit)}"
        return self._pr_frame(sql, args)

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

    def _pr_frame(self, sql: str, params: Iterable = ()) -> pd.DataFrame:
        """The PR rows of `sql` (selecting _PR_SELECT) as a frame typed as FRAME_DTYPES."""
        cur = self.conn.cursor()
        cur.row_factory = None  # plain tuples: sqlite3.Row costs a Python call per cell
        try:
            rows = cur.execute(sql, list(params)).fetchall()
        finally:
            cur.close()
        return _typed_frame(rows)

    def _all_frames(self) -> pd.DataFrame:
        """Every repository's whole frame, in the SQL path's order (repository name, then newest number)."""
        pks = [r[0] for r in self.conn.execute("SELECT pk FROM repos ORDER BY full_name")]
        frames = [f for f in (self._whole_frame(pk) for pk in pks) if len(f)]
        if not frames:
            return _typed_frame([])
        if len(frames) == 1:
            return frames[0]
        import pandas as pd

        return pd.concat(frames, ignore_index=True)

    def _whole_frame(self, pk: int) -> pd.DataFrame:
        """A repository's whole PR frame: the snapshot if it is of the current generation, else the rows
        (then snapshotted for the next reader)."""
        sql = f"SELECT {_PR_SELECT} {_PR_FROM} WHERE p.deleted_at IS NULL AND p.repo_pk=? {_PR_ORDER}"
        if self.conn.in_transaction:  # the caller's own transaction may yet roll back: no snapshot
            return self._pr_frame(sql, (pk,))
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
        df = self._pr_frame(sql, (pk,))
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
                # As the main connection: in WAL mode a commit then needs no fsync (a snapshot lost
                # to a power cut is only rebuilt by the next read).
                c.execute("PRAGMA synchronous=NORMAL")
                c.execute(
                    "INSERT INTO pr_frames(repo_pk, generation, payload) SELECT ?, ?, ? "
                    "WHERE (SELECT generation FROM repos WHERE pk=?)=? ON CONFLICT(repo_pk) DO UPDATE "
                    "SET generation=excluded.generation, payload=excluded.payload",
                    (pk, generation, buf.getvalue(), pk, generation),
                )
        except sqlite3.Error:
            pass

    def pr(self, repo: str, number: int) -> PRRecord:
        return self.prs_records(repo, [number])[0]

    def prs_records(self, repo: str, numbers: Iterable[int] | None = None) -> list[PRRecord]:
        """Whole records of these PRs (all cached ones, newest first, when None), in the order asked:
        one query per table for the whole batch. Holds every patch of the batch in memory: stream a
        long history through `records()`, which reads it in batches."""
        pk = self._require_repo(repo)
        full_name = self.conn.execute("SELECT full_name FROM repos WHERE pk=?", (pk,)).fetchone()[0]
        if numbers is None:
            which, args = "AND p.deleted_at IS NULL", [pk]
        else:
            wanted = [int(n) for n in numbers]
            # json_each: one bound parameter for any number of PRs (no SQLITE_MAX_VARIABLE_NUMBER).
            which, args = "AND p.number IN (SELECT value FROM json_each(?))", [pk, json.dumps(wanted)]
        heads = {
            row[0]: row
            for row in self.conn.execute(
                "SELECT p.number, p.detail_json, p.extra_json, p.files_key, p.source, p.field_sources, "
                f"p.files_truncated, p.commits_truncated FROM prs p WHERE p.repo_pk=? {which} "
                "ORDER BY p.number DESC",
                args,
            )
        }
        if numbers is None:
            wanted = list(heads)
        missing = [n for n in wanted if n not in heads]
        if missing:
            raise WorkbenchError(
                f"{repo}#{missing[0]} is not in the cache: sync it with "
                f"`workbench sync {repo} --number {missing[0]}`"
            )
        children = _Children(self.conn, which, args)
        files = children.files()
        for n in heads:
            if n not in files:  # e.g. API metadata arrived but its files did not: show what a clone gave
                files[n] = self._latest_files(pk, n)
        out = []
        for n in wanted:
            _n, detail, extra, _key, source, field_sources, files_truncated, commits_truncated = heads[n]
            pr = json.loads(detail or "{}")
            if extra:
                pr["_extra"] = json.loads(extra)
            out.append(
                PRRecord(
                    repo=full_name,
                    number=n,
                    pr=pr,
                    files=files.get(n, []),
                    issue_comments=children.issue_comments.get(n, []),
                    reviews=children.reviews.get(n, []),
                    review_comments=children.review_comments.get(n, []),
                    commits=children.commits.get(n, []),
                    source=source,
                    field_sources=json.loads(field_sources or "{}"),
                    files_truncated=bool(files_truncated),
                    commits_truncated=bool(commits_truncated),
                )
            )
        return out

    def _latest_files(self, pk: int, number: int) -> list[dict]:
        """The newest file set a PR has, whatever its key (the current key has none)."""
        latest = self.conn.execute(
            "SELECT files_key FROM pr_files WHERE repo_pk=? AND number=? ORDER BY rowid DESC LIMIT 1",
            (pk, number),
        ).fetchone()
        if latest is None:
            return []
        rows = self.conn.execute(
            "SELECT raw_json, patch, patch_status FROM pr_files WHERE repo_pk=? AND number=? AND files_key=? "
            "ORDER BY position",
            (pk, number, latest[0]),
        )
        return [_file(raw, patch, status) for raw, patch, status in rows]

    def records(
        self, repo: str, numbers: Iterable[int] | None = None, *, batch: int = RECORDS_BATCH
    ) -> Iterator[PRRecord]:
        """Whole records, newest number first unless `numbers` says otherwise, read `batch` PRs at a
        time (one query per table each): a long history streams in bounded memory."""
        if numbers is None:
            numbers = [
                r[0]
                for r in self.conn.execute(
                    "SELECT number FROM prs WHERE repo_pk=? AND deleted_at IS NULL ORDER BY number DESC",
                    (self._require_repo(repo),),
                )
            ]
        numbers = [int(n) for n in numbers]
        for i in range(0, len(numbers), batch):
            yield from self.prs_records(repo, numbers[i : i + batch])

    def pr_stamps(self, repo: str, numbers: Iterable[int] | None = None) -> dict[int, tuple]:
        """number -> a stamp of the stored PR that changes whenever a sync rewrites it, read from the PR
        rows alone (one query; no patch, comment or JSON read). Every write of a PR or of its children
        goes through one upsert of its row, which sets `synced_at`; the head SHA or merge commit
        (`files_key`, which keys the patches), `updated_at`, the source, truncation and the child counts
        stored beside it tell apart two writes within the same second. The analysis memo keys on it so
        an unchanged PR is never read or re-hashed."""
        pk = self._require_repo(repo)
        which, args = _numbers_filter("number", numbers)
        sql = (
            "SELECT number, synced_at, updated_at, files_key, source, files_truncated, commits_truncated, "
            f"comments, review_comments, reviews FROM prs WHERE repo_pk=? AND deleted_at IS NULL {which}"
        )
        return {row[0]: row[1:] for row in self.conn.execute(sql, (pk, *args))}

    def known_prs(self, repo: str) -> KnownPRs:
        """number -> (title, state), and the merge commits of merged PRs: what analysis needs to resolve
        cross-references, without I/O of its own."""
        pk = self.repo_pk(repo)
        if pk is None:
            return KnownPRs()
        rows = self.conn.execute(
            "SELECT number, title, state, merge_sha FROM prs WHERE repo_pk=? AND deleted_at IS NULL", (pk,)
        ).fetchall()
        # an open PR's merge_sha is GitHub's test merge, which no revert names
        return KnownPRs(
            {int(r[0]): (r[1] or "", r[2] or "") for r in rows},
            {r[3]: int(r[0]) for r in rows if r[3] and r[2] == "merged"},
        )

    # Flat reads for trend charts: one query each, no raw JSON decoded (a record per PR is ~100x slower).
    # `numbers` narrows them to some PRs (a window), which the primary-key indexes then seek directly.
    def reviews_frame(self, repo: str, numbers: Iterable[int] | None = None) -> pd.DataFrame:
        """One row per review: repo, number, author, state, submitted_at (UTC), commit_id."""
        pk = self._require_repo(repo)
        which, args = _numbers_filter("v.number", numbers)
        df = self._frame(
            "SELECT ? AS repo, v.number, v.author, v.state, v.submitted_at, v.commit_id FROM reviews v "
            "JOIN prs p ON p.repo_pk=v.repo_pk AND p.number=v.number AND p.deleted_at IS NULL "
            f"WHERE v.repo_pk=? {which} ORDER BY v.number, v.submitted_at, v.id",
            (repo, pk, *args),
        )
        df["submitted_at"] = _utc(df["submitted_at"])
        return df

    def comments_frame(self, repo: str, numbers: Iterable[int] | None = None) -> pd.DataFrame:
        """One row per issue comment or review comment: repo, number, author, created_at (UTC), kind."""
        pk = self._require_repo(repo)
        which, args = _numbers_filter("c.number", numbers)
        df = self._frame(
            "SELECT ? AS repo, c.number, c.author, c.created_at, c.kind FROM ("
            " SELECT number, author, created_at, 'issue' AS kind, repo_pk FROM issue_comments WHERE deleted_at IS NULL"
            " UNION ALL SELECT number, author, created_at, 'review' AS kind, repo_pk FROM review_comments) c "
            "JOIN prs p ON p.repo_pk=c.repo_pk AND p.number=c.number AND p.deleted_at IS NULL "
            f"WHERE c.repo_pk=? {which} ORDER BY c.number, c.created_at",
            (repo, pk, *args),
        )
        df["created_at"] = _utc(df["created_at"])
        return df

    def files_frame(self, repo: str, numbers: Iterable[int] | None = None) -> pd.DataFrame:
        """One row per file in each PR's current file set: repo, number, filename, additions, deletions.
        Like `pr()`, falls back to the newest file set when the current key has none.

        The whole repository's frame is snapshotted like the PR frame: its rows sit among the patches,
        so reading them scans the biggest table of the cache (~1.5 s for ruff's 142,000 files). The
        snapshot is a Feather file beside the cache named by the repository's generation."""
        pk = self._require_repo(repo)
        if numbers is None and not self.conn.in_transaction:
            return self._files_snapshot(pk, repo)
        return self._files_rows(pk, repo, numbers)

    def _files_snapshot(self, pk: int, repo: str) -> pd.DataFrame:
        import pandas as pd

        generation = self.conn.execute("SELECT generation FROM repos WHERE pk=?", (pk,)).fetchone()[0]
        folder = self.path.parent / "frames"
        path = folder / f"files-{pk}-{generation}.feather"
        try:
            df = pd.read_feather(path)  # Feather runs no code on load: a planted file can only fail
            if list(df.columns) == _FILES_COLUMNS and df["repo"].eq(repo).all():
                return df
        except Exception:  # noqa: BLE001 - absent or unreadable: the rows are the truth
            pass
        # Labelled with the generation read before the rows (see _whole_frame): never older than its name.
        df = self._files_rows(pk, repo, None)
        try:
            folder.mkdir(exist_ok=True)
            tmp = folder / f".{path.name}.{os.getpid()}.tmp"
            df.to_feather(tmp)
            os.replace(tmp, path)  # a reader sees the whole file or none
            for old in folder.glob(f"files-{pk}-*.feather"):
                if old != path:
                    old.unlink(missing_ok=True)
        except OSError:  # a read-only cache: no snapshot this time
            pass
        return df

    def _files_rows(self, pk: int, repo: str, numbers: Iterable[int] | None) -> pd.DataFrame:
        which, args = _numbers_filter("f.number", numbers)
        return self._frame(
            "SELECT ? AS repo, f.number, f.filename, f.additions, f.deletions FROM pr_files f "
            "JOIN prs p ON p.repo_pk=f.repo_pk AND p.number=f.number AND p.deleted_at IS NULL "
            f"WHERE f.repo_pk=? {which} AND f.files_key=coalesce("
            " (SELECT p.files_key WHERE EXISTS (SELECT 1 FROM pr_files g WHERE g.repo_pk=p.repo_pk"
            "  AND g.number=p.number AND g.files_key=p.files_key)),"
            " (SELECT g.files_key FROM pr_files g WHERE g.repo_pk=p.repo_pk AND g.number=p.number"
            "  ORDER BY g.rowid DESC LIMIT 1)) "
            "ORDER BY f.number, f.position",
            (repo, pk, *args),
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


def _typed_frame(rows: list[tuple]) -> pd.DataFrame:
    """Rows in PR_COLUMNS order (times as Unix seconds) as a frame typed as FRAME_DTYPES, each column
    built once in its final type (a frame of objects converted afterwards costs twice)."""
    import numpy as np
    import pandas as pd

    columns = list(zip(*rows, strict=True)) if rows else [()] * len(PR_COLUMNS)
    data = {}
    for name, values in zip(PR_COLUMNS, columns, strict=True):
        dtype = frame_dtypes()[name]
        if name in TIME_COLUMNS:
            seconds = np.array(values, dtype="float64")  # NULL -> NaN -> NaT
            data[name] = pd.to_datetime(seconds, unit="s", utc=True).astype(dtype)
        elif name in BOOL_COLUMNS:
            data[name] = np.array([bool(v) for v in values], dtype=bool)  # NULL counts as false
        elif dtype == "int64":
            data[name] = np.array(values, dtype="int64")
        else:
            data[name] = pd.array(list(values), dtype=dtype)
    return pd.DataFrame(data, columns=PR_COLUMNS)


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


def _numbers_filter(column: str, numbers: Iterable[int] | None) -> tuple[str, list]:
    """(SQL condition, its arguments) keeping `column` in `numbers`; nothing when None. json_each: one
    bound parameter for any number of PRs (no SQLITE_MAX_VARIABLE_NUMBER)."""
    if numbers is None:
        return "", []
    return f"AND {column} IN (SELECT value FROM json_each(?))", [json.dumps([int(n) for n in numbers])]


def _file(raw: str, patch: str | None, status: str | None) -> dict:
    f = json.loads(raw)
    f["patch"] = patch
    f["patch_status"] = status
    return f


class _Children:
    """The child rows of a batch of PRs, one query per table, grouped by PR number, each PR's rows in
    the stable order `pr()` always gave. `which` and `args` select the batch from `prs p`, as in
    `prs_records`."""

    def __init__(self, conn: sqlite3.Connection, which: str, args: list):
        self._conn, self._which, self._args = conn, which, args
        self.issue_comments = self._grouped(
            "issue_comments", "c.raw_json", "c.created_at, c.id", json.loads, "AND c.deleted_at IS NULL"
        )
        self.reviews = self._grouped("reviews", "c.raw_json", "c.submitted_at, c.id", json.loads)
        self.review_comments = self._grouped(
            "review_comments", "c.raw_json, c.thread_resolved", "c.created_at, c.id", _review_comment
        )
        self.commits = self._grouped("commits", "c.raw_json", "c.position", json.loads)

    def files(self) -> dict[int, list[dict]]:
        """Each PR's current file set: the rows keyed by its files_key (the head SHA or merge commit)."""
        return self._grouped(
            "pr_files",
            "c.raw_json, c.patch, c.patch_status",
            "c.position",
            _file,
            "AND c.files_key=p.files_key",
        )

    def _grouped(self, table: str, columns: str, order: str, make, where: str = "") -> dict[int, list]:
        sql = (
            f"SELECT c.number, {columns} FROM {table} c JOIN prs p ON p.repo_pk=c.repo_pk AND p.number=c.number "
            f"WHERE p.repo_pk=? {self._which} {where} ORDER BY c.number, {order}"
        )
        out: dict[int, list] = {}
        cur = self._conn.cursor()
        cur.row_factory = None  # plain tuples
        try:
            for row in cur.execute(sql, self._args):
                out.setdefault(row[0], []).append(make(*row[1:]))
        finally:
            cur.close()
        return out


def _review_comment(raw: str, resolved: int | None) -> dict:
    # REST does not say whether a thread is resolved; GraphQL does, and we keep it beside the raw JSON.
    d = json.loads(raw)
    if resolved is not None:
        d["thread_resolved"] = bool(resolved)
    return d
