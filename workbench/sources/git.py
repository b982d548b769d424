"""Clone backfill: merged PRs from a local clone's history, with zero network.

Squash-merged repositories carry each PR in one commit: subject "title (#N)", body = the PR
description, diff = the PR's diff. Merge-commit repositories say "Merge pull request #N from
owner/branch" with the PR title on the body's first line; the PR's diff is the diff against the
first parent. We walk the first-parent chain of HEAD in ONE `git log -p` process and parse its
stream (one process per commit would be ~10x slower on a 3,000-commit history), then write
REST-shaped PRRecords in batches so a later API sync can enrich the same rows.
"""

from __future__ import annotations

import codecs
import re
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from .. import timespan
from ..config import WorkbenchError
from ..records import PRRecord
from ..store import Store

# Marks a commit header in the stream; NUL never occurs in text diffs (git calls such files binary).
_START, _END = b"\x00\x01", b"\x00\x02"
_FORMAT = "%x00%x01%H%x00%P%x00%an%x00%ae%x00%cI%x00%B%x00%x02"
_SQUASH = re.compile(r"^(?P<title>.*?\S)\s*\(#(?P<num>\d+)\)\s*$")
_MERGE = re.compile(r"^Merge pull request #(?P<num>\d+) from (?P<branch>\S+)")
_NOREPLY = re.compile(r"^(?:\d+\+)?(?P<login>[A-Za-z0-9][A-Za-z0-9-]*)@users\.noreply\.github\.com$", re.I)

MAX_FILES = 3000  # GitHub's /files stops here too; past it we mark files_truncated
MAX_PATCH_CHARS = 400_000  # larger per-file patches are kept as counts only (patch_status "omitted")
BATCH = 200  # PRs per transaction: few fsyncs, and an interrupted backfill keeps whole batches


@dataclass
class Unreadable:
    """A commit the clone cannot show (an object its diff needs is missing): named, then skipped."""

    sha: str
    number: int | None  # the PR it carries, when its subject says so
    subject: str
    reason: str  # git's own last line


@dataclass
class BackfillResult:
    repo: str
    path: str
    commits_seen: int = 0
    prs_written: int = 0
    squash: int = 0
    merges: int = 0
    skipped: int = 0  # commits that are not PRs (direct pushes, release bumps)
    duplicates: int = 0  # a PR number seen again further back (cherry-picks, re-lands): newest wins
    files_truncated: int = 0
    patches_omitted: int = 0
    seconds: float = 0.0
    numbers: list[int] = field(default_factory=list)
    unreadable: list[Unreadable] = field(default_factory=list)  # commits skipped: objects missing

    def summary(self) -> str:
        return (
            f"{self.repo}: {self.prs_written} PRs from {self.commits_seen} commits of {self.path} "
            f"({self.squash} squash, {self.merges} merge commits, {self.skipped} other commits skipped"
            + (f", {self.duplicates} duplicates" if self.duplicates else "")
            + (f", {self.patches_omitted} large patches kept as counts only" if self.patches_omitted else "")
            + f") in {self.seconds:.1f}s, zero API requests"
            + (self.unreadable_note() if self.unreadable else "")
        )

    def unreadable_note(self) -> str:
        names = ", ".join(f"#{u.number}" if u.number else u.sha[:12] for u in self.unreadable[:20])
        more = f" and {len(self.unreadable) - 20} more" if len(self.unreadable) > 20 else ""
        return (
            f"; {len(self.unreadable)} commit(s) skipped because the clone lacks objects their diffs need "
            f"({names}{more}): fetch them again (`git fetch --refetch`) or sync those PRs from GitHub"
        )


def check_repo(path: str | Path) -> Path:
    """Raise WorkbenchError unless `path` is a git repository (bare or not) with at least one commit."""
    p = Path(path).expanduser()
    if not p.exists():
        raise WorkbenchError(f"--from-git {path}: no such directory; give the path of a local clone")
    try:
        out = subprocess.run(
            ["git", "-C", str(p), "rev-parse", "--git-dir"], capture_output=True, text=True, timeout=30
        )
    except FileNotFoundError:
        raise WorkbenchError(
            "the git command is not installed; install git to backfill from a clone"
        ) from None
    if out.returncode != 0:
        raise WorkbenchError(
            f"--from-git {path}: not a git repository; give the path of a local clone (bare or not)"
        )
    head = subprocess.run(
        ["git", "-C", str(p), "rev-parse", "--verify", "-q", "HEAD"], capture_output=True, timeout=30
    )
    if head.returncode != 0:
        raise WorkbenchError(
            f"--from-git {path}: the repository has no commits on HEAD; fetch or check out a branch"
        )
    return p


def _git_log_cmd(path: Path, since: str | None, start: str = "HEAD", *, one: bool = False) -> list[str]:
    """The `git log -p` walk of the first-parent chain from `start`; `one`: that commit alone."""
    cmd = [
        "git", "-C", str(path), "-c", "core.quotePath=false", "-c", "diff.noprefix=false",
        "-c", "log.showSignature=false", "-c", "diff.mnemonicPrefix=false",
        "log", "--first-parent", "--diff-merges=first-parent", "-p", "-M", "--no-color", "--no-ext-diff",
        "--no-textconv", "--encoding=UTF-8", f"--format={_FORMAT}",
    ]  # fmt: skip
    if since:
        cmd.append(f"--since={since}")
    if one:
        cmd.append("-1")
    return [*cmd, start, "--"]


def _stream_commits(proc: subprocess.Popen) -> Iterator[bytes]:
    """Yield each commit's bytes (header + diff) from the log stream, reading in large chunks."""
    assert proc.stdout is not None
    buf = b""
    while True:
        chunk = proc.stdout.read(1 << 20)
        if not chunk:
            break
        buf += chunk
        start = 0
        while True:
            nxt = buf.find(_START, start + 1)
            if nxt < 0:
                break
            yield buf[start:nxt]
            start = nxt
        buf = buf[start:]
    if buf.strip():
        yield buf


@dataclass
class _Commit:
    sha: str
    parents: list[str]
    author_name: str
    author_email: str
    committed_at: str
    message: str
    diff: str


def _parse_commit(raw: bytes) -> _Commit | None:
    end = raw.find(_END)
    if not raw.startswith(_START) or end < 0:
        return None
    fields = raw[2:end].split(b"\x00")
    if len(fields) < 6:
        return None
    sha, parents, an, ae, ci = (f.decode("utf-8", "replace") for f in fields[:5])
    message = b"\x00".join(fields[5:]).decode("utf-8", "replace")
    diff = raw[end + 2 :].decode("utf-8", "replace").lstrip("\n")
    return _Commit(sha, parents.split(), an, ae, ci, message, diff)


def _unquote(path: str) -> str:
    """git C-quotes names with special characters even with core.quotePath=false."""
    if len(path) >= 2 and path[0] == '"' and path[-1] == '"':
        raw = codecs.escape_decode(path[1:-1].encode("utf-8"))[0]
        return raw.decode("utf-8", "replace")
    return path


def _strip_prefix(path: str, prefix: str) -> str:
    path = _unquote(path)
    return path[len(prefix) :] if path.startswith(prefix) else path


def _names_from_diff_line(line: str) -> tuple[str, str]:
    """'a/X b/Y' -> (X, Y). Unambiguous when X == Y (the only case we need it for: binary, mode-only)."""
    if line.startswith('"'):
        m = re.match(r'^("(?:[^"\\]|\\.)*"|\S+) ("(?:[^"\\]|\\.)*"|\S+)$', line)
        if m:
            return _strip_prefix(m.group(1), "a/"), _strip_prefix(m.group(2), "b/")
    n = len(line)
    half = (n - 5) // 2
    if (n - 5) % 2 == 0 and line.startswith("a/") and line[2 + half : 5 + half] == " b/":
        return line[2 : 2 + half], line[5 + half :]
    a, _, b = line.partition(" b/")
    return _strip_prefix(a, "a/"), b


def parse_diff(diff: str) -> list[dict]:
    """A `git log -p` diff -> REST-shaped file dicts (patch = the hunks, as GitHub's /files gives it)."""
    files: list[dict] = []
    if not diff.startswith("diff --git "):
        return files
    for block in diff[len("diff --git ") :].split("\ndiff --git "):
        hunk_at = block.find("\n@@")
        header = block if hunk_at < 0 else block[:hunk_at]
        lines = header.split("\n")
        old, new = _names_from_diff_line(lines[0])
        status, binary = "modified", False
        for h in lines[1:]:
            if h.startswith("new file mode"):
                status = "added"
            elif h.startswith("deleted file mode"):
                status = "removed"
            elif h.startswith("rename from "):
                status, old = "renamed", _unquote(h[12:])
            elif h.startswith("rename to "):
                new = _unquote(h[10:])
            elif h.startswith("copy from "):
                status, old = "copied", _unquote(h[10:])
            elif h.startswith("copy to "):
                new = _unquote(h[8:])
            elif h.startswith("--- ") and h[4:] != "/dev/null":
                old = _strip_prefix(h[4:].rstrip("\t"), "a/")
            elif h.startswith("+++ ") and h[4:] != "/dev/null":
                new = _strip_prefix(h[4:].rstrip("\t"), "b/")
            elif h.startswith("Binary files ") or h == "GIT binary patch":
                binary = True
        filename = old if status == "removed" else new
        f: dict = {"filename": filename, "status": status, "additions": 0, "deletions": 0, "changes": 0}
        if status in ("renamed", "copied"):
            f["previous_filename"] = old
        if hunk_at >= 0 and not binary:
            patch = block[hunk_at + 1 :].rstrip("\n")
            body = "\n" + patch
            f["additions"], f["deletions"] = body.count("\n+"), body.count("\n-")
            f["changes"] = f["additions"] + f["deletions"]
            if len(patch) > MAX_PATCH_CHARS:
                f["patch_status"] = "omitted"  # counts stay; the text is too large to be useful in a brief
            else:
                f["patch"] = patch
        files.append(f)
    return files


def _login(name: str, email: str) -> str | None:
    m = _NOREPLY.match(email or "")
    if m:
        return m.group("login")
    return name or None


def commit_to_record(repo: str, c: _Commit) -> PRRecord | None:
    """A squash or merge commit -> a merged PR in REST shape; any other commit -> None."""
    subject, _, rest = c.message.partition("\n")
    rest = rest.strip("\n")
    m = _MERGE.match(subject)
    if m and len(c.parents) > 1:
        number = int(m.group("num"))
        title_line, _, body = rest.partition("\n")
        title = title_line.strip() or subject
        body = body.strip() or None
        style = "merge"
        branch = m.group("branch")
        head = {"ref": branch.split("/", 1)[-1], "label": branch.replace("/", ":", 1)}
        login = None  # filled from the PR head commit's author (see _fill_merge_authors)
    else:
        s = _SQUASH.match(subject)
        if not s:
            return None
        number, title, body = int(s.group("num")), s.group("title"), rest.strip() or None
        style, head, login = "squash", None, _login(c.author_name, c.author_email)
    files = parse_diff(c.diff)
    truncated = len(files) > MAX_FILES
    pr = {
        "number": number,
        "title": title,
        "body": body,
        "user": {"login": login} if login else None,
        "state": "closed",
        "merged": True,
        "merged_at": c.committed_at,
        "closed_at": c.committed_at,
        "merge_commit_sha": c.sha,
        "additions": sum(f["additions"] for f in files),
        "deletions": sum(f["deletions"] for f in files),
        "changed_files": len(files),
        "comments": None,  # unknown from a clone: an API sync fills these in
        "review_comments": None,
        "html_url": f"https://github.com/{repo}/pull/{number}",
        "_git": {"style": style, "parents": c.parents, "head": head},
    }
    return PRRecord(
        repo=repo, number=number, pr=pr, files=files[:MAX_FILES], source="git", files_truncated=truncated
    )


def _fill_merge_authors(path: Path, records: list[PRRecord]) -> None:
    """A merge commit's author is whoever pressed the button; the PR's author wrote its head commit.
    One `git log --no-walk --stdin` call per batch resolves every head at once."""
    heads = {r.pr["_git"]["parents"][1]: r for r in records if r.pr["_git"]["style"] == "merge"}
    if not heads:
        return
    out = subprocess.run(
        ["git", "-C", str(path), "log", "--no-walk=unsorted", "--stdin", "--format=%H%x00%an%x00%ae"],
        input="\n".join(heads) + "\n", capture_output=True, text=True, errors="replace",
    )  # fmt: skip
    for line in out.stdout.splitlines():
        sha, _, rest = line.partition("\x00")
        name, _, email = rest.partition("\x00")
        if sha in heads:
            login = _login(name, email)
            heads[sha].pr["user"] = {"login": login} if login else None


def _count_commits(path: Path, since: str | None) -> int | None:
    cmd = ["git", "-C", str(path), "rev-list", "--count", "--first-parent", "HEAD"]
    if since:
        cmd.insert(4, f"--since={since}")
    out = subprocess.run(cmd, capture_output=True, text=True)
    return int(out.stdout.strip()) if out.returncode == 0 and out.stdout.strip().isdigit() else None


# What git says when the clone lacks an object a diff needs (a partial or damaged clone, or a public
# mirror that lost a few blobs): the walk can go on past the commit that needs it.
_MISSING_OBJECT = re.compile(r"unable to read|missing (?:blob|tree|object)|bad object|object .* is corrupt|"
                             r"could not read|invalid object", re.I)  # fmt: skip
_MAX_PROBES = 3  # commits shown one by one after a failure before the walk is declared stuck


def _subject_and_number(path: Path, sha: str) -> tuple[str, int | None]:
    """A commit's PR title and number as commit_to_record reads them (the commit object is readable
    when only a blob of its diff is missing)."""
    out = subprocess.run(
        ["git", "-C", str(path), "log", "-1", "--format=%s%x00%b", sha], capture_output=True, text=True,
        errors="replace",
    )  # fmt: skip
    subject, _, body = out.stdout.partition("\x00")
    subject = subject.strip()
    squash, merge = _SQUASH.match(subject), _MERGE.match(subject)
    if squash:
        return squash.group("title"), int(squash.group("num"))
    if merge:
        return body.strip().split("\n", 1)[0] or subject, int(merge.group("num"))
    return subject, None


def _first_parent(path: Path, sha: str) -> str | None:
    out = subprocess.run(
        ["git", "-C", str(path), "rev-parse", "--verify", "-q", f"{sha}^1"], capture_output=True, text=True
    )
    return out.stdout.strip() or None if out.returncode == 0 else None


def _show_one(path: Path, sha: str, since: str | None) -> tuple[_Commit | None, bool, str]:
    """One commit through the same `git log -p` -> (the commit or None when outside `since`, readable,
    git's last error line)."""
    out = subprocess.run(_git_log_cmd(path, since, sha, one=True), capture_output=True)
    err = out.stderr.decode("utf-8", "replace").strip().splitlines()
    if out.returncode != 0:
        return None, False, err[-1] if err else f"exit {out.returncode}"
    commit = _parse_commit(out.stdout) if out.stdout.startswith(_START) else None
    return commit, True, ""


def backfill(
    store: Store,
    repo: str,
    path: str | Path,
    *,
    since: str | datetime | None = None,
    limit: int | None = None,
    numbers: list[int] | None = None,
    progress: bool = True,
) -> BackfillResult:
    """Cache the merged PRs found in a local clone's first-parent history of HEAD.

    `since` (a date or a span like 4w) limits by merge time; `limit` stops after N PRs; `numbers`
    keeps only those PRs. Fields an API sync already wrote are kept (store merges by source rank).
    A commit whose diff needs an object the clone lacks is named in `result.unreadable` and skipped;
    the walk goes on from its first parent.
    """
    if "/" not in repo:
        raise WorkbenchError(f"repository {repo!r} should be OWNER/REPO")
    clone = check_repo(path)  # before touching the store: a bad path leaves the cache as it was
    since_iso = timespan.since_iso(since)
    wanted = set(numbers) if numbers else None
    result = BackfillResult(repo=repo, path=str(path))
    t0 = time.perf_counter()
    repo_pk = store.upsert_repo(repo)
    run_id = store.start_run(repo_pk, "git")
    from tqdm.auto import tqdm

    bar = tqdm(
        total=_count_commits(clone, since_iso), unit="commit", desc=f"backfill {repo}", disable=not progress
    )
    seen: set[int] = set()
    batch: list[PRRecord] = []
    status, errors = "ok", []
    proc: subprocess.Popen | None = None

    def flush() -> None:
        _fill_merge_authors(clone, batch)
        for r in batch:
            r.pr.pop("_git", None)
        result.prs_written += store.write_prs(repo_pk, batch)
        batch.clear()

    def take(commit: _Commit) -> bool:
        """Queue one complete commit's PR; True once `limit` or `numbers` is satisfied."""
        result.commits_seen += 1
        bar.update(1)
        record = commit_to_record(repo, commit)
        if record is None:
            result.skipped += 1
            return False
        if record.number in seen:
            result.duplicates += 1
            return False
        seen.add(record.number)
        if wanted is not None and record.number not in wanted:
            return False
        if record.pr["_git"]["style"] == "merge":
            result.merges += 1
        else:
            result.squash += 1
        result.files_truncated += int(record.files_truncated)
        result.patches_omitted += sum(1 for f in record.files if f.get("patch_status") == "omitted")
        result.numbers.append(record.number)
        batch.append(record)
        if len(batch) >= BATCH:
            flush()
        return (limit is not None and len(result.numbers) >= limit) or (
            wanted is not None and wanted <= set(result.numbers)
        )

    def skip_unreadable(last: _Commit | None, start: str, reason: str) -> str | None:
        """After a walk died on a missing object: find the commit that cannot be shown, name it, and
        return where the walk resumes (its first parent; None: nothing older to read).

        Which commit failed is not always the last one in the stream: with rename detection git may read
        the blobs before it prints the commit's header. So the commits from the last one seen are shown
        one by one; the first that fails is the unreadable one."""
        cand: str | None = last.sha if last else start
        for _ in range(_MAX_PROBES):
            if cand is None:
                return None
            commit, readable, err = _show_one(clone, cand, since_iso)
            if not readable:
                subject, number = _subject_and_number(clone, cand)
                result.unreadable.append(Unreadable(cand, number, subject, err or reason))
                result.commits_seen += 1
                bar.update(1)
                return _first_parent(clone, cand)
            if commit is None:  # older than `since`: the walk is over
                return None
            if take(commit):
                raise _Done
            cand = _first_parent(clone, cand)
        raise WorkbenchError(
            f"git log keeps failing in {path} after {result.commits_seen} commits ({reason}), yet each "
            f"commit shows on its own; the {result.prs_written + len(batch)} PRs read before that are cached"
        )

    start: str | None = "HEAD"
    try:
        while start is not None:
            # stderr to a file, not a pipe: a chatty git can never block on it
            with tempfile.TemporaryFile() as errfile:
                proc = subprocess.Popen(
                    _git_log_cmd(clone, since_iso, start), stdout=subprocess.PIPE, stderr=errfile
                )
                # A commit is taken once the next one starts: the last of a failed walk may be cut short.
                last: _Commit | None = None
                for raw in _stream_commits(proc):
                    commit = _parse_commit(raw)
                    if commit is None:
                        continue
                    if last is not None and take(last):
                        raise _Done
                    last = commit
                if proc.wait() == 0:
                    if last is not None and take(last):
                        raise _Done
                    break
                errfile.seek(0)
                lines = errfile.read().decode("utf-8", "replace").strip().splitlines()
            reason = lines[-1] if lines else f"exit {proc.returncode}"
            if not _MISSING_OBJECT.search(reason):
                raise WorkbenchError(
                    f"git log failed in {path} after {result.commits_seen} commits ({reason}); the "
                    f"{result.prs_written + len(batch)} PRs read before that are cached whole"
                )
            start = skip_unreadable(last, start, reason)
        flush()
    except _Done:
        flush()
    except BaseException as e:
        status, errors = ("stopped" if isinstance(e, KeyboardInterrupt) else "failed"), [repr(e)]
        if isinstance(e, WorkbenchError):
            flush()  # what was read whole before git failed is kept, as the message says
        raise
    finally:
        if proc is not None:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
        bar.close()
        result.seconds = time.perf_counter() - t0
        if result.unreadable and status == "ok":
            errors = [f"unreadable {u.sha[:12]} (#{u.number}): {u.reason}" for u in result.unreadable]
        store.finish_run(run_id, status, prs_written=result.prs_written, errors=errors, note=result.summary())
    return result


class _Done(Exception):
    """`limit` or `numbers` satisfied: the walk stops early."""
