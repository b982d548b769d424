"""Write workbench/sample/example-org-minirl.jsonl: the bundled sample repository's PRs in GitHub REST shape.

example-org/minirl is made up; its code and discussions were written for the sample. Each PR is
authored as edits to the repository's files (sample_base.py holds the starting files, sample_prs.py
the PRs); this script applies them in order and produces real unified-diff patches with difflib,
with hunk headers carrying the enclosing function like git's (`@@ -10,6 +10,8 @@ def _cleanup(self):`).
Merged PRs change the main branch; open and closed PRs are diffed against main as it was.

Run: python workbench/sample/build_sample.py   (deterministic: the same bytes every run)
"""

from __future__ import annotations

import difflib
import hashlib
import json
import re
import sys
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from sample_base import BASE_FILES  # noqa: E402

REPO = "example-org/minirl"
OUTPUT = HERE / "example-org-minirl.jsonl"
API = f"https://api.github.com/repos/{REPO}"
WEB = f"https://github.com/{REPO}"

_PY_FUNC = re.compile(r"^[ \t]*((?:class|(?:async[ \t]+)?def)[ \t].*)$")
_MD_HEAD = re.compile(r"^ {0,3}(#{1,6}[ \t].*)$")
_DEFAULT_FUNC = re.compile(r"^([A-Za-z_$].*)$")
_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


# ---- edits ------------------------------------------------------------------------------------------
@dataclass
class Edit:
    path: str
    old: str
    new: str


@dataclass
class Add:
    path: str
    content: str


@dataclass
class Delete:
    path: str


@dataclass
class Rename:
    old_path: str
    new_path: str
    edits: list[tuple[str, str]] = field(default_factory=list)


@dataclass
class Binary:
    path: str
    status: str  # added | modified | removed
    size: int = 0


@dataclass
class Omitted:
    """A file whose patch GitHub leaves out (too large): counts only."""

    path: str
    status: str
    additions: int
    deletions: int


def funcname(path: str, lines: list[str], before_index: int) -> str:
    """The enclosing function/class/heading above line `before_index` (0-based, exclusive), as git shows it."""
    if path.endswith(".py"):
        pattern = _PY_FUNC
    elif path.endswith(".md"):
        pattern = _MD_HEAD
    else:
        pattern = _DEFAULT_FUNC
    for i in range(min(before_index, len(lines)) - 1, -1, -1):
        m = pattern.match(lines[i].rstrip("\n"))
        if m:
            return m.group(1).rstrip()[:80]
    return ""


def make_patch(path: str, before: str, after: str) -> tuple[str, int, int]:
    """GitHub's `patch` field: the hunks without the ---/+++ header."""
    a, b = before.splitlines(keepends=True), after.splitlines(keepends=True)
    out, adds, dels = [], 0, 0
    for line in list(difflib.unified_diff(a, b, n=3))[2:]:
        if line.startswith("@@"):
            m = _HUNK.match(line)
            old_start = int(m.group(1))
            ctx = funcname(path, a, old_start - 1) if old_start > 1 else ""
            line = line.rstrip("\n") + (f" {ctx}" if ctx else "") + "\n"
        elif line.startswith("+"):
            adds += 1
        elif line.startswith("-"):
            dels += 1
        if not line.endswith("\n"):
            line += "\n\\ No newline at end of file\n"
        out.append(line)
    return "".join(out).rstrip("\n"), adds, dels


def apply_edits(state: dict[str, str], ops: list, number: int) -> tuple[dict[str, str], list[dict]]:
    """Apply a PR's edits to a copy of `state`; return the new state and REST-shaped file dicts."""
    new = dict(state)
    before_of: dict[str, str | None] = {}
    order: list[str] = []
    files: list[dict] = []

    def touch(path: str) -> None:
        if path not in before_of:
            before_of[path] = state.get(path)
            order.append(path)

    renames: dict[str, str] = {}
    for op in ops:
        if isinstance(op, Edit):
            touch(op.path)
            text = new[op.path]
            if text.count(op.old) != 1:
                raise SystemExit(
                    f"#{number}: edit of {op.path} matches {text.count(op.old)} times: {op.old[:60]!r}"
                )
            new[op.path] = text.replace(op.old, op.new)
        elif isinstance(op, Add):
            touch(op.path)
            if state.get(op.path) is not None:
                raise SystemExit(f"#{number}: {op.path} already exists")
            new[op.path] = op.content
        elif isinstance(op, Delete):
            touch(op.path)
            del new[op.path]
        elif isinstance(op, Rename):
            text = new.pop(op.old_path)
            for old, rep in op.edits:
                if text.count(old) != 1:
                    raise SystemExit(
                        f"#{number}: rename edit in {op.old_path} matches {text.count(old)} times"
                    )
                text = text.replace(old, rep)
            new[op.new_path] = text
            renames[op.new_path] = op.old_path
            order.append(op.new_path)
        elif isinstance(op, Binary | Omitted):
            order.append(op.path)
    seen = set()
    for path in order:
        if path in seen:
            continue
        seen.add(path)
        op = next((o for o in ops if isinstance(o, Binary | Omitted) and o.path == path), None)
        if isinstance(op, Binary):
            files.append(
                {"filename": path, "status": op.status, "additions": 0, "deletions": 0, "changes": 0}
            )
            continue
        if isinstance(op, Omitted):
            files.append({
                "filename": path, "status": op.status, "additions": op.additions, "deletions": op.deletions,
                "changes": op.additions + op.deletions, "patch_status": "omitted",
            })  # fmt: skip
            continue
        if path in renames:
            before, after, status = state[renames[path]], new[path], "renamed"
        else:
            before, after = before_of[path], new.get(path)
            status = "added" if before is None else "removed" if after is None else "modified"
        patch, adds, dels = make_patch(path, before or "", after or "")
        f = {"filename": path, "status": status, "additions": adds, "deletions": dels, "changes": adds + dels}
        if status == "renamed":
            f["previous_filename"] = renames[path]
        if patch:
            f["patch"] = patch
        files.append(f)
    return new, files


# ---- REST shapes ----------------------------------------------------------------------------------
USER_IDS: dict[str, int] = {}


def user(login: str | None) -> dict | None:
    if login is None:
        return None  # a deleted account: GitHub returns user: null
    uid = USER_IDS.setdefault(login, 7_100_000 + int(hashlib.sha1(login.encode()).hexdigest()[:5], 16))
    kind = "Bot" if login.endswith("[bot]") else "User"
    return {
        "login": login,
        "id": uid,
        "type": kind,
        "html_url": f"https://github.com/{login.replace('[bot]', '')}",
    }


def sha(*parts) -> str:
    return hashlib.sha1(":".join(map(str, parts)).encode()).hexdigest()


def iso(dt: datetime) -> str:
    return dt.strftime("%Y-%m-%dT%H:%M:%SZ")


def parse(s: str) -> datetime:
    return datetime.strptime(s, "%Y-%m-%d %H:%M")


def diff_hunk(patch: str, needle: str) -> tuple[str, int]:
    """GitHub's review-comment `diff_hunk` (the hunk from its header down to the commented line) and the
    new-side line number, for the first added or context line containing `needle`."""
    out, new_no = [], 0
    for text in patch.split("\n"):
        m = _HUNK.match(text)
        if m:
            out, new_no = [text], int(m.group(3)) - 1
            continue
        out.append(text)
        if text.startswith("-"):
            continue
        new_no += 1
        if needle in text:
            return "\n".join(out), new_no
    raise SystemExit(f"{needle!r} is not on the new side of the patch")


@dataclass
class PR:
    number: int
    title: str
    body: str | None
    author: str | None
    created: str  # "YYYY-MM-DD HH:MM" (UTC)
    ops: list
    state: str = "merged"  # merged | open | closed
    closed: str | None = None  # merge or close time
    merged_by: str | None = "lena-park"
    labels: list[str] = field(default_factory=list)
    branch: str | None = None
    draft: bool = False
    comments: list[tuple] = field(default_factory=list)  # (login, "YYYY-MM-DD HH:MM", body)
    reviews: list[tuple] = field(default_factory=list)  # (login, time, state, body)
    # (review index, login, time, path, text on the commented line, body, reply_to index or None, resolved)
    review_comments: list[tuple] = field(default_factory=list)
    commits: list[tuple] = field(default_factory=list)  # (time, message)
    updated: str | None = None


def build_record(p: PR, files: list[dict], base_sha: str) -> dict:
    created = parse(p.created)
    closed = parse(p.closed) if p.closed else None
    head_sha = sha(p.number, "head", len(p.commits))
    stamps = [created] + [parse(t) for t in (x[1] for x in p.comments)] + [parse(r[1]) for r in p.reviews]
    stamps += [parse(rc[2]) for rc in p.review_comments] + ([closed] if closed else [])
    updated = parse(p.updated) if p.updated else max(stamps)
    adds = sum(f["additions"] for f in files)
    dels = sum(f["deletions"] for f in files)
    for f in files:
        f["sha"] = sha(p.number, f["filename"], "blob")
        f["blob_url"] = f"{WEB}/blob/{head_sha}/{f['filename']}"
        f["raw_url"] = f"{WEB}/raw/{head_sha}/{f['filename']}"
        f["contents_url"] = f"{API}/contents/{f['filename']}?ref={head_sha}"
    comments = [
        {
            "id": 3_000_000 + p.number * 100 + i, "node_id": f"IC_{p.number}_{i}",
            "html_url": f"{WEB}/pull/{p.number}#issuecomment-{3_000_000 + p.number * 100 + i}",
            "issue_url": f"{API}/issues/{p.number}", "user": user(login), "created_at": iso(parse(t)),
            "updated_at": iso(parse(t)), "author_association": "MEMBER" if login in MEMBERS else "CONTRIBUTOR",
            "body": body,
        }
        for i, (login, t, body) in enumerate(p.comments)
    ]  # fmt: skip
    reviews = [
        {
            "id": 4_000_000 + p.number * 100 + i, "node_id": f"PRR_{p.number}_{i}", "user": user(login),
            "body": body, "state": state, "submitted_at": iso(parse(t)), "commit_id": head_sha,
            "html_url": f"{WEB}/pull/{p.number}#pullrequestreview-{4_000_000 + p.number * 100 + i}",
            "pull_request_url": f"{API}/pulls/{p.number}",
            "author_association": "MEMBER" if login in MEMBERS else "CONTRIBUTOR",
        }
        for i, (login, t, state, body) in enumerate(p.reviews)
    ]  # fmt: skip
    patches = {f["filename"]: f.get("patch") or "" for f in files}
    review_comments = []
    for i, (rev, login, t, path, needle, body, reply_to, resolved) in enumerate(p.review_comments):
        cid = 5_000_000 + p.number * 100 + i
        hunk, line = diff_hunk(patches[path], needle)
        rc = {
            "id": cid, "node_id": f"PRRC_{p.number}_{i}", "pull_request_review_id": reviews[rev]["id"],
            "diff_hunk": hunk, "path": path, "commit_id": head_sha,
            "original_commit_id": head_sha, "user": user(login), "body": body, "created_at": iso(parse(t)),
            "updated_at": iso(parse(t)), "html_url": f"{WEB}/pull/{p.number}#discussion_r{cid}",
            "author_association": "MEMBER" if login in MEMBERS else "CONTRIBUTOR",
            "line": line, "original_line": line, "side": "RIGHT", "start_line": None,
            "thread_resolved": resolved,
        }  # fmt: skip
        if reply_to is not None:
            rc["in_reply_to_id"] = 5_000_000 + p.number * 100 + reply_to
        review_comments.append(rc)
    commits = []
    parent = base_sha
    for i, (t, message) in enumerate(p.commits):
        csha = sha(p.number, "commit", i)
        who = user(p.author)
        commits.append({
            "sha": csha, "node_id": f"C_{csha[:12]}", "html_url": f"{WEB}/commit/{csha}",
            "commit": {
                "author": {"name": (p.author or "ghost").replace("-", " ").title(),
                           "email": f"{p.author or 'ghost'}@users.noreply.github.com", "date": iso(parse(t))},
                "committer": {"name": "GitHub", "email": "noreply@github.com", "date": iso(parse(t))},
                "message": message, "comment_count": 0,
            },
            "author": who, "committer": user("web-flow"), "parents": [{"sha": parent}],
        })  # fmt: skip
        parent = csha
    merged = p.state == "merged"
    branch = p.branch or f"{(p.author or 'ghost')}/pr-{p.number}"
    pr = {
        "url": f"{API}/pulls/{p.number}", "id": 2_400_000_000 + p.number, "node_id": f"PR_kwDOminirl{p.number}",
        "html_url": f"{WEB}/pull/{p.number}", "diff_url": f"{WEB}/pull/{p.number}.diff",
        "number": p.number, "state": "open" if p.state == "open" else "closed", "locked": False,
        "title": p.title, "user": user(p.author), "body": p.body,
        "labels": [{"name": n, "color": "ededed"} for n in p.labels],
        "created_at": iso(created), "updated_at": iso(updated),
        "closed_at": iso(closed) if closed and p.state != "open" else None,
        "merged_at": iso(closed) if merged else None,
        "merge_commit_sha": sha(p.number, "merge") if merged else None,
        "draft": p.draft, "merged": merged, "merged_by": user(p.merged_by) if merged else None,
        "head": {"label": f"{(p.author or 'ghost')}:{branch}", "ref": branch, "sha": head_sha},
        "base": {"label": "example-org:main", "ref": "main", "sha": base_sha},
        "author_association": "MEMBER" if p.author in MEMBERS else ("NONE" if p.author is None else "CONTRIBUTOR"),
        "requested_reviewers": [], "milestone": None,
        "comments": len(comments), "review_comments": len(review_comments), "commits": len(commits),
        "additions": adds, "deletions": dels, "changed_files": len(files),
        "mergeable": None if p.state != "open" else True,
    }  # fmt: skip
    return {
        "pr": pr, "files": files, "issue_comments": comments, "reviews": reviews,
        "review_comments": review_comments, "commits": commits,
    }  # fmt: skip


MEMBERS = {"lena-park", "mzhou", "tkobayashi", "eve-ops", "ravi-s"}


def build() -> list[dict]:
    from sample_prs import PRS

    state = dict(BASE_FILES)
    main_sha = sha("main", 0)
    applied: dict[int, list] = {}
    records = []
    for p in sorted(PRS, key=lambda x: x.number):
        ops = p.ops
        if isinstance(ops, tuple) and ops[0] == "revert":
            ops = [Edit(e.path, e.new, e.old) for e in reversed(applied[ops[1]])]
        new_state, files = apply_edits(state, ops, p.number)
        records.append(build_record(p, files, main_sha))
        if p.state == "merged":
            state, main_sha = new_state, sha(p.number, "merge")
            applied[p.number] = [o for o in ops if isinstance(o, Edit)]
    return records


def main() -> Path:
    records = build()
    with OUTPUT.open("w", encoding="utf-8", newline="\n") as fh:
        for rec in records:
            fh.write(json.dumps(rec, ensure_ascii=False, sort_keys=True) + "\n")
    print(f"wrote {len(records)} PRs to {OUTPUT}")
    return OUTPUT


if __name__ == "__main__":
    # Run through the importable module so sample_prs.py (which imports build_sample) sees the same classes.
    import build_sample

    build_sample.main()
