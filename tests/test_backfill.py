"""Clone backfill on repositories the tests build: zero network, REST-shaped records."""

from __future__ import annotations

import hashlib
import subprocess
import sys

import pytest
from backfill_repo import build_repo, git

from workbench.config import WorkbenchError
from workbench.records import PRRecord
from workbench.sources.git import backfill, parse_diff
from workbench.store import Store
from workbench.timespan import since_iso as parse_since

REPO = "acme/demo"


@pytest.fixture(scope="module")
def clone(tmp_path_factory):
    return build_repo(tmp_path_factory.mktemp("git"))


@pytest.fixture
def store(tmp_path):
    s = Store(tmp_path / "cache")
    yield s
    s.close()


def test_squash_and_merge_commits_become_prs(clone, store):
    result = backfill(store, REPO, clone, progress=False)
    assert sorted(result.numbers) == [1, 2, 3, 4]
    assert (result.squash, result.merges, result.skipped) == (3, 1, 3)  # init, version bump, readme touch
    df = store.prs(REPO)
    assert sorted(df["number"]) == [1, 2, 3, 4]
    assert set(df["state"]) == {"merged"}
    assert set(df["source"]) == {"git"}

    one = store.pr(REPO, 1)
    assert one.title == "[trainer] feat: add core helpers"
    assert one.body.startswith("Adds thirty helpers.")
    assert one.author == "ada-dev"  # from the noreply address, not the display name
    assert one.pr["merged_at"] and one.pr["merge_commit_sha"]
    assert df.set_index("number").loc[1, "merged_at"].isoformat() == "2026-09-02T06:00:00+00:00"
    assert df.set_index("number").loc[1, "title_tags"] == "trainer"
    (f,) = one.files
    assert (f["filename"], f["status"], f["additions"], f["deletions"]) == ("pkg/core.py", "added", 120, 0)
    assert f["patch"].startswith("@@ -0,0 +1,120 @@\n+def helper_0(x):")


def test_merge_commit_title_author_and_first_parent_diff(clone, store):
    backfill(store, REPO, clone, progress=False)
    three = store.pr(REPO, 3)
    assert three.title == "[doc] docs: add a guide"
    assert three.author == "Bob Branch"  # the head commit's author, not whoever merged
    # Diff against the first parent: only the branch's file, not main's concurrent README change.
    assert [f["filename"] for f in three.files] == ["docs/guide.md"]
    assert three.pr["additions"] == 3


def test_rename_binary_and_non_utf8(clone, store):
    backfill(store, REPO, clone, progress=False)
    files = {f["filename"]: f for f in store.pr(REPO, 2).files}
    renamed = files["pkg/helpers.py"]
    assert renamed["status"] == "renamed" and renamed["previous_filename"] == "pkg/core.py"
    assert (renamed["additions"], renamed["deletions"]) == (1, 1)
    assert renamed["patch"].startswith("@@ -27,7 +27,7 @@ def helper_6(x):\n")
    logo = files["logo.png"]
    assert logo["status"] == "added" and logo["patch"] is None and logo["patch_status"] == "none"
    assert (logo["additions"], logo["deletions"]) == (0, 0)
    legacy = files["legacy.txt"]
    assert "caf\ufffd au lait" in legacy["patch"]  # decoded with replacement, not a crash
    removed = {f["filename"]: f for f in store.pr(REPO, 4).files}["logo.png"]
    assert removed["status"] == "removed"


def test_since_limit_and_numbers(clone, tmp_path):
    with Store(tmp_path / "a") as s:
        r = backfill(s, REPO, clone, since="2026-10-15", progress=False)
        assert r.numbers == [4]
    with Store(tmp_path / "b") as s:
        r = backfill(s, REPO, clone, limit=2, progress=False)
        assert r.numbers == [4, 3]  # newest first; a rerun without a limit adds the rest
        assert sorted(s.prs(REPO)["number"]) == [3, 4]
        backfill(s, REPO, clone, progress=False)
        assert sorted(s.prs(REPO)["number"]) == [1, 2, 3, 4]
    with Store(tmp_path / "c") as s:
        r = backfill(s, REPO, clone, numbers=[2], progress=False)
        assert r.numbers == [2]


def test_bare_clone(clone, tmp_path, store):
    bare = tmp_path / "bare.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(clone), str(bare)], check=True)
    r = backfill(store, REPO, bare, progress=False)
    assert sorted(r.numbers) == [1, 2, 3, 4]


def test_rerun_is_idempotent(clone, store):
    backfill(store, REPO, clone, progress=False)
    before = store.conn.execute("SELECT count(*) FROM pr_files").fetchone()[0]
    backfill(store, REPO, clone, progress=False)
    assert store.conn.execute("SELECT count(*) FROM pr_files").fetchone()[0] == before
    assert len(store.prs(REPO)) == 4


def test_api_enriches_git_row_without_duplicating(clone, store):
    backfill(store, REPO, clone, progress=False)
    api = PRRecord(
        repo=REPO, number=2, source="api",
        pr={
            "number": 2, "id": 9002, "title": "[misc] refactor: rename core to helpers",
            "body": "Renames the module. Follow-up to #1.\n\n(edited on GitHub)", "state": "closed",
            "user": {"login": "ada-dev"}, "created_at": "2026-09-08T08:00:00Z", "updated_at": "2026-09-10T09:00:00Z",
            "merged_at": "2026-09-10T08:00:00Z", "comments": 1, "review_comments": 0,
            "head": {"sha": "f" * 40}, "base": {"ref": "main"},
        },
        issue_comments=[{"id": 77, "user": {"login": "rev"}, "body": "LGTM", "created_at": "2026-09-09T08:00:00Z"}],
    )  # fmt: skip
    store.write_pr(store.repo_pk(REPO), api)
    df = store.prs(REPO)
    assert len(df) == 4 and (df["number"] == 2).sum() == 1
    row = df.set_index("number").loc[2]
    assert row["source"] == "git+api"
    assert row["comments"] == 1
    rec = store.pr(REPO, 2)
    assert rec.field_sources["created_at"] == "api" and rec.field_sources["body"] == "api"
    assert (
        rec.field_sources["merge_commit_sha"] == "git"
    )  # the API record did not say; the clone's value stays
    assert rec.pr["created_at"] == "2026-09-08T08:00:00Z"
    assert rec.files, "the clone's files stay visible until the API's files arrive"
    # A backfill after the API sync keeps what the API said.
    backfill(store, REPO, clone, progress=False)
    rec = store.pr(REPO, 2)
    assert rec.body.endswith("(edited on GitHub)") and rec.field_sources["body"] == "api"


def test_git_row_has_unknown_discussion_counts(clone, store):
    backfill(store, REPO, clone, progress=False)
    row = store.prs(REPO).set_index("number").loc[1]
    assert row[["comments", "review_comments"]].isna().all()  # unknown (NA in the Int64 counts), not zero


def _digest(path):
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(path.iterdir()) if p.is_file()}


def test_not_a_repository_is_one_line_error_and_cache_untouched(tmp_path):
    cache = tmp_path / "cache"
    with Store(cache) as s:
        s.upsert_repo(REPO)
    before = _digest(cache)
    plain = tmp_path / "plain"
    plain.mkdir()
    with Store(cache) as s, pytest.raises(WorkbenchError, match="not a git repository"):
        backfill(s, REPO, plain, progress=False)
    with Store(cache) as s, pytest.raises(WorkbenchError, match="no such directory"):
        backfill(s, REPO, tmp_path / "missing", progress=False)
    assert _digest(cache)["workbench.db"] == before["workbench.db"]

    fresh = tmp_path / "fresh"
    out = subprocess.run(
        [sys.executable, "-m", "workbench.cli", "sync", REPO, "--from-git", str(plain), "--cache", str(fresh)],
        capture_output=True, text=True,
    )  # fmt: skip
    assert out.returncode == 2
    assert (
        out.stderr.count("\n") == 1 and "not a git repository" in out.stderr and "Traceback" not in out.stderr
    )
    assert not fresh.exists()


def test_cli_backfill(clone, tmp_path):
    out = subprocess.run(
        [sys.executable, "-m", "workbench.cli", "sync", REPO, "--from-git", str(clone), "--cache", str(tmp_path)],
        capture_output=True, text=True,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "4 PRs from 7 commits" in out.stdout
    with Store(tmp_path) as s:
        assert len(s.prs(REPO)) == 4
        runs = s.sync_runs()
        assert list(runs["kind"]) == ["git"] and list(runs["status"]) == ["ok"]


def test_empty_repository(tmp_path, store):
    (tmp_path / "empty").mkdir()
    git(tmp_path / "empty", "init", "-q")
    with pytest.raises(WorkbenchError, match="no commits"):
        backfill(store, REPO, tmp_path / "empty", progress=False)


def test_parse_diff_quoted_names_mode_change_and_huge_patch(monkeypatch):
    diff = (
        'diff --git "a/sp\\303\\251cial\\ttab.py" "b/sp\\303\\251cial\\ttab.py"\n'
        "old mode 100644\nnew mode 100755\n"
        "diff --git a/big.txt b/big.txt\nindex 1..2 100644\n--- a/big.txt\n+++ b/big.txt\n"
        "@@ -1,2 +1,3 @@\n-old\n+new\n+newer\n ctx\n"
        "diff --git a/with space.md b/with space.md\nnew file mode 100644\nindex 0..1\n"
        "Binary files /dev/null and b/with space.md differ\n"
    )
    files = parse_diff(diff)
    assert [f["filename"] for f in files] == ["sp\u00e9cial\ttab.py", "big.txt", "with space.md"]
    assert files[0]["status"] == "modified" and "patch" not in files[0]
    assert (files[1]["additions"], files[1]["deletions"]) == (2, 1)
    assert files[1]["patch"] == "@@ -1,2 +1,3 @@\n-old\n+new\n+newer\n ctx"
    assert files[2]["status"] == "added" and "patch" not in files[2]
    monkeypatch.setattr("workbench.sources.git.MAX_PATCH_CHARS", 10)
    big = parse_diff(diff)[1]
    assert big["patch_status"] == "omitted" and "patch" not in big and big["additions"] == 2


def test_parse_since():
    from datetime import UTC, datetime

    now = datetime(2026, 11, 27, tzinfo=UTC)
    assert parse_since("2w", now=now) == "2026-11-13T00:00:00Z"
    assert parse_since("2026-10-01T08:00:00+08:00") == "2026-10-01T00:00:00Z"
    with pytest.raises(WorkbenchError, match="not understood"):
        parse_since("last tuesday")


def test_huge_commit_is_truncated_not_dropped(tmp_path, store, monkeypatch):
    from backfill_repo import commit

    repo = tmp_path / "huge"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    for i in range(12):
        (repo / f"gen_{i:02d}.txt").write_text("".join(f"line {k}\n" for k in range(200)))
    commit(repo, "[misc] chore: vendor generated files (#9)", date="2026-10-01T00:00:00+00:00")
    monkeypatch.setattr("workbench.sources.git.MAX_FILES", 5)
    monkeypatch.setattr("workbench.sources.git.MAX_PATCH_CHARS", 1000)
    r = backfill(store, REPO, repo, progress=False)
    assert r.files_truncated == 1 and r.patches_omitted == 5
    row = store.prs(REPO).iloc[0]
    assert row["changed_files"] == 12 and row["additions"] == 12 * 200 and bool(row["files_truncated"])
    files = store.pr(REPO, 9).files
    assert len(files) == 5 and all(f["patch_status"] == "omitted" and f["additions"] == 200 for f in files)


def test_git_failure_is_reported(clone, store, monkeypatch):
    import workbench.sources.git as g

    real = g._git_log_cmd
    # A revision git cannot resolve: git log exits non-zero; the run is recorded as failed.
    monkeypatch.setattr(
        g,
        "_git_log_cmd",
        lambda path, since, start="HEAD", one=False: (
            real(path, since, start, one=one)[:-2] + ["HEAD", "no-such-ref", "--"]
        ),
    )
    with pytest.raises(WorkbenchError, match="git log failed"):
        backfill(store, REPO, clone, progress=False)
    assert list(store.sync_runs()["status"]) == ["failed"]


def _clone_with_a_lost_blob(root, lost_pr: int):
    """Five squash-merged PRs, each adding its own file; the blob PR `lost_pr` added is deleted from
    the object store, as in a public mirror that lost a few objects."""
    from backfill_repo import commit

    repo = root / "clone"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "README.md").write_text("# lossy\n")
    commit(repo, "initial import", date="2026-09-01T08:00:00+00:00")
    for n in range(1, 6):
        (repo / f"mod_{n}.rs").write_text(f"pub fn answer_{n}() -> u32 {{\n    {n}\n}}\n")
        commit(repo, f"[core] Add answer_{n} (#{n})", date=f"2026-09-0{n + 1}T08:00:00+00:00")
    blob = git(repo, "rev-parse", f"HEAD~{5 - lost_pr}:mod_{lost_pr}.rs").strip()
    (repo / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    return repo


@pytest.mark.parametrize("lost_pr", [5, 3, 1])  # the newest commit, one in the middle, the oldest PR
def test_clone_with_missing_objects_is_backfilled_around_them(tmp_path, store, lost_pr):
    repo = _clone_with_a_lost_blob(tmp_path, lost_pr)
    # the object really is gone: git itself cannot show that commit
    assert subprocess.run(["git", "-C", str(repo), "log", "-p"], capture_output=True).returncode != 0

    result = backfill(store, REPO, repo, progress=False)

    assert [u.number for u in result.unreadable] == [lost_pr]
    assert result.unreadable[0].subject == f"[core] Add answer_{lost_pr}"
    assert "unable to read" in result.unreadable[0].reason
    assert f"#{lost_pr}" in result.summary() and "lacks objects" in result.summary()
    kept = sorted(set(range(1, 6)) - {lost_pr})
    assert sorted(result.numbers) == kept
    assert sorted(store.prs(REPO)["number"]) == kept
    for n in kept:  # the PRs around the hole are whole: their own file, with its patch
        (f,) = store.pr(REPO, n).files
        assert f["filename"] == f"mod_{n}.rs" and f["patch"].startswith("@@ -0,0 +1,3 @@")
    assert list(store.sync_runs()["status"]) == ["ok"]


def test_missing_objects_with_limit_stop_where_asked(tmp_path, store):
    repo = _clone_with_a_lost_blob(tmp_path, 4)
    result = backfill(store, REPO, repo, progress=False, limit=2)
    assert result.numbers == [5, 3] and [u.number for u in result.unreadable] == [4]
