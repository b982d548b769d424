"""The Conversation tab: description with the template folded, the discussion in time order, hostile text
inert, and lazy rendering (hidden tab: nothing rendered; open: one page of entries per step)."""

from __future__ import annotations

from pathlib import Path

import pytest
from ui_helpers import HOSTILE_MARKDOWN, REPO, XSS, live_markup, make_cache, pr, untrusted_pr

from workbench.analysis.conventions import load_conventions
from workbench.store import Store
from workbench.ui import conversation as C
from workbench.ui.app import SIDE_TABS, ReviewApp
from workbench.ui.markdown import render

CONV_TAB = SIDE_TABS.index("Conversation")

TEMPLATE_BODY = """### What does this PR do?

Fixes the ACK race: the sender freed the bucket before the ACK arrived.

<!-- Describe your change here. -->

### Checklist Before Starting

- [x] Search for similar PRs.
- [ ] Format the PR title as `[{modules}] {type}: {description}`

### Test

```bash
pytest tests/test_ack.py
```

| before | after |
| --- | --- |
| 3.1 s | 1.2 s |
"""


def test_markdown_is_rendered_and_nothing_in_it_runs_or_loads():
    out = render(HOSTILE_MARKDOWN + "\n\n**bold** `code` ~~gone~~\n\n| a | b |\n|---|---|\n| 1 | 2 |")
    assert not live_markup(out), live_markup(out)
    assert "<strong>bold</strong>" in out and "<code>code</code>" in out and "<s>gone</s>" in out
    assert "<table>" in out and "<td>1</td>" in out  # GitHub tables
    assert (
        "&lt;script&gt;" in out and "&lt;iframe" in out and "&lt;details open&gt;" in out
    )  # raw HTML as text
    assert 'href="https://example.org/ok" target="_blank" rel="noopener noreferrer"' in out
    assert "<img" not in out and "[image: pixel]" in out  # images are links: no fetch from a tracker
    assert 'href="javascript' not in out.lower() and 'href="data:' not in out


def test_description_folds_the_template_where_it_was_and_keeps_the_authors_text():
    conv = load_conventions("verl-project/verl")
    segs = C.split_description(TEMPLATE_BODY, conv)
    shown = "\n".join(s.text for s in segs if not s.template)
    folded = "\n".join(s.text for s in segs if s.template)
    assert "Fixes the ACK race" in shown and "pytest tests/test_ack.py" in shown and "| 3.1 s |" in shown
    assert "Search for similar PRs" in folded and "Describe your change here" in folded  # folded, not deleted
    assert "### Checklist Before Starting" in folded and "### Checklist" not in shown
    # in order: the checklist's fold sits between the description and the test section
    kinds = [s.template for s in segs]
    assert kinds == [False, True, False], [(s.template, s.text[:30]) for s in segs]
    # every line of the description is somewhere: nothing is lost
    kept = "\n".join(s.text for s in segs)
    assert all(line.strip() in kept for line in TEMPLATE_BODY.splitlines())
    html = C.description_html(TEMPLATE_BODY, conv)
    assert html.count('<details class="wb-template">') == 1 and "<table>" in html and not live_markup(html)


def test_without_conventions_only_html_comments_fold():
    segs = C.split_description(TEMPLATE_BODY, None)
    assert [s.text for s in segs if s.template] == ["<!-- Describe your change here. -->"]
    assert C.description_html("", None) == '<div class="wb-dim">No description.</div>'


def _rc(id_, at, *, reply=None, line=5, resolved=None, **kw):
    d = {"id": id_, "user": {"login": f"r{id_}"}, "body": f"note {id_}", "path": "a.py", "line": line,
         "diff_hunk": "@@ -1,3 +1,3 @@\n ctx\n-old\n+new", "created_at": at, "pull_request_review_id": 50}  # fmt: skip
    if reply:
        d["in_reply_to_id"] = reply
    if resolved is not None:
        d["thread_resolved"] = resolved
    return {**d, **kw}


def discussed_pr():
    return pr(
        40,
        "[trainer] fix: discussed",
        [],
        body="Root cause: X.",
        comments=[
            {"id": 1, "user": {"login": "a"}, "body": "first", "created_at": "2026-01-02T00:00:00Z"},
            {"id": 2, "user": None, "body": "late", "created_at": "2026-01-09T00:00:00Z"},
        ],
        reviews=[
            {
                "id": 50,
                "user": {"login": "rev"},
                "body": "",
                "state": "CHANGES_REQUESTED",
                "submitted_at": "2026-01-04T00:00:00Z",
            },
            {
                "id": 51,
                "user": {"login": "rev"},
                "body": "LGTM",
                "state": "APPROVED",
                "submitted_at": "2026-01-08T00:00:00Z",
            },
        ],  # fmt: skip
        review_comments=[
            _rc(10, "2026-01-03T00:00:00Z", resolved=True),
            _rc(11, "2026-01-05T00:00:00Z", reply=10),
            _rc(12, "2026-01-06T00:00:00Z", line=None, position=None, original_line=7, resolved=False),
        ],
    )


def test_timeline_is_in_time_order_with_review_states_and_threads():
    entries = C.timeline(discussed_pr())
    order = [(type(x).__name__, x.at[:10]) for x in entries]
    assert order == [
        ("Comment", "2026-01-02"), ("Thread", "2026-01-03"), ("Review", "2026-01-04"),
        ("Thread", "2026-01-06"), ("Review", "2026-01-08"), ("Comment", "2026-01-09"),
    ]  # fmt: skip
    first, outdated = entries[1], entries[3]
    assert [p.body for p in first.posts] == ["note 10", "note 11"]  # the reply joined its thread
    assert first.resolved is True and not first.outdated and first.line == 5
    assert outdated.outdated and outdated.resolved is False and outdated.line == 7  # original line
    assert entries[2].state == "CHANGES_REQUESTED" and entries[2].inline == 3
    c = C.counts(entries)
    assert (c.comments, c.threads, c.resolved, c.outdated) == (2, 2, 1, 1)
    assert c.reviews == {"CHANGES_REQUESTED": 1, "APPROVED": 1}
    html = "".join(C.entry_html(x) for x in entries)
    assert "requested changes" in html and "approved" in html and "resolved" in html and "outdated" in html
    assert "(deleted user)" in html and '<div class="wb-del">-old</div>' in html


def test_long_hunks_show_their_tail():
    hunk = "@@ -1,20 +1,20 @@\n" + "\n".join(f" line {i}" for i in range(20))
    out = C.hunk_html(hunk, tail=4)
    assert "… 16 earlier lines" in out and "line 19" in out and "line 15" not in out


def test_hostile_conversation_is_inert():
    rec = untrusted_pr()
    entries = C.timeline(rec)
    assert {type(x).__name__ for x in entries} == {"Comment", "Review", "Thread"}
    html = C.description_html(rec.body, load_conventions(REPO)) + "".join(C.entry_html(x) for x in entries)
    assert not live_markup(html), live_markup(html)
    assert "&lt;script&gt;window.__xss=12" in html and "&lt;b&gt;eve&lt;/b&gt;" in html
    assert XSS not in html and 'href="javascript' not in html


@pytest.fixture
def app(tmp_path: Path):
    many = [
        {"id": 100_000 + i, "user": {"login": f"u{i % 7}"}, "body": f"comment **{i}**",
         "created_at": f"2026-01-{1 + i // 100:02d}T{(i // 4) % 24:02d}:{i % 60:02d}:00Z"}
        for i in range(500)
    ]  # fmt: skip
    make_cache(
        tmp_path / "c", extra=[discussed_pr(), pr(50, "[misc] chore: busy", [], comments=many)]
    ).close()
    return ReviewApp(Store(tmp_path / "c"), repo=REPO, exports=tmp_path / "e", autosave_delay=30, number=50)


def test_conversation_renders_only_while_its_tab_is_open_and_lazily(app):
    assert app.conversation.shown == 0 and "comment" not in app.w_conv.value  # hidden: nothing rendered
    app.w_side.selected_index = CONV_TAB
    assert app.conversation.shown == 30 and app.w_conv.value.count('class="wb-conv-item') == 30
    assert "500 comments" in app.w_conv.value and app.b_more.description == "Show 30 more (470 not shown)"
    app.b_more.click()
    assert app.conversation.shown == 60 and app.w_conv.value.count('class="wb-conv-item') == 60
    app.go(40)  # open tab: the next PR renders at once, from its first page
    assert app.conversation.shown == 6 and app.b_more.layout.display == "none"
    assert "Root cause: X." in app.w_conv.value and "requested changes" in app.w_conv.value
    app.w_side.selected_index = 0
    app.go(50)  # hidden again: a step renders nothing, and the old PR's discussion is gone
    assert "Root cause" not in app.w_conv.value and app.conversation.shown == 6
    app.w_side.selected_index = CONV_TAB
    assert app.conversation.shown == 30 and "comment <strong>0</strong>" in app.w_conv.value
