"""The GraphQL the sync sends, checked against GitHub's published schema (the subset it uses, in
github_schema_subset.graphql), and the ids and authors it stores: 64-bit ids, bots spelled as REST does."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from fake_github import FAKE_TOKEN, FakeGitHub, _comment, _review_comment, assert_whole, generate_prs

from workbench.sources import github_graphql as gq
from workbench.sources.github import sync_repo

graphql = pytest.importorskip("graphql", reason="graphql-core (the test extra) validates the queries")

SCHEMA_FILE = Path(__file__).with_name("github_schema_subset.graphql")
REPO = "octo/ids"


def problems(query: str) -> list[str]:
    """Every validation error, deprecated fields included (GitHub keeps them working until removal)."""
    from graphql import build_schema, parse, specified_rules, validate
    from graphql.validation import NoDeprecatedCustomRule

    schema = build_schema(SCHEMA_FILE.read_text())
    return [e.message for e in validate(schema, parse(query), [*specified_rules, NoDeprecatedCustomRule])]


def test_the_batch_query_is_valid_against_githubs_schema():
    assert problems(gq.batch_query([1, 2, 250_000])) == []


@pytest.mark.parametrize("connection", sorted(gq.CONNECTIONS))
def test_each_page_query_is_valid_against_githubs_schema(connection):
    assert problems(gq.page_query(7, connection)) == []


def test_the_schema_check_catches_a_deprecated_or_unknown_field():
    # The check itself can fail: the old selection (databaseId) and a misspelt field are both refused.
    old = gq.batch_query([1]).replace("fullDatabaseId", "databaseId")
    assert any("deprecated" in m for m in problems(old))
    assert any(
        "isResolvedd" in m
        for m in problems(gq.page_query(1, "reviewThreads").replace("isResolved", "isResolvedd"))
    )


def test_64_bit_ids_and_bot_authors_are_stored_as_rest_spells_them(store, tmp_path):
    big = 2**31 + 12_345  # past the deprecated Int databaseId (GitHub crossed 2^31 in 2024)
    when = datetime(2025, 6, 1, tzinfo=UTC)
    with FakeGitHub() as gh:
        repo = gh.add_repo(REPO)
        repo._ids = 5 * 2**32  # every comment and review id of this repository is 64-bit
        prs = generate_prs(repo, 6)
        pr = prs[2]
        bot = {"login": "gemini-code-assist[bot]", "type": "Bot"}  # not in any hard-coded bot list
        pr.reviews.append(
            {"id": big, "user": bot, "body": "Summary of changes", "state": "COMMENTED",
             "submitted_at": "2025-06-01T00:00:00Z", "commit_id": pr.head_sha, "html_url": "u"}
        )  # fmt: skip
        root = _review_comment(repo, None, "a.py", "x", when, big, pr.head_sha)
        root["user"] = bot
        reply = dict(
            _review_comment(repo, "alice", "a.py", "thanks", when, big, pr.head_sha),
            in_reply_to_id=root["id"],
        )
        pr.threads.append({"resolved": True, "comments": [root, reply]})
        bot_comment = _comment(repo, None, "CI passed", when)
        bot_comment["user"] = {"login": "ci-helper[bot]", "type": "Bot"}
        pr.issue_comments.append(bot_comment)

        res = sync_repo(store, REPO, api_url=gh.url, token=FAKE_TOKEN, progress=False)
        assert res.prs_written == 6 and not res.errors
        assert_whole(store, REPO, repo, pr.number)
        rec = store.pr(REPO, pr.number)
        review = next(r for r in rec.reviews if r["id"] == big)
        assert review["user"] == {"login": "gemini-code-assist[bot]", "type": "Bot"}
        got = {c["id"]: c for c in rec.review_comments}
        assert root["id"] > 2**32 and got[root["id"]]["user"]["login"] == "gemini-code-assist[bot]"
        assert (
            got[reply["id"]]["in_reply_to_id"] == root["id"] and got[reply["id"]]["thread_resolved"] is True
        )
        assert got[root["id"]]["pull_request_review_id"] == big
        assert any(c["user"] == {"login": "ci-helper[bot]", "type": "Bot"} for c in rec.issue_comments)
        humans = [c for c in rec.issue_comments if c["user"] and c["user"]["login"] in {"alice", "bob"}]
        assert all(c["user"]["type"] == "User" for c in humans)

        # A re-sync of a changed PR upserts on the 64-bit ids: nothing duplicated, resolution kept.
        gh.touch(repo, pr.number, comment=True)
        res = sync_repo(store, REPO, api_url=gh.url, token=FAKE_TOKEN, progress=False)
        assert res.prs_written == 1
        counts = {
            t: store.conn.execute(f"SELECT count(*), count(DISTINCT id) FROM {t}").fetchone()
            for t in ("issue_comments", "reviews", "review_comments")
        }
        assert all(total == distinct for total, distinct in counts.values()), counts
        assert counts["reviews"][0] == sum(len(p.reviews) for p in repo.prs.values())
        assert (
            store.conn.execute(
                "SELECT thread_resolved FROM review_comments WHERE id=?", (root["id"],)
            ).fetchone()[0]
            == 1
        )
        authors = set(store.reviews_frame(REPO)["author"])
        assert "gemini-code-assist[bot]" in authors and "gemini-code-assist" not in authors


def test_a_node_without_an_id_fails_its_pr_instead_of_inventing_one():
    with pytest.raises(ValueError, match="without fullDatabaseId"):
        gq.issue_comment({"fullDatabaseId": None, "author": None, "body": "x"})
    assert gq.review({"fullDatabaseId": "9223372036854775000", "author": None})["id"] == 9223372036854775000
