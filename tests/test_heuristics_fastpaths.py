"""The shortcuts the heuristics take for speed give what the plain way gives (see the commit messages of
signals.py, patchscan.py and describe.py): nested names only, keys in a patch's first 401 lines only,
line numbers only on the evidence shown, sentences only as far as used."""

from __future__ import annotations

from heuristics_helpers import file, hunk, record

from workbench.analysis.conventions import load_conventions
from workbench.analysis.description import _sentences, read_description
from workbench.analysis.diff import added_python_symbols, parse_files
from workbench.analysis.patchscan import added_python_methods
from workbench.analysis.pipeline import analyze
from workbench.analysis.signals import scan_defaults, scan_deps


def _sig(a, name):
    return next(s for s in a.signals if s.name == name)


def test_nested_only_keeps_the_dotted_names_of_the_full_parse():
    lone = hunk(10, ["+def helper(x, y=1):", "+    return x + y"])
    nested = hunk(
        40,
        [
            "+class Engine:",
            "+    def _cleanup(self):",
            "+        pass",
            "+    async def run(self, n):",
            "+        pass",
        ],
    )
    deep = hunk(80, ["+def outer():", "+    def inner():", "+        return 1", "+    return inner"])
    for patch in (lone, nested, deep, "\n".join([lone, nested, deep]), ""):
        full = added_python_symbols(patch)
        assert added_python_symbols(patch, nested_only=True) == [(q, s) for q, s in full if "." in q]
    assert [q for q, _ in added_python_symbols(nested, nested_only=True)] == ["Engine._cleanup", "Engine.run"]
    assert added_python_symbols(lone, nested_only=True) == []  # a lone function: nothing nested
    a = analyze(record([file("pkg/engine.py", nested, deep)]))
    assert "Engine._cleanup" in a.key_symbols and "outer.inner" in a.key_symbols


def test_methods_are_the_nested_names_and_one_level_runs_are_not_parsed(monkeypatch):
    row = hunk(10, ["+def first(x):", "+    return x", "+", "+def second(y):", "+    return y"])
    nested = hunk(40, ["+class Engine:", "+    def _cleanup(self):", "+        pass"])
    deep = hunk(80, ["+async def outer():", "+    class Inner:", "+        pass", "+    return Inner"])
    for patch in (row, nested, deep, "\n".join([row, nested, deep]), ""):
        names = [q for q, _s in added_python_symbols(patch, nested_only=True)]
        assert added_python_methods(patch) == names
    assert added_python_methods(deep) == ["outer.Inner"]
    import ast

    parsed = []
    real_parse = ast.parse
    monkeypatch.setattr(ast, "parse", lambda src, *a, **k: parsed.append(src) or real_parse(src, *a, **k))
    assert added_python_methods(row) == [] and parsed == []  # two functions side by side: no parse
    assert added_python_methods(nested) == ["Engine._cleanup"] and len(parsed) == 1


def _yaml_patch(n_plain: int, changed: str) -> str:
    lines = [f" ctx_{i}: {i}" for i in range(n_plain)] + [f"-{changed}: 1", f"+{changed}: 2"]
    return hunk(1, lines)


def test_config_keys_are_read_in_the_first_401_lines_only():
    conv = load_conventions("example-org/minirl")
    early = parse_files([file("conf/a.yaml", _yaml_patch(100, "lr"))])
    sigs = scan_defaults(early, conv)
    assert [e.text for e in sigs[0].evidence] == ["lr: 1 -> 2"]
    assert sigs[0].evidence[0].line == 101  # after 100 context lines from line 1
    # the header is line 0; lines 1..399 are context, the removed key is line 400 (read), the added 401 (not)
    edge = parse_files([file("conf/b.yaml", _yaml_patch(399, "lr"))])
    assert [e.text for e in scan_defaults(edge, conv)[0].evidence] == ["removed lr"]
    late = parse_files([file("conf/c.yaml", _yaml_patch(400, "lr"))])
    assert scan_defaults(late, conv) == []


def test_only_the_evidence_shown_gets_line_numbers_but_all_finds_count():
    conv = load_conventions("example-org/minirl")
    reqs = hunk(1, [f"-pkg{i}==1.0" for i in range(5)] + [f"+pkg{i}==2.0" for i in range(5)])
    sig = scan_deps(parse_files([file("requirements.txt", reqs)]), "bump", conv)[0]
    assert sig.label == "dependency versions changed (5)"
    assert [(e.text, e.line) for e in sig.evidence] == [(f"pkg{i}: 1.0 -> 2.0", 1 + i) for i in range(3)]


def test_sentences_stop_once_enough_and_test_sections_keep_their_first_three():
    text = "One. Two. Three.\nFour. Five.\nSix."
    assert _sentences(text) == ["One.", "Two.", "Three.", "Four.", "Five.", "Six."]
    assert _sentences(text, 3) == ["One.", "Two.", "Three."]
    assert _sentences(text, 4)[:4] == ["One.", "Two.", "Three.", "Four."]
    conv = load_conventions("example-org/minirl")
    desc = read_description("t", "### Test\nRan A. Ran B. Ran C. Ran D.", conv)
    assert desc.test_plan[:3] == ["Ran A.", "Ran B.", "Ran C."]


def test_promises_only_from_texts_that_name_one():
    comments = [
        {"user": {"login": "alice"}, "body": "Thanks! I will add the docs in a follow-up PR."},
        {"user": {"login": "alice"}, "body": "Rebased on main. Tests are green."},
    ]
    a = analyze(record([file("a.py", hunk(1, ["+x = 1"]))], issue_comments=comments))
    assert a.discussion.promises == ["I will add the docs in a follow-up PR."]
