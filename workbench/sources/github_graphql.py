"""GraphQL batches for PR discussion, and the mapping of GraphQL nodes onto REST-shaped dicts.

Why GraphQL: one query gives counts, issue comments, reviews, review threads (with isResolved, which
REST never says) and commits for up to 25 PRs, for a few points, where REST costs four or more
requests per PR. Page sizes are chosen for GitHub's cost formula (each connection costs as many
"requests" as its parents' `first` allows; sum / 100): nested thread comments dominate, so threads are
fetched 20 at a time and the rare overflow is paged for that PR alone. The store and analysis see REST
keys only (records.py), so every node is reshaped here.

Ids: `databaseId` is deprecated on every type we store (an Int: it cannot hold ids past 2^31, which
GitHub passed in 2024, and a null id would make SQLite invent a rowid, duplicating the row on every
re-sync), so we read `fullDatabaseId`, a BigInt that arrives as a JSON string. Authors: `Bot.login`
has no "[bot]" suffix, while REST spells the same app "name[bot]" with type Bot; asking `__typename`
lets both paths store one spelling. tests/test_sync_schema.py validates these queries against the
part of GitHub's published schema they use, deprecations included.
"""

from __future__ import annotations

from typing import Any

BATCH_SIZE = 25
COMMITS_CAP = 250  # REST lists at most 250 commits per PR; we record truncation past that, like REST

_USER = "author { login __typename }"
_COMMENT = f"fullDatabaseId {_USER} body createdAt updatedAt url authorAssociation"
_REVIEW = f"fullDatabaseId {_USER} state body submittedAt url authorAssociation commit {{ oid }}"
_THREAD_COMMENT = (
    f"fullDatabaseId {_USER} body path line originalLine diffHunk createdAt updatedAt url authorAssociation "
    "replyTo { fullDatabaseId } commit { oid } originalCommit { oid } pullRequestReview { fullDatabaseId }"
)
_THREAD = f"isResolved isOutdated comments(first: 20) {{ totalCount nodes {{ {_THREAD_COMMENT} }} }}"
_COMMIT = (
    "commit { oid message authoredDate committedDate "
    "author { name email date user { login } } committer { name email date user { login } } }"
)
_PAGE = "totalCount pageInfo { hasNextPage endCursor }"

CONNECTIONS = {
    # name: (first, node selection)
    "comments": (50, _COMMENT),
    "reviews": (50, _REVIEW),
    "reviewThreads": (20, _THREAD),
    "commits": (100, _COMMIT),
}


def _pr_selection() -> str:
    conns = " ".join(
        f"{name}(first: {first}) {{ {_PAGE} nodes {{ {sel} }} }}"
        for name, (first, sel) in CONNECTIONS.items()
    )
    return (
        f"number fullDatabaseId additions deletions changedFiles merged mergedBy {{ login __typename }} "
        f"mergeCommit {{ oid }} {conns}"
    )


def batch_query(numbers: list[int]) -> str:
    """One query for several PRs by number (aliases p<N>); repository named by variables."""
    prs = " ".join(f"p{n}: pullRequest(number: {int(n)}) {{ {_pr_selection()} }}" for n in numbers)
    return (
        "query($owner: String!, $name: String!) { rateLimit { cost remaining resetAt } "
        f"repository(owner: $owner, name: $name) {{ {prs} }} }}"
    )


def page_query(number: int, connection: str, first: int = 100) -> str:
    """The next page of one connection of one PR (the rare PR with more than a batch page holds)."""
    _, sel = CONNECTIONS[connection]
    return (
        "query($owner: String!, $name: String!, $after: String) { rateLimit { cost remaining resetAt } "
        f"repository(owner: $owner, name: $name) {{ pullRequest(number: {int(number)}) {{ "
        f"{connection}(first: {first}, after: $after) {{ {_PAGE} nodes {{ {sel} }} }} }} }} }}"
    )


# ---- reshaping GraphQL nodes into REST dicts ----------------------------------------------------------------
def _user(node: dict | None) -> dict | None:
    """An Actor as REST spells it: {"login", "type"}. A deleted account is author: null (REST: user:
    null); keep it null. A Bot's GraphQL login lacks the "[bot]" REST gives it: add it, so one app is
    one login whichever API saw it, and bots outside any hard-coded list are still told from people."""
    if not isinstance(node, dict) or not node.get("login"):
        return None
    kind = node.get("__typename") or "User"
    login = node["login"]
    if kind == "Bot" and not login.endswith("[bot]"):
        login += "[bot]"
    return {"login": login, "type": kind}


def _id(node: dict | None) -> int | None:
    """fullDatabaseId (a BigInt, sent as a string) as an int; None when the node or its id is absent."""
    value = node.get("fullDatabaseId") if isinstance(node, dict) else None
    return int(value) if value not in (None, "") else None


def _required_id(node: dict, what: str) -> int:
    # Without an id the row cannot be keyed: storing it would make SQLite invent one (a duplicate on
    # every re-sync). Refuse the PR instead; the sync records it as failed and retries it next pass.
    value = _id(node)
    if value is None:
        raise ValueError(f"GitHub sent a {what} without fullDatabaseId")
    return value


def _oid(node: dict | None) -> str | None:
    return node.get("oid") if isinstance(node, dict) else None


def issue_comment(n: dict) -> dict:
    return {
        "id": _required_id(n, "comment"),
        "user": _user(n.get("author")),
        "body": n.get("body"),
        "created_at": n.get("createdAt"),
        "updated_at": n.get("updatedAt"),
        "html_url": n.get("url"),
        "author_association": n.get("authorAssociation"),
    }


def review(n: dict) -> dict:
    return {
        "id": _required_id(n, "review"),
        "user": _user(n.get("author")),
        "body": n.get("body"),
        "state": n.get("state"),
        "submitted_at": n.get("submittedAt"),
        "commit_id": _oid(n.get("commit")),
        "html_url": n.get("url"),
        "author_association": n.get("authorAssociation"),
    }


def review_comments_from_threads(threads: list[dict]) -> tuple[list[dict], bool]:
    """Flatten threads into REST review comments with `thread_resolved`; True when a thread was cut short."""
    out, incomplete = [], False
    for t in threads:
        conn = t.get("comments") or {}
        nodes = conn.get("nodes") or []
        if (conn.get("totalCount") or 0) > len(nodes):
            incomplete = True
        for n in nodes:
            d = {
                "id": _required_id(n, "review comment"),
                "pull_request_review_id": _id(n.get("pullRequestReview")),
                "user": _user(n.get("author")),
                "body": n.get("body"),
                "path": n.get("path"),
                "line": n.get("line"),
                "original_line": n.get("originalLine"),
                "diff_hunk": n.get("diffHunk"),
                "created_at": n.get("createdAt"),
                "updated_at": n.get("updatedAt"),
                "html_url": n.get("url"),
                "author_association": n.get("authorAssociation"),
                "commit_id": _oid(n.get("commit")),
                "original_commit_id": _oid(n.get("originalCommit")),
                "thread_resolved": bool(t.get("isResolved")),
            }
            reply = _id(n.get("replyTo"))
            if reply:
                d["in_reply_to_id"] = reply
            out.append(d)
    return out, incomplete


def resolved_by_root(threads: list[dict]) -> dict[int, bool]:
    """Thread root comment id -> resolved, to label REST review comments fetched as a fallback."""
    out = {}
    for t in threads:
        nodes = (t.get("comments") or {}).get("nodes") or []
        if nodes:
            out[_required_id(nodes[0], "review comment")] = bool(t.get("isResolved"))
    return out


def commit(n: dict) -> dict:
    c = n.get("commit") or {}

    def person(p: dict | None) -> dict:
        p = p or {}
        return {"name": p.get("name"), "email": p.get("email"), "date": p.get("date")}

    author, committer = person(c.get("author")), person(c.get("committer"))
    author["date"] = author["date"] or c.get("authoredDate")
    committer["date"] = committer["date"] or c.get("committedDate")
    return {
        "sha": c.get("oid"),
        "commit": {"message": c.get("message"), "author": author, "committer": committer},
        "author": _user((c.get("author") or {}).get("user")),
        "committer": _user((c.get("committer") or {}).get("user")),
    }


def detail_fields(node: dict) -> dict[str, Any]:
    """The detail-only REST fields the list shape lacks (so no GET /pulls/N is needed)."""
    return {
        "additions": node.get("additions"),
        "deletions": node.get("deletions"),
        "changed_files": node.get("changedFiles"),
        "merged": node.get("merged"),
        "merged_by": _user(node.get("mergedBy")),
        "comments": (node.get("comments") or {}).get("totalCount"),
        "review_comments": sum(
            ((t.get("comments") or {}).get("totalCount") or 0)
            for t in (node.get("reviewThreads") or {}).get("nodes") or []
        ),
        "commits": (node.get("commits") or {}).get("totalCount"),
    } | _merge_commit(node)


def _merge_commit(node: dict) -> dict[str, Any]:
    # Only a merged PR has a merge commit here; REST's merge_commit_sha of an open PR is a test merge.
    oid = _oid(node.get("mergeCommit"))
    return {"merge_commit_sha": oid} if oid else {}
