"""Rate-limit cost of the GitHub sync vs the plain PyGithub loop, on a loopback GitHub with 300 PRs.

Cost = what the rate limits are charged: REST requests other than 304s, plus GraphQL points (computed
by the fake with GitHub's published formula). Both runs hit the same fake in the same process.

    python benchmarks/bench_sync.py
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from fake_github import FakeGitHub, generate_prs  # noqa: E402
from github import Auth, Github  # noqa: E402

from workbench.sources.github import sync_repo  # noqa: E402
from workbench.store import Store  # noqa: E402

N_PRS = 300
REPO = "bench-org/busy-repo"
TOKEN = "ghp_benchmark_token"  # the fake takes any token; GraphQL needs one


def naive_loop(url: str) -> int:
    """The loop most scripts write: list the pulls, then five child listings per PR."""
    g = Github(base_url=url, auth=Auth.Token(TOKEN), seconds_between_requests=0, seconds_between_writes=0)
    repo = g.get_repo(REPO)
    n = 0
    for pr in repo.get_pulls(state="all"):
        list(pr.get_files())
        list(pr.get_issue_comments())
        list(pr.get_review_comments())
        list(pr.get_reviews())
        list(pr.get_commits())
        n += 1
    return n


def main() -> dict:
    out: dict = {}
    with FakeGitHub() as gh, tempfile.TemporaryDirectory() as tmp:
        repo = gh.add_repo(REPO)
        prs = generate_prs(repo, N_PRS)
        with_discussion = sum(1 for p in prs if p.reviews and p.issue_comments)

        t0 = time.perf_counter()
        seen = naive_loop(gh.url)
        naive_ms = (time.perf_counter() - t0) * 1000
        naive_cost = gh.rate_limited_requests
        assert seen == N_PRS
        gh.reset_counts()

        store = Store(tmp)
        t0 = time.perf_counter()
        first = sync_repo(store, REPO, api_url=gh.url, progress=False, token=TOKEN)
        ours_ms = (time.perf_counter() - t0) * 1000
        ours_cost = gh.rate_limited_requests
        assert first.prs_written == N_PRS, first
        assert ours_cost == first.rest_requests + first.graphql_points, (ours_cost, first)
        gh.reset_counts()

        again = sync_repo(store, REPO, api_url=gh.url, progress=False, token=TOKEN)
        unchanged_cost = gh.rate_limited_requests
        gh.reset_counts()

        for i, pr in enumerate(
            prs[::30][:10]
        ):  # half get a comment, half a new commit (new head: files refetched)
            gh.touch(repo, pr.number, comment=i % 2 == 0, commit=i % 2 == 1)
        changed = sync_repo(store, REPO, api_url=gh.url, progress=False, token=TOKEN)
        changed_cost = gh.rate_limited_requests
        assert changed.prs_written == 10, changed
        store.close()

        # Without a token GitHub's GraphQL is closed: the REST-only path, for the record (no goal).
        gh.reset_counts()
        anon_store = Store(Path(tmp) / "anon")
        saved = {k: os.environ.pop(k) for k in ("GITHUB_TOKEN", "GH_TOKEN") if k in os.environ}
        try:
            anon = sync_repo(anon_store, REPO, api_url=gh.url, progress=False, token=None)
        finally:
            os.environ.update(saved)
        anon_cost = gh.rate_limited_requests
        assert anon.prs_written == N_PRS and anon.graphql_points == 0
        anon_store.close()

    ratio = ours_cost / naive_cost
    out = {
        "prs": N_PRS,
        "prs_with_reviews_and_comments": with_discussion,
        "naive_requests": naive_cost,
        "naive_ms": round(naive_ms),
        "first_sync_requests": ours_cost,
        "first_sync_rest": first.rest_requests,
        "first_sync_graphql_points": first.graphql_points,
        "first_sync_ms": round(ours_ms),
        "first_sync_ratio": round(ratio, 3),
        "resync_unchanged_requests": unchanged_cost,
        "resync_unchanged_304s": again.not_modified,
        "resync_10_changed_requests": changed_cost,
        "anonymous_rest_only_requests": anon_cost,
    }
    print(
        f"sync first pass ({N_PRS} PRs, {with_discussion} with reviews and comments): ours {ours_cost} rate-limited "
        f"requests ({first.rest_requests} REST + {first.graphql_points} GraphQL points) vs naive PyGithub loop "
        f"{naive_cost} -> ratio {ratio:.3f} (goal <= 0.35)"
    )
    print(
        f"sync re-sync, nothing changed: ours {unchanged_cost} requests ({again.not_modified} free 304s) (goal <= 2)"
    )
    print(f"sync re-sync, 10 PRs changed: ours {changed_cost} requests (goal <= 15)")
    print(
        f"sync without a token (REST only, GraphQL needs one): ours {anon_cost} vs naive {naive_cost} "
        f"-> ratio {anon_cost / naive_cost:.3f} (no goal: one GET /pulls/N per PR buys the counts that let empty lists be skipped)"
    )
    print(f"sync wall time on loopback: ours {ours_ms:.0f} ms vs naive {naive_ms:.0f} ms")
    out["goals_met"] = ratio <= 0.35 and unchanged_cost <= 2 and changed_cost <= 15
    return out


if __name__ == "__main__":
    main()
