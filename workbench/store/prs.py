"""Writing PRs: one PR and all its children in one transaction (whole or absent), upserted on natural
keys and never deleted, and merged field by field when several sources describe the same PR."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable

from ..analysis.titles import parse_title
from ..records import PRRecord
from .base import StoreBase, bump_generation
from .values import dumps, iso_utc, login, utcnow

# Which source wins when two describe the same field: the API is authoritative, a clone knows less.
SOURCE_RANK = {"facts": 0, "git": 1, "sample": 2, "api": 3}


class PRWritesMixin(StoreBase):
    def write_pr(self, repo_pk: int, record: PRRecord, *, list_json: dict | None = None) -> None:
        """Upsert a PR and all its children atomically. Existing fields from a more authoritative
        source are kept (a clone backfill never overwrites what the API said), and each field's
        source is recorded."""
        with self.transaction() as c:
            old = c.execute(
                "SELECT * FROM prs WHERE repo_pk=? AND number=?", (repo_pk, record.number)
            ).fetchone()
            row = _pr_row(repo_pk, record, old, list_json)
            c.execute(
                f"INSERT INTO prs({','.join(row)}) VALUES ({','.join('?' * len(row))}) "
                "ON CONFLICT(repo_pk, number) DO UPDATE SET "
                + ",".join(f"{k}=excluded.{k}" for k in row if k not in ("repo_pk", "number")),
                tuple(row.values()),
            )
            _write_children(c, repo_pk, record, row["files_key"])
            bump_generation(c, repo_pk)

    def write_prs(self, repo_pk: int, records: Iterable[PRRecord]) -> int:
        """Many PRs in one transaction (backfills): far fewer fsyncs than one per PR."""
        n = 0
        with self.transaction():
            for r in records:
                self.write_pr(repo_pk, r)
                n += 1
        return n

    def clone_files(self, repo_pk: int, number: int, merge_sha: str | None) -> tuple[bool, bool]:
        """(a clone backfill holds this merge commit's files, they were truncated): the squash or merge
        commit's diff is the PR's diff, so an API sync need not fetch /files for it."""
        if not merge_sha:
            return False, False
        key = f"git:{merge_sha}"
        has = self.conn.execute(
            "SELECT 1 FROM pr_files WHERE repo_pk=? AND number=? AND files_key=? LIMIT 1",
            (repo_pk, number, key),
        ).fetchone()
        if has is None:
            return False, False
        row = self.conn.execute(
            "SELECT files_truncated, files_key FROM prs WHERE repo_pk=? AND number=?", (repo_pk, number)
        ).fetchone()
        return True, bool(row and row["files_key"] == key and row["files_truncated"])

    def mark_deleted(self, repo_pk: int, number: int) -> None:
        with self.transaction() as c:
            c.execute("UPDATE prs SET deleted_at=? WHERE repo_pk=? AND number=?", (utcnow(), repo_pk, number))
            bump_generation(c, repo_pk)


def _pr_row(repo_pk: int, record: PRRecord, old: sqlite3.Row | None, list_json: dict | None) -> dict:
    """The prs row for `record` merged over what is stored (`old`), as column -> value."""
    pr, field_sources, source = _merge_pr(old, record)
    tp = parse_title(pr.get("title") or "")
    merged_at = iso_utc(pr.get("merged_at"))
    state = "merged" if merged_at or pr.get("merged") else (pr.get("state") or "open")
    extra = record.pr.get("_extra") or (json.loads(old["extra_json"]) if old and old["extra_json"] else None)
    issue_comments_count = pr.get("comments")
    if issue_comments_count is None and (record.issue_comments or source not in ("facts", "git")):
        issue_comments_count = len(record.issue_comments)
    row = {
        "repo_pk": repo_pk,
        "number": record.number,
        "github_id": pr.get("id"),
        "title": pr.get("title"),
        "state": state,
        "draft": int(bool(pr.get("draft"))),
        "author": login(pr.get("user")),
        "created_at": iso_utc(pr.get("created_at")),
        "updated_at": iso_utc(pr.get("updated_at")),
        "merged_at": merged_at,
        "closed_at": iso_utc(pr.get("closed_at")),
        "additions": pr.get(
            "additions",
            sum(int(f.get("additions") or 0) for f in record.files) if record.files else None,
        ),
        "deletions": pr.get(
            "deletions",
            sum(int(f.get("deletions") or 0) for f in record.files) if record.files else None,
        ),
        "changed_files": pr.get("changed_files", len(record.files) if record.files else None),
        "comments": issue_comments_count,
        "review_comments": pr.get("review_comments", len(record.review_comments)),
        "reviews": len(record.reviews) if record.reviews or source in ("api", "git+api", "sample") else None,
        "commits": pr.get("commits", len(record.commits) if record.commits else None),
        "labels": dumps([lb.get("name") if isinstance(lb, dict) else lb for lb in pr.get("labels") or []]),
        "title_tags": ";".join(tp.tags),
        "kind": tp.kind,
        "breaking": int(tp.breaking),
        "revert": int(tp.revert),
        "head_sha": (pr.get("head") or {}).get("sha"),
        "base_ref": (pr.get("base") or {}).get("ref"),
        "merge_sha": pr.get("merge_commit_sha"),
        "files_key": _files_key(pr, record),
        "source": source,
        "field_sources": dumps(field_sources),
        "files_truncated": int(record.files_truncated),
        "commits_truncated": int(record.commits_truncated),
        "extra_json": dumps(extra),
        "list_json": dumps(list_json) if list_json is not None else (old["list_json"] if old else None),
        "detail_json": dumps({k: v for k, v in pr.items() if k != "_extra"}),
        "synced_at": utcnow(),
    }
    if source == "facts" and isinstance(extra, dict):
        # A facts-only title is synthesised; the facts' own tags/kind/flags are the truth.
        for col in ("title_tags", "kind", "breaking", "revert"):
            if col in extra:
                row[col] = extra[col]
    return row


def _files_key(pr: dict, record: PRRecord) -> str:
    """Which file set is current: the head SHA (files change after a force-push), else the merge commit.
    An API record whose files the clone answered (field_sources files=git) points at the clone's set."""
    if record.field_sources.get("files") == "git" and not record.files and pr.get("merge_commit_sha"):
        return f"git:{pr['merge_commit_sha']}"
    head = (pr.get("head") or {}).get("sha")
    if head:
        return head
    return f"git:{pr.get('merge_commit_sha') or record.number}"


def _merge_pr(old: sqlite3.Row | None, record: PRRecord) -> tuple[dict, dict, str]:
    """(merged PR dict, field -> source, combined source such as 'facts+git+api')."""
    new_source = record.source
    new_pr = dict(record.pr)
    if old is None:
        fs = {k: new_source for k, v in new_pr.items() if v is not None and k != "_extra"}
        fs.update(record.field_sources)
        return new_pr, fs, new_source
    old_pr = json.loads(old["detail_json"] or "{}")
    old_fs = json.loads(old["field_sources"] or "{}")
    old_source = old["source"]
    merged = dict(old_pr)
    fs = dict(old_fs)
    for k, v in new_pr.items():
        if k == "_extra":
            continue
        prev_src = old_fs.get(k, old_source.split("+")[-1])
        if v is None:
            merged.setdefault(k, None)
            continue  # a missing value never erases a known one, and has no source (rewrites stay identical)
        if SOURCE_RANK.get(new_source, 3) >= SOURCE_RANK.get(prev_src, 0) or k not in merged:
            merged[k] = v
            fs[k] = record.field_sources.get(k, new_source)
    # Sources of parts that are not PR fields (the file set: "files" -> "git" when the clone's diff was
    # kept, "api" when /files was fetched) are the record's word.
    fs.update({k: v for k, v in record.field_sources.items() if k not in new_pr})
    sources = set(old_source.split("+")) | {new_source}
    source = "+".join(s for s in ("facts", "git", "sample", "api") if s in sources)
    return merged, fs, source


def _write_children(c: sqlite3.Connection, repo_pk: int, record: PRRecord, files_key: str) -> None:
    # Upserted on natural keys and never deleted, so writing the same PR twice changes nothing.
    n = record.number
    for kind, rows in (
        ("issue comment", record.issue_comments),
        ("review", record.reviews),
        ("review comment", record.review_comments),
    ):
        if any(x.get("id") is None for x in rows):
            # SQLite would invent a rowid for it: a duplicate on every re-sync. Refuse the whole PR.
            raise ValueError(f"#{n}: a {kind} has no id; the PR is not written")
    if record.files:
        c.executemany(
            "INSERT INTO pr_files(repo_pk, number, files_key, position, filename, status, additions, deletions, changes, "
            "previous_filename, patch, patch_status, raw_json) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?) "
            "ON CONFLICT(repo_pk, number, files_key, filename) DO UPDATE SET position=excluded.position, "
            "status=excluded.status, additions=excluded.additions, deletions=excluded.deletions, changes=excluded.changes, "
            "previous_filename=excluded.previous_filename, patch=excluded.patch, patch_status=excluded.patch_status, "
            "raw_json=excluded.raw_json",
            [
                (
                    repo_pk,
                    n,
                    files_key,
                    i,
                    f["filename"],
                    f.get("status"),
                    f.get("additions"),
                    f.get("deletions"),
                    f.get("changes"),
                    f.get("previous_filename"),
                    f.get("patch"),
                    f.get("patch_status") or ("ok" if f.get("patch") else "none"),
                    dumps({k: v for k, v in f.items() if k != "patch"}),
                )
                for i, f in enumerate(record.files)
            ],
        )
    c.executemany(
        "INSERT INTO issue_comments(id, repo_pk, number, author, created_at, updated_at, body, raw_json) VALUES (?,?,?,?,?,?,?,?) "
        "ON CONFLICT(id) DO UPDATE SET author=excluded.author, updated_at=excluded.updated_at, body=excluded.body, raw_json=excluded.raw_json",
        [
            (
                x["id"],
                repo_pk,
                n,
                login(x.get("user")),
                iso_utc(x.get("created_at")),
                iso_utc(x.get("updated_at")),
                x.get("body"),
                dumps(x),
            )
            for x in record.issue_comments
        ],
    )
    c.executemany(
        "INSERT INTO reviews(id, repo_pk, number, author, state, submitted_at, body, commit_id, raw_json) VALUES (?,?,?,?,?,?,?,?,?) "
        "ON CONFLICT(id) DO UPDATE SET state=excluded.state, submitted_at=excluded.submitted_at, body=excluded.body, raw_json=excluded.raw_json",
        [
            (
                x["id"],
                repo_pk,
                n,
                login(x.get("user")),
                x.get("state"),
                iso_utc(x.get("submitted_at")),
                x.get("body"),
                x.get("commit_id"),
                dumps(x),
            )
            for x in record.reviews
        ],
    )
    c.executemany(
        "INSERT INTO review_comments(id, repo_pk, number, author, path, line, in_reply_to_id, created_at, body, thread_resolved, raw_json) "
        "VALUES (?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT(id) DO UPDATE SET body=excluded.body, line=excluded.line, "
        "thread_resolved=coalesce(excluded.thread_resolved, review_comments.thread_resolved), raw_json=excluded.raw_json",
        [
            (
                x["id"],
                repo_pk,
                n,
                login(x.get("user")),
                x.get("path"),
                x.get("line"),
                x.get("in_reply_to_id"),
                iso_utc(x.get("created_at")),
                x.get("body"),
                None if x.get("thread_resolved") is None else int(bool(x.get("thread_resolved"))),
                dumps(x),
            )
            for x in record.review_comments
        ],
    )
    c.executemany(
        "INSERT INTO commits(repo_pk, number, sha, position, author, authored_at, message, raw_json) VALUES (?,?,?,?,?,?,?,?) "
        "ON CONFLICT(repo_pk, number, sha) DO UPDATE SET position=excluded.position, raw_json=excluded.raw_json",
        [
            (
                repo_pk,
                n,
                x["sha"],
                i,
                login(x.get("author")) or ((x.get("commit") or {}).get("author") or {}).get("name"),
                iso_utc(((x.get("commit") or {}).get("author") or {}).get("date")),
                (x.get("commit") or {}).get("message"),
                dumps(x),
            )
            for i, x in enumerate(record.commits)
        ],
    )
