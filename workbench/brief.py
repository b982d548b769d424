"""The reading brief: its model, Markdown render/parse, and the per-repository digest.

Layout follows ../shared/reference/example-digest-zh.txt: a headline rewritten for the team, a verdict,
what the PR teaches, 2-4 focus points naming files and symbols, what it leaves open, next steps.

    render_brief(brief) -> Markdown            parse_brief(text, repo=, number=, lang=) -> Brief
    render_digest(repo, [DigestEntry], lang)   neutralize_markdown(text): no live HTML, no script links

Round trip: parse_brief(render_brief(b)) == b for every field, with two documented rules: `minutes` is
carried only for a skim (the deep/skip sentences name no time, as in the reference), and the draft marker
line carries `draft`/`source` — a text without it is a person's (`draft=False`, `source="human"`).
Reviewer text outside the known sections is kept in `extra`, never dropped.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class Brief:
    repo: str
    number: int
    lang: str  # zh | en
    headline: str  # rewritten for the team, not the raw PR title
    verdict: str  # deep | skim | skip
    minutes: int | None = None  # for skim: "3-5 minutes"
    audience: str | None = None  # "CI maintainers" / "CI 维护者"
    summary: str = ""  # one or two sentences: what the PR teaches or changes
    focus: list[str] = field(default_factory=list)  # 2-4 design decisions, naming files and symbols
    open_items: list[str] = field(default_factory=list)
    next_steps: list[str] = field(default_factory=list)
    extra: str = ""  # reviewer text outside the known sections: kept on round trip, never dropped
    draft: bool = True  # a machine draft until a person edits or marks it final
    source: str = "offline"  # offline | llm | human

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Brief:
        return cls(**{k: v for k, v in d.items() if k in cls.__dataclass_fields__})


# ---- fixed vocabulary ------------------------------------------------------------------------------
# The verdict sentence is fixed per language so that a digest reads consistently and a hand-edited
# brief parses back to the same verdict. `{audience}` and `{lo}`/`{hi}` (the skim minutes, rendered as
# a range m-1..m+1 like the reference's "3-5 分钟") are the only holes.
#
#   verdict  audience  zh                                     en
#   deep     -         值得精读。                              Worth a close read.
#   deep     X         建议 X 精读。（X 为拉丁字母开头/结尾时两侧加空格，如「建议 CI 维护者精读。」）                           Worth a close read for X.
#   skim     -         无需精读代码，建议用 3-5 分钟浏览。     No need to read the code closely; skim for 3–5 minutes.
#   skim     X         无需精读代码，建议 X 用 3-5 分钟浏览。  No need to read the code closely; X should skim for 3–5 minutes.
#   skip     -         可以跳过，除非需要了解细节。            Skip unless you need the details.
#   skip     X         可以跳过，除非你是 X。                  Skip, except for X.
VERDICT_PHRASES: dict[str, dict[tuple[str, bool], str]] = {
    "zh": {
        ("deep", False): "值得精读。",
        ("deep", True): "建议{audience}精读。",
        ("skim", False): "无需精读代码，建议用 {lo}-{hi} 分钟浏览。",
        ("skim", True): "无需精读代码，建议{audience}用 {lo}-{hi} 分钟浏览。",
        ("skip", False): "可以跳过，除非需要了解细节。",
        ("skip", True): "可以跳过，除非你是{audience}。",
    },
    "en": {
        ("deep", False): "Worth a close read.",
        ("deep", True): "Worth a close read for {audience}.",
        ("skim", False): "No need to read the code closely; skim for {lo}–{hi} minutes.",
        ("skim", True): "No need to read the code closely; {audience} should skim for {lo}–{hi} minutes.",
        ("skip", False): "Skip unless you need the details.",
        ("skip", True): "Skip, except for {audience}.",
    },
}

# Section labels, rendered as a bold line of their own; parse accepts either language's labels.
SECTION_LABELS: dict[str, dict[str, str]] = {
    "zh": {"focus": "重点关注", "open_items": "未闭环", "next_steps": "后续建议"},
    "en": {"focus": "Focus on", "open_items": "Left open", "next_steps": "Next steps"},
}

# The draft marker says who wrote the draft; deleting the line is how a reviewer signs it off.
DRAFT_MARKERS: dict[str, dict[str, str]] = {
    "zh": {"offline": "_草稿（离线生成），请审阅后发布。_", "llm": "_草稿（模型生成），请审阅后发布。_"},
    "en": {
        "offline": "_Draft (offline), review before publishing._",
        "llm": "_Draft (model), review before publishing._",
    },
}

NOT_GENERATED = {"zh": "分析结果尚未生成。", "en": "Analysis not generated yet."}

STATE_WORDS = {
    "zh": {"merged": "已合并", "open": "未合并", "closed": "已关闭"},
    "en": {"merged": "merged", "open": "open", "closed": "closed"},
}

LANGS = ("zh", "en")


def check_lang(lang: str | None) -> str:
    lang = (lang or "zh").lower()
    if lang not in LANGS:
        from .config import WorkbenchError

        raise WorkbenchError(f"unknown brief language {lang!r}: use 'zh' or 'en'")
    return lang


def verdict_sentence(
    verdict: str, lang: str, *, minutes: int | None = None, audience: str | None = None
) -> str:
    lang = check_lang(lang)
    v = verdict if verdict in ("deep", "skim", "skip") else "skim"
    m = max(1, int(minutes or 4))
    aud = (audience or "").strip()
    if lang == "zh" and aud:  # a space only where Chinese meets Latin text, as in 「建议 CI 维护者精读」
        aud = (" " if aud[0].isascii() else "") + aud + (" " if aud[-1].isascii() else "")
    return VERDICT_PHRASES[lang][(v, bool(aud))].format(audience=aud, lo=max(1, m - 1), hi=m + 1)


# Sentences of an earlier vocabulary, still read back from briefs written then. "X should read this
# closely" opened with an area's lowercase name ("experimental maintainers should ..."), and "Skip
# unless you are X" read wrong with a plural audience ("unless you are build maintainers").
EARLIER_PHRASES = [
    ("deep", True, "{audience} should read this closely."),
    ("skip", True, "Skip unless you are {audience}."),
]


def _verdict_patterns() -> list[tuple[re.Pattern, str, bool]]:
    out = []
    phrases = [(v, a, phrase) for lang in LANGS for (v, a), phrase in VERDICT_PHRASES[lang].items()]
    for verdict, has_aud, phrase in phrases + EARLIER_PHRASES:
        # a reviewer may type an ASCII hyphen or an en dash in the range
        ph = phrase.replace("{lo}-{hi}", "RANGE").replace("{lo}–{hi}", "RANGE")
        rx = re.escape(ph.replace("{audience}", "AUDIENCE"))
        rx = rx.replace(r"\ AUDIENCE", "AUDIENCE").replace(r"AUDIENCE\ ", "AUDIENCE")
        rx = rx.replace("AUDIENCE", r"\s*(?P<audience>\S.*?)\s*").replace(
            "RANGE", r"(?P<lo>\d+)\s*[-–~]\s*(?P<hi>\d+)"
        )
        out.append((re.compile("^" + rx + "$"), verdict, has_aud))
    return out


_VERDICT_RX = None


def parse_verdict(sentence: str) -> tuple[str, int | None, str | None] | None:
    """(verdict, minutes, audience) for a sentence in the fixed vocabulary, else None."""
    global _VERDICT_RX
    if _VERDICT_RX is None:
        _VERDICT_RX = _verdict_patterns()
    s = sentence.strip()
    for rx, verdict, _has in _VERDICT_RX:
        m = rx.match(s)
        if m:
            gd = m.groupdict()
            minutes = int(gd["hi"]) - 1 if gd.get("hi") else None
            aud = gd.get("audience")
            return verdict, minutes, aud.strip() if aud else None
    return None


def _loose_verdict(sentence: str) -> tuple[str, int | None, str | None]:
    """A hand-written verdict outside the vocabulary: guess the verdict, keep nothing else."""
    s = sentence.lower()
    nums = [int(x) for x in re.findall(r"\d+", s)]
    if "跳过" in s or "skip" in s:
        return "skip", None, None
    if "浏览" in s or "skim" in s:
        return "skim", (max(nums) - 1 if nums else None), None
    return "deep", None, None


# ---- Markdown --------------------------------------------------------------------------------------
#
#   ### <headline>
#
#   **<verdict sentence>** <summary, may run over several lines>
#
#   **重点关注**
#   1. <focus point>
#   2. ...
#
#   **未闭环**
#   - <open item>
#
#   **后续建议**
#   - <next step>
#
#   <extra: any text the reviewer wrote outside the known sections>
#
#   _草稿（离线生成），请审阅后发布。_
#
# A list item may continue on lines indented by three spaces. Empty sections are not rendered.

_ITEM_RX = re.compile(r"^(?:\d+[.)]|[-*+])\s+(.*)$")
_LEAD_RX = re.compile(r"^\*\*(.+?)\*\*(?:\s+(.*))?$")
_LABEL_RX = re.compile(r"^\*\*(.+?)\*\*\s*[:：]?\s*$")


def _label_to_key(label: str) -> str | None:
    label = label.strip().rstrip(":：").strip()
    for lang in LANGS:
        for key, text in SECTION_LABELS[lang].items():
            if label.lower() == text.lower():
                return key
    return None


def _marker_source(line: str) -> str | None:
    for lang in LANGS:
        for source, text in DRAFT_MARKERS[lang].items():
            if line.strip() == text:
                return source
    return None


def _render_items(items: list[str], numbered: bool) -> list[str]:
    out = []
    for i, item in enumerate(items, 1):
        first, *rest = str(item).strip().split("\n")
        out.append(f"{i}. {first}" if numbered else f"- {first}")
        out.extend("   " + line for line in rest)
    return out


def render_brief(brief: Brief, *, level: int = 3) -> str:
    """The brief as Markdown, in the layout above; `parse_brief` reads it back field for field."""
    lang = check_lang(brief.lang)
    labels = SECTION_LABELS[lang]
    lines = [f"{'#' * level} {brief.headline.strip()}", ""]
    lead = f"**{verdict_sentence(brief.verdict, lang, minutes=brief.minutes, audience=brief.audience)}**"
    # one paragraph: a blank line would end it when parsed back
    summary = "\n".join(x.strip() for x in brief.summary.strip().split("\n") if x.strip())
    lines.append(f"{lead} {summary}" if summary else lead)
    for key, numbered in (("focus", True), ("open_items", False), ("next_steps", False)):
        items = [x for x in getattr(brief, key) if str(x).strip()]
        if items:
            lines += ["", f"**{labels[key]}**", *_render_items(items, numbered)]
    if brief.extra.strip():
        lines += ["", brief.extra.strip()]
    if brief.draft and brief.source in ("offline", "llm"):
        lines += ["", DRAFT_MARKERS[lang][brief.source]]
    return "\n".join(lines) + "\n"


def parse_brief(text: str, *, repo: str, number: int, lang: str) -> Brief:
    """Read a (possibly hand-edited) brief back. Text outside the known sections lands in `extra`.

    A brief without a draft marker is a person's text: `draft=False`, `source="human"`.
    """
    lang = check_lang(lang)
    lines = (text or "").replace("\r\n", "\n").split("\n")
    headline, verdict, minutes, audience = "", "skim", None, None
    summary: list[str] = []
    lists: dict[str, list[str]] = {"focus": [], "open_items": [], "next_steps": []}
    extra: list[str] = []
    source = None
    state = "start"  # start | summary | list:<key> | extra
    saw_lead = False

    for raw in lines:
        line = raw.rstrip()
        stripped = line.strip()
        if not headline and state == "start" and re.match(r"^#{1,6}\s+\S", stripped):
            headline = re.sub(r"^#{1,6}\s+", "", stripped).strip()
            continue
        if _marker_source(stripped):
            source = _marker_source(stripped)
            continue
        label = _LABEL_RX.match(stripped)
        if label and _label_to_key(label.group(1)):
            state = "list:" + _label_to_key(label.group(1))
            continue
        lead = _LEAD_RX.match(stripped)
        if not saw_lead and state == "start" and lead and (parse_verdict(lead.group(1)) or headline):
            parsed = parse_verdict(lead.group(1)) or _loose_verdict(lead.group(1))
            verdict, minutes, audience = parsed
            saw_lead = True
            if lead.group(2):
                summary.append(lead.group(2))
            state = "summary"
            continue
        if state == "summary":
            if stripped:
                summary.append(stripped)
                continue
            state = "after"  # the summary is one paragraph; a blank line ends it
            continue
        if state.startswith("list:"):
            key = state[5:]
            item = _ITEM_RX.match(stripped)
            if item and line[:1] not in (" ", "\t"):
                lists[key].append(item.group(1).strip())
                continue
            if stripped and line.startswith("   ") and lists[key]:
                lists[key][-1] += "\n" + stripped
                continue
            if not stripped:
                continue
            state = "extra"
        if state in ("start", "after") and not stripped and not extra:
            continue
        extra.append(line)

    summary_text = "\n".join(summary).strip()
    return Brief(
        repo=repo,
        number=number,
        lang=lang,
        headline=headline,
        verdict=verdict,
        minutes=minutes,
        audience=audience,
        summary=summary_text,
        focus=lists["focus"],
        open_items=lists["open_items"],
        next_steps=lists["next_steps"],
        extra="\n".join(extra).strip(),
        draft=source is not None,
        source=source or "human",
    )


# ---- digest ----------------------------------------------------------------------------------------
@dataclass
class DigestEntry:
    """One PR's section in the digest: its identity line, and its brief when there is one."""

    number: int
    title: str
    url: str
    author: str | None = None
    state: str = "open"  # open | merged | closed
    additions: int = 0
    deletions: int = 0
    changed_files: int = 0
    brief: Brief | None = None


# a code span never crosses a blank line (CommonMark): otherwise `<script>` between two paragraphs' backticks escapes escaping
_CODE_SPAN_RX = re.compile(r"(`+)((?:(?!\n[ \t]*\n).)+?)\1", re.S)
_UNSAFE_LINK_RX = re.compile(
    r"(\]\(\s*<?|^\s*\[[^\]]*\]:\s*<?)\s*(?:javascript|vbscript|data)\s*:", re.I | re.M
)


def neutralize_markdown(text: str) -> str:
    """Make untrusted Markdown safe to publish: no live HTML, no script links.

    `<`, `>` and `&` outside code spans become entities (a renderer shows them as typed, code spans
    are shown literally anyway); `javascript:`/`vbscript:`/`data:` link targets become inert anchors.
    """
    out, pos = [], 0
    for m in _CODE_SPAN_RX.finditer(text):
        out.append(_escape_html(text[pos : m.start()]))
        out.append(m.group(0))
        pos = m.end()
    out.append(_escape_html(text[pos:]))
    return _UNSAFE_LINK_RX.sub(lambda m: m.group(1) + "#unsafe-link:", "".join(out))


_SCHEME_RX = re.compile(r"\b(javascript|vbscript|data)(\s*):", re.I)


def _escape_html(s: str) -> str:
    s = s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    # a script scheme anywhere outside code spans loses its colon: no renderer turns it into a link
    return _SCHEME_RX.sub(r"\1\2&#58;", s)


def _link_text(s: str) -> str:
    s = " ".join((s or "").split())
    s = re.sub(r"([\[\]\\`*_])", r"\\\1", s)
    return _escape_html(s)


def _safe_url(url: str) -> str:
    url = (url or "").strip()
    if not re.match(r"^https?://", url, re.I):
        return "#"
    return (
        url.replace(" ", "%20")
        .replace("(", "%28")
        .replace(")", "%29")
        .replace("<", "%3C")
        .replace(">", "%3E")
    )


def pr_line(entry: DigestEntry, lang: str) -> str:
    """The one line that links the PR: number, original title, author, state and size."""
    lang = check_lang(lang)
    state = STATE_WORDS[lang].get(entry.state, entry.state)
    author = (
        f"@{_link_text(entry.author)}"
        if entry.author
        else ("（作者已注销）" if lang == "zh" else "(deleted user)")
    )
    n = entry.changed_files
    files = f"{n} 个文件" if lang == "zh" else f"{n} file{'s' if n != 1 else ''}"
    sep = " · "
    return (
        f"[#{entry.number} {_link_text(entry.title)}]({_safe_url(entry.url)}){sep}{author}{sep}{state}"
        f"{sep}+{entry.additions}/−{entry.deletions}{sep}{files}"
    )


def safe_brief(brief: Brief) -> Brief:
    """A copy with every text field neutralised for publishing (see `neutralize_markdown`)."""
    d = brief.to_dict()
    for key in ("headline", "summary", "extra", "audience"):
        if d.get(key):
            d[key] = neutralize_markdown(d[key])
    for key in ("focus", "open_items", "next_steps"):
        d[key] = [neutralize_markdown(x) for x in d[key]]
    d["headline"] = d["headline"].replace("\n", " ")
    return Brief.from_dict(d)


def render_section(entry: DigestEntry, lang: str, *, level: int = 2) -> str:
    lang = check_lang(lang)
    if entry.brief is None:
        head = f"{'#' * level} #{entry.number} {_link_text(entry.title)}"
        return f"{head}\n\n{pr_line(entry, lang)}\n\n{NOT_GENERATED[lang]}\n"
    body = render_brief(safe_brief(entry.brief), level=level)
    head, _, rest = body.partition("\n")
    return f"{head}\n\n{pr_line(entry, lang)}\n{rest}"


def render_digest(repo: str, sections: list[DigestEntry], lang: str) -> str:
    """The reference layout: `# owner/repo`, then one section per PR in the order given."""
    lang = check_lang(lang)
    parts = [f"# {_link_text(repo)}\n"]
    parts += [render_section(e, lang) for e in sections]
    return "\n".join(parts)
