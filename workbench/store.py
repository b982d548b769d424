"""The SQLite cache: schema, migrations, crash-safe writes and reads as records and DataFrames.

Why SQLite in WAL mode: a notebook kernel reads a consistent snapshot while a sync process writes.
Why raw JSON beside typed columns: every derived column can be rebuilt offline; typed columns are
what charts and filters need fast. A PR and its children are written in one transaction (whole or
absent); rows are upserted on natural keys and never deleted.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pandas as pd

from .config import WorkbenchError, db_path
from .records import PRRecord
from .titles import parse_title

SCHEMA_VERSION = 2

# Which source wins when two describe the same field: the API is authoritative, a clone knows less.
SOURCE_RANK = {"facts": 0, "git": 1, "sample": 2, "api": 3}

_SCHEMA_V1 = """
CREATE TABLE repos (
    pk INTEGER PRIMARY KEY,
    full_name TEXT NOT NULL UNIQUE COLLATE NOCASE,
    github_id INTEGER UNIQUE,          -- renames keep the id; we find the repo by it first
    raw_json TEXT,
    watermark TEXT,                     -- ISO time: list PRs updated at or after this
    cursor_json TEXT,                   -- where an interrupted pass resumes
    updated_at TEXT
);
CREATE TABLE prs (
    repo_pk INTEGER NOT NULL REFERENCES repos(pk),
    number INTEGER NOT NULL,
    github_id INTEGER,
    title TEXT, state TEXT, draft INTEGER, author TEXT,
    created_at TEXT, updated_at TEXT, merged_at TEXT, closed_at TEXT,
    additions INTEGER, deletions INTEGER, changed_files INTEGER,
    comments INTEGER, review_comments INTEGER, reviews INTEGER, commits INTEGER,
    labels TEXT, title_tags TEXT, kind TEXT, breaking INTEGER, revert INTEGER,
    head_sha TEXT, base_ref TEXT, merge_sha TEXT,
    files_key TEXT,                     -- which file set is current: the head SHA, or git:<sha>
    source TEXT NOT NULL,               -- api | git | git+api | sample | facts
    field_sources TEXT,                 -- JSON {field: source}
    files_truncated INTEGER DEFAULT 0, commits_truncated INTEGER DEFAULT 0,
    extra_json TEXT,                    -- facts-only figures (test/doc/ci file counts) and the like
    list_json TEXT, detail_json TEXT,   -- raw API shapes, as received
    synced_at TEXT, deleted_at TEXT,
    PRIMARY KEY (repo_pk, number)
);
CREATE INDEX prs_updated ON prs(repo_pk, updated_at);
CREATE INDEX prs_merged ON prs(repo_pk, merged_at);
CREATE TABLE pr_files (
    repo_pk INTEGER NOT NULL, number INTEGER NOT NULL,
    files_key TEXT NOT NULL,            -- head SHA: after a force-push the files change
    position INTEGER NOT NULL,
    filename TEXT NOT NULL, status TEXT, additions INTEGER, deletions INTEGER, changes INTEGER,
    previous_filename TEXT, patch TEXT,
    patch_status TEXT,                  -- ok | from_diff | omitted | none (binary or empty)
    raw_json TEXT,
    PRIMARY KEY (repo_pk, number, files_key, filename)
);
CREATE TABLE issue_comments (
    id INTEGER PRIMARY KEY, repo_pk INTEGER NOT NULL, number INTEGER NOT NULL,
    author TEXT, created_at TEXT, updated_at TEXT, body TEXT, raw_json TEXT, deleted_at TEXT
);
CREATE INDEX issue_comments_pr ON issue_comments(repo_pk, number);
CREATE TABLE reviews (
    id INTEGER PRIMARY KEY, repo_pk INTEGER NOT NULL, number INTEGER NOT NULL,
    author TEXT, state TEXT, submitted_at TEXT, body TEXT, commit_id TEXT, raw_json TEXT
);
CREATE INDEX reviews_pr ON reviews(repo_pk, number);
CREATE TABLE review_comments (
    id INTEGER PRIMARY KEY, repo_pk INTEGER NOT NULL, number INTEGER NOT NULL,
    author TEXT, path TEXT, line INTEGER, in_reply_to_id INTEGER, created_at TEXT, body TEXT,
    thread_resolved INTEGER,            -- NULL when unknown (REST does not say; GraphQL does)
    raw_json TEXT
);
CREATE INDEX review_comments_pr ON review_comments(repo_pk, number);
CREATE TABLE commits (
    repo_pk INTEGER NOT NULL, number INTEGER NOT NULL, sha TEXT NOT NULL, position INTEGER,
    author TEXT, authored_at TEXT, message TEXT, raw_json TEXT,
    PRIMARY KEY (repo_pk, number, sha)
);
CREATE TABLE http_validators (
    url TEXT PRIMARY KEY, etag TEXT, last_modified TEXT, updated_at TEXT
);
CREATE TABLE sync_runs (
    id INTEGER PRIMARY KEY, repo_pk INTEGER, kind TEXT, started_at TEXT, ended_at TEXT,
    status TEXT,                        -- running | ok | stopped | failed
    rest_requests INTEGER DEFAULT 0, not_modified INTEGER DEFAULT 0, graphql_points INTEGER DEFAULT 0,
    prs_written INTEGER DEFAULT 0, errors TEXT, note TEXT
);
CREATE TABLE briefs (
    repo_pk INTEGER NOT NULL, number INTEGER NOT NULL, version INTEGER NOT NULL,
    text TEXT NOT NULL,                 -- the Markdown as the reviewer sees it
    brief_json TEXT,                    -- the structured brief it was rendered from, when known
    source TEXT NOT NULL,               -- offline | llm | human
    lang TEXT, is_final INTEGER DEFAULT 0,
    created_at TEXT NOT NULL, meta_json TEXT,   -- model, prompt version, tokens, duration, left-out files
    PRIMARY KEY (repo_pk, number, version)
);
"""

# v2: a columnar snapshot of each repository's PR DataFrame (workbench/frame_snapshot.py); rows stay the truth.
_SCHEMA_V2 = """
CREATE TABLE pr_frames (
    repo_pk INTEGER PRIMARY KEY,
    built_at TEXT NOT NULL,
    payload BLOB NOT NULL
);
"""

MIGRATIONS: dict[int, str] = {1: _SCHEMA_V1, 2: _SCHEMA_V2}

PR_COLUMNS = [
    "repo",
    "number",
    "title",
    "state",
    "draft",
    "author",
    "created_at",
    "updated_at",
    "merged_at",
    "closed_at",
    "additions",
    "deletions",
    "changed_files",
    "comments",
    "review_comments",
    "reviews",
    "commits",
    "labels",
    "title_tags",
    "kind",
    "breaking",
    "revert",
    "source",
    "files_truncated",
    "commits_truncated",
    "extra_json",
]
TIME_COLUMNS = ["created_at", "updated_at", "merged_at", "closed_at"]


class StaleEditError(WorkbenchError):
    """A save based on an older version than the latest: refused so that neither text is lost."""

    def __init__(self, repo: str, number: int, base: int | None, latest: int):
        self.base, self.latest = base, latest
        super().__init__(
            f"{repo}#{number}: this text is based on version {base}, but version {latest} was saved since "
            f"(another notebook or tab?). Your text was kept as a conflict copy; reload to see both."
        )


def utcnow() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def iso_utc(value: Any) -> str | None:
    """Normalise a datetime or ISO string (any offset) to 'YYYY-MM-DDTHH:MM:SSZ' in UTC."""
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        dt = value
    else:
        s = str(value).replace("Z", "+00:00")
        dt = datetime.fromisoformat(s)
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _login(obj: Any) -> str | None:
    return obj.get("login") if isinstance(obj, dict) else None


def _dumps(obj: Any) -> str | None:
    return None if obj is None else json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


@dataclass
class BriefVersion:
    repo: str
    number: int
    version: int
    text: str
    source: str
    lang: str | None
    is_final: bool
    created_at: str
    brief: dict | None
    meta: dict


class Store:
    """One SQLite file. Cheap to open; each method is its own transaction unless inside `transaction()`."""

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
            self.conn.execute("PRAGMA busy_timeout=30000")
            self._refuse_foreign()
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute("PRAGMA synchronous=NORMAL")
            self.conn.execute("PRAGMA foreign_keys=ON")
            self._migrate()
        except sqlite3.DatabaseError as e:
            raise WorkbenchError(
                f"cache file {self.path} is not a usable SQLite database ({e}); it was left untouched — "
                f"move it aside or point --cache / WORKBENCH_CACHE at another directory"
            ) from None
        self._in_tx = 0

    # ---- schema -------------------------------------------------------------------------------
    def _refuse_foreign(self) -> None:
        """Refuse a newer or non-workbench file before PRAGMA journal_mode=WAL, which rewrites the
        header of a file we promised to leave untouched."""
        current = self.conn.execute("PRAGMA user_version").fetchone()[0]
        tables = self.conn.execute("SELECT count(*) FROM sqlite_master WHERE type='table'").fetchone()[0]
        if current > SCHEMA_VERSION or (current == 0 and tables):
            self.conn.close()
            if current > SCHEMA_VERSION:
                raise WorkbenchError(
                    f"cache {self.path} has schema version {current}, newer than this workbench ({SCHEMA_VERSION}): upgrade pr-workbench"
                )
            raise WorkbenchError(
                f"{self.path} is a SQLite file but not a workbench cache; it was left untouched"
            )

    def _migrate(self) -> None:
        current = self.conn.execute("PRAGMA user_version").fetchone()[0]
        if current > SCHEMA_VERSION:
            raise WorkbenchError(
                f"cache {self.path} has schema version {current}, newer than this workbench ({SCHEMA_VERSION}): upgrade pr-workbench"
            )
        if current == SCHEMA_VERSION:
            return
        has_tables = self.conn.execute("SELECT count(*) FROM sqlite_master WHERE type='table'").fetchone()[0]
        if current > 0 or has_tables:
            if current == 0:
                raise WorkbenchError(
                    f"{self.path} is a SQLite file but not a workbench cache; it was left untouched"
                )
            backup = self.path.with_name(f"{self.path.stem}.v{current}.{int(time.time())}.bak")
            self.conn.execute("VACUUM INTO ?", (str(backup),))
        for version in range(current + 1, SCHEMA_VERSION + 1):
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                for stmt in _split_sql(MIGRATIONS[version]):
                    self.conn.execute(stmt)
                self.conn.execute(f"PRAGMA user_version={version}")
                self.conn.execute("COMMIT")
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise

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

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

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
                    (full_name, github_id, _dumps(raw), utcnow()),
                )
                return int(cur.lastrowid)
            pk = int(row["pk"])
            if row["full_name"].lower() != full_name.lower():
                # The old name may linger as a separate clone-only entry; leave it, rename this one.
                clash = c.execute(
                    "SELECT pk FROM repos WHERE full_name=? AND pk<>?", (full_name, pk)
                ).fetchone()
                if clash is None:
                    c.execute("UPDATE repos SET full_name=? WHERE pk=?", (full_name, pk))
                    c.execute("DELETE FROM pr_frames WHERE repo_pk=?", (pk,))  # the frame names the repo
            c.execute(
                "UPDATE repos SET github_id=coalesce(?, github_id), raw_json=coalesce(?, raw_json), updated_at=? WHERE pk=?",
                (github_id, _dumps(raw), utcnow(), pk),
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
            c.execute("UPDATE repos SET cursor_json=? WHERE pk=?", (_dumps(cursor), repo_pk))

    def repos(self) -> pd.DataFrame:
        return pd.read_sql_query(
            "SELECT r.full_name, r.github_id, r.watermark, count(p.number) AS prs FROM repos r "
            "LEFT JOIN prs p ON p.repo_pk=r.pk AND p.deleted_at IS NULL GROUP BY r.pk ORDER BY r.full_name",
            self.conn,
        )

    # ---- HTTP validators and sync runs ------------------------------------------------------------
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

    def start_run(self, repo_pk: int | None, kind: str) -> int:
        with self.transaction() as c:
            cur = c.execute(
                "INSERT INTO sync_runs(repo_pk, kind, started_at, status) VALUES (?,?,?, 'running')",
                (repo_pk, kind, utcnow()),
            )
            return int(cur.lastrowid)

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
                (
                    utcnow(),
                    status,
                    rest_requests,
                    not_modified,
                    graphql_points,
                    prs_written,
                    _dumps(errors or []),
                    note,
                    run_id,
                ),
            )

    def sync_runs(self) -> pd.DataFrame:
        return pd.read_sql_query(
            "SELECT s.*, r.full_name AS repo FROM sync_runs s LEFT JOIN repos r ON r.pk=s.repo_pk ORDER BY s.id",
            self.conn,
        )

    # ---- writing PRs --------------------------------------------------------------------------------
    def write_pr(self, repo_pk: int, record: PRRecord, *, list_json: dict | None = None) -> None:
        """Upsert a PR and all its children atomically. Existing fields from a more authoritative
        source are kept (a clone backfill never overwrites what the API said), and each field's
        source is recorded."""
        with self.transaction() as c:
            old = c.execute(
                "SELECT * FROM prs WHERE repo_pk=? AND number=?", (repo_pk, record.number)
            ).fetchone()
            pr, field_sources, source = self._merge_pr(old, record)
            tp = parse_title(pr.get("title") or "")
            merged_at = iso_utc(pr.get("merged_at"))
            state = "merged" if merged_at or pr.get("merged") else (pr.get("state") or "open")
            files_key = self._files_key(pr, record)
            extra = record.pr.get("_extra") or (
                json.loads(old["extra_json"]) if old and old["extra_json"] else None
            )
            issue_comments_count = pr.get("comments")
            if issue_comments_count is None and (record.issue_comments or source not in ("facts", "git")):
                issue_comments_count = len(record.issue_comments)
            row = {
                "repo_pk": repo_pk,
                "number": record.number,
                "github_id": pr.get("id"),
                "title": pr.get("title"),
                "state": state,
                "draft": int(bool(pr.get("draft"))),
                "author": _login(pr.get("user")),
                "created_at": iso_utc(pr.get("created_at")),
                "updated_at": iso_utc(pr.get("updated_at")),
                "merged_at": merged_at,
                "closed_at": iso_utc(pr.get("closed_at")),
                "additions": pr.get(
                    "additions",
                    sum(int(f.get("additions") or 0) for f in record.files) if record.files else None,
                ),
                "deletions": pr.get(
                    "deletions",
                    sum(int(f.get("deletions") or 0) for f in record.files) if record.files else None,
                ),
                "changed_files": pr.get("changed_files", len(record.files) if record.files else None),
                "comments": issue_comments_count,
                "review_comments": pr.get("review_comments", len(record.review_comments)),
                "reviews": len(record.reviews)
                if record.reviews or source in ("api", "git+api", "sample")
                else None,
                "commits": pr.get("commits", len(record.commits) if record.commits else None),
                "labels": _dumps(
                    [lb.get("name") if isinstance(lb, dict) else lb for lb in pr.get("labels") or []]
                ),
                "title_tags": ";".join(tp.tags),
                "kind": tp.kind,
                "breaking": int(tp.breaking),
                "revert": int(tp.revert),
                "head_sha": (pr.get("head") or {}).get("sha"),
                "base_ref": (pr.get("base") or {}).get("ref"),
                "merge_sha": pr.get("merge_commit_sha"),
                "files_key": files_key,
                "source": source,
                "field_sources": _dumps(field_sources),
                "files_truncated": int(record.files_truncated),
                "commits_truncated": int(record.commits_truncated),
                "extra_json": _dumps(extra),
                "list_json": _dumps(list_json)
                if list_json is not None
                else (old["list_json"] if old else None),
                "detail_json": _dumps({k: v for k, v in pr.items() if k != "_extra"}),
                "synced_at": utcnow(),
            }
            if source == "facts" and isinstance(extra, dict):
                # A facts-only title is synthesised; the facts' own tags/kind/flags are the truth.
                for col in ("title_tags", "kind", "breaking", "revert"):
                    if col in extra:
                        row[col] = extra[col]
            cols = ",".join(row)
            c.execute(
                f"INSERT INTO prs({cols}) VALUES ({','.join('?' * len(row))}) ON CONFLICT(repo_pk, number) DO UPDATE SET "
                + ",".join(f"{k}=excluded.{k}" for k in row if k not in ("repo_pk", "number")),
                tuple(row.values()),
            )
            self._write_children(c, repo_pk, record, files_key)
            c.execute("DELETE FROM pr_frames WHERE repo_pk=?", (repo_pk,))  # stale the moment rows change

    @staticmethod
    def _files_key(pr: dict, record: PRRecord) -> str:
        head = (pr.get("head") or {}).get("sha")
        if head:
            return head
        return f"git:{pr.get('merge_commit_sha') or record.number}"

    @staticmethod
    def _merge_pr(old: sqlite3.Row | None, record: PRRecord) -> tuple[dict, dict, str]:
        new_source = record.source
        new_pr = dict(record.pr)
        if old is None:
            fs = dict(record.field_sources) or {
                k: new_source for k, v in new_pr.items() if v is not None and k != "_extra"
            }
            return new_pr, fs, new_source
        old_pr = json.loads(old["detail_json"] or "{}")
        old_fs = json.loads(old["field_sources"] or "{}")
        old_source = old["source"]
        merged = dict(old_pr)
        fs = dict(old_fs)
        for k, v in new_pr.items():
            if k == "_extra":
                continue
            prev_src = old_fs.get(k, old_source.split("+")[-1])
            if v is None:
                merged.setdefault(k, None)
                continue  # a missing value never erases a known one, and has no source (rewrites stay identical)
            if SOURCE_RANK.get(new_source, 3) >= SOURCE_RANK.get(prev_src, 0) or k not in merged:
                merged[k] = v
                fs[k] = record.field_sources.get(k, new_source)
        sources = set(old_source.split("+")) | {new_source}
        source = "+".join(s for s in ("facts", "git", "sample", "api") if s in sources)
        return merged, fs, source

    def _write_children(self, c: sqlite3.Connection, repo_pk: int, record: PRRecord, files_key: str) -> None:
        n = record.number
        if record.files:
            c.executemany(
                "INSERT INTO pr_files(repo_pk, number, files_key, position, filename, status, additions, deletions, changes, "
                "previous_filename, patch, patch_status, raw_json) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?) "
                "ON CONFLICT(repo_pk, number, files_key, filename) DO UPDATE SET position=excluded.position, "
                "status=excluded.status, additions=excluded.additions, deletions=excluded.deletions, changes=excluded.changes, "
                "previous_filename=excluded.previous_filename, patch=excluded.patch, patch_status=excluded.patch_status, "
                "raw_json=excluded.raw_json",
                [
                    (
                        repo_pk,
                        n,
                        files_key,
                        i,
                        f["filename"],
                        f.get("status"),
                        f.get("additions"),
                        f.get("deletions"),
                        f.get("changes"),
                        f.get("previous_filename"),
                        f.get("patch"),
                        f.get("patch_status") or ("ok" if f.get("patch") else "none"),
                        _dumps({k: v for k, v in f.items() if k != "patch"}),
                    )
                    for i, f in enumerate(record.files)
                ],
            )
        c.executemany(
            "INSERT INTO issue_comments(id, repo_pk, number, author, created_at, updated_at, body, raw_json) VALUES (?,?,?,?,?,?,?,?) "
            "ON CONFLICT(id) DO UPDATE SET author=excluded.author, updated_at=excluded.updated_at, body=excluded.body, raw_json=excluded.raw_json",
            [
                (
                    x["id"],
                    repo_pk,
                    n,
                    _login(x.get("user")),
                    iso_utc(x.get("created_at")),
                    iso_utc(x.get("updated_at")),
                    x.get("body"),
                    _dumps(x),
                )
                for x in record.issue_comments
            ],
        )
        c.executemany(
            "INSERT INTO reviews(id, repo_pk, number, author, state, submitted_at, body, commit_id, raw_json) VALUES (?,?,?,?,?,?,?,?,?) "
            "ON CONFLICT(id) DO UPDATE SET state=excluded.state, submitted_at=excluded.submitted_at, body=excluded.body, raw_json=excluded.raw_json",
            [
                (
                    x["id"],
                    repo_pk,
                    n,
                    _login(x.get("user")),
                    x.get("state"),
                    iso_utc(x.get("submitted_at")),
                    x.get("body"),
                    x.get("commit_id"),
                    _dumps(x),
                )
                for x in record.reviews
            ],
        )
        c.executemany(
            "INSERT INTO review_comments(id, repo_pk, number, author, path, line, in_reply_to_id, created_at, body, thread_resolved, raw_json) "
            "VALUES (?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT(id) DO UPDATE SET body=excluded.body, line=excluded.line, "
            "thread_resolved=coalesce(excluded.thread_resolved, review_comments.thread_resolved), raw_json=excluded.raw_json",
            [
                (
                    x["id"],
                    repo_pk,
                    n,
                    _login(x.get("user")),
                    x.get("path"),
                    x.get("line"),
                    x.get("in_reply_to_id"),
                    iso_utc(x.get("created_at")),
                    x.get("body"),
                    None if x.get("thread_resolved") is None else int(bool(x.get("thread_resolved"))),
                    _dumps(x),
                )
                for x in record.review_comments
            ],
        )
        c.executemany(
            "INSERT INTO commits(repo_pk, number, sha, position, author, authored_at, message, raw_json) VALUES (?,?,?,?,?,?,?,?) "
            "ON CONFLICT(repo_pk, number, sha) DO UPDATE SET position=excluded.position, raw_json=excluded.raw_json",
            [
                (
                    repo_pk,
                    n,
                    x["sha"],
                    i,
                    _login(x.get("author")) or ((x.get("commit") or {}).get("author") or {}).get("name"),
                    iso_utc(((x.get("commit") or {}).get("author") or {}).get("date")),
                    (x.get("commit") or {}).get("message"),
                    _dumps(x),
                )
                for i, x in enumerate(record.commits)
            ],
        )

    def write_prs(self, repo_pk: int, records: Iterable[PRRecord]) -> int:
        """Many PRs in one transaction (backfills): far fewer fsyncs than one per PR."""
        n = 0
        with self.transaction():
            for r in records:
                self.write_pr(repo_pk, r)
                n += 1
        return n

    def mark_deleted(self, repo_pk: int, number: int) -> None:
        with self.transaction() as c:
            c.execute("UPDATE prs SET deleted_at=? WHERE repo_pk=? AND number=?", (utcnow(), repo_pk, number))
            c.execute("DELETE FROM pr_frames WHERE repo_pk=?", (repo_pk,))

    def refresh_frame(self, repo: str) -> bool:
        """Rebuild the repository's DataFrame snapshot (writers call this after a sync or load).
        Read and write happen in one transaction, so the snapshot matches the rows exactly."""
        from . import frame_snapshot as frames

        with self.transaction() as c:
            pk = self._require_repo(repo)
            df = self._prs_sql(repo, pk=pk)
            if df.empty:
                return False
            c.execute(
                "INSERT INTO pr_frames(repo_pk, built_at, payload) VALUES (?,?,?) ON CONFLICT(repo_pk) DO UPDATE "
                "SET built_at=excluded.built_at, payload=excluded.payload",
                (pk, utcnow(), frames.encode(df)),
            )
        return True

    def _frame_snapshot(self, pk: int) -> pd.DataFrame | None:
        from . import frame_snapshot as frames

        row = self.conn.execute("SELECT payload FROM pr_frames WHERE repo_pk=?", (pk,)).fetchone()
        if row is None:
            return None
        try:
            return frames.decode(row[0], PR_COLUMNS)
        except Exception:  # an unreadable snapshot (other pandas, damaged blob) only costs speed
            return None

    # ---- reading ------------------------------------------------------------------------------------
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
        """One row per PR. `since` filters on updated_at (or merged_at when unknown); `state` is
        open | closed | merged | all (closed means closed without merging)."""
        if (
            repo
            and state in (None, "all")
            and not (numbers is not None or since or merged_since or source or author or limit)
        ):
            pk = self._require_repo(repo)
            snapshot = self._frame_snapshot(pk)  # same frame, decoded by column (see frame_snapshot.py)
            return snapshot if snapshot is not None else self._prs_sql(repo, pk=pk)
        return self._prs_sql(repo, state=state, numbers=numbers, since=since, merged_since=merged_since,
                             source=source, author=author, limit=limit)  # fmt: skip

    def _prs_sql(self, repo: str | None = None, *, pk: int | None = None, state: str | None = None,
                 numbers: Iterable[int] | None = None, since: str | None = None, merged_since: str | None = None,
                 source: str | None = None, author: str | None = None, limit: int | None = None) -> pd.DataFrame:  # fmt: skip
        where, args = ["p.deleted_at IS NULL"], []
        if repo:
            where.append("p.repo_pk=?")
            args.append(pk if pk is not None else self._require_repo(repo))
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
        cols = ", ".join("r.full_name AS repo" if c == "repo" else f"p.{c}" for c in PR_COLUMNS)
        sql = f"SELECT {cols} FROM prs p JOIN repos r ON r.pk=p.repo_pk WHERE {' AND '.join(where)} ORDER BY r.full_name, p.number DESC"
        if limit:
            sql += f" LIMIT {int(limit)}"
        df = pd.read_sql_query(sql, self.conn, params=args)
        for col in TIME_COLUMNS:
            df[col] = pd.to_datetime(df[col], utc=True, format="ISO8601")
        for col in ("draft", "breaking", "revert", "files_truncated", "commits_truncated"):
            df[col] = df[col].fillna(0).astype(bool)
        return df

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
            issue_comments=[
                json.loads(r[0])
                for r in q(
                    "SELECT raw_json FROM issue_comments WHERE repo_pk=? AND number=? AND deleted_at IS NULL ORDER BY created_at, id",
                    (pk, number),
                )
            ],
            reviews=[
                json.loads(r[0])
                for r in q(
                    "SELECT raw_json FROM reviews WHERE repo_pk=? AND number=? ORDER BY submitted_at, id",
                    (pk, number),
                )
            ],
            review_comments=[
                self._review_comment(r)
                for r in q(
                    "SELECT raw_json, thread_resolved FROM review_comments WHERE repo_pk=? AND number=? ORDER BY created_at, id",
                    (pk, number),
                )
            ],
            commits=[
                json.loads(r[0])
                for r in q(
                    "SELECT raw_json FROM commits WHERE repo_pk=? AND number=? ORDER BY position",
                    (pk, number),
                )
            ],
            source=row["source"],
            field_sources=json.loads(row["field_sources"] or "{}"),
            files_truncated=bool(row["files_truncated"]),
            commits_truncated=bool(row["commits_truncated"]),
        )

    @staticmethod
    def _review_comment(r: sqlite3.Row) -> dict:
        d = json.loads(r[0])
        if r[1] is not None:
            d["thread_resolved"] = bool(r[1])
        return d

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
        nums = list(numbers) if numbers is not None else list(self.prs(repo)["number"])
        for n in nums:
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
        df = pd.read_sql_query(
            "SELECT ? AS repo, v.number, v.author, v.state, v.submitted_at, v.commit_id FROM reviews v "
            "JOIN prs p ON p.repo_pk=v.repo_pk AND p.number=v.number AND p.deleted_at IS NULL "
            "WHERE v.repo_pk=? ORDER BY v.number, v.submitted_at, v.id",
            self.conn,
            params=[repo, pk],
        )
        df["submitted_at"] = pd.to_datetime(df["submitted_at"], utc=True, format="ISO8601")
        return df

    def comments_frame(self, repo: str) -> pd.DataFrame:
        """One row per issue comment or review comment: repo, number, author, created_at (UTC), kind."""
        pk = self._require_repo(repo)
        df = pd.read_sql_query(
            "SELECT ? AS repo, c.number, c.author, c.created_at, c.kind FROM ("
            " SELECT number, author, created_at, 'issue' AS kind, repo_pk FROM issue_comments WHERE deleted_at IS NULL"
            " UNION ALL SELECT number, author, created_at, 'review' AS kind, repo_pk FROM review_comments) c "
            "JOIN prs p ON p.repo_pk=c.repo_pk AND p.number=c.number AND p.deleted_at IS NULL "
            "WHERE c.repo_pk=? ORDER BY c.number, c.created_at",
            self.conn,
            params=[repo, pk],
        )
        df["created_at"] = pd.to_datetime(df["created_at"], utc=True, format="ISO8601")
        return df

    def files_frame(self, repo: str) -> pd.DataFrame:
        """One row per file in each PR's current file set: repo, number, filename, additions, deletions.
        Like `pr()`, falls back to the newest file set when the current key has none."""
        pk = self._require_repo(repo)
        return pd.read_sql_query(
            "SELECT ? AS repo, f.number, f.filename, f.additions, f.deletions FROM pr_files f "
            "JOIN prs p ON p.repo_pk=f.repo_pk AND p.number=f.number AND p.deleted_at IS NULL "
            "WHERE f.repo_pk=? AND f.files_key=coalesce("
            " (SELECT p.files_key WHERE EXISTS (SELECT 1 FROM pr_files g WHERE g.repo_pk=p.repo_pk"
            "  AND g.number=p.number AND g.files_key=p.files_key)),"
            " (SELECT g.files_key FROM pr_files g WHERE g.repo_pk=p.repo_pk AND g.number=p.number"
            "  ORDER BY g.rowid DESC LIMIT 1)) "
            "ORDER BY f.number, f.position",
            self.conn,
            params=[repo, pk],
        )

    def has_pr(self, repo_pk: int, number: int) -> bool:
        return (
            self.conn.execute("SELECT 1 FROM prs WHERE repo_pk=? AND number=?", (repo_pk, number)).fetchone()
            is not None
        )

    def pr_updated_at(self, repo_pk: int, number: int) -> str | None:
        row = self.conn.execute(
            "SELECT updated_at, source FROM prs WHERE repo_pk=? AND number=?", (repo_pk, number)
        ).fetchone()
        return row["updated_at"] if row and "api" in row["source"] else None

    # ---- briefs ---------------------------------------------------------------------------------------
    def save_brief(
        self,
        repo: str,
        number: int,
        text: str,
        *,
        source: str,
        base_version: int | None,
        brief: dict | None = None,
        lang: str | None = None,
        is_final: bool = False,
        meta: dict | None = None,
        force: bool = False,
    ) -> int:
        """Append a version. `base_version` is the version the text was edited from (None: new).
        A stale base is refused (StaleEditError) after keeping the text as a 'conflict' version,
        so no words are lost on either side."""
        pk = self._require_repo(repo)
        with self.transaction() as c:
            latest = (
                c.execute(
                    "SELECT max(version) FROM briefs WHERE repo_pk=? AND number=?", (pk, number)
                ).fetchone()[0]
                or 0
            )
            stale = not force and latest and base_version != latest
            version = latest + 1
            meta = dict(meta or {})
            if stale:
                meta["conflict_with"] = latest
                meta["based_on"] = base_version
            c.execute(
                "INSERT INTO briefs(repo_pk, number, version, text, brief_json, source, lang, is_final, created_at, meta_json) "
                "VALUES (?,?,?,?,?,?,?,?,?,?)",
                (
                    pk,
                    number,
                    version,
                    text,
                    _dumps(brief),
                    "conflict" if stale else source,
                    lang,
                    int(is_final and not stale),
                    utcnow(),
                    _dumps(meta),
                ),
            )
        if stale:
            raise StaleEditError(repo, number, base_version, latest)
        return version

    def brief_versions(self, repo: str, number: int) -> list[BriefVersion]:
        pk = self.repo_pk(repo)
        if pk is None:
            return []
        rows = self.conn.execute(
            "SELECT * FROM briefs WHERE repo_pk=? AND number=? ORDER BY version", (pk, number)
        ).fetchall()
        return [self._brief_row(repo, r) for r in rows]

    def latest_brief(self, repo: str, number: int) -> BriefVersion | None:
        """The newest version that is not a refused conflict copy."""
        pk = self.repo_pk(repo)
        if pk is None:
            return None
        r = self.conn.execute(
            "SELECT * FROM briefs WHERE repo_pk=? AND number=? AND source<>'conflict' ORDER BY version DESC LIMIT 1",
            (pk, number),
        ).fetchone()
        return self._brief_row(repo, r) if r else None

    def latest_version(self, repo: str, number: int) -> int:
        pk = self._require_repo(repo)
        return self.conn.execute(
            "SELECT coalesce(max(version),0) FROM briefs WHERE repo_pk=? AND number=?", (pk, number)
        ).fetchone()[0]

    def briefs(self, repo: str | None = None) -> pd.DataFrame:
        """Latest brief per PR: repo, number, version, source, is_final, human_edited, created_at."""
        where = "WHERE r.full_name=?" if repo else ""
        return pd.read_sql_query(
            "SELECT r.full_name AS repo, b.number, max(b.version) AS version, "
            "max(CASE WHEN b.source='human' THEN 1 ELSE 0 END) AS human_edited, max(b.is_final) AS is_final, "
            "max(b.created_at) AS created_at FROM briefs b JOIN repos r ON r.pk=b.repo_pk "
            f"{where} GROUP BY b.repo_pk, b.number",
            self.conn,
            params=[repo] if repo else [],
        )

    @staticmethod
    def _brief_row(repo: str, r: sqlite3.Row) -> BriefVersion:
        return BriefVersion(
            repo=repo,
            number=r["number"],
            version=r["version"],
            text=r["text"],
            source=r["source"],
            lang=r["lang"],
            is_final=bool(r["is_final"]),
            created_at=r["created_at"],
            brief=json.loads(r["brief_json"]) if r["brief_json"] else None,
            meta=json.loads(r["meta_json"] or "{}"),
        )


def _split_sql(script: str) -> list[str]:
    # executescript() would COMMIT our transaction; run statements one by one instead.
    out, buf = [], []
    for line in script.splitlines():
        line = line.split("--", 1)[0]
        buf.append(line)
        if line.rstrip().endswith(";"):
            stmt = "\n".join(buf).strip()
            if stmt.strip(";").strip():
                out.append(stmt)
            buf = []
    return out


def open_cache(path: str | os.PathLike | None = None, *, create: bool = False) -> Store:
    """The notebook entry point: `open_cache()` reads cache/ (or $WORKBENCH_CACHE)."""
    return Store(path, create=create)


__all__ = ["Store", "open_cache", "StaleEditError", "BriefVersion", "iso_utc", "utcnow", "SCHEMA_VERSION"]
