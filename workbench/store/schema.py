"""The cache file's schema: DDL per version, forward migrations with a backup first, and refusing files
that are not ours (or are newer) before anything could write to them.

Migrations are append-only: a cache created by any earlier version must still open, so an old
version's DDL is never edited; a later version changes it.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..config import WorkbenchError

SCHEMA_VERSION = 6

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
    status TEXT,                        -- running | ok | stopped | failed (| interrupted, v5)
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

# v2: a columnar snapshot of each repository's PR DataFrame (removed again in v3).
_SCHEMA_V2 = """
CREATE TABLE pr_frames (
    repo_pk INTEGER PRIMARY KEY,
    built_at TEXT NOT NULL,
    payload BLOB NOT NULL
);
"""

# v3: the snapshot was derived state that every write had to invalidate; the PR DataFrame is read from
# the rows again (benchmarks/bench_store.py measures what that costs), so the table goes.
_SCHEMA_V3 = """
DROP TABLE IF EXISTS pr_frames;
"""

# v4: the snapshot returns as Arrow IPC (pyarrow's Feather writer, not a hand-written format) and is
# never invalidated by deleting it: every PR write bumps its repository's generation in the same
# transaction, and a snapshot is used only while its generation is the current one (reads.py).
_SCHEMA_V4 = """
ALTER TABLE repos ADD COLUMN generation INTEGER NOT NULL DEFAULT 0;
CREATE TABLE pr_frames (
    repo_pk INTEGER PRIMARY KEY REFERENCES repos(pk),
    generation INTEGER NOT NULL,        -- repos.generation when the rows were read
    payload BLOB NOT NULL               -- Store.prs(repo) as Feather (Arrow IPC) bytes
);
"""

# v5: which process runs a sync, so a run whose process died (kill -9, a crash, a closed laptop) can be
# told from one still going, and is marked "interrupted" instead of staying "running" for ever.
_SCHEMA_V5 = """
ALTER TABLE sync_runs ADD COLUMN pid INTEGER;
ALTER TABLE sync_runs ADD COLUMN host TEXT;
"""

# v6: an honest run log and a sync that goes on past one bad PR. A run is recorded before the
# repository lookup (repo_name as typed, repo_pk once known) with what it has done so far (updated_at),
# and says what it covered (scope); a PR that keeps failing is kept in sync_failures, retried first by
# the next pass, instead of stopping the pass. Statuses added: partial (done, some PRs owed), refused
# (another sync held the repository).
_SCHEMA_V6 = """
ALTER TABLE sync_runs ADD COLUMN repo_name TEXT;
ALTER TABLE sync_runs ADD COLUMN scope TEXT;
ALTER TABLE sync_runs ADD COLUMN updated_at TEXT;
ALTER TABLE sync_runs ADD COLUMN failed_prs INTEGER DEFAULT 0;
CREATE TABLE sync_failures (
    repo_pk INTEGER NOT NULL REFERENCES repos(pk),
    number INTEGER NOT NULL,
    error TEXT,
    attempts INTEGER NOT NULL DEFAULT 1,
    first_failed_at TEXT,
    last_failed_at TEXT,
    PRIMARY KEY (repo_pk, number)
);
"""

MIGRATIONS: dict[int, str] = {
    1: _SCHEMA_V1, 2: _SCHEMA_V2, 3: _SCHEMA_V3, 4: _SCHEMA_V4, 5: _SCHEMA_V5, 6: _SCHEMA_V6,
}  # fmt: skip


def corrupt_cache_message(path: Path, error: Exception) -> str:
    """What to tell a user whose cache file SQLite cannot read (a damaged page, or not a database)."""
    backups = sorted(path.parent.glob(f"{path.stem}.v*.bak"), key=lambda p: p.stat().st_mtime)
    restore = (
        f"restore the backup the last migration kept ({backups[-1]}: copy it over {path.name}), or "
        if backups
        else ""
    )
    return (
        f"cache file {path} is damaged or not a SQLite database ({error}); it was left as it is. "
        f"To go on: {restore}move it aside (mv {path} {path}.broken) and sync again"
    )


@contextmanager
def damaged_cache_as_error(path: Path) -> Iterator[None]:
    """Turn SQLite's word that the cache file is unreadable into a WorkbenchError saying what to do. A
    lock or a busy file (OperationalError) is not damage, and passes as it is."""
    try:
        yield
    except sqlite3.OperationalError:
        raise
    except sqlite3.DatabaseError as e:
        raise WorkbenchError(corrupt_cache_message(path, e)) from None


def schema_version(conn: sqlite3.Connection) -> int:
    return conn.execute("PRAGMA user_version").fetchone()[0]


def refuse_foreign(conn: sqlite3.Connection, path: Path) -> int:
    """The file's schema version; a newer or non-workbench file is refused (and the connection closed)
    before PRAGMA journal_mode=WAL, which rewrites the header of a file we promised to leave untouched."""
    current = schema_version(conn)
    tables = conn.execute("SELECT count(*) FROM sqlite_master WHERE type='table'").fetchone()[0]
    if current > SCHEMA_VERSION:
        conn.close()
        raise WorkbenchError(
            f"cache {path} has schema version {current}, newer than this workbench ({SCHEMA_VERSION}): upgrade pr-workbench"
        )
    if current == 0 and tables:
        conn.close()
        raise WorkbenchError(f"{path} is a SQLite file but not a workbench cache; it was left untouched")
    return current


def migrate(conn: sqlite3.Connection, path: Path, current: int) -> None:
    """Bring a file at version `current` (0: new and empty) to SCHEMA_VERSION, one version per
    transaction; an existing cache is copied aside first."""
    if current == SCHEMA_VERSION:
        return
    if current > 0:
        backup = path.with_name(f"{path.stem}.v{current}.{int(time.time())}.bak")
        conn.execute("VACUUM INTO ?", (str(backup),))
    for version in range(current + 1, SCHEMA_VERSION + 1):
        conn.execute("BEGIN IMMEDIATE")
        try:
            if schema_version(conn) < version:  # another process may have migrated while we waited
                for stmt in split_sql(MIGRATIONS[version]):
                    conn.execute(stmt)
                conn.execute(f"PRAGMA user_version={version}")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise


def split_sql(script: str) -> list[str]:
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
