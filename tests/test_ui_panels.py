"""Header, heuristics, Markdown preview and text diff: untrusted text is always inert."""

from __future__ import annotations

import html

from ui_helpers import XSS, live_markup, untrusted_pr

from workbench.analysis.pipeline import analyze
from workbench.ui import panels


def test_header_escapes_everything_and_links_only_http():
    rec = untrusted_pr()
    out = panels.header_html(rec)
    assert not live_markup(out), out
    assert "&lt;script&gt;" in out and "&lt;b&gt;label&lt;/b&gt;" in out
    assert "<a " not in out  # the PR's html_url is javascript: -> shown as text, not linked
    rec.pr["html_url"] = 'https://github.com/o/r/pull/7" onmouseover="alert(1)'
    assert not live_markup(panels.header_html(rec))  # a quote cannot break out of the attribute
    rec.pr["html_url"] = "https://github.com/o/r/pull/7"
    assert 'href="https://github.com/o/r/pull/7"' in panels.header_html(rec)


def test_heuristics_panel_is_inert_for_hostile_pr():
    a = analyze(untrusted_pr())
    out = panels.heuristics_html(a)
    assert not live_markup(out), out
    assert a.verdict in out
    assert panels.heuristics_html(None, unavailable="heuristics unavailable: x").count("unavailable") == 1


def test_markdown_preview_subset_and_safety():
    md = (
        "# Title <script>alert(1)</script>\n\n**bold** and `code <b>` and [ok](https://x.org/a?b=1) "
        "and [bad](javascript:alert(2))\n\n- one\n- two\n\n1. first\n\n```\n<img src=x onerror=alert(3)>\n```\n"
        + XSS
    )
    out = panels.markdown_html(md)
    assert not live_markup(out), out
    assert "<h1>Title &lt;script&gt;" in out
    assert "<b>bold</b>" in out and "<code>code &lt;b&gt;</code>" in out
    assert '<a href="https://x.org/a?b=1" target="_blank" rel="noopener noreferrer">ok</a>' in out
    assert "[bad](javascript:alert(2))" in out and out.count("<a ") == 1  # shown as text, not linked
    assert "<ul><li>one</li><li>two</li></ul>" in out and "<ol><li>first</li></ol>" in out
    assert "<pre>&lt;img src=x onerror=alert(3)&gt;</pre>" in out


def test_text_diff_is_escaped_and_marks_changes():
    out = panels.text_diff_html("a\n<b>old</b>\n", "a\n<i>new</i>\n")
    assert "<b>old" not in out and "&lt;i&gt;new" in out
    assert 'class="wb-del"' in out and 'class="wb-add"' in out
    assert "no differences" in panels.text_diff_html("same", "same")


def test_cross_references_name_another_repository():
    from heuristics_helpers import file, hunk, record

    body = "Fixes #12; see https://github.com/old-org/minirl/pull/298"
    a = analyze(record([file("pkg/a.py", hunk(1, [" a", "+b"]))], body=body))
    out = panels.heuristics_html(a)
    assert ">old-org/minirl#298</a>" in out and "#12" in out and ">#298<" not in out


def test_the_heuristics_panel_shows_each_judged_risk_with_why_and_where():
    from heuristics_helpers import file, hunk, record

    config = file("pkg/config/runtime.yaml", hunk(3, ["-use_cache: false", "+use_cache: true"]))
    a = analyze(record([config], title="[trainer] feat: cache <b>by</b> default"))
    flip = next(r for r in a.risks if r.kind == "behaviour-change")
    out = panels.heuristics_html(a)
    assert "<summary><b>Risks</b></summary>" in out
    assert f"<b>behaviour-change</b>: {html.escape(flip.why)}" in out
    assert "<code>pkg/config/runtime.yaml:3</code> use_cache: false -&gt; true" in out
    hostile = analyze(untrusted_pr())
    assert not live_markup(panels.heuristics_html(hostile))


def test_the_header_says_when_a_pr_was_reverted_or_reverts():
    from heuristics_helpers import file, hunk, record

    known = {5: ("feat: <b>faster</b> sync", "merged"), 9: ('Revert "feat: <b>faster</b> sync"', "merged")}
    change = file("pkg/a.py", hunk(1, ["+x = 1"]))
    reverted = analyze(record([change], number=5, title=known[5][0]), known_prs=known)
    assert "<b>reverted later by #9</b> (merged)" in panels.verdict_line(reverted)
    revert = analyze(record([change], number=9, title=known[9][0]), known_prs=known)
    assert "<b>reverts #5</b> (merged)" in panels.verdict_line(revert)
    plain = analyze(record([change], number=5, title=known[5][0]))
    assert "revert" not in panels.verdict_line(plain)
    assert not live_markup(panels.verdict_line(analyze(untrusted_pr())))
