"""Hand-made PRs for the diff and heuristics tests: small patches written out line by line."""

from __future__ import annotations

from workbench.records import PRRecord


def hunk(new_start: int, lines: list[str], section: str = "", old_start: int | None = None) -> str:
    """One @@ hunk from lines that already carry their sign (' ', '+', '-'); the counts are computed."""
    old_len = sum(1 for ln in lines if ln[:1] in (" ", "-"))
    new_len = sum(1 for ln in lines if ln[:1] in (" ", "+"))
    old_start = new_start if old_start is None else old_start
    head = f"@@ -{old_start},{old_len} +{new_start},{new_len} @@" + (f" {section}" if section else "")
    return "\n".join([head, *lines])


def file(filename: str, *hunks: str, status: str = "modified", **extra) -> dict:
    patch = "\n".join(hunks) if hunks else None
    adds = sum(1 for h in hunks for ln in h.split("\n")[1:] if ln.startswith("+"))
    dels = sum(1 for h in hunks for ln in h.split("\n")[1:] if ln.startswith("-"))
    d = {"filename": filename, "status": status, "additions": adds, "deletions": dels, "patch": patch}
    d.update(extra)
    return d


def stats(filename: str, additions: int, deletions: int = 0) -> dict:
    """A file as a facts-only source gives it: counts, no patch."""
    return {"filename": filename, "additions": additions, "deletions": deletions}


def record(
    files: list[dict] | None = None,
    title: str = "[trainer] fix: something",
    body: str = "",
    *,
    number: int = 100,
    repo: str = "example-org/minirl",
    author: str = "alice",
    reviews: list[dict] | None = None,
    review_comments: list[dict] | None = None,
    issue_comments: list[dict] | None = None,
    **kw,
) -> PRRecord:
    pr = {"number": number, "title": title, "body": body, "user": {"login": author}, "state": "open"}
    return PRRecord(
        repo=repo,
        number=number,
        pr=pr,
        files=files or [],
        reviews=reviews or [],
        review_comments=review_comments or [],
        issue_comments=issue_comments or [],
        **kw,
    )


def user(login: str) -> dict:
    return {"login": login}


def code_lines(n: int, prefix: str = "    x") -> list[str]:
    return [f"+{prefix}{i} = compute({i})" for i in range(n)]


def guide_beside_config() -> list[dict]:
    """A migration guide (the longest file) beside the config field whose default it explains."""
    guide = file("docs/migration.md", hunk(1, [f"+Step {i}: set `vllm_mode`." for i in range(20)]))
    config = file(
        "pkg/trainer/grpo_config.py",
        hunk(
            300,
            ["     vllm_mode: str = field(", '-        default="server",', '+        default="colocate",'],
        ),
    )
    return [guide, config]
