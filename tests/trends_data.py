"""Hand-made PR histories with known answers for the trends tests.

`acme/widgets` (API-shaped, with reviews, comments and files), covering 2024-01-03 (a Wednesday) to
AS_OF 2024-01-31 12:00 (a Wednesday): complete ISO weeks are Jan 8, 15 and 22 only.

  #  author  created      merged/closed     lines  title                                known answer
  1  alice   01-03 10:00  merged 01-04 10:00  120  [trainer] feat: add x                ttm 24 h; first review 6 h (bob)
  2  bob     01-08 00:00  merged 01-08 12:00    5  [rollout] fix: y                     ttm 12 h; first review 2 h,
                                                                                        first response 1 h; 2 rounds
  3  carol   01-09 00:00  merged 01-16 00:00   40  fix(trainer): z                      ttm 168 h; no review
  4  dave    01-15 00:00  closed 01-17 00:00   30  chore: tidy the docs                 declined; area doc (paths)
  5  erin    01-20 00:00  open                1000  [BREAKING][rollout] feat: <script>   XXL; bot review only
  6  alice   01-21 00:00  merged 01-23 00:00  120  Revert "[trainer] feat: add x"       revert; ttm 48 h
  7  bob     01-29 12:00  merged 01-30 00:00    9  [rollout] fix: w                     ttm 12 h; partial week;
                                                                                        touches uv.lock (generated)

Merged times to merge: 24, 12, 168, 48, 12 -> median 24 h.
"""

from __future__ import annotations

from workbench.records import PRRecord
from workbench.store import Store

REPO = "acme/widgets"
FACTS_REPO = "verl-project/verl"
AS_OF = "2024-01-31T12:00:00Z"


def _user(login):
    return {"login": login}


def _review(rid, login, state, at, commit="c1"):
    return {"id": rid, "user": _user(login), "state": state, "submitted_at": at, "commit_id": commit}


def _pr(number, author, title, created, *, merged=None, closed=None, files=(), reviews=(), comments=()):
    pr = {
        "number": number,
        "title": title,
        "user": _user(author),
        "created_at": created,
        "updated_at": merged or closed or created,
        "merged_at": merged,
        "closed_at": closed or merged,
        "state": "closed" if (merged or closed) else "open",
        "head": {"sha": f"h{number}"},
    }
    return PRRecord(
        repo=REPO,
        number=number,
        pr=pr,
        files=[{"filename": f, "additions": a, "deletions": d, "status": "modified"} for f, a, d in files],
        reviews=list(reviews),
        issue_comments=list(comments),
        source="api",
    )


def widgets_records() -> list[PRRecord]:
    return [
        _pr(1, "alice", "[trainer] feat: add x", "2024-01-03T10:00:00Z", merged="2024-01-04T10:00:00Z",
            files=[("widgets/trainer/loop.py", 100, 20)],
            reviews=[_review(11, "alice", "COMMENTED", "2024-01-03T11:00:00Z"),
                     _review(12, "dependabot[bot]", "COMMENTED", "2024-01-03T12:00:00Z"),
                     _review(13, "bob", "APPROVED", "2024-01-03T16:00:00Z")]),
        _pr(2, "bob", "[rollout] fix: y", "2024-01-08T00:00:00Z", merged="2024-01-08T12:00:00Z",
            files=[("widgets/rollout/engine.py", 3, 2)],
            reviews=[_review(21, "carol", "CHANGES_REQUESTED", "2024-01-08T02:00:00Z", "c1"),
                     _review(22, "carol", "APPROVED", "2024-01-08T08:00:00Z", "c2")],
            comments=[{"id": 201, "user": _user("bob"), "created_at": "2024-01-08T00:30:00Z", "body": "self"},
                      {"id": 202, "user": _user("dave"), "created_at": "2024-01-08T01:00:00Z", "body": "hi"}]),
        _pr(3, "carol", "fix(trainer): z", "2024-01-09T00:00:00Z", merged="2024-01-16T00:00:00Z",
            files=[("widgets/trainer/loss.py", 30, 10)]),
        _pr(4, "dave", "chore: tidy the docs", "2024-01-15T00:00:00Z", closed="2024-01-17T00:00:00Z",
            files=[("docs/index.md", 20, 10)]),
        _pr(5, "erin", "[BREAKING][rollout] feat: <script>alert(1)</script>", "2024-01-20T00:00:00Z",
            files=[("widgets/rollout/api.py", 900, 100)],
            reviews=[_review(51, "renovate[bot]", "COMMENTED", "2024-01-20T01:00:00Z")]),
        _pr(6, "alice", 'Revert "[trainer] feat: add x"', "2024-01-21T00:00:00Z", merged="2024-01-23T00:00:00Z",
            files=[("widgets/trainer/loop.py", 20, 100)],
            reviews=[_review(61, "carol", "APPROVED", "2024-01-22T00:00:00Z")]),
        _pr(7, "bob", "[rollout] fix: w", "2024-01-29T12:00:00Z", merged="2024-01-30T00:00:00Z",
            files=[("widgets/rollout/engine.py", 5, 4), ("uv.lock", 0, 0)],
            reviews=[_review(71, "carol", "APPROVED", "2024-01-29T13:00:00Z")]),
    ]  # fmt: skip


def facts_records() -> list[PRRecord]:
    """Facts-only rows as the sample loader writes them: merge time, counts, tags in `_extra`."""
    rows = [
        # number, merged_at, tags, kind, breaking, revert, files, additions, deletions, test, doc, ci
        (1, "2024-01-01T09:00:00+08:00", "rollout;vllm", "fix", False, False, 2, 8, 1, 0, 0, 0),
        (2, "2024-01-09T09:00:00+08:00", "", "", False, False, 1, 5, 5, 0, 1, 0),
        (3, "2024-01-10T09:00:00+08:00", "ci", "chore", False, False, 1, 40, 0, 0, 0, 1),
        (4, "2024-01-17T09:00:00+08:00", "trainer", "feat", True, False, 5, 600, 500, 1, 0, 0),
        (5, "2024-01-24T09:00:00+08:00", "trainer", "", False, True, 5, 500, 600, 1, 0, 0),
        (6, "2024-01-31T09:00:00+08:00", "doc", "doc", False, False, 1, 3, 0, 0, 1, 0),
    ]
    out = []
    for n, merged, tags, kind, breaking, revert, files, adds, dels, test, doc, ci in rows:
        pr = {
            "number": n, "merged_at": merged, "merged": True, "state": "closed", "user": _user(f"u{n}"),
            "additions": adds, "deletions": dels, "changed_files": files,
            "_extra": {"tags": tags, "kind": kind or None, "breaking": breaking, "revert": revert,
                       "test_files": test, "doc_files": doc, "ci_files": ci},
        }  # fmt: skip
        out.append(PRRecord(repo=FACTS_REPO, number=n, pr=pr, source="facts"))
    return out


def make_store(path, *, widgets: bool = True, facts: bool = True) -> Store:
    store = Store(path)
    if widgets:
        store.write_prs(store.upsert_repo(REPO), widgets_records())
    if facts:
        store.write_prs(store.upsert_repo(FACTS_REPO), facts_records())
    return store
