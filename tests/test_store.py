"""Store guarantees: whole-or-absent writes, WAL snapshots across processes, forward migrations with a
backup, corrupt files left untouched, and merging one PR from several sources."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import workbench.store as store_mod
from workbench.config import WorkbenchError
from workbench.records import PRRecord
from workbench.store import Store, schema

REPO = "acme/widgets"


def record(n: int, source: str = "api", files: int = 3, **pr) -> PRRecord:
    base = {
        "number": n, "title": f"[core] fix: thing {n}", "body": f"body {n}", "state": "closed",
        "user": {"login": "ada"}, "created_at": "2026-10-01T00:00:00Z", "updated_at": "2026-10-02T00:00:00Z",
        "merged_at": "2026-10-02T00:00:00Z", "head": {"sha": f"{n:040x}"},
    }  # fmt: skip
    base.update(pr)
    return PRRecord(
        repo=REPO, number=n, pr=base, source=source,
        files=[{"filename": f"src/f{i}.py", "status": "modified", "additions": 1, "deletions": 0,
                "patch": "@@ -1 +1,2 @@\n x\n+y"} for i in range(files)],
        issue_comments=[{"id": n * 10 + 1, "user": {"login": "bob"}, "body": "hi", "created_at": "2026-10-01T01:00:00Z"}],
    )  # fmt: skip


@pytest.fixture
def store(tmp_path):
    s = Store(tmp_path / "cache")
    yield s
    s.close()


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# ---- transactions ---------------------------------------------------------------------------------
def test_failing_child_rolls_back_the_whole_pr(store):
    pk = store.upsert_repo(REPO)
    bad = record(1)
    bad.reviews = [{"user": {"login": "x"}, "state": "APPROVED"}]  # no id: the insert fails after the PR row
    with pytest.raises(ValueError, match="no id"):
        store.write_pr(pk, bad)
    assert store.conn.execute("SELECT count(*) FROM prs").fetchone()[0] == 0
    assert store.conn.execute("SELECT count(*) FROM pr_files").fetchone()[0] == 0
    assert store.conn.execute("SELECT count(*) FROM issue_comments").fetchone()[0] == 0
    store.write_pr(pk, record(1))  # the store is still usable
    assert len(store.prs(REPO)) == 1


def test_batch_is_all_or_nothing(store):
    pk = store.upsert_repo(REPO)
    store.write_pr(pk, record(1))
    with pytest.raises(RuntimeError):
        with store.transaction():
            store.write_prs(pk, [record(2), record(3)])
            raise RuntimeError("crash mid-batch")
    assert list(store.prs(REPO)["number"]) == [1]
    assert store.conn.execute("SELECT count(*) FROM pr_files WHERE number>1").fetchone()[0] == 0


def test_rewrite_upserts_never_duplicates(store):
    pk = store.upsert_repo(REPO)
    for _ in range(2):
        store.write_pr(pk, record(5))
    assert store.conn.execute("SELECT count(*) FROM pr_files").fetchone()[0] == 3
    assert store.conn.execute("SELECT count(*) FROM issue_comments").fetchone()[0] == 1


# ---- WAL: a reader keeps a consistent snapshot while another process writes --------------------------
WRITER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    sys.path.insert(0, sys.argv[3])
    from test_store import record
    from workbench.store import Store
    cache, flags = sys.argv[1], Path(sys.argv[2])
    s = Store(cache)
    pk = s.upsert_repo("acme/widgets")
    with s.transaction():
        for n in range(1, 41):
            s.write_pr(pk, record(n, files=5))
            if n == 20:
                (flags / "half").touch()
                while not (flags / "go").exists():
                    time.sleep(0.01)
    (flags / "first-commit").touch()
    while not (flags / "go2").exists():
        time.sleep(0.01)
    s.write_prs(pk, [record(n, files=5) for n in range(41, 61)])
    s.close()
    """
)


def _wait(path: Path, timeout: float = 30) -> None:
    end = time.monotonic() + timeout
    while not path.exists():
        assert time.monotonic() < end, f"timed out waiting for {path.name}"
        time.sleep(0.01)


def test_reader_sees_consistent_snapshot_while_writer_process_writes(tmp_path):
    cache = tmp_path / "cache"
    Store(cache).close()
    flags = tmp_path / "flags"
    flags.mkdir()
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(cache), str(flags), str(Path(__file__).parent)],
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        _wait(flags / "half")
        reader = Store(cache, create=False)
        # Mid-transaction: the reader is not blocked, and sees none of the half-written batch.
        t0 = time.perf_counter()
        assert reader.conn.execute("SELECT count(*) FROM prs").fetchone()[0] == 0
        assert time.perf_counter() - t0 < 1.0
        (flags / "go").touch()
        _wait(flags / "first-commit")
        reader.conn.execute("BEGIN")
        first = reader.conn.execute("SELECT count(*) FROM prs").fetchone()[0]
        assert first == 40
        (flags / "go2").touch()
        writer.wait(timeout=60)
        assert writer.returncode == 0, writer.stderr.read()
        # Same read transaction: still the snapshot taken before the second batch committed.
        assert reader.conn.execute("SELECT count(*) FROM prs").fetchone()[0] == 40
        assert reader.conn.execute("SELECT count(*) FROM pr_files").fetchone()[0] == 40 * 5
        reader.conn.execute("COMMIT")
        df = reader.prs(REPO)
        assert len(df) == 60
        per_pr = reader.conn.execute("SELECT number, count(*) FROM pr_files GROUP BY number").fetchall()
        assert {c for _, c in per_pr} == {5}  # every PR whole
        reader.close()
    finally:
        if writer.poll() is None:
            writer.kill()


# ---- schema version and migrations -----------------------------------------------------------------
def test_schema_version_recorded(store):
    assert store.conn.execute("PRAGMA user_version").fetchone()[0] == store_mod.SCHEMA_VERSION
    assert store.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_forward_migration_backs_up_first(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    with Store(cache) as s:
        s.write_pr(s.upsert_repo(REPO), record(7))
    old = store_mod.SCHEMA_VERSION
    monkeypatch.setattr(schema, "SCHEMA_VERSION", old + 1)
    monkeypatch.setitem(schema.MIGRATIONS, old + 1, "ALTER TABLE prs ADD COLUMN reading_minutes INTEGER;\n")
    with Store(cache) as s:
        assert s.conn.execute("PRAGMA user_version").fetchone()[0] == old + 1
        cols = [r[1] for r in s.conn.execute("PRAGMA table_info(prs)")]
        assert "reading_minutes" in cols
        assert list(s.prs(REPO)["number"]) == [7]  # data carried forward
    backups = list(cache.glob(f"workbench.v{old}.*.bak"))
    assert len(backups) == 1
    b = sqlite3.connect(backups[0])
    assert b.execute("PRAGMA user_version").fetchone()[0] == old
    assert b.execute("SELECT number FROM prs").fetchall() == [(7,)]
    b.close()
    with Store(cache):  # already migrated: no second backup
        pass
    assert len(list(cache.glob("*.bak"))) == 1


def test_failed_migration_leaves_old_version(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    Store(cache).close()
    old = store_mod.SCHEMA_VERSION
    monkeypatch.setattr(schema, "SCHEMA_VERSION", old + 1)
    monkeypatch.setitem(
        schema.MIGRATIONS,
        old + 1,
        "ALTER TABLE prs ADD COLUMN x INTEGER;\nALTER TABLE nope ADD COLUMN y;\n",
    )
    with pytest.raises(WorkbenchError):
        Store(cache)
    monkeypatch.setattr(schema, "SCHEMA_VERSION", old)
    with Store(cache) as s:
        assert s.conn.execute("PRAGMA user_version").fetchone()[0] == old
        assert "x" not in [r[1] for r in s.conn.execute("PRAGMA table_info(prs)")]


def test_newer_schema_is_refused_untouched(tmp_path):
    cache = tmp_path / "cache"
    Store(cache).close()
    db = cache / "workbench.db"
    c = sqlite3.connect(db)
    c.execute(f"PRAGMA user_version={store_mod.SCHEMA_VERSION + 5}")
    c.close()
    before = _sha(db)
    with pytest.raises(WorkbenchError, match="newer than this workbench"):
        Store(cache)
    assert _sha(db) == before


# ---- corrupt and foreign files ---------------------------------------------------------------------
@pytest.mark.parametrize(
    "content", [b"this is not a database at all\n" * 100, b"SQLite format 3\x00" + b"\xff" * 4000]
)
def test_corrupt_file_is_reported_and_left_byte_identical(tmp_path, content):
    cache = tmp_path / "cache"
    cache.mkdir()
    db = cache / "workbench.db"
    db.write_bytes(content)
    with pytest.raises(WorkbenchError) as e:
        Store(cache)
    assert "\n" not in str(e.value) and "workbench.db" in str(e.value)
    assert db.read_bytes() == content
    assert sorted(p.name for p in cache.iterdir()) == ["workbench.db"]


def test_foreign_sqlite_file_is_left_alone(tmp_path):
    db = tmp_path / "other.db"
    c = sqlite3.connect(db)
    c.execute("CREATE TABLE notes (x)")
    c.commit()
    c.close()
    before = _sha(db)
    with pytest.raises(WorkbenchError, match="not a workbench cache"):
        Store(db)
    assert _sha(db) == before


def test_open_cache_does_not_create(tmp_path):
    from workbench.store import open_cache

    with pytest.raises(WorkbenchError, match="no cache"):
        open_cache(tmp_path / "missing")
    assert not (tmp_path / "missing").exists()


# ---- one PR from several sources -------------------------------------------------------------------
def test_facts_then_git_then_api_merge_into_one_row(store):
    pk = store.upsert_repo(REPO)
    facts = PRRecord(repo=REPO, number=9, source="facts", pr={
        "number": 9, "title": "[core] fix", "merged_at": "2026-10-02T08:00:00+08:00", "user": {"login": "u123"},
        "additions": 10, "deletions": 2, "changed_files": 1,
        "_extra": {"title_tags": "core", "kind": "fix", "breaking": 0, "revert": 0, "test_files": 1},
    })  # fmt: skip
    store.write_pr(pk, facts)
    row = store.prs(REPO).iloc[0]
    assert (row["source"], row["title_tags"], row["kind"]) == ("facts", "core", "fix")

    git = PRRecord(repo=REPO, number=9, source="git", pr={
        "number": 9, "title": "[core, io] fix: close file handles", "body": "from the squash commit",
        "merged_at": "2026-10-02T00:00:00Z", "merge_commit_sha": "a" * 40, "user": {"login": "ada"},
    }, files=[{"filename": "io.py", "status": "modified", "additions": 10, "deletions": 2, "patch": "@@ -1 +1 @@\n-a\n+b"}])  # fmt: skip
    store.write_pr(pk, git)
    row = store.prs(REPO).iloc[0]
    assert row["source"] == "facts+git"
    assert row["title"] == "[core, io] fix: close file handles"
    assert row["title_tags"] == "core;io"  # parsed from the real title once one is known

    api = record(9, title="[core, io] fix: close file handles (v2)", body="edited on GitHub",
                 created_at="2026-09-30T00:00:00Z", merged_at="2026-10-02T00:00:00Z")  # fmt: skip
    store.write_pr(pk, api)
    df = store.prs(REPO)
    assert len(df) == 1
    row = df.iloc[0]
    assert row["source"] == "facts+git+api"
    rec = store.pr(REPO, 9)
    fs = rec.field_sources
    assert fs["title"] == "api" and fs["body"] == "api" and fs["created_at"] == "api"
    assert fs["merge_commit_sha"] == "git"  # only the clone knew it
    assert rec.pr["merge_commit_sha"] == "a" * 40
    assert rec.pr["_extra"]["test_files"] == 1  # the facts' extras survive
    assert [f["filename"] for f in rec.files] == [
        f["filename"] for f in api.files
    ]  # files follow the head SHA

    # A lower-ranked source arriving later changes nothing the API said.
    store.write_pr(pk, git)
    rec = store.pr(REPO, 9)
    assert rec.body == "edited on GitHub" and rec.field_sources["body"] == "api"
    assert json.loads(store.conn.execute("SELECT field_sources FROM prs").fetchone()[0])["title"] == "api"


# ---- the PR DataFrame, read straight from the rows ----------------------------------------------------
def _mixed_store(store) -> int:
    pk = store.upsert_repo(REPO)
    recs = [record(n) for n in range(1, 30)]
    recs.append(
        PRRecord(
            repo=REPO,
            number=40,
            source="git",
            pr={
                "number": 40,
                "title": "t",
                "comments": None,
                "merged_at": "2026-10-05T00:00:00Z",
                "user": None,
            },
        )
    )
    recs.append(record(41, state="open", merged_at=None, title="<b>x</b> \u4e2d\u6587", draft=True))
    store.write_prs(pk, recs)
    return pk


def test_pr_frame_columns_types_and_values(store):
    import pandas as pd

    _mixed_store(store)
    df = store.prs(REPO)
    assert list(df.columns) == store_mod.PR_COLUMNS
    assert list(df["number"]) == [41, 40, *range(29, 0, -1)]  # newest number first
    for col in store_mod.TIME_COLUMNS:
        assert isinstance(df[col].dtype, pd.DatetimeTZDtype) and str(df[col].dt.tz) == "UTC", col
    for col in ("draft", "breaking", "revert", "files_truncated", "commits_truncated"):
        assert df[col].dtype == bool, col
    assert df["number"].dtype == "int64" and df["additions"].dtype.kind in "if"
    row = df.set_index("number")
    assert row.loc[41, "title"] == "<b>x</b> \u4e2d\u6587" and row.loc[41, "state"] == "open"
    assert row.loc[41, "draft"] and df["draft"].sum() == 1
    assert pd.isna(row.loc[41, "merged_at"])
    assert row.loc[40, "merged_at"] == pd.Timestamp("2026-10-05T00:00:00Z")
    assert pd.isna(row.loc[40, "author"]) and df["author"].isna().sum() == 1
    assert pd.isna(row.loc[40, "comments"]) and row.loc[1, "comments"] == 1
    assert row.loc[7, "created_at"] == pd.Timestamp("2026-10-01T00:00:00Z")
    assert row.loc[7, "title_tags"] == "core" and row.loc[7, "kind"] == "fix"
    assert (row.loc[7, "repo"], row.loc[7, "source"], row.loc[7, "additions"]) == (REPO, "api", 3)


def test_empty_pr_frame_has_the_columns(store):
    store.upsert_repo(REPO)
    df = store.prs(REPO)
    assert df.empty and list(df.columns) == store_mod.PR_COLUMNS


def test_every_write_shows_in_the_next_read(store):
    pk = _mixed_store(store)
    assert 50 not in set(store.prs(REPO)["number"])
    store.write_pr(pk, record(50))
    assert 50 in set(store.prs(REPO)["number"])
    store.mark_deleted(pk, 50)
    assert 50 not in set(store.prs(REPO)["number"])
    store.upsert_repo(REPO, github_id=77)
    store.upsert_repo("acme/renamed", github_id=77)
    assert set(store.prs("acme/renamed")["repo"]) == {"acme/renamed"}


def test_records_follow_the_frame(store):
    pk = _mixed_store(store)
    store.mark_deleted(pk, 29)
    assert [r.number for r in store.records(REPO)] == [41, 40, *range(28, 0, -1)]
    assert [r.number for r in store.records(REPO, [3, 41])] == [3, 41]
    with pytest.raises(WorkbenchError, match="not in the cache"):
        list(store.records("acme/unknown"))


def test_rolled_back_write_is_not_read(store):
    pk = _mixed_store(store)
    with pytest.raises(RuntimeError):
        with store.transaction():
            store.write_pr(pk, record(60))
            raise RuntimeError
    assert 60 not in set(store.prs(REPO)["number"])
    assert len(store.prs(REPO)) == 31


def test_filtered_reads(store):
    _mixed_store(store)
    assert list(store.prs(REPO, state="open")["number"]) == [41]
    assert len(store.prs(REPO, limit=3)) == 3
    assert list(store.prs(REPO, numbers=[3, 40, 999])["number"]) == [40, 3]
    assert store.prs(REPO, numbers=[]).empty
    assert list(store.prs(REPO, source="git")["number"]) == [40]


def _old_cache(tmp_path, version: int) -> Path:
    db = tmp_path / "cache" / "workbench.db"
    db.parent.mkdir()
    c = sqlite3.connect(db, isolation_level=None)
    for v in range(1, version + 1):
        for stmt in schema.split_sql(schema.MIGRATIONS[v]):
            c.execute(stmt)
    c.execute(f"PRAGMA user_version={version}")
    c.execute("INSERT INTO repos(full_name) VALUES ('acme/widgets')")
    if version == 2:
        c.execute(
            "INSERT INTO pr_frames(repo_pk, built_at, payload) VALUES (1, '2026-11-30T00:00:00Z', x'00')"
        )
    c.close()
    return db


def _tables(conn) -> set[str]:
    return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}


def _columns(conn, table: str) -> list[str]:
    return [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]


@pytest.mark.parametrize("version", [1, 2, 3, 4, 5])
def test_old_cache_migrates_to_current(tmp_path, version):
    db = _old_cache(tmp_path, version)
    with Store(db) as s:
        assert s.conn.execute("PRAGMA user_version").fetchone()[0] == store_mod.SCHEMA_VERSION == 6
        assert {"pid", "host"} <= set(_columns(s.conn, "sync_runs"))  # v5
        assert {"repo_name", "scope", "updated_at", "failed_prs"} <= set(_columns(s.conn, "sync_runs"))  # v6
        assert "sync_failures" in _tables(s.conn)
        # v4: the snapshot table is back with a generation, whatever v2 left there is gone (v3 dropped it)
        assert _columns(s.conn, "pr_frames") == ["repo_pk", "generation", "payload"]
        assert s.conn.execute("SELECT count(*) FROM pr_frames").fetchone()[0] == 0
        assert s.conn.execute("SELECT generation FROM repos").fetchone()[0] == 0
        s.write_pr(s.repo_pk(REPO), record(1))
        assert list(s.prs(REPO)["number"]) == [1]
        assert s.conn.execute("SELECT generation FROM pr_frames").fetchone()[0] == 1
    (backup,) = db.parent.glob(f"workbench.v{version}.*.bak")
    b = sqlite3.connect(backup)
    assert b.execute("PRAGMA user_version").fetchone()[0] == version
    assert ("pr_frames" in _tables(b)) == (version in (2, 4, 5))  # the backup is the file as it was
    assert ("generation" in _columns(b, "repos")) == (version >= 4)
    b.close()


# ---- the PR DataFrame snapshot (Arrow IPC, tagged with the repository's generation) -----------------
def _generation(store) -> int:
    return store.conn.execute("SELECT generation FROM repos WHERE full_name=?", (REPO,)).fetchone()[0]


def _snapshot(store) -> tuple[int, bytes] | None:
    row = store.conn.execute(
        "SELECT f.generation, f.payload FROM pr_frames f JOIN repos r ON r.pk=f.repo_pk WHERE r.full_name=?",
        (REPO,),
    ).fetchone()
    return None if row is None else (row[0], row[1])


def _from_rows(store):
    """The same frame through the SQL path only (a filter never uses the snapshot)."""
    numbers = [r[0] for r in store.conn.execute("SELECT number FROM prs")]
    return store.prs(REPO, numbers=numbers)


def test_snapshot_equals_the_frame_built_from_rows(store, monkeypatch):
    import pandas as pd

    _mixed_store(store)
    assert _snapshot(store) is None
    first = store.prs(REPO)  # built from the rows, then snapshotted
    assert _snapshot(store)[0] == _generation(store)
    assert [str(t) for t in first.dtypes] == [
        str(pd.api.types.pandas_dtype(t)) for t in store_mod.FRAME_DTYPES.values()
    ]

    def no_sql(*a, **k):
        raise AssertionError("the snapshot should have been read")

    monkeypatch.setattr(store, "_pr_frame", no_sql)
    warm = store.prs(REPO)
    monkeypatch.undo()
    pd.testing.assert_frame_equal(warm, first, check_exact=True)  # dtypes included
    pd.testing.assert_frame_equal(warm, _from_rows(store), check_exact=True)
    assert warm.loc[warm["number"] == 41, "title"].item() == "<b>x</b> \u4e2d\u6587"
    assert warm["commits"].isna().all() and warm["comments"].isna().sum() == 1  # NULLs stay missing


def test_empty_repo_snapshot_keeps_columns_and_types(store):
    import pandas as pd

    store.upsert_repo(REPO)
    cold, warm = store.prs(REPO), store.prs(REPO)
    assert _snapshot(store) is not None
    pd.testing.assert_frame_equal(warm, cold)
    assert warm.empty and list(warm.columns) == store_mod.PR_COLUMNS


def test_each_write_bumps_the_generation_and_the_next_read_is_fresh(store):
    pk = _mixed_store(store)
    store.prs(REPO)
    g = _generation(store)
    store.write_pr(pk, record(50, title="[core] feat: fifty"))
    assert _generation(store) == g + 1
    assert _snapshot(store)[0] == g  # kept, just not used: a stale generation
    df = store.prs(REPO).set_index("number")
    assert df.loc[50, "title"] == "[core] feat: fifty" and _snapshot(store)[0] == g + 1
    store.write_pr(pk, record(50, title="[core] feat: fifty, edited"))  # an update, not only an insert
    assert store.prs(REPO).set_index("number").loc[50, "title"] == "[core] feat: fifty, edited"
    with store.transaction():  # a read inside a write transaction sees its own uncommitted rows
        store.write_pr(pk, record(51))
        assert 51 in set(store.prs(REPO)["number"])
    store.mark_deleted(pk, 51)
    assert 51 not in set(store.prs(REPO)["number"])
    store.upsert_repo(REPO, github_id=77)
    store.upsert_repo("acme/renamed", github_id=77)  # the frame's repo column follows the rename
    assert set(store.prs("acme/renamed")["repo"]) == {"acme/renamed"}


def test_outdated_frame_never_replaces_a_current_snapshot(store):
    import pandas as pd

    pk = _mixed_store(store)
    old = store.prs(REPO)
    g = _generation(store)
    store.write_pr(pk, record(52))
    fresh = store.prs(REPO)  # snapshot of generation g + 1
    # A reader that read at generation g finishing late: its frame must not displace the current one.
    store._save_snapshot(pk, g, old)
    assert _snapshot(store)[0] == g + 1
    pd.testing.assert_frame_equal(store.prs(REPO), fresh)
    # And a snapshot labelled with an old generation is not used even if it is the only one.
    store.conn.execute("UPDATE pr_frames SET generation=?, payload=?", (g, _snapshot(store)[1]))
    store.write_pr(pk, record(52, title="[core] fix: renamed 52"))
    assert store.prs(REPO).set_index("number").loc[52, "title"] == "[core] fix: renamed 52"


def test_write_racing_a_cold_read_never_leaves_a_stale_snapshot(store, monkeypatch):
    _mixed_store(store)
    rows = store._pr_frame

    def rows_then_a_write(*a, **k):  # another process commits just after our rows were read
        out = rows(*a, **k)
        with Store(store.path, create=False) as other:
            other.write_pr(other.repo_pk(REPO), record(70))
        return out

    monkeypatch.setattr(store, "_pr_frame", rows_then_a_write)
    assert 70 not in set(store.prs(REPO)["number"])
    monkeypatch.undo()
    assert 70 in set(store.prs(REPO)["number"])
    assert 70 in set(store.prs(REPO)["number"])  # and from the snapshot stored by the read before


@pytest.mark.parametrize("payload", [b"\x00garbage", b"ARROW1\x00\x00" + b"\xff" * 64, "other-frame"])
def test_undecodable_or_foreign_snapshot_falls_back_to_rows(store, payload):
    import io

    import pandas as pd

    _mixed_store(store)
    good = store.prs(REPO)
    if payload == "other-frame":  # valid Arrow, but not our columns and types (another release)
        buf = io.BytesIO()
        good.drop(columns=["extra_json"]).to_feather(buf)
        payload = buf.getvalue()
    store.conn.execute("UPDATE pr_frames SET payload=?", (payload,))
    pd.testing.assert_frame_equal(store.prs(REPO), good)
    assert _snapshot(store)[1] != payload  # replaced by a good one
    pd.testing.assert_frame_equal(store.prs(REPO), good)


def test_snapshot_write_is_skipped_when_busy_or_read_only(store, monkeypatch):
    import pandas as pd

    _mixed_store(store)
    other = sqlite3.connect(store.path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # a sync holding the write lock
    try:
        t0 = time.perf_counter()
        busy = store.prs(REPO)
        assert time.perf_counter() - t0 < 5  # did not wait out the 30 s busy timeout
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert _snapshot(store) is None and len(busy) == 31
    connect = sqlite3.connect
    with monkeypatch.context() as m:  # a read-only file (root may write to any file, so open it read-only)
        m.setattr(sqlite3, "connect", lambda path, **kw: connect(f"file:{path}?mode=ro", uri=True, **kw))
        pd.testing.assert_frame_equal(store.prs(REPO), busy)
    assert _snapshot(store) is None
    store.write_pr(store.repo_pk(REPO), record(53))  # the store still writes normally, with its timeout
    assert store.conn.execute("PRAGMA busy_timeout").fetchone()[0] == 30000
    assert 53 in set(store.prs(REPO)["number"]) and _snapshot(store) is not None


OTHER_WRITER = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, sys.argv[2])
    from test_store import record
    from workbench.store import Store
    with Store(sys.argv[1]) as s:
        s.write_pr(s.repo_pk("acme/widgets"), record(99, title="[io] fix: from the other process"))
    """
)


def test_another_process_writing_makes_the_next_read_fresh(tmp_path):
    cache = tmp_path / "cache"
    with Store(cache) as s:
        _mixed_store(s)
    reader = Store(cache, create=False)
    try:
        assert 99 not in set(reader.prs(REPO)["number"])
        assert _snapshot(reader) is not None
        subprocess.run(
            [sys.executable, "-c", OTHER_WRITER, str(cache), str(Path(__file__).parent)],
            check=True,
            timeout=60,
        )
        df = reader.prs(REPO).set_index("number")
        assert df.loc[99, "title"] == "[io] fix: from the other process" and len(df) == 32
    finally:
        reader.close()


# ---- sync runs whose process died -------------------------------------------------------------------
def test_a_run_whose_process_died_is_marked_interrupted_and_a_live_one_is_not(tmp_path):
    import subprocess
    import sys

    code = (
        "import sys, time; from workbench.store import Store; s = Store(sys.argv[1]); "
        "s.start_run(None, 'api'); print('started', flush=True); time.sleep(60)"
    )
    proc = subprocess.Popen([sys.executable, "-c", code, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "started"
    with Store(tmp_path) as store:
        assert list(store.sync_runs()["status"]) == ["running"]  # its process is alive: still going
        proc.kill()
        proc.wait(timeout=10)
        mine = store.start_run(None, "git")  # starting a run sweeps the dead ones first
        runs = store.sync_runs()
        assert list(runs["status"]) == ["interrupted", "running"]
        assert runs["ended_at"][0] and f"process {proc.pid} ended" in runs["note"][0]
        store.finish_run(mine, "ok")
        assert list(store.sync_runs()["status"]) == ["interrupted", "ok"]


# ---- reads that scale: every repository from snapshots, records in bulk, stamps --------------------------
OTHER = "zeta/other"


def _two_repos(store) -> tuple[int, int]:
    pk = _mixed_store(store)
    other = store.upsert_repo(OTHER)
    store.write_prs(other, [PRRecord(**{**record(n).__dict__, "repo": OTHER}) for n in (3, 7)])
    return pk, other


def test_prs_of_every_repository_come_from_the_snapshots(store, monkeypatch):
    import pandas as pd

    _two_repos(store)
    store.upsert_repo("empty/repo")  # no PRs: adds no rows and changes no type
    numbers = [r[0] for r in store.conn.execute("SELECT number FROM prs")]
    from_rows = store.prs(numbers=numbers)  # a filter: the SQL path, every repository
    first = store.prs()
    pd.testing.assert_frame_equal(first, from_rows, check_exact=True)
    assert list(first["repo"].unique()) == [REPO, OTHER]  # by repository name, then newest number

    def no_sql(*a, **k):
        raise AssertionError("every repository's snapshot should have been read")

    monkeypatch.setattr(store, "_pr_frame", no_sql)
    pd.testing.assert_frame_equal(store.prs(), first, check_exact=True)
    monkeypatch.undo()

    # A write rebuilds that repository's frame only; the other's snapshot is still used.
    store.write_pr(store.repo_pk(OTHER), PRRecord(**{**record(9).__dict__, "repo": OTHER}))
    read = []
    real = store._pr_frame
    monkeypatch.setattr(store, "_pr_frame", lambda sql, args=(): read.append(args) or real(sql, args))
    after = store.prs()
    assert read == [(store.repo_pk(OTHER),)]
    assert sorted(after.loc[after["repo"] == OTHER, "number"]) == [3, 7, 9]


def test_prs_with_no_repository_in_an_empty_cache_keeps_its_types(store):
    df = store.prs()
    assert df.empty and list(df.columns) == store_mod.PR_COLUMNS
    assert [str(t) for t in df.dtypes] == [
        str(__import__("pandas").api.types.pandas_dtype(t)) for t in store_mod.FRAME_DTYPES.values()
    ]


def _full_record(n: int) -> PRRecord:
    r = record(n)
    r.reviews = [
        {"id": n * 100 + 2, "user": {"login": "cy"}, "state": "APPROVED", "submitted_at": "2026-10-01T03:00:00Z"},
        {"id": n * 100 + 1, "user": {"login": "bob"}, "state": "COMMENTED", "submitted_at": "2026-10-01T02:00:00Z"},
    ]  # fmt: skip
    r.review_comments = [
        {"id": n * 100 + 5, "user": {"login": "bob"}, "path": "src/f0.py", "line": 1, "body": "why?",
         "created_at": "2026-10-01T02:00:00Z", "thread_resolved": True},
    ]  # fmt: skip
    r.commits = [{"sha": f"{n:039x}{i}", "commit": {"message": f"c{i}"}} for i in range(3)]
    return r


def test_bulk_records_equal_what_was_written_with_one_query_per_table(store):
    pk = store.upsert_repo(REPO)
    written = {n: _full_record(n) for n in range(1, 31)}
    store.write_prs(pk, written.values())
    # A force-push of #5: a new head, a new file set; the old set stays stored but is not current.
    pushed = _full_record(5)
    pushed.pr["head"] = {"sha": "f" * 40}
    pushed.files = pushed.files[:1]
    store.write_pr(pk, pushed)
    written[5] = pushed

    queries: list[str] = []
    store.conn.set_trace_callback(queries.append)
    try:
        got = store.prs_records(REPO, [30, 5, 1, 17])
    finally:
        store.conn.set_trace_callback(None)
    assert [r.number for r in got] == [30, 5, 1, 17]  # in the order asked
    assert len(queries) <= 8  # repository, PR rows and one per child table, whatever the batch size
    for r in got:
        w = written[r.number]
        assert [f["filename"] for f in r.files] == [f["filename"] for f in w.files]
        assert all(f["patch"] == "@@ -1 +1,2 @@\n x\n+y" for f in r.files)
        assert [c["id"] for c in r.reviews] == [r.number * 100 + 1, r.number * 100 + 2]  # by submission
        assert r.review_comments[0]["thread_resolved"] is True
        assert [c["sha"] for c in r.commits] == [c["sha"] for c in w.commits]
        assert r.issue_comments[0]["body"] == "hi" and r.pr["body"] == f"body {r.number}"
    assert store.pr(REPO, 5).to_dict() == got[1].to_dict()
    assert [r.number for r in store.records(REPO, batch=7)] == list(range(30, 0, -1))
    with pytest.raises(WorkbenchError, match=r"acme/widgets#99 is not in the cache"):
        store.prs_records(REPO, [1, 99])


def test_bulk_records_fall_back_to_the_newest_file_set(store):
    pk = store.upsert_repo(REPO)
    store.write_pr(pk, record(4))
    meta_only = record(4, files=0, head={"sha": "e" * 40})  # metadata for a new head, its files not yet
    store.write_pr(pk, meta_only)
    [r] = store.prs_records(REPO, [4])
    assert [f["filename"] for f in r.files] == ["src/f0.py", "src/f1.py", "src/f2.py"]


def test_stamps_change_with_every_write_and_only_then(store, monkeypatch):
    pk = _mixed_store(store)
    before = store.pr_stamps(REPO)
    assert set(before) == {*range(1, 30), 40, 41}
    assert store.pr_stamps(REPO) == before and store.pr_stamps(REPO, [3, 41]) == {
        3: before[3],
        41: before[41],
    }
    # A rewrite in the same second with one more comment: the count stored beside it tells them apart.
    monkeypatch.setattr("workbench.store.prs.utcnow", lambda: "2026-11-01T00:00:00Z")
    store.write_pr(pk, record(3))
    same_second = store.pr_stamps(REPO)[3]
    again = record(3)
    again.issue_comments.append({"id": 999, "user": {"login": "eve"}, "body": "late", "created_at": "2026-10-03T00:00:00Z"})  # fmt: skip
    store.write_pr(pk, again)
    after = store.pr_stamps(REPO)
    assert after[3] != same_second and after[3] != before[3]
    assert {n: s for n, s in after.items() if n != 3} == {n: s for n, s in before.items() if n != 3}
    store.mark_deleted(pk, 3)
    assert 3 not in store.pr_stamps(REPO)


def test_files_frame_snapshot_equals_the_rows_and_follows_writes(store):
    import pandas as pd

    pk = _mixed_store(store)
    first = store.files_frame(REPO)
    snaps = list((store.path.parent / "frames").glob("files-*.feather"))
    assert len(snaps) == 1
    pd.testing.assert_frame_equal(store.files_frame(REPO), first, check_exact=True)
    pd.testing.assert_frame_equal(first, store._files_rows(pk, REPO, None), check_exact=True)
    store.write_pr(pk, record(50, files=2))
    after = store.files_frame(REPO)
    assert sorted(after.loc[after["number"] == 50, "filename"]) == ["src/f0.py", "src/f1.py"]
    assert [p.name for p in (store.path.parent / "frames").glob("files-*.feather")] != [snaps[0].name]
    # A damaged snapshot is only a miss: the rows are the truth.
    [current] = (store.path.parent / "frames").glob("files-*.feather")
    current.write_bytes(b"not arrow")
    pd.testing.assert_frame_equal(store.files_frame(REPO), after, check_exact=True)
    window = store.files_frame(REPO, [50, 1])
    assert sorted(set(window["number"])) == [1, 50]


def test_known_prs_know_the_commits_that_merged_them(store):
    """What a revert's "This reverts commit <sha>" is resolved against: the merge commits of merged PRs
    (an open PR's merge_commit_sha is GitHub's test merge, which no revert names)."""
    pk = store.upsert_repo(REPO, 1)
    store.write_pr(pk, record(1, merge_commit_sha="ab" * 20))
    store.write_pr(pk, record(2, merge_commit_sha="cd" * 20, merged_at=None, state="open"))
    known = store.known_prs(REPO)
    assert known == {1: ("[core] fix: thing 1", "merged"), 2: ("[core] fix: thing 2", "open")}
    assert known.merged_as("ab" * 20) == 1 and known.merged_as("abababa") == 1
    assert known.merged_as("cd" * 20) is None
    assert store.known_prs("nobody/nothing") == {}
