"""An API sync after a clone backfill: /files only for the PRs the clone cannot answer, and each
field's source recorded."""

from __future__ import annotations

import json
import shutil

import pytest
from fake_github import FAKE_TOKEN, FakeGitHub, assert_whole, generate_prs, make_clone

from workbench.sources.git import backfill
from workbench.sources.github import sync_repo

REPO = "octo/cloned"
pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def field_sources(store, n: int) -> dict:
    row = store.conn.execute("SELECT field_sources FROM prs WHERE number=?", (n,)).fetchone()
    return json.loads(row[0])


def test_api_sync_after_a_clone_backfill_fetches_files_only_where_the_clone_cannot_answer(store, tmp_path):
    with FakeGitHub() as gh:
        repo = gh.add_repo(REPO)
        prs = generate_prs(repo, 60)
        clone = make_clone(repo, tmp_path / "clone.git")
        merged = {p.number for p in prs if p.merged_at}
        assert 20 < len(merged) < 60
        res = backfill(store, REPO, clone, progress=False)
        assert res.prs_written == len(merged)
        # Merged after the backfill: the clone does not hold that merge commit.
        late = next(p for p in prs if not p.merged_at and p.state == "open")
        late.state, late.merged_at, late.closed_at = "closed", "2026-11-30T10:00:00Z", "2026-11-30T10:00:00Z"
        late.updated_at = "2026-11-30T10:00:00Z"
        gh.reset_counts()
        res = sync_repo(store, REPO, api_url=gh.url, token=FAKE_TOKEN, progress=False)
        assert res.prs_written == 60 and not res.errors
        not_in_clone = {p.number for p in prs} - merged
        assert gh.counts["files"] == len(not_in_clone)  # open, closed unmerged, and the late merge
        for n in repo.prs:
            assert_whole(store, REPO, repo, n)
        some = min(merged)
        fs = field_sources(store, some)
        assert fs["files"] == "git" and fs["title"] == "api" and fs["head"] == "api"
        assert field_sources(store, late.number)["files"] == "api"
        assert store.pr(REPO, some).source == "git+api"
        assert len(store.pr(REPO, some).issue_comments) == len(repo.prs[some].issue_comments)
        # A re-sync after a change to a clone-answered PR still does not fetch its files.
        gh.reset_counts()
        gh.touch(repo, some, comment=True)
        res = sync_repo(store, REPO, api_url=gh.url, token=FAKE_TOKEN, progress=False)
        assert res.prs_written == 1 and gh.counts["files"] == 0
        assert field_sources(store, some)["files"] == "git"
        assert_whole(store, REPO, repo, some)
