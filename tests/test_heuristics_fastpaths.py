"""The shortcuts the heuristics take for speed give what the plain way gives (each one's reason is in the
commit that made it): keys in a patch's first 401 lines only, line numbers only on the evidence shown,
sentences only as far as used."""

from __future__ import annotations

from heuristics_helpers import file, hunk, record

from workbench.analysis.config_changes import scan_defaults, scan_deps
from workbench.analysis.conventions import load_conventions
from workbench.analysis.description import _sentences, read_description
from workbench.analysis.diff import parse_files
from workbench.analysis.pipeline import analyze


def _sig(a, name):
    return next(s for s in a.signals if s.name == name)


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
