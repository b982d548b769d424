"""Patches: fill what /pulls/N/files leaves out from the PR's .diff, and split a git diff per file.

Why: /files omits `patch` for large files (and binary ones); the whole diff
(Accept: application/vnd.github.v3.diff) still has the large ones, unless GitHub refuses it (406) or
it is too big to be worth holding. A file we could not fill says so (patch_status 'omitted') rather
than looking empty.
"""

from __future__ import annotations

import re

from .github_http import HTTPStatusError, Transport

DIFF_BYTES_CAP = 5_000_000  # fill missing patches from the .diff only below this size
DIFF_LINES_CAP = 50_000  # ... and only for PRs whose additions + deletions are below this
DIFF_ACCEPT = "application/vnd.github.v3.diff"


def fill_patches(t: Transport, pr_url: str, detail: dict, files: list[dict]) -> str | None:
    """Set patch_status on every file (ok | from_diff | omitted | none); returns a note when GitHub refused."""
    missing = [f for f in files if not f.get("patch") and (f.get("changes") or 0) > 0]
    for f in files:
        if f.get("patch"):
            f["patch_status"] = "ok"
        elif not (f.get("changes") or 0):
            f["patch_status"] = "none"  # binary, or a pure rename / mode change
    if not missing:
        return None
    patches: dict[str, str] = {}
    note = None
    size = (detail.get("additions") or 0) + (detail.get("deletions") or 0)
    if size <= DIFF_LINES_CAP:
        try:
            r = t.get(pr_url, accept=DIFF_ACCEPT, as_json=False)
            if len(r.text) <= DIFF_BYTES_CAP:
                patches = split_diff(r.text)
        except HTTPStatusError as e:  # 406: GitHub refuses diffs that are too large
            note = f"GitHub refused the .diff ({e.status}); large patches marked omitted"
    for f in missing:
        patch = patches.get(f["filename"])
        f["patch"] = patch
        f["patch_status"] = "from_diff" if patch else "omitted"
    return note


_DIFF_HEADER = re.compile(r"^diff --git a/(.*?) b/(.*)$")


def split_diff(text: str) -> dict[str, str]:
    """filename -> patch (from the first @@, as /files gives it) for each file of a unified git diff."""
    out: dict[str, str] = {}
    name, body, in_hunks = None, [], False

    def flush() -> None:
        if name and body:
            out[name] = "\n".join(body)

    for line in text.split("\n"):
        m = _DIFF_HEADER.match(line)
        if m:
            flush()
            name, body, in_hunks = m.group(2), [], False
            continue
        if not in_hunks:
            if line.startswith("+++ b/"):
                name = line[6:]  # exact even when the name has " b/" in it
            elif line.startswith("rename to "):
                name = line[10:]
            elif line.startswith("@@"):
                in_hunks = True
        if in_hunks:
            body.append(line)
    flush()
    if out:  # the text ends with a newline; /files patches do not
        last = list(out)[-1]
        out[last] = out[last].rstrip("\n")
    return out
