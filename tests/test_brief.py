"""Brief Markdown: the fixed verdict vocabulary, render/parse round trips (hypothesis), the digest layout."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workbench.brief import (
    DRAFT_MARKERS,
    NOT_GENERATED,
    SECTION_LABELS,
    Brief,
    DigestEntry,
    neutralize_markdown,
    parse_brief,
    parse_verdict,
    render_brief,
    render_digest,
    verdict_sentence,
)

REFERENCE = Path(__file__).resolve().parents[2] / "shared" / "reference" / "example-digest-zh.txt"


def test_reference_verdicts_are_in_the_vocabulary():
    assert parse_verdict("值得精读。") == ("deep", None, None)
    assert parse_verdict("无需精读代码，建议用 3-5 分钟浏览。") == ("skim", 4, None)
    assert parse_verdict("建议 CI 维护者精读。") == ("deep", None, "CI 维护者")
    assert parse_verdict("Worth a close read.") == ("deep", None, None)
    assert parse_verdict("No need to read the code closely; skim for 3–5 minutes.") == ("skim", 4, None)
    assert parse_verdict("No need to read the code closely; skim for 3-5 minutes.") == ("skim", 4, None)
    assert parse_verdict("Worth a close read for CI maintainers.") == ("deep", None, "CI maintainers")
    # a brief written in the earlier wording reads back the same
    assert parse_verdict("CI maintainers should read this closely.") == ("deep", None, "CI maintainers")
    assert parse_verdict("Skip, except for docs maintainers.") == ("skip", None, "docs maintainers")
    assert parse_verdict("Skip unless you are a docs writer.") == ("skip", None, "a docs writer")
    assert parse_verdict("This is great.") is None


def test_verdict_sentences_match_the_reference_wording():
    assert verdict_sentence("deep", "zh") == "值得精读。"
    assert verdict_sentence("skim", "zh", minutes=4) == "无需精读代码，建议用 3-5 分钟浏览。"
    assert verdict_sentence("deep", "zh", audience="CI 维护者") == "建议 CI 维护者精读。"
    assert (
        verdict_sentence("skim", "en", minutes=4) == "No need to read the code closely; skim for 3–5 minutes."
    )
    assert (
        verdict_sentence("deep", "en", audience="CI maintainers") == "Worth a close read for CI maintainers."
    )


def test_the_reference_digest_uses_those_sentences():
    if not REFERENCE.exists():
        pytest.skip("../shared/reference is absent: the reference digest lives beside the checkout")
    ref = REFERENCE.read_text(encoding="utf-8")
    for phrase in ("值得精读。", "无需精读代码，建议用 3-5 分钟浏览", "建议 CI 维护者精读"):
        assert phrase in ref


def _sample(lang="zh", **over) -> Brief:
    d = dict(
        repo="o/r",
        number=7,
        lang=lang,
        headline="移除权重同步 full GC 并修复 IPC ACK 竞态",
        verdict="deep",
        summary="它演示了如何用内存快照把「性能优化」还原成「跨进程竞态修复」。",
        focus=["最后一帧 ACK 推迟到 `_cleanup` 之后", "`_ack_pending` 守卫", "`del weights, tensor` 前置"],
        open_items=["接收方 `_cleanup` 异常时发送方永久阻塞（对齐 #7366）"],
        next_steps=["若团队维护 #7780 的 GC 开关，考虑废弃"],
        draft=True,
        source="llm",
    )
    d.update(over)
    return Brief(**d)


def test_round_trip_keeps_every_field():
    for b in (
        _sample(),
        _sample(
            "en",
            headline="Drop full GC",
            verdict="skim",
            minutes=9,
            audience="CI maintainers",
            focus=["one\ncontinued"],
            extra="A reviewer's note.\n\nSecond paragraph.",
            source="offline",
        ),
        _sample(draft=False, source="human", verdict="skip", audience=None, open_items=[], next_steps=[]),
    ):
        text = render_brief(b)
        assert parse_brief(text, repo=b.repo, number=b.number, lang=b.lang) == b


def test_rendered_layout_reads_like_the_reference():
    text = render_brief(_sample())
    assert text.startswith("### 移除权重同步 full GC 并修复 IPC ACK 竞态\n\n**值得精读。** 它演示了")
    assert "**重点关注**\n1. 最后一帧 ACK" in text and "**未闭环**\n- " in text and "**后续建议**\n- " in text
    assert text.rstrip().endswith(DRAFT_MARKERS["zh"]["llm"])


def test_hand_edited_text_keeps_reviewer_additions():
    text = render_brief(_sample())
    edited = (
        "前言：周会上讨论过。\n\n"
        + text.replace(DRAFT_MARKERS["zh"]["llm"], "")
        + "\n## 我的笔记\n读的时候对照 #7366。\n"
    )
    b = parse_brief(edited, repo="o/r", number=7, lang="zh")
    assert b.source == "human" and b.draft is False  # the marker was deleted: a person's text now
    assert "前言：周会上讨论过。" in b.extra and "## 我的笔记" in b.extra and "对照 #7366" in b.extra
    assert b.focus == _sample().focus and b.verdict == "deep"
    # and it survives another round
    assert parse_brief(render_brief(b), repo="o/r", number=7, lang="zh") == b


def test_loose_hand_written_verdict_is_understood():
    b = parse_brief("### 标题\n\n**建议快速浏览 10 分钟** 一些说明", repo="o/r", number=1, lang="zh")
    assert b.verdict == "skim" and b.minutes == 9 and b.summary == "一些说明"


# ---- property tests -----------------------------------------------------------------------------
_LABEL_TEXTS = {t.lower() for lang in SECTION_LABELS.values() for t in lang.values()}
_MARKERS = {t for lang in DRAFT_MARKERS.values() for t in lang.values()}
_alphabet = st.characters(
    whitelist_categories=("L", "N", "P", "Zs", "S"),
    blacklist_characters="\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029",
)


def _line_ok(s: str) -> bool:
    t = s.strip()
    if not t or t.startswith(("#", "*", "-", "+", "_", ">")) or re.match(r"^\d+[.)]", t):
        return False
    return t.lower().strip("*:： ") not in _LABEL_TEXTS and t not in _MARKERS


_line = st.text(_alphabet, min_size=1, max_size=40).map(lambda s: " ".join(s.split())).filter(_line_ok)
_para = st.lists(_line, min_size=1, max_size=3).map("\n".join)
_item = st.lists(_line, min_size=1, max_size=2).map("\n".join)


@st.composite
def briefs(draw):
    lang = draw(st.sampled_from(["zh", "en"]))
    verdict = draw(st.sampled_from(["deep", "skim", "skip"]))
    source = draw(st.sampled_from(["offline", "llm", "human"]))
    extra_paras = draw(st.lists(_para, max_size=2))
    return Brief(
        repo="o/r",
        number=draw(st.integers(1, 99999)),
        lang=lang,
        headline=draw(_line),
        verdict=verdict,
        minutes=draw(st.integers(1, 120)) if verdict == "skim" else None,
        audience=draw(st.one_of(st.none(), _line)),
        summary=draw(st.one_of(st.just(""), _para)),
        focus=draw(st.lists(_item, max_size=4)),
        open_items=draw(st.lists(_item, max_size=3)),
        next_steps=draw(st.lists(_item, max_size=3)),
        extra="\n\n".join(extra_paras),
        draft=source != "human",
        source=source,
    )


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(briefs())
def test_property_render_then_parse_is_identity(b):
    assert parse_brief(render_brief(b), repo=b.repo, number=b.number, lang=b.lang) == b


@settings(max_examples=300, deadline=None)
@given(st.text(st.characters(blacklist_categories=("Cs",)), max_size=400))
def test_property_any_text_parses_and_then_round_trips(text):
    # whatever a reviewer typed: parsing never fails, and the parsed brief is then stable
    b = parse_brief(text, repo="o/r", number=1, lang="zh")
    again = parse_brief(render_brief(b), repo="o/r", number=1, lang="zh")
    assert again.focus == b.focus and again.open_items == b.open_items and again.next_steps == b.next_steps
    assert again.verdict == b.verdict and again.source == b.source
    # no reviewer text is dropped: every non-blank line's words appear somewhere in the brief
    rendered = render_brief(b)
    for line in text.splitlines():
        words = line.strip().lstrip("#").strip()
        if len(words) > 3 and not re.match(r"^\*\*.*\*\*$", words):
            assert words.split()[-1] in rendered


# ---- digest ------------------------------------------------------------------------------------------
def test_digest_layout():
    b = _sample()
    md = render_digest(
        "verl-project/verl",
        [
            DigestEntry(
                7801,
                "[rollout] fix: remove full gc",
                "https://github.com/verl-project/verl/pull/7801",
                "alice",
                "merged",
                120,
                30,
                4,
                b,
            ),
            DigestEntry(
                7802,
                "[ci] chore: wait for logs",
                "https://github.com/verl-project/verl/pull/7802",
                None,
                "open",
                3,
                1,
                1,
                None,
            ),
        ],
        "zh",
    )
    assert md.startswith("# verl-project/verl\n\n## 移除权重同步 full GC 并修复 IPC ACK 竞态\n\n")
    assert (
        "[#7801 \\[rollout\\] fix: remove full gc](https://github.com/verl-project/verl/pull/7801) · @alice · 已合并 · +120/−30 · 4 个文件"
        in md
    )
    assert md.rstrip().endswith(NOT_GENERATED["zh"])
    assert md.count("\n## ") == 2


def test_neutralize_markdown():
    out = neutralize_markdown("<img src=x onerror=alert(1)> & [a](javascript:alert(1)) `List<int>`")
    assert "<img" not in out and "&lt;img" in out and "&amp;" in out
    assert "javascript:" not in out and "`List<int>`" in out
    # a code span cannot swallow HTML across paragraphs
    assert "<script>" not in neutralize_markdown("a ` b\n\n<script>x</script>\n\n c ` d")
