"""The PR record: the one shape that flows from the store into analysis, drafting and the UI.

Child lists are dicts keyed exactly as GitHub's REST API keys them, whatever the source (API, clone
backfill, sample), so analysis code never asks where a PR came from.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any


@dataclass
class PRRecord:
    repo: str  # "owner/name", as currently named
    number: int
    pr: dict[str, Any]  # REST detail shape (title, body, state, user{login}, merged_at, head{sha}, ...)
    files: list[dict[str, Any]] = field(
        default_factory=list
    )  # filename, status, additions, deletions, patch, previous_filename
    issue_comments: list[dict[str, Any]] = field(default_factory=list)
    reviews: list[dict[str, Any]] = field(default_factory=list)
    review_comments: list[dict[str, Any]] = field(default_factory=list)
    commits: list[dict[str, Any]] = field(default_factory=list)
    source: str = "api"  # api | git | git+api | sample | facts
    field_sources: dict[str, str] = field(default_factory=dict)  # e.g. {"body": "git", "created_at": "api"}
    files_truncated: bool = False  # GitHub lists at most 3,000 files
    commits_truncated: bool = False  # ... and at most 250 commits

    # Convenience accessors: analysis and UI read these instead of digging into `pr`.
    @property
    def title(self) -> str:
        return self.pr.get("title") or ""

    @property
    def body(self) -> str:
        return self.pr.get("body") or ""

    @property
    def author(self) -> str | None:
        user = self.pr.get("user")
        return user.get("login") if isinstance(user, dict) else None  # None: deleted account

    @property
    def state(self) -> str:
        """open | merged | closed (closed without merging)."""
        if self.pr.get("merged_at") or self.pr.get("merged"):
            return "merged"
        return self.pr.get("state") or "open"

    @property
    def url(self) -> str:
        return self.pr.get("html_url") or f"https://github.com/{self.repo}/pull/{self.number}"

    @property
    def additions(self) -> int:
        v = self.pr.get("additions")
        return int(v) if v is not None else sum(int(f.get("additions") or 0) for f in self.files)

    @property
    def deletions(self) -> int:
        v = self.pr.get("deletions")
        return int(v) if v is not None else sum(int(f.get("deletions") or 0) for f in self.files)

    @property
    def labels(self) -> list[str]:
        return [lb.get("name", "") if isinstance(lb, dict) else str(lb) for lb in self.pr.get("labels") or []]

    def to_dict(self) -> dict[str, Any]:
        from dataclasses import asdict

        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> PRRecord:
        return cls(**{k: v for k, v in d.items() if k in cls.__dataclass_fields__})


# A revert's title, as git and GitHub's revert button write it (`Revert "title"`) or as people do
# (`Revert: title`, `revert: "title"`), maybe after the project's tags and kind (`[ty] Revert "title"`,
# `[model] fix: Revert "title"`): group 1 or 2 is the title it quotes.
_REVERT_TITLE = re.compile(
    r'\A\s*(?:\[[^\]\n]*\]\s*)*(?:[\w!()-]+:\s*)?revert(?:\s+"(.*)"|:\s*(\S.*?))\s*\Z', re.S | re.I
)


def quoted_title(revert_title: str) -> str | None:
    """The title a revert's title quotes, or None when it is no revert's title."""
    m = _REVERT_TITLE.match(revert_title)
    return (m.group(1) or m.group(2) or "").strip().strip('"').strip() if m else None


def reverts_by_title(prs: dict) -> dict[str, list[int]]:
    """The PRs of {number: (title, state)} titled as reverts, by the title they quote, in number order:
    the few that may revert any other PR."""
    out: dict[str, list[int]] = {}
    for n in sorted(prs):
        said = quoted_title(prs[n][0] or "")
        if said:
            out.setdefault(said, []).append(n)
    return out


class KnownPRs(dict):
    """The cache's PRs of one repository, as analysis resolves references against them: number ->
    (title, state), the commits that merged them (for "This reverts commit <sha>") and the PRs titled as
    reverts (listed once here, not looked for among every title for every PR). Any plain
    {number: (title, state)} dict serves too, without the commits. Read-only once made."""

    def __init__(self, titles: dict | None = None, merge_commits: dict[str, int] | None = None):
        super().__init__(titles or {})
        self.merge_commits = {sha.lower(): n for sha, n in (merge_commits or {}).items()}
        self.reverts = reverts_by_title(self)  # quoted title -> the PRs titled as its revert

    def merged_as(self, sha: str) -> int | None:
        """The PR merged as commit `sha`, full or abbreviated (git's 7 or more hex digits); None when
        no PR or several match."""
        sha = sha.lower()
        if sha in self.merge_commits:
            return self.merge_commits[sha]
        found = {n for full, n in self.merge_commits.items() if full.startswith(sha)}
        return found.pop() if len(found) == 1 else None
