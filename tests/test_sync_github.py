"""GitHub sync against the loopback fake: what lands in the cache, and what it costs."""

from __future__ import annotations

from datetime import UTC, datetime

import pandas as pd
import pytest
from fake_github import FAKE_TOKEN, FakeGitHub, add_edge_prs, assert_whole, generate_prs

from workbench.config import WorkbenchError
from workbench.sources.github import split_diff, sync_repo
from workbench.store import Store
from workbench.timespan import since_iso as parse_since

TOKEN = FAKE_TOKEN
REPO = "octo/widgets"


@pytest.fixture
def gh():
    with FakeGitHub() as fake:
        yield fake


def run(store, gh, repo=REPO, **kw):
    kw.setdefault("progress", False)
    kw.setdefault("token", TOKEN)
    return sync_repo(store, repo, api_url=gh.url, **kw)


def test_first_sync_caches_every_pr_whole_and_cheaply(gh, store, sleeps):
    repo = gh.add_repo(REPO)
    generate_prs(repo, 40)
    res = run(store, gh)
    assert res.prs_written == 40 and not res.errors and res.stopped_reason is None
    for n in repo.prs:
        assert_whole(store, REPO, repo, n)
    # No GET /pulls/N (the list shape plus GraphQL counts is the detail) and one /files per PR.
    assert gh.counts["pull"] == 0 and gh.counts["files"] == 40
    assert gh.counts["issue_comments"] == gh.counts["reviews"] == gh.counts["commits"] == 0
    assert res.rest_requests == gh.rest_charged and res.graphql_points == gh.graphql_points
    runs = store.sync_runs()
    assert list(runs["status"]) == ["ok"] and int(runs["prs_written"].iloc[0]) == 40
    assert int(runs["rest_requests"].iloc[0]) == res.rest_requests
    df = store.prs(REPO)
    fake = repo.prs[7]
    row = df[df.number == 7].iloc[0]
    assert row.comments == len(fake.issue_comments) and row.review_comments == len(fake.review_comments)
    assert row.commits == len(fake.commits) and row.changed_files == len(fake.files)
    assert store.repo_state(REPO).watermark is not None and store.repo_state(REPO).cursor is None
    assert sleeps == []


def test_review_threads_keep_resolution(gh, store):
    repo = gh.add_repo(REPO)
    generate_prs(repo, 15)
    run(store, gh)
    checked = 0
    for n, fake in repo.prs.items():
        want = {c["id"]: t["resolved"] for t in fake.threads for c in t["comments"]}
        got = {c["id"]: c["thread_resolved"] for c in store.pr(REPO, n).review_comments}
        assert got == want
        checked += len(want)
    assert checked > 5


def test_odd_prs_null_user_renames_binary_non_utf8_truncation(gh, store):
    repo = gh.add_repo(REPO)
    generate_prs(repo, 3)
    edge = add_edge_prs(repo, 100)
    res = run(store, gh)
    assert not res.errors
    rec = store.pr(REPO, edge["null_user"])
    assert rec.pr["user"] is None and rec.author is None
    assert pd.isna(store.prs(REPO).set_index("number").loc[edge["null_user"], "author"])

    files = {f["filename"]: f for f in store.pr(REPO, edge["odd_files"]).files}
    assert files["docs/new_name.md"]["previous_filename"] == "docs/old_name.md"
    assert (
        files["docs/new_name.md"]["status"] == "renamed" and files["docs/new_name.md"]["patch_status"] == "ok"
    )
    assert files["assets/logo.png"]["patch"] is None and files["assets/logo.png"]["patch_status"] == "none"
    huge = files["data/huge.json"]  # /files left it out; the .diff had it
    want = next(f["patch"] for f in repo.prs[edge["odd_files"]].files if f["filename"] == "data/huge.json")
    assert huge["patch_status"] == "from_diff" and huge["patch"] == want
    latin = files["src/latin1.py"]["patch"]  # raw 0xE9 bytes arrive as U+FFFD, not as a crash
    assert "caf\ufffd" in latin and latin.startswith("@@ -1 +1 @@")

    big = store.pr(REPO, edge["huge"])
    assert len(big.files) == 3000 and big.files_truncated
    assert len(big.commits) == 250 and big.commits_truncated
    assert store.prs(REPO).set_index("number").loc[edge["huge"], "changed_files"] == 3100

    refused = store.pr(REPO, edge["diff_refused"])  # GitHub answers 406 to the .diff: marked, not invented
    assert refused.files[0]["patch"] is None and refused.files[0]["patch_status"] == "omitted"
    assert any("406" in n for n in res.notes)
    for n in (edge["null_user"], edge["odd_files"]):
        assert_whole(store, REPO, repo, n)


def test_resync_nothing_changed_costs_nothing_and_changes_are_cheap(gh, store):
    repo = gh.add_repo(REPO)
    prs = generate_prs(repo, 60)
    run(store, gh)
    gh.reset_counts()
    res = run(store, gh)
    assert res.prs_written == 0 and gh.rate_limited_requests <= 2 and res.not_modified >= 1
    gh.reset_counts()
    gh.touch(repo, prs[3].number, comment=True)  # same head: no /files
    gh.touch(repo, prs[10].number, commit=True)  # new head: /files again
    gh.touch(repo, prs[50].number, comment=True)
    res = run(store, gh)
    assert res.prs_written == 3 and gh.counts["files"] == 1
    assert gh.rate_limited_requests <= 1 + 1 + 1  # list page + one GraphQL point + one /files
    assert len(store.pr(REPO, prs[3].number).issue_comments) == len(prs[3].issue_comments)
    assert len(store.pr(REPO, prs[10].number).files) == len(prs[10].files)
    assert store.pr(REPO, prs[10].number).pr["head"]["sha"] == prs[10].head_sha
    for p in (prs[3], prs[10], prs[50]):
        assert_whole(store, REPO, repo, p.number)


def test_listing_stops_at_the_watermark(gh, store):
    repo = gh.add_repo(REPO)
    prs = generate_prs(repo, 250)  # three list pages
    run(store, gh)
    gh.touch(repo, prs[0].number, comment=True)
    gh.reset_counts()
    run(store, gh)
    assert gh.counts["pulls"] == 1  # page 1 held the change and already reached below the watermark


def test_limit_then_rerun_continues_where_it_stopped(gh, store):
    repo = gh.add_repo(REPO)
    generate_prs(repo, 130)
    res = run(store, gh, limit=30)
    assert res.prs_written == 30 and "limit" in res.stopped_reason
    state = store.repo_state(REPO)
    assert state.cursor is not None and state.watermark is None
    started = state.cursor["started_at"]
    gh.reset_counts()
    res = run(store, gh)
    assert res.prs_written == 100 and gh.counts["files"] == 100  # nothing fetched twice
    state = store.repo_state(REPO)
    assert state.cursor is None and state.watermark is not None and state.watermark < started
    assert len(store.prs(REPO)) == 130


def test_numbers_and_since(gh, store):
    repo = gh.add_repo(REPO)
    prs = generate_prs(repo, 30)
    res = run(store, gh, numbers=[3, 4, 999])
    assert res.prs_written == 2 and any("#999" in e for e in res.errors)
    assert sorted(store.prs(REPO)["number"]) == [3, 4]
    gh.reset_counts()
    res = run(store, gh, numbers=[3, 4])  # detail ETags: both 304, free
    assert res.prs_written == 0 and gh.rate_limited_requests == 0 and gh.counts["304"] >= 2
    since = prs[20].updated_at
    res = run(store, gh, since=since)
    want = {p.number for p in prs if p.updated_at >= since} - {3, 4}
    assert res.prs_written == len(want)


def test_renamed_repository_keeps_working(gh, store):
    repo = gh.add_repo("octo/old-name")
    prs = generate_prs(repo, 20)
    run(store, gh, repo="octo/old-name")
    gh.rename(repo, "octo/new-name")
    gh.touch(repo, prs[2].number, comment=True)
    res = run(store, gh, repo="octo/old-name")
    assert res.repo == "octo/new-name" and res.prs_written == 1
    assert list(store.repos()["full_name"]) == ["octo/new-name"]
    assert len(store.prs("octo/new-name")) == 20
    # A fresh cache that only knows the old name: the 301 is followed, and lists go by id (no query lost).
    fresh = Store(store.path.parent / "fresh")
    gh.reset_counts()
    res = sync_repo(fresh, "octo/old-name", api_url=gh.url, progress=False, token=TOKEN)
    assert res.repo == "octo/new-name" and res.prs_written == 20 and gh.counts["redirect"] == 1
    assert all(
        "?" not in path or path.split("?")[0].startswith("/api/v3/repositories/")
        for method, path, _ in gh.log
        if method == "GET"
    )
    fresh.close()


def test_graphql_partial_error_keeps_the_rest(gh, store):
    repo = gh.add_repo(REPO)
    generate_prs(repo, 30)
    gh.inject("graphql_error", kind="graphql", alias="p17")
    res = run(store, gh)
    assert res.prs_written == 29 and any(e.startswith("#17") for e in res.errors) and list(res.failed) == [17]
    # The listing completed: the watermark moves, and #17 is owed (retried first by the next pass).
    pk = store.repo_pk(REPO)
    assert store.repo_state(REPO).watermark is not None and [n for n, _ in store.failures(pk)] == [17]
    res = run(store, gh)
    assert res.prs_written == 1 and not res.errors and store.failures(pk) == []
    assert_whole(store, REPO, repo, 17)


def test_bad_input_leaves_the_cache_untouched(gh, store, sleeps):
    gh.add_repo(REPO)
    with pytest.raises(WorkbenchError, match="unknown repository octo/nope"):
        run(store, gh, repo="octo/nope")
    with pytest.raises(WorkbenchError, match="not a repository name"):
        run(store, gh, repo="just-a-name")
    with pytest.raises(WorkbenchError, match="cannot reach"):
        sync_repo(store, REPO, api_url="http://127.0.0.1:9", progress=False)
    assert store.repos().empty  # nothing about a repository was written...
    runs = store.sync_runs()  # ...but every run that got as far as asking GitHub is in the log
    assert list(runs["status"]) == ["failed", "failed"] and list(runs["repo"]) == ["octo/nope", REPO]
    assert "unknown repository" in runs["errors"][0] and "cannot reach" in runs["errors"][1]


@pytest.mark.parametrize(
    "kw, words",
    [
        ({"limit": 0}, "--limit must be a positive"),
        ({"limit": -5}, "--limit must be a positive"),
        ({"numbers": [-1]}, "--number takes PR numbers"),
        ({"numbers": [0, 3]}, "--number takes PR numbers"),
        ({"since": "yesterday-ish"}, "is not understood"),
        ({"state": "merged"}, "state must be"),
        ({"api_url": "not a url"}, "not an http(s) URL"),
        ({"api_url": "ftp://example.com"}, "not an http(s) URL"),
    ],
)
def test_bad_arguments_are_refused_before_any_request_or_write(gh, tmp_path, kw, words):
    gh.add_repo(REPO)
    cache = tmp_path / "new-cache"
    kw.setdefault("api_url", gh.url)
    with pytest.raises(WorkbenchError, match=words.replace("(", r"\(").replace(")", r"\)")):
        sync_repo(cache, REPO, progress=False, token=TOKEN, **kw)
    assert not cache.exists() and gh.log == []


def test_a_bad_token_or_unknown_repository_leaves_no_new_cache(tmp_path):
    with FakeGitHub(token="ghp_right") as gh:
        gh.add_repo(REPO)
        for repo, token, words in [
            (REPO, "ghp_wrong", "401"),
            ("octo/missing", "ghp_right", "unknown repository"),
        ]:
            cache = tmp_path / f"cache-{words[:3]}"
            with pytest.raises(WorkbenchError, match=words):
                sync_repo(cache, repo, api_url=gh.url, token=token, progress=False)
            assert not cache.exists()


def test_bad_token_is_named_and_never_stored(tmp_path, monkeypatch):
    secret = "ghp_TEST_SECRET_0123456789abcdef"
    with FakeGitHub(token=secret) as gh:
        repo = gh.add_repo(REPO)
        generate_prs(repo, 10)
        store = Store(tmp_path)
        with pytest.raises(WorkbenchError, match="401") as err:
            sync_repo(store, REPO, api_url=gh.url, token="ghp_wrong_token_value", progress=False)
        assert "ghp_wrong_token_value" not in str(err.value)
        assert store.repos().empty
        monkeypatch.setenv("GITHUB_TOKEN", secret)  # the way users pass it
        res = sync_repo(store, REPO, api_url=gh.url, progress=False)
        assert res.prs_written == 10
        store.close()
    blob = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.is_file())
    assert secret.encode() not in blob


def test_parse_since_and_split_diff():
    assert parse_since("2025-06-01") == "2025-06-01T00:00:00Z"
    assert parse_since("7d") < parse_since("1d")
    with pytest.raises(WorkbenchError, match="not understood"):
        parse_since("last tuesday")
    diff = (
        "diff --git a/x.py b/x.py\nindex 1..2 100644\n--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\n"
        "diff --git a/old.txt b/new.txt\nsimilarity index 90%\nrename from old.txt\nrename to new.txt\n"
        "diff --git a/i.png b/i.png\nBinary files a/i.png and b/i.png differ\n"
    )
    assert split_diff(diff) == {"x.py": "@@ -1 +1 @@\n-a\n+b"}


def test_long_discussions_are_paged_and_long_threads_fall_back_to_rest(gh, store):
    from fake_github import _comment, _review_comment

    repo = gh.add_repo(REPO)
    prs = generate_prs(repo, 5)
    busy = prs[2]
    when = datetime(2025, 3, 1, tzinfo=UTC)
    busy.issue_comments += [
        _comment(repo, "bot", f"ping {i}", when) for i in range(120)
    ]  # > 50 per batch page
    root = _review_comment(repo, "alice", "src/a.py", "Why?", when, 1, busy.head_sha)
    replies = [
        dict(
            _review_comment(repo, "bob", "src/a.py", f"because {i}", when, 1, busy.head_sha),
            in_reply_to_id=root["id"],
        )
        for i in range(30)
    ]  # > 20 comments in one thread
    busy.threads.append({"resolved": True, "comments": [root, *replies]})
    busy.threads += [
        {"resolved": False, "comments": [_review_comment(repo, "eve", "b.py", f"t{i}", when, 1, "x")]}
        for i in range(25)
    ]  # > 20 threads
    res = run(store, gh)
    assert not res.errors
    assert_whole(store, REPO, repo, busy.number)
    got = {c["id"]: c["thread_resolved"] for c in store.pr(REPO, busy.number).review_comments}
    assert got[root["id"]] is True and all(got[r["id"]] is True for r in replies)
    assert sum(1 for v in got.values() if v is False) >= 25
    assert gh.counts["review_comments"] == 1  # the REST fallback, for that PR only


def test_failed_pr_deep_in_a_pass_is_not_hidden_by_a_page1_304(gh, store):
    repo = gh.add_repo(REPO)
    generate_prs(repo, 30)
    run(store, gh)  # a complete pass: watermark and page-1 ETag saved
    for n in (1, 2, 3):
        gh.touch(repo, n, comment=True)
    gh.inject("graphql_error", kind="graphql", alias="p2")
    res = run(store, gh)
    assert res.prs_written == 2 and res.errors
    res = run(store, gh)  # page 1 did not change since, but #2 is still owed
    assert res.prs_written == 1 and not res.errors
    assert_whole(store, REPO, repo, 2)


def test_anonymous_sync_goes_over_rest_and_skips_empty_child_lists(gh, store, monkeypatch):
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    monkeypatch.delenv("GH_TOKEN", raising=False)
    repo = gh.add_repo(REPO)
    prs = generate_prs(repo, 20)
    silent = prs[4]
    silent.issue_comments, silent.threads = [], []
    res = sync_repo(store, REPO, api_url=gh.url, progress=False)
    assert res.prs_written == 20 and not res.errors and res.graphql_points == 0
    assert gh.counts["graphql"] == 0 and gh.counts["auth"] == 0  # never asked GraphQL without a token
    for n in repo.prs:
        assert_whole(store, REPO, repo, n)
    assert gh.counts["issue_comments"] == sum(1 for p in prs if p.issue_comments)
    assert gh.counts["review_comments"] == sum(1 for p in prs if p.review_comments)
    assert all(c.get("thread_resolved") is None for c in store.pr(REPO, prs[0].number).review_comments)


@pytest.mark.parametrize("status", [404, 501])
def test_server_without_graphql_falls_back_to_rest(gh, store, sleeps, status):
    repo = gh.add_repo(REPO)
    generate_prs(repo, 12)
    gh.graphql_enabled = False
    gh.graphql_missing_status = status
    res = run(store, gh)
    assert res.prs_written == 12 and not res.errors
    notes = [n for n in res.notes if "GraphQL unavailable" in n]
    assert len(notes) == 1 and f"HTTP {status}" in notes[0] and "rest of this pass" in notes[0]
    # asked once, not retried (501 is "not here", not "busy"), and never again in this pass
    assert sum(1 for m, path, _ in gh.log if m == "POST") == 1 and sleeps == []
    for n in repo.prs:
        assert_whole(store, REPO, repo, n)


def test_number_mode_stores_clean_detail(gh, store):
    repo = gh.add_repo(REPO)
    generate_prs(repo, 5)
    run(store, gh, numbers=[2])
    row = store.conn.execute("SELECT detail_json, list_json FROM prs WHERE number=2").fetchone()
    assert "_etag" not in row[0] and "_detail" not in row[0] and row[1] is None
    assert store.pr(REPO, 2).pr["changed_files"] == len(repo.prs[2].files)


def test_heavy_graphql_batch_is_halved_after_repeated_502s(gh, store, sleeps):
    repo = gh.add_repo(REPO)
    generate_prs(repo, 20)
    gh.inject("502", kind="graphql", times=7)  # the first 20-PR query never answers
    res = run(store, gh)
    assert res.prs_written == 20 and not res.errors
    for n in repo.prs:
        assert_whole(store, REPO, repo, n)


def test_a_batch_is_halved_after_its_second_timeout_not_its_seventh(gh, store, sleeps):
    repo = gh.add_repo(REPO)
    generate_prs(repo, 20)
    gh.inject("502", kind="graphql", times=2)
    res = run(store, gh)
    assert res.prs_written == 20 and not res.errors
    posts = [status for m, _, status in gh.log if m == "POST"]
    assert posts == [502, 502, 200, 200]  # two tries at 20 PRs, then two halves of 10
    assert sleeps == [1.0]  # one backoff between the two tries


def test_state_filter_lists_only_that_state_and_keeps_the_watermark(gh, store):
    repo = gh.add_repo(REPO)
    prs = generate_prs(repo, 40)
    res = run(store, gh, state="open")
    want = {p.number for p in prs if p.state == "open"}
    assert res.prs_written == len(want) and set(store.prs(REPO)["number"]) == want
    assert store.repo_state(REPO).watermark is None  # only a pass over every state may move it
    res = run(store, gh)
    assert res.prs_written == 40 - len(want) and res.skipped_unchanged == len(want)
