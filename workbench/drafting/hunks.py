"""What a reader needs from each file's patch, in as few tokens as possible.

- Unchanged context lines are trimmed to the two around each change (the @@ line keeps the function).
- A deletion-only hunk collapses to what was removed: its line count and the definitions it held.
- A test file shows as its test names and asserts, unless the PR is about tests.
- Files rank by what the PR is: code first; a docs-led feature lifts its design doc and a packaging
  PR its build manifests to the code's rank; docs under CI folders and generated files come last.

Pure: strings in, strings out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..analysis.model import Analysis
from ..records import PRRecord

CONTEXT_KEEP = 2  # unchanged lines kept on each side of a change
TEST_ITEMS = 14  # test names + asserts shown for a test file that is not the PR's subject
_ROLE_RANK = {"code": 0, "config": 1, "build": 2, "test": 3, "ci": 4, "notebook": 5, "docs": 6, "data": 7}
NO_PATCH_ROLES = {"generated", "binary"}
_DEF_RX = re.compile(r"^\s*(?:async\s+def|def|class|fn|func|function)\s+([A-Za-z_]\w*)")
_ASSIGN_RX = re.compile(r"^([A-Za-z_][\w.]*)\s*[:=]")
_TEST_NAME_RX = re.compile(r"^\+\s*(?:async\s+)?def\s+(test\w*)")
_PACKAGING_RX = re.compile(
    r"\b(uv|pip|docker(?:file)?|packag\w*|dependenc\w*|requirements?|install\w*|wheel|build|image|pyproject)\b",
    re.I,
)
_MANIFEST_RX = re.compile(
    r"(^|/)(pyproject\.toml|setup\.py|setup\.cfg|requirements[^/]*\.txt|dockerfile[^/]*|environment\.ya?ml|"
    r"constraints[^/]*\.txt|Makefile)$",
    re.I,
)


def file_role(filename: str) -> str:
    from ..analysis.diff import file_role as role

    return role(filename)


@dataclass
class Hunk:
    """One hunk as the model will see it."""

    file_idx: int
    idx: int
    text: str  # the @@ line and the trimmed body, or the one-line summary of a deletion-only hunk
    deletion_only: bool
    added: int  # added lines in the original hunk
    full: str | None = None  # the whole (trimmed) hunk when `text` is a summary: shown if room is left


def split_hunks(patch: str | None) -> list[tuple[str, bool]]:
    """(hunk text with its @@ header, deletion-only?) per hunk; plain string splitting, no full parse."""
    if not patch:
        return []
    parts = re.split(r"(?m)^(?=@@ )", patch.replace("\r\n", "\n"))
    out = []
    for part in parts:
        if not part.startswith("@@"):
            continue
        body = part.split("\n")[1:]
        adds = any(x.startswith("+") for x in body)
        dels = any(x.startswith("-") for x in body)
        out.append((part.rstrip("\n"), dels and not adds))
    return out


def trim_context(hunk: str, keep: int = CONTEXT_KEEP) -> str:
    """The hunk with each run of unchanged lines cut to `keep` lines next to a change (a marker says how
    many went); runs too short to be worth a marker stay whole."""
    lines = hunk.split("\n")
    head, body = lines[0], lines[1:]
    changed = [i for i, x in enumerate(body) if x[:1] in "+-\\" and x]
    if not changed:
        return hunk
    near = set()
    for i in changed:
        near.update(range(i - keep, i + keep + 1))
    out, run = [head], []

    def flush() -> None:
        if len(run) >= 3:
            out.append(f" ⋯ {len(run)} unchanged lines")
        else:
            out.extend(run)
        run.clear()

    for i, line in enumerate(body):
        if i in near or line[:1] in "+-\\":
            flush()
            out.append(line)
        else:
            run.append(line)
    flush()
    return "\n".join(out)


_LICENSE_RX = re.compile(r"licen[cs]e|copyright|spdx", re.I)


def collapse_license(hunk: str) -> str:
    """A new file's leading licence comment as one line: it is the same in every file and says nothing."""
    lines = hunk.split("\n")
    j = 1
    while j < len(lines) and re.match(r"^\+\s*(#|//|/?\*|--|$)", lines[j]):
        j += 1
    block = lines[1:j]
    if len(block) < 4 or not any(_LICENSE_RX.search(x) for x in block):
        return hunk
    return "\n".join([lines[0], f"+[licence header, {len(block)} lines]", *lines[j:]])


def removed_summary(hunk: str) -> str:
    """A deletion-only hunk as one line: its @@ line, how much went, and the definitions that went."""
    lines = hunk.split("\n")
    removed = [x[1:] for x in lines[1:] if x.startswith("-")]
    names = []
    for x in removed:
        m = _DEF_RX.match(x) or (_ASSIGN_RX.match(x) if not x[:1].isspace() else None)
        if m and m.group(1) not in names:
            names.append(m.group(1))
    what = f"; removed: {', '.join(names[:8])}" + (f" and {len(names) - 8} more" if len(names) > 8 else "")
    return f"{lines[0]}\n[deletion only: {len(removed)} lines removed{what if names else ''}]"


def summary_of_tests(patch: str | None) -> str:
    """A test file as its added test names and asserts: enough to see what is checked."""
    names, asserts = [], []
    for line in (patch or "").split("\n"):
        m = _TEST_NAME_RX.match(line)
        if m:
            names.append(m.group(1))
        elif line.startswith("+") and re.match(r"\s*(?:self\.)?assert", line[1:]):
            asserts.append(line[1:].strip())
    if not names and not asserts:
        return "[test file: no test functions or asserts added]"
    out = []
    if names:
        out.append("tests added or changed: " + ", ".join(names[:TEST_ITEMS]))
    room = max(0, TEST_ITEMS - len(names[:TEST_ITEMS]) // 2)
    out += [f"+ {a}" for a in asserts[:room]]
    if len(asserts) > room:
        out.append(f"[… {len(asserts) - room} more asserts]")
    return "[test file, shown as its tests and asserts]\n" + "\n".join(out)


# ---- what the PR is about -------------------------------------------------------------------------------
@dataclass
class PRShape:
    about_tests: bool  # tests are the point: show them whole
    docs_led: bool  # a design doc carries the change: show it beside the code
    packaging: bool  # build manifests are the change: show them beside the code


def pr_shape(record: PRRecord, analysis: Analysis | None) -> PRShape:
    kind = (analysis.kind if analysis else None) or ""
    tags = {t.lower() for t in (analysis.tags if analysis else [])}
    lines: dict[str, int] = {}
    for f in record.files:
        role = file_role(f.get("filename") or "")
        lines[role] = lines.get(role, 0) + int(f.get("additions") or 0) + int(f.get("deletions") or 0)
    total = sum(lines.values()) or 1
    code = lines.get("code", 0)
    about_tests = kind == "test" or "test" in tags or "tests" in tags or lines.get("test", 0) > 2 * code
    docs_led = (
        kind in ("doc", "docs") or "doc" in tags or "docs" in tags or lines.get("docs", 0) >= 0.3 * total
    )
    packaging = (
        kind == "build"
        or bool(tags & {"build", "deps", "docker", "ci", "packaging"})
        or bool(_PACKAGING_RX.search(record.title or ""))
        or lines.get("build", 0) >= 0.2 * total
    )
    return PRShape(about_tests, docs_led, packaging)


def effective_role(filename: str, shape: PRShape) -> str:
    """The role a file is ranked by: design docs and manifests take the code's rank when the PR is theirs."""
    role = file_role(filename)
    low = filename.lower()
    if role == "docs" and shape.docs_led and not low.startswith(".github/"):
        return "code"
    if _MANIFEST_RX.search(filename) and shape.packaging:
        return "code"
    return role


def file_order(record: PRRecord, analysis: Analysis | None, shape: PRShape) -> tuple[list[int], set[int]]:
    """Indices of record.files: the heuristics' key files in their order, then the rest by rank and size."""
    index = {f.get("filename"): i for i, f in enumerate(record.files)}
    key_idx = [index[k.filename] for k in (analysis.key_files if analysis else []) if k.filename in index]
    keys = set(key_idx)

    def rank(i: int) -> tuple:
        f = record.files[i]
        name = f.get("filename") or ""
        return (_ROLE_RANK.get(effective_role(name, shape), 9), -int(f.get("additions") or 0), name)

    rest = sorted((i for i in range(len(record.files)) if i not in keys), key=rank)
    return key_idx + rest, keys


def file_hunks(record: PRRecord, i: int, *, summarize_tests: bool) -> list[Hunk]:
    """The hunks of file i as the model will see them (trimmed, collapsed or summarised)."""
    f = record.files[i]
    name = f.get("filename") or ""
    role = file_role(name)
    if role in NO_PATCH_ROLES or not f.get("patch"):
        return []
    if role == "test" and summarize_tests:
        whole = "\n".join(trim_context(t) for t, _ in split_hunks(f.get("patch")))
        return [Hunk(i, 0, summary_of_tests(f.get("patch")), False, int(f.get("additions") or 0), whole)]
    out = []
    for j, (text, del_only) in enumerate(split_hunks(f.get("patch"))):
        added = sum(1 for x in text.split("\n")[1:] if x.startswith("+"))
        if del_only:
            out.append(Hunk(i, j, removed_summary(text), True, added, trim_context(text)))
        else:
            out.append(Hunk(i, j, trim_context(collapse_license(text) if j == 0 else text), False, added))
    return out
