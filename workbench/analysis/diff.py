"""The diff model: a PR's files -> hunks -> lines, each file with a role and a language.

Why hunks are parsed lazily: heuristics over a 3,000-PR cache must cost a few times what decoding the
JSON costs, and unidiff spends ~2 µs per line. Signals scan the raw patch text with C-speed string
searches (`added_lines_with`, `new_line_at`); the line-by-line model is built only when a view asks.

Nothing here raises on bad input: a missing, binary, malformed, CRLF or huge patch is represented and
named in `FileDiff.flags`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import unidiff

# The fast text scans live in patchscan.py; re-exported here so callers have one diff module.
from .patchscan import HUNK_HEADER as _HUNK_HEADER
from .patchscan import (
    Concat,
    added_lines_with,
    hunk_sections,
    line_bounds,
    new_line_at,
)

ROLES = ("code", "test", "docs", "ci", "build", "config", "generated", "binary", "notebook", "data")
LARGE_PATCH_LINES = 5000  # past this a view should page; the flag says so

# The conventions below are the common ones of Python, Rust, Go, TypeScript/JavaScript, Java/Kotlin and
# C/C++ projects. Names are matched whole (a manifest is `Cargo.toml`, not "anything starting with
# cargo"): a prefix rule once made a Rust solver, `constraints.rs`, a pip constraints file.
_BINARY_EXT = frozenset(
    "png jpg jpeg gif bmp ico webp svgz pdf zip gz tgz bz2 xz 7z tar whl egg so dylib dll exe bin o a pyc "
    "pt pth ckpt safetensors onnx npy npz pkl pickle h5 hdf5 mp3 mp4 wav avi mov woff woff2 ttf otf eot "
    "jar class parquet arrow feather db sqlite wasm".split()
)
_DATA_EXT = frozenset("csv tsv jsonl ndjson txt dat log xml".split())
_CONFIG_EXT = frozenset("yaml yml toml json ini cfg conf env properties jsonc json5".split())
_DOC_EXT = frozenset("md mdx rst adoc asciidoc".split())
_CODE_EXT = frozenset(
    "py pyi pyx pxd c h cc cpp cxx hpp hh hxx ipp inl cu cuh go rs java kt kts scala groovy js jsx ts tsx "
    "mjs cjs mts cts rb php swift m mm sh bash zsh fish ps1 lua pl r jl sql proto cmake vue svelte css "
    "scss less html htm mlir triton cs fs zig dart ex exs erl hs ml".split()
)
_LOCK_NAMES = frozenset(
    "uv.lock poetry.lock pipfile.lock package-lock.json npm-shrinkwrap.json yarn.lock pnpm-lock.yaml "
    "bun.lockb cargo.lock go.sum composer.lock gemfile.lock pdm.lock gradle.lockfile flake.lock".split()
)
# Real manifest and build-script names, matched whole.
_BUILD_NAMES = frozenset(
    # Python
    "setup.py setup.cfg pyproject.toml manifest.in tox.ini noxfile.py pipfile environment.yml "
    "environment.yaml constraints.txt hatch.toml pdm.toml "
    # Rust
    "cargo.toml build.rs rust-toolchain rust-toolchain.toml "
    # Go
    "go.mod go.work "
    # TypeScript / JavaScript
    "package.json pnpm-workspace.yaml lerna.json tsconfig.json "
    # Java / Kotlin
    "build.gradle build.gradle.kts settings.gradle settings.gradle.kts gradle.properties pom.xml "
    "build.xml gradlew "
    # C / C++
    "makefile gnumakefile cmakelists.txt meson.build meson_options.txt configure.ac configure.in "
    "makefile.am conanfile.txt conanfile.py vcpkg.json "
    # Bazel, containers, others
    "build build.bazel workspace workspace.bazel module.bazel bazel dockerfile containerfile "
    "docker-compose.yml docker-compose.yaml compose.yml compose.yaml gemfile flake.nix "
    # the release's version string, alone in its file
    "version version.txt .version".split()
)
_BUILD_EXT = frozenset("cmake mk gradle bzl dockerfile".split())
_CI_NAMES = frozenset(
    ".gitlab-ci.yml .travis.yml azure-pipelines.yml jenkinsfile .pre-commit-config.yaml codecov.yml "
    ".codecov.yml .readthedocs.yaml .readthedocs.yml appveyor.yml .appveyor.yml .cirrus.yml .drone.yml "
    "bitbucket-pipelines.yml .mergify.yml dependabot.yml renovate.json".split()
)
_GENERATED_DIRS = (
    "vendor/",
    "vendored/",
    "third_party/",
    "thirdparty/",
    "third-party/",
    "node_modules/",
    "_vendor/",
)
# Prose files by name, with no extension or a text one (a `changelog_parser.rs` is code).
_DOC_NAMES = ("readme", "changelog", "changes", "license", "licence", "copying", "contributing", "authors",
              "notice", "code_of_conduct", "security", "history")  # fmt: skip
_DOC_DIRS = ("docs/", "doc/", "documentation/", "website/docs/")
# Test directories: Python and C/C++ (tests/, test/), Rust integration tests (tests/), Go fixtures
# (testdata/), JavaScript (__tests__/, __mocks__/, e2e/, cypress/), Java/Kotlin/Gradle (src/test/,
# src/androidTest/, src/testFixtures/), and fixture trees beside them.
_TEST_DIRS = (
    "tests/", "test/", "testing/", "__tests__/", "__mocks__/", "spec/", "specs/", "testdata/", "test_data/",
    "test-data/", "fixtures/", "e2e/", "cypress/", "androidtest/", "testfixtures/", "unittests/",
    "unittest/", "integration_tests/", "integration-tests/", "test-utils/", "test_utils/",
)  # fmt: skip
_CI_DIRS = (
    ".github/",
    ".circleci/",
    ".buildkite/",
    ".ci/",
    "ci/",
    ".gitlab/",
    ".woodpecker/",
    ".azure-pipelines/",
)
# The same as "/dir/" needles and prefixes, built once: most file names of a new PR are new to the cache.
_IN_GENERATED_DIR = re.compile("|".join(re.escape("/" + d) for d in _GENERATED_DIRS))
_IN_TEST_DIR = re.compile("|".join(re.escape("/" + d) for d in _TEST_DIRS))
_CI_PREFIXES = tuple("/" + d for d in _CI_DIRS)
_DOC_PREFIXES = tuple("/" + d for d in _DOC_DIRS)
# Test files by name (lowercased): Python test_x.py / x_test.py / conftest.py, Go x_test.go, JS/TS
# x.test.ts / x.spec.tsx, Rust tests.rs / x_tests.rs / test.rs, C/C++ x_test.cc / x_unittest.cpp /
# test_x.c, Java/Kotlin XTest.java / XTests.kt / XIT.java (matched on the original case: see below).
_TEST_NAME = re.compile(
    r"(?:^test_.*|.*_tests?|.*_unittests?|.*_spec|^tests?)\.[a-z0-9]+$|.*\.(?:spec|test|e2e-spec)\.[a-z0-9]+$"
)
_JVM_TEST_NAME = re.compile(r"[A-Za-z0-9]+(?:Tests?|IT|Spec|TestCase)\.(?:java|kt|kts|scala|groovy)$")
# Snapshot and golden files: recorded expected output (insta's .snap, Jest's __snapshots__/, Go's
# .golden). They are test evidence, never a key file to read.
_SNAPSHOT_EXT = frozenset("snap golden".split())
_SNAPSHOT_DIRS = re.compile(r"/(?:__snapshots__|__goldens__|goldens?)/")
_GENERATED_NAME = re.compile(
    r".*(?:\.min\.(?:js|css)|_pb2(?:_grpc)?\.pyi?|\.pb\.(?:go|cc|h)|_grpc\.pb\.go|\.pb\.gw\.go|\.gen\.go|"
    r"_generated\.\w+|\.generated\.\w+|\.g\.dart|\.designer\.cs|\.lock)$|^zz_generated.*\.go$"
)


@lru_cache(maxsize=65536)
def is_snapshot(filename: str) -> bool:
    """A recorded expected output (`*.snap`, `*.snap.new`, `__snapshots__/`, `*.golden`)."""
    path = "/" + (filename or "").replace("\\", "/").lower()
    name = path.rsplit("/", 1)[-1]
    parts = name.split(".")
    return (
        len(parts) > 1 and (parts[-1] in _SNAPSHOT_EXT or (parts[-1] == "new" and parts[-2] == "snap"))
    ) or _SNAPSHOT_DIRS.search(path) is not None


def is_generated_copy(filename: str) -> bool:
    """A file named as generated from others that is still read (verl's `_generated_ppo_trainer.yaml`,
    the composed config a reviewer compares): it follows its sources, which say what was meant."""
    return "generated" in filename.rsplit("/", 1)[-1].lower()


@lru_cache(maxsize=65536)
def file_role(filename: str) -> str:
    """code | test | docs | ci | build | config | generated | binary | notebook | data, by path alone.

    A repository's conventions can override this per glob (`[[roles]]`, see conventions.py)."""
    raw = (filename or "").replace("\\", "/")
    path = raw.lower()
    name = path.rsplit("/", 1)[-1]
    ext = name.rsplit(".", 1)[-1] if "." in name else ""
    slashed = "/" + path
    if ext in _BINARY_EXT:
        return "binary"
    if is_snapshot(filename):
        return "test"
    if name in _LOCK_NAMES or _GENERATED_NAME.match(name) or _IN_GENERATED_DIR.search(slashed):
        return "generated"
    if slashed.startswith(_CI_PREFIXES) or name in _CI_NAMES:
        # .github/ also holds CODEOWNERS and templates: still the CI/maintenance surface
        return "ci"
    if ext == "ipynb":
        return "notebook"
    if ext in ("txt", "in") and "/requirements/" in slashed:  # requirements/test.txt: pins, not a test
        return "build"
    if (
        _IN_TEST_DIR.search(slashed)
        or name == "conftest.py"
        or (
            ext in _DOC_EXT and "/mdtest/" in slashed
        )  # Markdown test suites (mdtest): code blocks + assertions
        or _TEST_NAME.match(name)
        or _JVM_TEST_NAME.match(raw.rsplit("/", 1)[-1])
    ):
        return "test"
    if (
        ext in _DOC_EXT
        or slashed.startswith(_DOC_PREFIXES)
        or (name.startswith(_DOC_NAMES) and ext in ("", "txt", "in"))  # LICENSE-MIT, AUTHORS.txt
    ):
        return "docs"
    if _is_build_file(name, ext, slashed):
        return "build"
    if ext in _CONFIG_EXT or name.startswith(".env"):
        return "config"
    if ext in _CODE_EXT:
        return "code"
    if ext in _DATA_EXT:
        return "data"
    return "code" if not ext else ("code" if language_of(filename) else "data")


def _is_build_file(name: str, ext: str, slashed: str) -> bool:
    if name in _BUILD_NAMES or ext in _BUILD_EXT:
        return True
    stem = name.rsplit(".", 1)[0] if ext else name
    # pip's requirements files come in families (requirements-dev.txt, requirements/test.in); a
    # Dockerfile in variants (Dockerfile.cuda); a CMake project in fragments
    if ext in ("txt", "in") and (stem.startswith("requirements") or "/requirements/" in slashed):
        return True
    if name.startswith(("dockerfile.", "containerfile.")) or "/docker/" in slashed:
        return True
    return slashed.startswith("/.cargo/") and ext == "toml"


_LEXER_CACHE: dict[str, str | None] = {}


@dataclass(frozen=True)
class _LexerIndex:
    """pygments' built-in lexer table, indexed by how each file-name pattern can match.

    Why not `get_lexer_for_filename`: it also loads plugin lexers through entry points, which imports
    IPython (and jedi, which raises the recursion limit) and costs ~0.4 s on first use. The built-in
    table with the same rating rule (explicit names first, then the lexer's priority) gives the same
    answer for source files. Why the index: a file name never seen before (every extension-less script
    of a new PR) was matched against all ~1,500 patterns with fnmatch, about 1 ms each time.
    """

    rows: list[tuple[str, str, str]]  # (pattern, class name, module), in the table's order
    lowered_names: frozenset[str]  # wildcard-free patterns, lowercased: names a lexer claims outright
    exact: dict[str, list[int]]  # a wildcard-free pattern -> its rows
    suffix: dict[str, list[int]]  # "*<suffix>" with a wildcard-free suffix -> its rows
    other: list[int]  # every other pattern: matched with fnmatch

    def matching_rows(self, probe: str) -> list[int]:
        """The rows whose pattern fnmatch accepts for `probe` (case-sensitive, as on POSIX)."""
        from fnmatch import fnmatchcase

        hits = list(self.exact.get(probe, ()))
        for i in range(len(probe) + 1):
            hits += self.suffix.get(probe[i:], ())
        hits += [r for r in self.other if fnmatchcase(probe, self.rows[r][0])]
        return sorted(hits)


_LEXER_INDEX: _LexerIndex | None = None


def _lexer_index() -> _LexerIndex:
    global _LEXER_INDEX
    if _LEXER_INDEX is None:
        from pygments.lexers._mapping import LEXERS

        rows = [(pat, cls, mod) for cls, (mod, _n, _a, pats, _m) in LEXERS.items() for pat in pats]
        exact: dict[str, list[int]] = {}
        suffix: dict[str, list[int]] = {}
        other: list[int] = []

        def plain(p: str) -> bool:
            return not any(ch in p for ch in "*?[")

        for i, (pat, _c, _m) in enumerate(rows):
            if plain(pat):
                exact.setdefault(pat, []).append(i)
            elif pat.startswith("*") and plain(pat[1:]):
                suffix.setdefault(pat[1:], []).append(i)
            else:
                other.append(i)
        lowered = frozenset(p.lower() for p, _c, _m in rows if plain(p))
        _LEXER_INDEX = _LexerIndex(rows, lowered, exact, suffix, other)
    return _LEXER_INDEX


@lru_cache(maxsize=65536)
def language_of(filename: str) -> str | None:
    """Pygments' lexer name for a file name, or None when it has none (cached per extension, and per
    file name: a cache's PRs touch the same files again and again)."""
    name = (filename or "").rsplit("/", 1)[-1]
    try:
        index = _lexer_index()
    except Exception:  # a pygments without the table: no language rather than no analysis
        return None
    key = (
        name.lower()
        if (name.lower() in index.lowered_names or "." not in name)
        else "*." + name.rsplit(".", 1)[-1].lower()
    )
    if key in _LEXER_CACHE:
        return _LEXER_CACHE[key]
    from importlib import import_module

    probe = name if key == name.lower() else "x" + key[1:]
    best: tuple[float, str] | None = None
    for r in index.matching_rows(probe):
        pat, cls_name, mod = index.rows[r]
        try:
            cls = getattr(import_module(mod), cls_name)
        except Exception:
            continue
        rating = (float(cls.priority) + (0.0 if "*" in pat else 0.5), cls.__name__)
        if best is None or rating > best[0:2]:
            best = (*rating, cls.name)
    lang = best[2] if best else None
    if len(_LEXER_CACHE) < 10_000:
        _LEXER_CACHE[key] = lang
    return lang


@dataclass
class Line:
    kind: str  # "+" | "-" | " "
    old_no: int | None
    new_no: int | None
    text: str


@dataclass
class Hunk:
    header: str
    section: str  # enclosing function/class text from the @@ header ("" when none)
    old_start: int
    old_len: int
    new_start: int
    new_len: int
    lines: list[Line] = field(default_factory=list)

    @property
    def added(self) -> list[Line]:
        return [ln for ln in self.lines if ln.kind == "+"]

    @property
    def removed(self) -> list[Line]:
        return [ln for ln in self.lines if ln.kind == "-"]


@dataclass(eq=False)
class FileDiff:
    filename: str
    old_filename: str | None
    status: str  # added | removed | modified | renamed | copied | changed | unchanged
    role: str
    language: str | None
    additions: int
    deletions: int
    binary: bool
    patch_missing: bool  # the file changed but no patch text came (too large, or a stats-only source)
    flags: list[str] = field(
        default_factory=list
    )  # binary, no_patch, empty, crlf, replacement_chars, large, malformed
    # a recorded expected output (`*.snap`, `__snapshots__/`, `*.golden`): role "test", test evidence,
    # never a key file
    snapshot: bool = False
    # a code file whose patch adds tests inline (Rust `#[test]` / `#[cfg(test)]` modules, Go `func
    # TestX(t *testing.T)` beside the code, Python doctest-free `def test_`, JS `it(`/`test(` blocks)
    inline_tests: bool = False
    patch: str | None = field(default=None, repr=False)
    _hunks: list[Hunk] | None = field(default=None, repr=False, compare=False)

    @property
    def hunks(self) -> list[Hunk]:
        """Parsed on first access (see the module note)."""
        if self._hunks is None:
            self._hunks, malformed = parse_hunks(self.patch)
            if malformed and "malformed" not in self.flags:
                self.flags.append("malformed")
        return self._hunks

    @property
    def changes(self) -> int:
        return self.additions + self.deletions

    def to_dict(self) -> dict[str, Any]:
        from dataclasses import asdict

        return {
            "filename": self.filename,
            "old_filename": self.old_filename,
            "status": self.status,
            "role": self.role,
            "language": self.language,
            "additions": self.additions,
            "deletions": self.deletions,
            "binary": self.binary,
            "patch_missing": self.patch_missing,
            "flags": list(self.flags),
            "snapshot": self.snapshot,
            "inline_tests": self.inline_tests,
            "hunks": [asdict(h) for h in self.hunks],
        }


_NO_NEWLINE = "\n\\ No newline at end of file\n"
_NEWLINE_ADDED = re.compile(r"-(.*)\n\\ No newline at end of file\n\+\1(?:\n|$)")


def _newline_only_as_context(patch: str) -> str:
    """A last line taken out and written back the same, to end the file with a newline, is unchanged:
    it becomes context (else a file that gains lines at its end shows its old last line as code removed
    and re-added). Looked for only where the marker stands, which follows the line it is about."""
    at = patch.find(_NO_NEWLINE)
    while at >= 0:
        start = patch.rfind("\n", 0, at) + 1
        m = _NEWLINE_ADDED.match(patch, start)
        if m:  # the marker goes with the line: look on from the line
            patch = f"{patch[:start]} {m.group(1)}\n{patch[m.end() :]}"
        at = patch.find(_NO_NEWLINE, start if m else at + 1)
    return patch


# A line that no unified-diff hunk body may start with: anything but ' ', '+', '-', '\', '@' or empty.
# Anchored on a literal newline (not ^ with re.M) so the engine jumps from newline to newline at C speed.
_ODD_LINE = re.compile(r"\n[^ +\-\\@\n]")


def parse_file(file: dict[str, Any], role_of: Callable[[str], str] | None = None) -> FileDiff:
    """One REST-shaped file dict (filename, status, additions, deletions, patch, ...) -> FileDiff.

    `role_of`: a repository's role rules (`Conventions.role_of`); `file_role` when None."""
    if not isinstance(file, dict):
        file = {}
    filename = str(file.get("filename") or "")
    patch = file.get("patch")
    if patch is not None and not isinstance(patch, str):
        patch = patch.decode("utf-8", "replace") if isinstance(patch, bytes) else str(patch)
    additions, deletions = file.get("additions"), file.get("deletions")
    if type(additions) is not int or additions < 0:  # the common case, a count, skips the call
        additions = _int(additions)
    if type(deletions) is not int or deletions < 0:
        deletions = _int(deletions)
    role = (role_of or file_role)(filename)
    flags: list[str] = []
    pstatus = file.get("patch_status")
    binary = bool(file.get("binary")) or role == "binary" or (patch or "").startswith("Binary files")
    if binary:
        flags.append("binary")
        patch = None
    patch_missing = False
    if not patch:
        if not binary and (additions or deletions or pstatus == "omitted"):
            patch_missing = True
            flags.append("no_patch")
        elif not binary:
            flags.append("empty")
        patch = None
    else:
        if "\r" in patch:
            flags.append("crlf")
            patch = patch.replace("\r\n", "\n")
        if "\ufffd" in patch:
            flags.append("replacement_chars")
        if _NO_NEWLINE in patch:
            patch = _newline_only_as_context(patch)
        # more lines than characters is impossible: count them only in a patch long enough to be large
        if len(patch) >= LARGE_PATCH_LINES and patch.count("\n") + 1 > LARGE_PATCH_LINES:
            flags.append("large")
        if not patch.startswith("@@") or _ODD_LINE.search(patch):  # wrong lengths show when parsed
            flags.append("malformed")
        if not additions and not deletions:  # a stats-less source: count from the text
            additions = patch.count("\n+") + patch.startswith("+")
            deletions = patch.count("\n-") + patch.startswith("-")
    language = language_of(filename) if filename else None
    return FileDiff(
        filename=filename,
        old_filename=file.get("previous_filename") or None,
        status=str(file.get("status") or "modified"),
        role=role,
        language=language,
        additions=additions,
        deletions=deletions,
        binary=binary,
        patch_missing=patch_missing,
        flags=flags,
        snapshot=role == "test" and is_snapshot(filename),
        inline_tests=role == "code" and patch is not None and adds_inline_tests(patch, language),
        patch=patch,
    )


# An added line that declares a test in Rust, Go, Java/Kotlin, Python, or JS/TS. Gated on cheap literals.
_INLINE_TEST = re.compile(
    r"\n\+[ \t]*(?:#\[(?:\w+::)?test\b|#\[cfg\(test\)\]|#\[rstest\b|func Test\w*\(\w+ \*testing\.|@Test\b|"
    r"@ParameterizedTest\b|(?:async )?def test_\w*\(|(?:it|test|describe)\([\"'`])"
)


# What a test declaration holds, by language: a patch holding none of its language's words declares no
# test, and is not matched line by line (most Python patches say "test" somewhere, few `def test_`).
_INLINE_TEST_WORDS = {
    "Python": ("def test_",),
    "Rust": ("#[",),
    "Go": ("func Test",),
    "Java": ("@Test", "@ParameterizedTest"),
    "Kotlin": ("@Test", "@ParameterizedTest"),
}
_ANY_INLINE_TEST_WORDS = ("test", "Test")


def adds_inline_tests(patch: str, language: str | None = None) -> bool:
    """Whether a patch adds a test declared inside a code file (see `FileDiff.inline_tests`)."""
    if not any(word in patch for word in _INLINE_TEST_WORDS.get(language or "", _ANY_INLINE_TEST_WORDS)):
        return False
    return _INLINE_TEST.search("\n" + patch) is not None


def parse_files(
    files: list[dict[str, Any]] | None, role_of: Callable[[str], str] | None = None
) -> list[FileDiff]:
    return [parse_file(f, role_of) for f in files or []]


def _int(v: Any) -> int:
    try:
        return max(0, int(v or 0))
    except (TypeError, ValueError):
        return 0


def parse_hunks(patch: str | None) -> tuple[list[Hunk], bool]:
    """-> (hunks, malformed). unidiff first; when it refuses, a tolerant scanner keeps what it can."""
    if not patch:
        return [], False
    text = patch if patch.endswith("\n") else patch + "\n"
    try:
        ps = unidiff.PatchSet("--- a/x\n+++ b/x\n" + text)
        hunks = []
        for pf in ps:
            for h in pf:
                lines = [
                    Line(ln.line_type, ln.source_line_no, ln.target_line_no, ln.value.rstrip("\n"))
                    for ln in h
                    if ln.line_type in ("+", "-", " ")
                ]
                header = f"@@ -{h.source_start},{h.source_length} +{h.target_start},{h.target_length} @@"
                hunks.append(
                    Hunk(
                        header=header + (" " + h.section_header if h.section_header else ""),
                        section=(h.section_header or "").strip(),
                        old_start=h.source_start,
                        old_len=h.source_length,
                        new_start=h.target_start,
                        new_len=h.target_length,
                        lines=lines,
                    )
                )
        if hunks or not text.strip():
            return hunks, False
    except Exception:  # UnidiffParseError, and whatever a hostile patch triggers
        pass
    return _scan_hunks(text), True


def _scan_hunks(text: str) -> list[Hunk]:
    """Tolerant line scanner: wrong counts, stray lines and missing headers are kept, never fatal."""
    hunks: list[Hunk] = []
    cur: Hunk | None = None
    old_no = new_no = 1
    for raw in text.split("\n")[:-1]:
        m = _HUNK_HEADER.match(raw) if raw.startswith("@@") else None
        if m:
            old_no, new_no = int(m.group(1)), int(m.group(3))
            cur = Hunk(
                raw,
                m.group(5).strip(),
                old_no,
                int(m.group(2) or 1),
                new_no,
                int(m.group(4) or 1),
            )
            hunks.append(cur)
            continue
        if cur is None:
            cur = Hunk("", "", 1, 0, 1, 0)
            hunks.append(cur)
        kind = raw[:1]
        if kind == "\\":
            continue
        if kind == "+":
            cur.lines.append(Line("+", None, new_no, raw[1:]))
            new_no += 1
        elif kind == "-":
            cur.lines.append(Line("-", old_no, None, raw[1:]))
            old_no += 1
        else:  # context, or a stray line kept as context
            cur.lines.append(Line(" ", old_no, new_no, raw[1:] if kind == " " else raw))
            old_no += 1
            new_no += 1
    return hunks


__all__ = [
    "ROLES",
    "Line",
    "Hunk",
    "FileDiff",
    "file_role",
    "is_snapshot",
    "is_generated_copy",
    "adds_inline_tests",
    "language_of",
    "parse_file",
    "parse_files",
    "parse_hunks",
    "Concat",
    "added_lines_with",
    "hunk_sections",
    "line_bounds",
    "new_line_at",
]
