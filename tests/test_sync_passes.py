"""What one sync pass covers and leaves behind: GitHub's clock for the watermark, passes of different
scopes, PRs that keep failing, one writer per repository, and a run log that tells the truth."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from fake_github import FAKE_TOKEN, FakeGitHub, assert_whole, generate_prs, iso

from workbench.cli.sync import status_lines
from workbench.sources.github import sync_repo
from workbench.store import Store, SyncBusy

REPO = "octo/passes"


@pytest.fixture
def gh():
    with FakeGitHub() as fake:
        fake.repo = fake.add_repo(REPO)
        yield fake


def run(store, gh, **kw):
    kw.setdefault("progress", False)
    kw.setdefault("token", FAKE_TOKEN)
    return sync_repo(store, REPO, api_url=gh.url, **kw)


# ---- item 2: the watermark, scopes, status ---------------------------------------------------------------
def test_watermark_comes_from_githubs_clock_so_a_fast_local_clock_misses_nothing(gh, store):
    gh.clock_offset = -600  # this machine runs 10 minutes ahead of GitHub (VMs, WSL2)
    generate_prs(gh.repo, 30)
    run(store, gh)
    github_now = datetime.now(UTC) + timedelta(seconds=gh.clock_offset)
    watermark = store.repo_state(REPO).watermark
    assert watermark <= iso(github_now - timedelta(minutes=4))  # GitHub's start minus the margin
    gh.touch(gh.repo, 5, comment=True)  # a comment lands right after the pass, on GitHub's clock
    res = run(store, gh)
    assert res.prs_written == 1
    assert_whole(store, REPO, gh.repo, 5)
    gh.reset_counts()
    assert run(store, gh).prs_written == 0 and gh.rate_limited_requests <= 2


def test_a_since_pass_then_a_plain_sync_completes_the_history(gh, store):
    prs = generate_prs(gh.repo, 130)  # two list pages
    since = prs[120].updated_at
    recent = {p.number for p in prs if p.updated_at >= since}
    res = run(store, gh, since=since)
    assert res.prs_written == len(recent) and res.stopped_reason is None
    assert store.repo_state(REPO).watermark is None  # a --since pass is not the full history
    st = store.sync_status(REPO)
    assert not st.full_history and st.last_runs["api since"].prs_written == len(recent)
    assert any("NOT synced" in line for line in status_lines(st))
    gh.reset_counts()
    res = run(store, gh)
    assert res.prs_written == 130 - len(recent) and len(store.prs(REPO)) == 130
    assert gh.counts["files"] == 130 - len(recent)  # the recent ones were not fetched again
    st = store.sync_status(REPO)
    assert st.full_history and st.total == 130 and st.unfinished == []
    assert st.last_runs["api full"].prs_written == 130 - len(recent)
    assert any("full history: synced" in line for line in status_lines(st))


def test_an_interrupted_since_pass_keeps_its_scope(gh, store):
    prs = generate_prs(gh.repo, 130)
    since = prs[60].updated_at
    run(store, gh, since=since, limit=20)  # stopped by --limit: its cursor is the since pass's
    state = store.repo_state(REPO)
    assert state.cursor is None and list(state.cursors) == [f"all since {since}"]
    assert store.sync_status(REPO).unfinished == [f"all since {since}"]
    # A plain sync neither adopts its floor (it would stop at `since` and call that the history) ...
    res = run(store, gh)
    assert len(store.prs(REPO)) == 130 and res.prs_written == 110
    assert store.repo_state(REPO).watermark is not None
    # ... and, having covered everything, leaves no unfinished narrower pass behind.
    assert store.repo_state(REPO).cursors == {}


def test_a_since_pass_resumes_as_a_since_pass(gh, store):
    prs = generate_prs(gh.repo, 130)
    since = prs[20].updated_at
    want = {p.number for p in prs if p.updated_at >= since}
    run(store, gh, since=since, limit=60)
    res = run(store, gh, since=since)
    assert res.prs_written == len(want) - 60
    assert set(store.prs(REPO)["number"]) == want and store.repo_state(REPO).watermark is None


def test_limit_and_numbers_never_move_the_watermark(gh, store):
    generate_prs(gh.repo, 40)
    run(store, gh, limit=10)
    run(store, gh, numbers=[30, 31])
    assert store.repo_state(REPO).watermark is None
    runs = store.sync_runs()
    assert list(runs["scope"]) == ["full limit 10", "numbers #30 #31"]


# ---- item 3: a PR that keeps failing ---------------------------------------------------------------------
def test_a_pr_whose_files_always_fail_is_owed_and_the_pass_goes_on(gh, store, sleeps):
    generate_prs(gh.repo, 30)
    gh.repo.prs[12].files_status = 503
    res = run(store, gh)
    assert res.prs_written == 29 and list(res.failed) == [12] and "503" in res.failed[12]
    assert "1 PRs failed (#12)" in res.summary() and "retries them first" in res.summary()
    assert [n for n, _ in store.failures(store.repo_pk(REPO))] == [12]
    runs = store.sync_runs()
    assert runs["status"].iloc[-1] == "partial" and int(runs["failed_prs"].iloc[-1]) == 1
    # The rerun fails on it again but still completes; then GitHub recovers and it is retried first.
    res = run(store, gh)
    assert list(res.failed) == [12] and res.prs_written == 0
    assert store.conn.execute("SELECT attempts FROM sync_failures").fetchone()[0] == 2
    gh.repo.prs[12].files_status = 200
    gh.reset_counts()
    res = run(store, gh)
    assert res.prs_written == 1 and not res.failed and store.failures(store.repo_pk(REPO)) == []
    first_after_repo = [path for _, path, _ in gh.log][1]
    assert first_after_repo.split("?")[0].endswith("/pulls/12")  # owed PRs go first
    assert_whole(store, REPO, gh.repo, 12)
    assert store.sync_runs()["status"].iloc[-1] == "ok"


def test_several_owed_prs_failing_again_do_not_block_the_pass(gh, store, sleeps):
    generate_prs(gh.repo, 30)
    for n in (3, 9, 15, 21):  # spread out: never three in a row in the listing
        gh.repo.prs[n].files_status = 503
    res = run(store, gh)
    assert sorted(res.failed) == [3, 9, 15, 21] and res.prs_written == 26
    gh.touch(gh.repo, 25, comment=True)
    res = run(store, gh)  # the four owed PRs fail again first, four in a row: still not an outage
    assert sorted(res.failed) == [3, 9, 15, 21] and res.prs_written == 1
    assert store.sync_runs()["status"].iloc[-1] == "partial"


def test_many_prs_failing_in_a_row_is_an_outage_and_stops_the_pass(gh, store, sleeps):
    from workbench.config import WorkbenchError

    generate_prs(gh.repo, 30)
    for pr in gh.repo.prs.values():
        pr.files_status = 502
    with pytest.raises(WorkbenchError, match="in a row failed"):
        run(store, gh)
    assert gh.counts["error"] == 3 * 7  # three PRs tried (7 attempts each), not thirty


# ---- item 4: one writer ----------------------------------------------------------------------------------
def test_a_second_writer_of_the_same_repository_is_refused_and_readers_never_wait(gh, store, tmp_path):
    generate_prs(gh.repo, 10)
    run(store, gh)
    other = Store(store.path)  # another process's connection, as far as SQLite is concerned
    holder = other.start_run(store.repo_pk(REPO), "git", repo_name=REPO)  # e.g. a clone backfill
    gh.reset_counts()
    with pytest.raises(SyncBusy, match=r"another sync of octo/passes is writing.*process \d+"):
        run(store, gh)
    assert gh.log == []  # refused before asking GitHub anything
    assert len(store.prs(REPO)) == 10  # a reader goes on
    runs = store.sync_runs()
    assert list(runs["status"])[-2:] == ["running", "refused"] and "another sync" in runs["note"].iloc[-1]
    other.finish_run(holder, "ok")
    other.close()
    assert run(store, gh).stopped_reason is None  # free again


def test_another_spelling_of_the_repository_is_the_same_writer(gh, store):
    generate_prs(gh.repo, 5)
    run(store, gh)
    other = Store(store.path)
    holder = other.start_run(store.repo_pk(REPO), "api", repo_name=REPO)
    with pytest.raises(SyncBusy):
        sync_repo(store, "OCTO/Passes", api_url=gh.url, token=FAKE_TOKEN, progress=False)
    other.finish_run(holder, "ok")
    other.close()


# ---- item 5: the run log ------------------------------------------------------------------------------------
def test_the_run_row_is_kept_current_as_the_run_goes(gh, store, monkeypatch):
    from workbench.sources import github as sync_module

    generate_prs(gh.repo, 30)
    seen = []
    real = sync_module._Pass._write_one

    def spy(self, item, build):
        real(self, item, build)
        row = store.conn.execute("SELECT status, prs_written, rest_requests FROM sync_runs").fetchone()
        seen.append(tuple(row))

    monkeypatch.setattr(sync_module._Pass, "_write_one", spy)
    run(store, gh)
    assert [s[1] for s in seen] == list(range(1, 31)) and all(s[0] == "running" for s in seen)
    assert seen[-1][2] >= 30  # the requests spent so far, too


def test_a_stop_at_the_rate_limit_before_the_lookup_is_logged(gh, store, sleeps):
    generate_prs(gh.repo, 5)
    gh.inject("primary", kind="repo", times=1, reset_in=900)
    res = run(store, gh, wait=False)
    assert res.summary().startswith(f"{REPO}: stopped before the repository lookup: rate limit spent")
    runs = store.sync_runs()
    assert list(runs["status"]) == ["stopped"] and runs["repo"][0] == REPO
    assert int(runs["rest_requests"][0]) == 1 and "rate limit" in runs["note"][0]


def test_a_v5_cursor_is_kept_only_when_it_was_a_full_history_pass(store):
    import json

    pk = store.upsert_repo(REPO, 1)
    full = {"state": "all", "floor": None, "started_at": "2026-11-01T00:00:00Z", "page_url": "/x?page=3"}
    since = dict(full, floor="2026-07-29T00:00:00Z")
    for old, want in ((full, {"all": full}), (since, {})):
        store.conn.execute("UPDATE repos SET cursor_json=? WHERE pk=?", (json.dumps(old), pk))
        assert store.repo_state(REPO).cursors == want
