"""The diff model: roles, languages, hunks and line numbers, and bad input that must never raise."""

from __future__ import annotations

import time

import pytest
from heuristics_helpers import file, hunk
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.analysis.diff import (
    Concat,
    added_lines_with,
    file_role,
    hunk_sections,
    language_of,
    new_line_at,
    parse_file,
    parse_files,
    parse_hunks,
)


@pytest.mark.parametrize(
    "name, role",
    [
        ("verl/workers/rollout/vllm_rollout.py", "code"),
        ("tests/utils/test_bucketed_weight_transfer.py", "test"),
        ("pkg/foo_test.go", "test"),
        ("web/app.spec.ts", "test"),
        ("conftest.py", "test"),
        ("docs/ascend/checkpoint_engine.md", "docs"),
        ("README.md", "docs"),
        ("docs/conf.py", "docs"),
        (".github/workflows/e2e_ascend.yml", "ci"),
        (".pre-commit-config.yaml", "ci"),
        ("requirements-npu.txt", "build"),
        ("pyproject.toml", "build"),
        ("docker/Dockerfile.vllm", "build"),
        ("setup.py", "build"),
        ("verl/trainer/config/ppo_trainer.yaml", "config"),
        ("uv.lock", "generated"),
        ("third_party/vllm/config.py", "generated"),
        ("proto/api_pb2.py", "generated"),
        ("docs/_static/arch.png", "binary"),
        ("model.safetensors", "binary"),
        ("examples/tutorial.ipynb", "notebook"),
        ("data/gsm8k.csv", "data"),
        ("scripts/run.sh", "code"),
        ("", "code"),
    ],
)
def test_file_role(name, role):
    assert file_role(name) == role


def test_language_lookup_and_cache():
    assert language_of("a/b/x.py") == "Python"
    assert language_of("y.py") == "Python"  # from the per-extension cache
    assert language_of("run.sh") in ("Bash", "Shell", "Bash Session")
    assert language_of("notes.weirdext123") is None
    assert language_of("") is None
    # exact names are not mistaken for their extension, in either order of first use
    assert language_of("CMakeLists.txt") == "CMake" and language_of("notes.txt") == "Text only"
    assert language_of("docker/Dockerfile") == "Docker" and language_of("Makefile") == "Makefile"


def test_language_lookup_imports_no_plugins():
    import sys

    limit = sys.getrecursionlimit()
    for name in ("a.py", "b.ipy", "c.rs", "d.unknownext"):
        language_of(name)
    assert sys.getrecursionlimit() == limit  # IPython's pygments plugin (via jedi) would raise it


def test_parse_file_hunks_and_line_numbers():
    f = file(
        "pkg/mod.py",
        hunk(
            10,
            ["     a = 1", "-    b = 2", "+    b = 3", "+    c = 4", "     return a"],
            section="def run(self):",
        ),
        hunk(40, ["     x", "+    y"], section="class Engine:", old_start=39),
    )
    fd = parse_file(f)
    assert (fd.role, fd.language, fd.additions, fd.deletions, fd.binary, fd.patch_missing) == (
        "code",
        "Python",
        3,
        1,
        False,
        False,
    )
    assert fd.flags == []
    assert len(fd.hunks) == 2
    h = fd.hunks[0]
    assert h.section == "def run(self):"
    assert (h.old_start, h.old_len, h.new_start, h.new_len) == (10, 3, 10, 4)
    assert [(ln.kind, ln.old_no, ln.new_no, ln.text) for ln in h.lines] == [
        (" ", 10, 10, "    a = 1"),
        ("-", 11, None, "    b = 2"),
        ("+", None, 11, "    b = 3"),
        ("+", None, 12, "    c = 4"),
        (" ", 12, 13, "    return a"),
    ]
    assert [ln.new_no for ln in fd.hunks[1].added] == [41]
    assert fd.hunks[1].section == "class Engine:"
    d = fd.to_dict()
    assert d["hunks"][0]["lines"][2]["new_no"] == 11


def test_a_last_line_written_back_only_to_end_the_file_is_unchanged():
    patch = (
        "@@ -70,3 +70,6 @@ tool_config:\n"
        "     stack_depth: 32\n"
        " \n"
        "-    name: torch_memory\n"
        "\\ No newline at end of file\n"
        "+    name: torch_memory\n"
        "+\n"
        "+  precision_debugger:\n"
        "+    name: precision_debugger"
    )
    fd = parse_file({"filename": "pkg/config/profiler.yaml", "patch": patch, "additions": 4, "deletions": 1})
    h = fd.hunks[0]
    assert [(ln.kind, ln.old_no, ln.new_no) for ln in h.lines[:3]] == [
        (" ", 70, 70),
        (" ", 71, 71),
        (" ", 72, 72),
    ]
    assert [ln.text for ln in h.added] == ["", "  precision_debugger:", "    name: precision_debugger"]
    # a last line that did change keeps its removal and its addition
    changed = patch.replace("+    name: torch_memory", "+    name: torch_mem")
    g = parse_file({"filename": "pkg/config/profiler.yaml", "patch": changed, "additions": 4, "deletions": 1})
    assert [ln.text for ln in g.hunks[0].removed] == ["    name: torch_memory"]


def test_none_and_empty_patch_are_represented():
    none = parse_file({"filename": "a.py", "additions": 3, "deletions": 1, "patch": None})
    assert none.patch_missing and "no_patch" in none.flags and none.hunks == []
    empty = parse_file({"filename": "a.py", "additions": 0, "deletions": 0, "patch": ""})
    assert not empty.patch_missing and "empty" in empty.flags and empty.hunks == []
    omitted = parse_file({"filename": "big.py", "patch_status": "omitted"})
    assert omitted.patch_missing


def test_binary_files():
    by_name = parse_file({"filename": "docs/img.png", "additions": 0, "deletions": 0})
    assert by_name.binary and "binary" in by_name.flags and by_name.role == "binary"
    by_flag = parse_file({"filename": "blob.dat", "binary": True, "additions": 5})
    assert by_flag.binary and not by_flag.patch_missing
    by_text = parse_file({"filename": "x.bin2", "patch": "Binary files a/x and b/x differ"})
    assert by_text.binary and by_text.hunks == []


def test_crlf_and_replacement_chars():
    patch = "@@ -1,2 +1,2 @@\r\n a\r\n-b\r\n+c\ufffd\r\n"
    fd = parse_file({"filename": "w.py", "patch": patch})
    assert "crlf" in fd.flags and "replacement_chars" in fd.flags
    assert [(ln.kind, ln.text) for ln in fd.hunks[0].lines] == [(" ", "a"), ("-", "b"), ("+", "c\ufffd")]
    assert fd.additions == 1 and fd.deletions == 1  # counted from the text when stats are absent


def test_malformed_hunk_falls_back_and_is_flagged():
    # header promises 5 new lines, body has 2; and a stray line that no diff line may start with
    bad = "@@ -1,5 +1,5 @@ def f():\n a\n+b\nstray text\n"
    fd = parse_file({"filename": "m.py", "patch": bad, "additions": 1})
    assert "malformed" in fd.flags
    hunks = fd.hunks
    assert hunks and hunks[0].section == "def f():"
    assert [ln.text for ln in hunks[0].added] == ["b"]
    assert hunks[0].added[0].new_no == 2
    # wrong counts only (no stray line): unidiff refuses, the scanner keeps the lines
    short = "@@ -1,9 +1,9 @@\n a\n+b\n"
    hs, malformed = parse_hunks(short)
    assert malformed and [ln.kind for ln in hs[0].lines] == [" ", "+"]
    # no header at all
    hs, malformed = parse_hunks("+just an added line\n-and a removed one")
    assert malformed and len(hs[0].lines) == 2


def test_garbage_inputs_never_raise():
    for f in (
        None,
        {},
        {"filename": None},
        {"filename": "x.py", "patch": b"@@ -1 +1 @@\n-a\n+b\xff"},
        {"filename": "x.py", "patch": 12345},
        {"filename": "x.py", "additions": "many"},
        {"filename": "x.py", "patch": "@@ @@\n\n\n"},
        {"filename": "x.py", "patch": "\x00\x01"},
    ):
        fd = parse_file(f)
        fd.hunks  # noqa: B018 - parsing must not raise either
        fd.to_dict()
    assert parse_files(None) == []


def test_large_file_is_flagged_and_parsed_lazily():
    lines = [f"+line {i}" for i in range(50_000)]
    fd = parse_file(file("gen/big.py", hunk(1, lines)))
    assert "large" in fd.flags
    assert fd._hunks is None  # nothing parsed yet
    t = time.perf_counter()
    hunks = fd.hunks
    assert len(hunks[0].lines) == 50_000 and hunks[0].lines[-1].new_no == 50_000
    assert time.perf_counter() - t < 10


def test_three_thousand_files():
    files = [file(f"pkg/m{i}.py", hunk(1, ["+x = 1"])) for i in range(3000)]
    t = time.perf_counter()
    fds = parse_files(files)
    assert len(fds) == 3000 and all(fd.additions == 1 for fd in fds)
    assert time.perf_counter() - t < 5


def test_added_lines_with_checks_sign_and_word():
    p = hunk(1, [" lock = 1", "+with self._lock:", "-    lock.release()", "+block = 2", "+lock(x)"])
    got = [line for _pos, line in added_lines_with(p, "lock")]
    assert got == ["lock(x)"]  # "_lock" and "block" are not the word; context and removed lines never count
    got = [line for _pos, line in added_lines_with(p, "lock", word=False)]
    assert got == ["with self._lock:", "block = 2", "lock(x)"]
    assert [line for _p, line in added_lines_with(p, "lock", sign="-")] == ["    lock.release()"]


def test_hunk_sections():
    p = hunk(5, [" a", "+b"], section="def _cleanup(self):") + "\n" + hunk(50, ["+c"])
    assert hunk_sections(p) == [(5, "def _cleanup(self):")]


def test_concat_locates_files_and_lines():
    a = parse_file(file("a.py", hunk(3, [" x", "+y"])))
    b = parse_file(file("b.py", hunk(20, [" p", "-q", "+TODO r"])))
    cat = Concat([a, b])
    pos = cat.text.find("TODO")
    assert cat.evidence_line(pos) == ("b.py", 21)
    assert cat.evidence_line(cat.text.find("+y")) == ("a.py", 4)


# A patch built from random hunks: new_line_at (text arithmetic) must agree with unidiff's numbering.
_line = st.tuples(st.sampled_from([" ", "+", "-"]), st.text(alphabet="abc xyz_=()", max_size=12))


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.integers(1, 500), st.lists(_line, min_size=1, max_size=12)), min_size=1, max_size=4)
)
def test_new_line_at_agrees_with_unidiff(hunks_spec):
    parts, start = [], 1
    for gap, lines in hunks_spec:
        start += gap
        parts.append(hunk(start, [k + t for k, t in lines]))
        start += len(lines)
    patch = "\n".join(parts)
    hs, malformed = parse_hunks(patch)
    assert not malformed
    pos = 0
    for h in hs:
        pos = patch.find("\n", patch.find(h.header[:12], pos)) + 1
        for ln in h.lines:
            if ln.kind != "-":
                assert new_line_at(patch, pos) == ln.new_no
            else:
                assert new_line_at(patch, pos) is None
            pos = patch.find("\n", pos) + 1 if patch.find("\n", pos) >= 0 else len(patch)


def test_lexer_index_matches_what_fnmatch_matches():
    """The indexed lookup (exact names, suffixes, then the few other patterns) must accept exactly the
    rows a plain fnmatch over the whole pygments table accepts, for names built from every pattern."""
    import re
    from fnmatch import fnmatchcase

    from workbench.analysis.diff import _lexer_index

    index = _lexer_index()
    probes = {"x.py", "Makefile", "README", "x.tar.gz", "CMakeLists.txt", "x"}
    for pat, _cls, _mod in index.rows:
        name = re.sub(r"\[([^\]]*)\]", lambda m: m.group(1)[:1], pat).replace("*", "x").replace("?", "q")
        probes |= {name, name.upper(), "x" + name}
    for probe in probes:
        brute = [i for i, (pat, _c, _m) in enumerate(index.rows) if fnmatchcase(probe, pat)]
        assert index.matching_rows(probe) == brute, probe
