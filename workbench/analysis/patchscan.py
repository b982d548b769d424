"""Fast scans of raw unified-diff text: no per-line Python work.

Why: heuristics run over thousands of PRs and unidiff spends ~2 µs per line; these helpers use
str.find, `words.WordFinder` and newline-anchored regexes (C speed) and work out a new-side line number
only for the few lines that become evidence. `Concat` joins a PR's patches so each word is searched
once per PR (`WordPlaces`).
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Iterator
from functools import lru_cache
from typing import TYPE_CHECKING

from .words import WordFinder

if TYPE_CHECKING:
    from .diff import FileDiff

HUNK_HEADER = re.compile(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@ ?([^\n]*)")


def new_line_at(patch: str, pos: int) -> int | None:
    """New-side line number of the line containing `pos`; None for a removed line or outside a hunk."""
    start = patch.rfind("\n", 0, pos) + 1
    if patch.startswith("-", start):
        return None
    h = patch.rfind("\n@@ ", 0, start)
    h = h + 1 if h >= 0 else (0 if patch.startswith("@@ ") else -1)
    if h < 0:
        return None
    m = HUNK_HEADER.match(patch, h)
    if not m:
        return None
    # Every line before ours in this hunk that exists on the new side moves the counter. Counted in place
    # from the header's own newline (no copy of the hunk): a hunk can be thousands of lines long.
    nl = patch.find("\n", h)
    first = int(m.group(3))
    if m.group(2) == "0":
        # a hunk with no old side (a new file) has only added lines: every line before ours counts
        # (the newline that ends the line before ours does not start a line)
        return first + patch.count("\n", nl, start - 1)
    # added, context and empty context lines are on the new side; removed lines are not
    return (
        first + patch.count("\n+", nl, start) + patch.count("\n ", nl, start) + patch.count("\n\n", nl, start)
    )


def line_bounds(text: str, pos: int) -> tuple[int, int]:
    start = text.rfind("\n", 0, pos) + 1
    end = text.find("\n", pos)
    return start, (len(text) if end < 0 else end)


def in_added_section(patch: str, start: int) -> bool:
    """Whether the line starting at `start` stands in a section the patch adds: the nearest line above
    it that is less indented (YAML, JSON) or a `[table]` header (TOML) is an added line. Comments,
    blanks and removed lines are passed over; a hunk that starts inside the section leaves it an old one."""
    end = patch.find("\n", start)
    body = patch[start + 1 : end if end >= 0 else len(patch)]
    indent = len(body) - len(body.lstrip())
    pos = start
    while pos > 0:
        above = patch.rfind("\n", 0, pos - 1) + 1
        line, pos = patch[above : pos - 1], above
        if line.startswith("@@"):
            return False
        text = line[1:].strip()
        if line.startswith("-") or not text or text.startswith(("#", "//")):
            continue
        if len(line) - 1 - len(line[1:].lstrip()) < indent or text.startswith("["):
            return line.startswith("+")
    return False


# A YAML line that opens a mapping: `name:` with nothing after it but a comment.
_YAML_SECTION = re.compile(r"[\"']?([\w.\-]+)[\"']?[ \t]*:[ \t]*(?:#.*)?")
# A section above a line: (indent, name or None for a line that opens no mapping, named by the header)
Section = tuple[int, str | None, bool]


def yaml_key_paths(patch: str) -> dict[int, str | None]:
    """The YAML sections above each changed line, by where it starts: `trainer.use_v1`'s line maps to
    "trainer" (joined with dots, "" at the top level), read on the line's own side of its hunk: the
    less indented `name:` lines up to the top level, or to the hunk's header when it names a top-level
    section (git shows the last unindented line above a hunk) and the line, or the outermost section
    the hunk shows, is one level under it. None when a level cannot be seen: a partial path would name
    another key. One pass down the patch, with a stack of sections per side."""
    paths: dict[int, str | None] = {}
    old: list[Section] = []
    new: list[Section] = []
    next_pos = 0
    for line in patch.split("\n"):
        pos, next_pos = next_pos, next_pos + len(line) + 1
        if line.startswith("@@"):
            header = _YAML_SECTION.fullmatch(line[line.find("@@", 2) + 2 :].strip())
            old = [(0, header.group(1), True)] if header else []
            new = list(old)
        elif line[:1] in (" ", "+", "-"):
            body = line[1:].lstrip()
            if body and not body.startswith("#"):
                level = len(line) - 1 - len(body)
                # read once, for both sides of a context line
                section = _YAML_SECTION.fullmatch(body.rstrip())
                name = section.group(1) if section else None
                for sign, stack in (("-", old), ("+", new)):
                    if line[0] not in (" ", sign):
                        continue
                    while stack and stack[-1][0] >= level:
                        stack.pop()
                    if line[0] == sign:  # a changed line: the keys that come, go or change
                        paths[pos] = _joined(stack, level)
                    stack.append((level, name, False))
    return paths


def workflow_names(patch: str) -> dict[str, bool]:
    """The names a CI workflow's patch changes, in order: its jobs (`jobs.<id>`, as GitHub Actions names
    them) and the environment variables it sets or stops setting (the keys of an `env:` section).
    name -> True for a job whose own `<id>:` line comes or goes (a job added or removed whole)."""
    names: dict[str, bool] = {}
    for pos, path in yaml_key_paths(patch).items():
        if path is None:
            continue
        if path == "jobs":  # a job's own line: the job comes or goes
            end = patch.find("\n", pos)
            section = _YAML_SECTION.fullmatch(patch[pos + 1 : end if end >= 0 else None].strip())
            if section:
                names[section.group(1)] = True
            continue
        if path.startswith("jobs."):  # a line inside a job: the job changes
            names.setdefault(path.split(".", 2)[1], False)
        if path == "env" or path.endswith(".env"):  # a variable set or no longer set
            variable = _ENV_KEY.match(patch, pos + 1)
            if variable:
                names.setdefault(variable.group(1), False)
    return names


def environment_variables(patch: str) -> list[str]:
    """The environment variables a Python patch's changed lines read or set (`os.environ[...]`,
    `os.getenv(...)`, `os.environ.get(...)`): a switch a user sets, which no definition names. A shell
    script's `export`s are left out: a run script exports a dozen, which would crowd out its settings."""
    names = []
    for m in _ENV_USE.finditer(patch):
        line_start = patch.rfind("\n", 0, m.start()) + 1
        if patch[line_start : line_start + 1] in ("+", "-") and "#" not in patch[line_start : m.start()]:
            names.append(m.group(1))
    return list(dict.fromkeys(names))


# Python reading or setting an environment variable by name.
_ENV_USE = re.compile(
    r"os\.(?:environ(?:\.(?:get|setdefault|pop))?|getenv)\s*[\[(]\s*[\"']([A-Z][A-Z0-9_]{2,})[\"']"
)


# An environment variable's line in a YAML `env:` section: `  WORKER_REPLICAS: "2"`.
_ENV_KEY = re.compile(r"[ \t]*([A-Z][A-Z0-9_]+)[ \t]*:")


def _joined(stack: list[Section], level: int) -> str | None:
    """The dotted sections of `stack` above a line at `level`, or None where a level is unseen."""
    if not stack:
        return "" if level == 0 else None  # at the top level, or in a section the hunk does not show
    bottom_indent, _, from_header = stack[0]
    if from_header:
        outermost_shown = stack[1][0] if len(stack) > 1 else level
        if outermost_shown > 2:
            return None  # a level between the header's section and what the hunk shows
    elif bottom_indent != 0:
        return None  # the hunk starts inside a section it does not name
    names = [name for _, name, _ in stack]
    return None if None in names else ".".join(names)


def added_lines_with(
    text: str, needle: str, *, word: bool = True, sign: str = "+", limit: int = 50, max_scan: int = 400
) -> Iterator[tuple[int, str]]:
    """(position, line text without the sign) for each `sign` line containing `needle`.

    str.find runs at memory speed, so a needle that is absent costs almost nothing.
    """
    pos = text.find(needle)
    seen_line = -1
    n = scanned = 0
    # bounded: a needle on every context line stays cheap
    while pos >= 0 and n < limit and scanned < max_scan:
        scanned += 1
        start, end = line_bounds(text, pos)
        if not text.startswith(sign, start) or text.startswith(sign * 3 + " ", start):
            pos = text.find(needle, end)  # not an added line: skip the rest of it
            continue
        ok = True
        if word:
            before = text[pos - 1] if pos > start else " "
            after_i = pos + len(needle)
            after = text[after_i] if after_i < len(text) else " "
            ok = not (before.isalnum() or before == "_") and (
                not needle[-1:].isalnum() or not (after.isalnum() or after == "_")
            )
        if ok and start != seen_line:
            seen_line = start
            n += 1
            yield start, text[start + 1 : end]
        pos = text.find(needle, end if ok else pos + 1)


# A Python definition line's keyword and name, after the diff sign.
_PY_DEFINITION = re.compile(r"[ \t]*(?:async[ \t]+)?(def|class)[ \t]+(\w+)")
_REMOVED_PY_DEFINITION = re.compile(r"\n-[ \t]*(?:async[ \t]+)?(?:def|class)[ \t]+(\w+)")
# How far up a hunk the enclosing definition is looked for: a function longer than this is read as old.
_MAX_LINES_UP = 400


def _enclosing_heads(patch: str, pos: int) -> Iterator[tuple[int, str, str, int]]:
    """(where the line starts, its sign, its code, its indentation) of each line of the new file above
    the one at `pos` in its hunk that is less indented than every line between: the heads of the blocks
    the line stands in, innermost first. Removed lines (gone from the new file), blanks, comments and
    closing brackets (which end a multi-line signature or call and open nothing) are passed over; the
    walk ends at the hunk's header."""
    start, end = line_bounds(patch, pos)
    indent = _indentation(patch[start + 1 : end])
    for _ in range(_MAX_LINES_UP):
        if start <= 0:
            return
        above = patch.rfind("\n", 0, start - 1) + 1
        prev, start = patch[above : start - 1], above
        if prev.startswith("@@"):
            return
        code = prev[1:]
        stripped = code.lstrip()
        if prev.startswith("-") or not stripped or stripped.startswith((")", "]", "}", "#")):
            continue
        level = len(code) - len(stripped)
        if level < indent:
            indent = level
            yield start, prev[:1], code, level


def _indentation(line: str) -> int:
    return len(line) - len(line.lstrip())


def new_python_definition(patch: str, pos: int) -> str | None:
    """The name of the Python function or class the line at `pos` stands in, when its definition line,
    found upwards by indentation in the same hunk, is added; None where it was there before or the hunk
    does not show it. A hunk that removes a definition at the same level without adding it back splits
    old code into the new one: None. A method the language calls by itself (`__init__`,
    `__post_init__`) is new code only in a new class: added to an old class, it runs where the class ran
    before. The caller still checks the PR's other files: a name the PR removes elsewhere was moved
    (Concat.removed_definitions)."""
    for start, sign, code, level in _enclosing_heads(patch, pos):
        m = _PY_DEFINITION.match(code)
        if not m:
            continue  # an if/for/with block: what encloses it is further up
        if sign != "+":
            return None
        keyword, name = m.groups()
        if keyword == "def" and name.startswith("__") and name.endswith("__"):
            continue  # called by the language: new only if what holds it is
        if _hunk_removes_definition(patch, start, code[:level]):
            return None
        return name
    return None


def in_python_function(patch: str, pos: int) -> bool:
    """Whether the Python line at `pos` stands in a function (a closure, a local, a method's helper) on
    its own side of the hunk, not in a class body or at module level. Two levels deep it does (a line
    of a class nested in a class would be taken for one too; such classes are rare). One level deep it
    does when the nearest unindented line above it is a `def`, else a class holds it or nothing does (a
    function under `if TYPE_CHECKING:`); git's hunk header tells when the hunk does not."""
    start, end = line_bounds(patch, pos)
    indent = _indentation(patch[start + 1 : end])
    if indent > 4 or patch.startswith("\t\t", start + 1):
        return True
    if not indent:
        return False
    hunk = patch.rfind("\n@@", 0, start) + 1
    own_side = _UNINDENTED_OLD if patch.startswith("-", start) else _UNINDENTED_NEW
    heads = own_side.findall(patch, hunk, start)
    if heads:
        return heads[-1].startswith(("def ", "async def "))
    header = HUNK_HEADER.match(patch, hunk)
    return bool(header) and header.group(5).startswith(("def ", "async def "))


# a line of one side of a hunk whose code starts at the first column (no blank, comment or closing bracket)
_UNINDENTED_OLD = re.compile(r"\n[ -]((?![ \t\n#)\]}])[^\n]*)")
_UNINDENTED_NEW = re.compile(r"\n[ +]((?![ \t\n#)\]}])[^\n]*)")


def _hunk_removes_definition(patch: str, pos: int, indent: str) -> bool:
    """Whether the hunk around `pos` removes a definition indented by `indent` without adding it back."""
    first = patch.rfind("\n@@", 0, pos) + 1
    last = patch.find("\n@@", pos)
    hunk = patch[first : last if last >= 0 else len(patch)]
    at_level = re.compile(r"\n([+-])" + re.escape(indent) + r"(?:async[ \t]+)?(?:def|class)[ \t]+(\w+)")
    names: dict[str, set[str]] = {"+": set(), "-": set()}
    for sign, name in at_level.findall(hunk):
        names[sign].add(name)
    return bool(names["-"] - names["+"])


_TRIPLE_QUOTES = re.compile(r"\"\"\"|'''")
_STRING_PREFIX = "rRbBuUfF"


def in_python_docstring(patch: str, pos: int) -> bool:
    """Whether the line at `pos` stands inside a triple-quoted string (a docstring's prose) that a line
    above it in the same hunk opens (the opening line itself is judged by its quotes, as any line), or
    that opens above the hunk and closes below the line."""
    hunk = patch.rfind("\n@@", 0, pos) + 1
    if patch.find('"""', hunk, pos) < 0 and patch.find("'''", hunk, pos) < 0:
        return _closed_below(patch, pos)  # the patch's strings need not be mapped
    starts, ends = _docstring_spans(patch)
    i = bisect_right(starts, pos) - 1
    return i >= 0 and pos <= ends[i]


@lru_cache(maxsize=64)  # a PR's hits ask about the same few patches, each many times
def _docstring_spans(patch: str) -> tuple[list[int], list[int]]:
    """Where the patch's triple-quoted strings run: (first line after the opening line, start of the
    closing line) of each, hunk by hunk. A line holding an odd number of triple quotes opens or closes
    one. A hunk may start inside a string, which turns that count around, so the line that opened a
    span must look like an opening: text after its quotes, an assignment or call before them, or a def
    or class line right above. Spans whose opening cannot be told are left out (read as code)."""
    starts: list[int] = []
    ends: list[int] = []

    def close(opener: int, end: int | None = None) -> None:
        """The span `opener` opens, to `end` (its closing line), else to the end of its hunk."""
        if end is None:
            next_hunk = patch.find("\n@@", opener)
            end = next_hunk + 1 if next_hunk >= 0 else len(patch)
        if _opens_a_string(patch, opener):
            after = patch.find("\n", opener)
            starts.append(after + 1 if after >= 0 else len(patch))
            ends.append(end)

    # how many triple quotes each line holds, by where the line starts, in text order
    quotes_per_line: dict[int, int] = {}
    for m in _TRIPLE_QUOTES.finditer(patch):
        line = patch.rfind("\n", 0, m.start()) + 1
        quotes_per_line[line] = quotes_per_line.get(line, 0) + 1
    opener, opener_hunk = None, -1
    for line, quotes in quotes_per_line.items():
        if patch.startswith("-", line):
            continue  # a removed line is not on the side being read
        hunk = patch.rfind("\n@@", 0, line)
        if opener is not None and hunk != opener_hunk:
            close(opener)  # its hunk ended inside the string
            opener = None
        if quotes % 2:
            if opener is None:
                opener, opener_hunk = line, hunk
            else:
                close(opener, line)
                opener = None
    if opener is not None:
        close(opener)
    return starts, ends


_DEF_LINE_ON_NEW_SIDE = re.compile(r"^[+ ][ \t]*(?:async[ \t]+)?(?:def|class)[ \t]", re.M)
_SIGNATURE_END = re.compile(r"\)(?:\s*->.*)?:$")


def _closed_below(patch: str, pos: int) -> bool:
    """Whether the first triple-quoted line below `pos` in its hunk closes a string: a hunk that starts
    inside a docstring shows its prose above the closing quotes only. A def between them opens a
    docstring of its own; quotes on a removed line first mean the old side's strings interleave (too
    little to tell)."""
    hunk_end = patch.find("\n@@", pos)
    quote = _TRIPLE_QUOTES.search(
        patch, line_bounds(patch, pos)[0], hunk_end if hunk_end >= 0 else len(patch)
    )
    if quote is None:
        return False
    line, end = line_bounds(patch, quote.start())
    if line <= pos or patch.startswith("-", line) or _DEF_LINE_ON_NEW_SIDE.search(patch, pos, line):
        return False  # a line holding quotes is judged by them, as any line; the rest: see above
    odd = len(_TRIPLE_QUOTES.findall(patch, line, end)) % 2
    return bool(odd) and not _opens_a_string(patch, line)


def _opens_a_string(patch: str, at: int) -> bool:
    line = patch[at + 1 : line_bounds(patch, at)[1]]
    quotes = max(line.rfind('"""'), line.rfind("'''"))
    after, before = line[quotes + 3 :].strip(), line[:quotes].rstrip(_STRING_PREFIX).strip()
    above_at = patch.rfind("\n", 0, at - 1) + 1
    above = patch[above_at + 1 : at - 1].strip()
    # a def or class line, or the last line of a signature that runs over several (not a hunk header)
    opens_a_body = (
        above.endswith(":")
        and not patch.startswith("@@", above_at)
        and (
            above.startswith(("def ", "async def ", "class ", ")"))
            or _SIGNATURE_END.search(above) is not None
        )
    )
    return bool(after) or before.endswith(("=", "(", ",")) or opens_a_body


def hunk_sections(patch: str) -> list[tuple[int, str]]:
    """(new_start, section text) for every @@ header that names an enclosing function or class."""
    return [(int(m.group(3)), m.group(5).strip()) for m in HUNK_HEADER.finditer(patch) if m.group(5).strip()]


def moved_share(files: list[FileDiff]) -> float:
    """The share of the added lines of `files` that another of them removes: 1.0 when code only moves
    between files (a module moved, a helper extracted). Blank lines, brackets and short statements
    (`pass`, `else:`) recur anywhere and are not counted."""
    removed_in: dict[str, set[str]] = {}
    for fd in files:
        for code in _REMOVED_CODE.findall("\n" + (fd.patch or "")):
            removed_in.setdefault(code, set()).add(fd.filename)
    added = [(code, fd.filename) for fd in files for code in _ADDED_CODE.findall("\n" + (fd.patch or ""))]
    moved = sum(1 for code, name in added if removed_in.get(code, {name}) != {name})
    return moved / len(added) if added else 0.0


# an added or removed line's code, from its first non-blank character, when it is 8 characters or more
_ADDED_CODE = re.compile(r"\n\+[ \t]*+([^\n]{8,})")
_REMOVED_CODE = re.compile(r"\n-[ \t]*+([^\n]{8,})")


class Concat:
    """All patches of a PR joined once, so each needle is searched once per PR, not once per file."""

    __slots__ = ("text", "starts", "files", "_removed")

    def __init__(self, files: list[FileDiff], roles: frozenset[str] | None = None):
        parts, starts, owners = [], [], []
        pos = 0
        for fd in files:
            if fd.patch and (roles is None or fd.role in roles):
                starts.append(pos)
                owners.append(fd)
                parts.append(fd.patch)
                pos += len(fd.patch) + 1
        self.text = "\n".join(parts)
        self.starts = starts
        self.files = owners
        self._removed: set[str] | None = None

    def removed_definitions(self) -> set[str]:
        """Names of the Python functions and classes whose definition lines the patches remove; read
        when first asked (most PRs never ask)."""
        if self._removed is None:
            self._removed = set(_REMOVED_PY_DEFINITION.findall(self.text))  # each patch starts "@@"
        return self._removed

    def locate(self, pos: int) -> tuple[FileDiff, int]:
        """-> (file, position inside its patch)."""
        i = bisect_right(self.starts, pos) - 1
        return self.files[i], pos - self.starts[i]

    def evidence_line(self, pos: int) -> tuple[str, int | None]:
        fd, local = self.locate(pos)
        return fd.filename, new_line_at(fd.patch or "", local)


class WordPlaces:
    """Where each word of a fixed list starts in a PR's joined patches (`Concat`), found by one
    pass for all the words (`words.WordFinder`): each detector then reads the places of its own words, where a
    pass per detector read every patch several times.

    A word's id is its index in the finder's list.
    """

    __slots__ = ("cat", "places")

    def __init__(self, cat: Concat, finder: WordFinder) -> None:
        self.cat = cat
        self.places: dict[int, list[int]] = {}  # word id -> its starts, in text order
        for wid, at, _end in finder.places(cat.text):
            self.places.setdefault(wid, []).append(at)

    def lines_holding(self, ids: frozenset[int]) -> Iterator[tuple[FileDiff, int, str]]:
        """(file, where the line starts in the file's patch, the line with its sign) of each line that
        holds one of the words `ids`, in text order, each line once."""
        text = self.cat.text
        starts = sorted({text.rfind("\n", 0, at) + 1 for wid in ids for at in self.places.get(wid, ())})
        for start in starts:
            end = text.find("\n", start)
            fd, local = self.cat.locate(start)
            yield fd, local, text[start : end if end >= 0 else len(text)]


# ---- symbols in any language --------------------------------------------------------------------
# Key symbols come from two places a reader trusts: the enclosing definition git names in each hunk
# header, and the definition lines a PR adds or removes. Both are read with per-language definition
# patterns (Python, Rust, Go, TypeScript/JavaScript, Java/Kotlin, C/C++), skipping modifiers, so that a
# header like `pub(crate) struct Checker<'a> {` names `Checker`, not `pub`.

# Words that are never a symbol: keywords, visibility and other modifiers, primitive types, and
# placeholder names of examples and fixtures (foo, bar, f, x, A..E are caught as single letters).
NOISE_SYMBOLS = frozenset(
    """pub crate self super mod use impl fn let mut const static struct enum trait type where unsafe
    async await move ref dyn extern return match loop while for if else in as break continue true false
    none def class lambda pass yield import from with try except finally raise global nonlocal assert del
    and or not is elif
    func package var go defer chan select interface map range switch case default fallthrough goto
    function export new this typeof instanceof void null undefined of readonly declare namespace abstract
    public private protected internal open override final sealed data object companion val fun
    int long short char float double bool boolean string str byte usize isize u8 u16 u32 u64 i8 i16 i32
    i64 f32 f64 virtual inline template typename explicit friend operator sizeof union typedef
    foo bar baz qux quux spam ham eggs placeholder dummy test tests""".split()
)
# Standard traits and interfaces a type implements in passing: `impl Display for X` is about X.
_PASSING_TRAITS = frozenset(
    "From Into TryFrom TryInto Display Debug Default Clone Copy Drop Deref DerefMut PartialEq Eq "
    "PartialOrd Ord Hash Iterator IntoIterator AsRef AsMut Borrow Send Sync Serialize Deserialize "
    "FromStr Error Fn FnMut FnOnce Future Stringer "
    # and the methods those traits ask for: `fn fmt` in `impl Display` is plumbing, not the change
    "fmt clone clone_from hash eq ne cmp partial_cmp drop deref deref_mut from into try_from try_into "
    "as_ref as_mut default from_str to_string next into_iter serialize deserialize String toString "
    "equals hashCode compareTo __repr__ __str__ __eq__ __hash__ __init__ __post_init__".split()
)


def is_noise_symbol(name: str) -> bool:
    """A keyword, modifier, single letter, placeholder or standard trait, or no identifier at all (the
    last part of a version, `vllm0.12` -> `12`; prose in inline code): never a key symbol."""
    short = name.rsplit(".", 1)[-1].rsplit("::", 1)[-1]
    if len(short) <= 1 or not _IDENTIFIER.fullmatch(short):
        return True
    return short.lower() in NOISE_SYMBOLS or short in _PASSING_TRAITS


# A name a symbol can have: a CI key's dashes (`timeout-minutes`) included.
_IDENTIFIER = re.compile(r"[A-Za-z_][\w\-]*", re.ASCII)


def names_something(name: str) -> bool:
    """A name worth a reader's attention: snake_case, kebab-case, dotted or CamelCase, not a plain word."""
    return "_" in name or "-" in name or "." in name or name[1:] != name[1:].lower()


# Inline code on an added line of prose: ``name`` (reStructuredText) or `name` (Markdown). A config
# override (``reward_model.use_reward_loop=True``) or a call (`run_single()`) names what is left of `=`/`(`.
_ADDED_LINE = re.compile(r"\n\+[^\n]*")
_CODE_SPAN = re.compile(r"``([^`\n]{2,80})``|`([^`\n]{2,80})`")
_DOCUMENTED = re.compile(r"@?([A-Za-z_][\w.]*)(?:\(\)|=[^\s=]*)?")


def documented_names(patch: str) -> list[str]:
    """The names a prose patch writes in inline code on its added lines, in order, each once: the last
    part of a dotted name, and only names that name something (`max_num_seqs`, `RewardLoopWorker`)."""
    names: dict[str, None] = {}
    for line in _ADDED_LINE.findall("\n" + patch):
        if "`" not in line:
            continue
        for m in _CODE_SPAN.finditer(line):
            span = _DOCUMENTED.fullmatch((m.group(1) or m.group(2)).strip())
            name = span.group(1).rsplit(".", 1)[-1] if span else ""
            if name and names_something(name) and not is_noise_symbol(name):
                names[name] = None
    return list(names)


_MODIFIERS = (
    r"(?:(?:pub(?:\([^)\n]*\))?|export|default|async|unsafe|const|static|public|private|protected|internal|"
    r"final|abstract|override|open|sealed|data|inline|virtual|extern(?:[ \t]+\"[^\"\n]*\")?|declare|"
    r"suspend|synchronized)[ \t]+)*"
)
# A definition: keyword and name. Go methods have a receiver before the name: `func (s *Server) Serve(`.
_DEFINITION = (
    r"(?:def|class|fn|func|struct|enum|trait|interface|function\*?|type|fun|object|union|namespace|"
    r"module|mod|macro_rules!)[ \t]+(?:\([^)\n]*\)[ \t]*)?(?P<name>[A-Za-z_]\w*)"
)
# `impl<T> Trait for Type<T>` and `impl Type`: the type is the symbol.
_IMPL = r"impl(?:[ \t]*<[^\n{]*?>)?[ \t]+(?:[\w:]+(?:<[^\n{]*?>)?[ \t]+for[ \t]+)?(?:[\w]+::)*(?P<impl>[A-Za-z_]\w*)"
_SECTION_DEF = re.compile(r"^[ \t]*" + _MODIFIERS + r"(?:" + _IMPL + r"|" + _DEFINITION + r")")
# JS/TS `const name = (...) =>` / `name: function`, C/C++/Java `Type name(` and Python calls: the last
# identifier before "(" that is not a keyword.
_SECTION_CALLABLE = re.compile(r"([A-Za-z_]\w*)[ \t]*(?:<[^\n(]*>)?[ \t]*\(")
_JS_ARROW = re.compile(
    r"^[ \t]*" + _MODIFIERS + r"(?:const|let|var)[ \t]+(?P<name>[A-Za-z_$][\w$]*)[ \t]*[:=]"
)

# A module-level table of constants, unindented: `VL_TYPE2INDEX = {`, `_REGISTRY: dict[str, type] = [`. A
# hunk under it edits its entries, and the table is what a reader looks up. Constants only (PEP 8's
# CONSTANT_CASE): a test fixture's `x1 = [` or `config = {` is an example, not a table.
_TABLE = re.compile(r"(?P<name>_*[A-Z][A-Z0-9_]*)[ \t]*(?::[^=\n]+)?=[ \t]*[\[{]")


@lru_cache(maxsize=16384)  # hunk headers repeat: the same function is touched by many hunks and PRs
def section_symbol(section: str) -> str | None:
    """The symbol a hunk header's section text names, or None (a header that is not a definition)."""
    m = _SECTION_DEF.match(section)
    if m:
        name = m.group("impl") or m.group("name")
        return None if is_noise_symbol(name) else name
    m = _JS_ARROW.match(section) or _TABLE.match(section)
    if m:
        return None if is_noise_symbol(m.group("name")) else m.group("name")
    for m in _SECTION_CALLABLE.finditer(section):
        name = m.group(1)
        # a method called on something (`logging.getLogger(`, `x.to(`) or a call whose value is assigned
        # (`y = torch.cat(`) is a statement the header happens to show, not a definition
        if section[m.start() - 1 : m.start()] == "." or _ASSIGNED.search(section, 0, m.start()):
            return None
        if not is_noise_symbol(name) and name not in _CALL_WORDS:
            return name
    return None


def enclosing_names(patch: str, context_definitions: list[tuple[int, int, str | None]]) -> list[str]:
    """The definitions that hold a patch's changes, a hunk at a time: the innermost definition line among
    the hunk's context lines above a change and less indented than it, else the one the hunk's header
    names. Git heads a hunk with the nearest definition above its first line, so a hunk that starts
    three lines before `def b` and edits b's body is headed by the function before b.

    `context_definitions`: (where the line starts, its indentation, its name, None when it names
    nothing) of each definition line in the context, in patch order (`definition_lines` finds them)."""
    names: list[str] = []
    where = {start: (indent, name) for start, indent, name in context_definitions}
    starts = list(where)  # in patch order
    headers = list(HUNK_HEADER.finditer(patch))
    for i, header in enumerate(headers):
        end = headers[i + 1].start() if i + 1 < len(headers) else len(patch)
        outer = section_symbol(header.group(5).strip())
        k = bisect_left(starts, header.end())  # the hunk's first context definition, if any
        first = starts[k] if k < len(starts) and starts[k] < end else end
        if first == end:  # no context definition: every change is where the header says
            names.append(outer)
            continue
        # the changes above the hunk's first context definition are where its header says
        if _CHANGE.search(patch, header.end(), first):
            names.append(outer)
        # from there on, the innermost definition above a change and less indented than it holds it
        scopes: list[tuple[int, str | None]] = []  # (indentation, name) of the definitions open
        at = first
        for line in patch[first:end].split("\n"):
            line_start, at = at, at + len(line) + 1
            code = line[1:]
            stripped = code.lstrip()
            if not stripped or stripped.startswith(_NOT_A_STATEMENT):
                continue
            indent = len(code) - len(stripped)
            while scopes and indent <= scopes[-1][0]:
                scopes.pop()
            if line_start in where:
                scopes.append(where[line_start])
            elif line.startswith(("+", "-")):
                names.append(scopes[-1][1] if scopes else outer)
    return [n for n in dict.fromkeys(names) if n]


# A changed line, searched for between a hunk's header and its first context definition.
_CHANGE = re.compile(r"\n[+-]")
# Lines that open no block and close none that a change could stand in: comments, closing brackets.
_NOT_A_STATEMENT = ("#", "//", ")", "]", "}")


# an assignment, not a comparison or a keyword argument's default in a C++/Java signature
_ASSIGNED = re.compile(r"^[ \t]*[\w.\[\]]+[ \t]*(?:[-+*/|&]?=)(?!=)")


# Control-flow words that precede "(" in a header without naming a function.
_CALL_WORDS = frozenset("if for while switch catch match return sizeof typeof elif when assert print".split())

# Definition lines, added, removed or in the context, in any of the languages above: (sign, indent,
# modifiers, name, rest).
DEF_LINE = re.compile(
    r"\n(?P<sign>[ +-])(?P<indent>[ \t]*+)(?P<mods>" + _MODIFIERS + r")(?:async[ \t]++)?" + _DEFINITION
    + r"[ \t]*(?P<sig>[(:<{=][^\n]*)?"
)  # fmt: skip

# Python's own, narrower pattern: most analysed patches are Python, and the generic one tries every
# modifier of every language on each line.
_PY_DEF_LINE = re.compile(
    r"\n(?P<sign>[ +-])(?P<indent>[ \t]*+)(?P<mods>(?:async[ \t]++)?)(?:def|class)[ \t]+(?P<name>\w+)"
    r"[ \t]*(?P<sig>[(:][^\n]*)?"
)
# The keywords a definition line of each language holds: only the lines holding one are matched (a
# pattern anchored on newlines is tried at every line of a patch; the keywords are found in one pass).
_DEF_KEYWORDS = {
    "Python": ("def ", "class "),
    "Rust": ("fn ", "struct ", "enum ", "trait ", "type ", "mod ", "union ", "macro_rules!"),
    "Go": ("func ", "type "),
}
_ANY_DEF_KEYWORDS = (
    "def ", "class ", "fn ", "func", "struct ", "enum ", "trait ", "interface ", "type ", "fun ", "object ",
    "union ", "namespace ", "mod", "macro_rules!",
)  # fmt: skip
_DEF_FINDERS = {language: WordFinder(list(words)) for language, words in _DEF_KEYWORDS.items()}
_ANY_DEF_FINDER = WordFinder(list(_ANY_DEF_KEYWORDS))


def definition_lines(patch: str, language: str | None) -> Iterator[re.Match[str]]:
    """Definition lines of `patch`, added, removed or in the context (groups sign, indent, mods, name,
    sig), read with the patterns of the file's language. Positions are in "\\n" + patch."""
    text = "\n" + patch
    finder = _DEF_FINDERS.get(language or "", _ANY_DEF_FINDER)
    pattern = _PY_DEF_LINE if language == "Python" else DEF_LINE
    # the newline before each line holding a keyword: where the pattern, which starts with it, must match
    for newline in sorted({text.rfind("\n", 0, at) for _word, at, _end in finder.places(text)}):
        m = pattern.match(text, newline)
        if m:
            yield m
