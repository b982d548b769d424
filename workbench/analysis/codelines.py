"""Which changed lines are program code, and which of them do something.

A risk is raised from program code only: not from comments, string literals, docstrings' prose,
imports, logging or metrics lines (on real diffs those raised most false risk flags). The detectors
(signals.py, risks.py) and the verdict (a change to comments only) ask here.
"""

from __future__ import annotations

import keyword
import re
from collections.abc import Iterator

from .diff import FileDiff
from .patchscan import in_python_docstring

# Languages whose files are run scripts: tried by running them, settings more than logic.
SCRIPT_LANGUAGES = frozenset({"Bash", "Fish", "Tcsh", "PowerShell", "Batchfile"})


def is_program(fd: FileDiff) -> bool:
    """Program code: not a run script (tried by running it, settings more than logic), not a .patch
    file (another diff's text)."""
    return (
        fd.role in ("code", "notebook")
        and fd.language not in SCRIPT_LANGUAGES
        and not fd.filename.endswith((".patch", ".diff"))
    )


# Lines that say something about the program without being behaviour: imports, logging and metrics.
# Definitions and assertions name things or check them without doing them; "name (type): text" is a
# docstring's argument line.
_NOT_BEHAVIOUR = re.compile(
    r"(?:(?:async\s+)?def\s|class\s|(?:pub(?:\([\w:]+\))?\s+)?(?:async\s+)?fn\s|assert\b|\w+\s+\([^)]*\):\s|import\s|from\s+[\w.]+\s+import\s|use\s+[\w:]+|#include|require\(|"
    r"(?:self\.)?(?:logger|logging|log|LOG|tracing|warnings)\.\w+\(|print\(|(?:e?println|info|warn|debug|error|trace)!\(|"
    r"(?:self\.)?\w*(?:metrics|metric_dict|stats|info_dict)\w*\s*\[|[\"'][\w.-]*/[\w./-]*[\"']\s*:|"
    r"[\w.]*(?:log_metrics|log_dict|add_scalar|wandb\.log|tracker\.log)\()"
)
# a parameter in a multi-line signature ("dtype: torch.dtype = torch.bfloat16,"): a declaration
_PARAMETER = re.compile(r"\w+\s*:\s*[^=()]+=\s*[^=]*,\s*$")
# a field or parameter declared by its type alone ("zmq_port: int", "lock: threading.Lock | None,"):
# it names what an object holds; what the program does with it is on the lines that use it
_ANNOTATION = re.compile(r"\w+\s*:\s*[\w.\[\], |\"']+?,?\s*$")
_HASH_COMMENT = frozenset(
    {"Python", "Bash", "Ruby", "Perl", "R", "YAML", "TOML", "Makefile", "Dockerfile", None}
)
_SLASH_COMMENT = frozenset({"C", "C++", "Rust", "Go", "Java", "JavaScript", "TypeScript"})


def in_program_code(line: str, offset: int, language: str | None) -> bool:
    """Whether `line[offset]` stands in program code: not in a comment, a string literal, an import,
    or a logging or metrics statement. (A word in a comment or a log message changes nothing a
    program does: on real diffs such lines raised most false risk flags.)"""
    code = line.lstrip()
    if not code or code.startswith(("#", "//", "/*", "*", '"""', "'''", "--")):
        return False
    if _NOT_BEHAVIOUR.match(code) or _PARAMETER.match(code) or _ANNOTATION.match(code):
        return False
    if language == "Python" and is_python_prose(code):
        return False
    hash_comments = language in _HASH_COMMENT or language not in _SLASH_COMMENT
    quote = None
    i = 0
    while i < offset and i < len(line):
        c = line[i]
        if quote:
            if c == "\\":
                i += 1
            elif c == quote:
                quote = None
        elif c in "\"'`":
            quote = c
        elif c == "#" and hash_comments:
            return False
        elif c == "/" and line.startswith("//", i):
            return False
        i += 1
    return quote is None


# Python has no statement with two names side by side but its keywords' ("is not", "import x as y");
# `type` is a soft keyword from 3.12
_KEYWORDS = frozenset(keyword.kwlist + keyword.softkwlist + ["type"])
_NAME_BESIDE_NAME = re.compile(r"\b([A-Za-z_]\w*)[ \t]+(?=([A-Za-z_]\w*)\b)")
# a quoted string, or one that runs on past the line
_QUOTED = re.compile(r"\"[^\"]*\"|'[^']*'|[\"'].*")


def is_python_prose(line: str) -> bool:
    """Whether a Python line is prose: outside its strings two names stand side by side, which no
    statement allows ("This typed config replaces the old ..."), or a link or a backtick stands
    outside them. A docstring's middle, in a hunk that shows neither its opening nor its closing
    quotes, reads as code otherwise."""
    code = _QUOTED.sub('""', line).partition("#")[0]
    if "://" in code or "`" in code:  # a link, or a name in backticks: no Python 3 statement has either
        return True
    pairs = (m.groups() for m in _NAME_BESIDE_NAME.finditer(code))
    return any(a not in _KEYWORDS and b not in _KEYWORDS for a, b in pairs)


# the lines a patch adds, removes, or both; group 1 is the line without its sign
_CHANGED_LINES = {signs: re.compile(rf"^[{re.escape(signs)}](.*)$", re.M) for signs in ("+-", "+", "-")}


def changes_only_comments(fd: FileDiff) -> bool:
    """Whether every line the file's patch adds or removes is blank, a comment or a docstring's prose (a
    licence header, a reworded comment, a linter's pragma, a fixed link): nothing that runs changes."""
    return bool(fd.patch) and first_code_change(fd) is None


def first_code_change(fd: FileDiff, signs: str = "+-") -> re.Match | None:
    """The first line of the patch with one of `signs` that runs something (not blank, a comment or a
    docstring's prose); its group 1 is the line without its sign. Most patches answer at once."""
    return next(_code_changes(fd, signs), None)


def first_behaviour_change(fd: FileDiff, signs: str = "+-") -> re.Match | None:
    """The first such line that does something: not an import, a log, print or metrics call, a string
    standing alone (a message's next line, a quoted annotation), a list of names, a parameter of a
    signature, a decorator, a closing bracket or a bare `try:`. A fix that only rewords what it logs,
    or spells a type hint as a string, changes nothing a run does."""
    return next((m for m in _code_changes(fd, signs) if _does_something(m.group(1))), None)


def _code_changes(fd: FileDiff, signs: str) -> Iterator[re.Match]:
    # a block comment's inner lines start "* ", where `*ptr = x` is code; a shebang says what runs
    marks = ("//", "/*", "*/", "* ") if fd.language in _SLASH_COMMENT else ("#",)
    for changed in _CHANGED_LINES[signs].finditer(fd.patch or ""):
        text = changed.group(1).strip()
        if not text or text == "*":
            continue
        if text.startswith(marks) and not text.startswith("#!"):
            continue
        if not (in_docstring(fd, changed.start()) or _opens_docstring(fd, text) or _prose(fd, text)):
            yield changed


# a string literal opening a line: the rest of a message or a list of names, an annotation in quotes
_STRING_LINE = re.compile(r"""[rRbBuUfF]{0,2}["']""")
# names and commas alone: one line of a multi-line import, signature or argument list ("self,")
_NAME_LIST = re.compile(r"[\w., ]*,\s*$")
# a line that only frames others: a decorator or attribute (`#[derive(...)]`), a signature's closing
# line, a bare try/else/finally, the `except ImportError:` of an import's fallback, a module's logger
_FRAME = re.compile(
    r"@|#\[|\)|(?:try|else|finally)\s*:|except\s*\(?\s*(?:ImportError|ModuleNotFoundError)\s*\)?\s*:"
    r"|\w+\s*=\s*logging\.getLogger\("
)
_WORD = re.compile(r"\w")


def _does_something(line: str) -> bool:
    """Whether a line of code (comments and prose already left out) does something; see
    first_behaviour_change."""
    code = line.strip()
    if code.startswith("assert "):  # names nothing a risk theme looks for, but stops the runs it fails
        return True
    return (
        _WORD.search(code) is not None
        and not _STRING_LINE.match(code)
        and not _NAME_LIST.fullmatch(code)
        and not _FRAME.match(code)
        and not _NOT_BEHAVIOUR.match(code)
        and not _PARAMETER.match(code)
    )


def _opens_docstring(fd: FileDiff, text: str) -> bool:
    """A Python line that starts with a triple quote is a bare string (a docstring's first or last
    line): it runs nothing."""
    return fd.language == "Python" and text.lstrip("rRuU").startswith(('"""', "'''"))


def _prose(fd: FileDiff, text: str) -> bool:
    return fd.language == "Python" and is_python_prose(text)


def in_docstring(fd: FileDiff, local: int) -> bool:
    """A docstring's prose describes the program; it does nothing (Python's, the language analysed most)."""
    return fd.language == "Python" and in_python_docstring(fd.patch, local)
