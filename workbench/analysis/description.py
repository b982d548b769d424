"""What the author says: the PR description with the template's boilerplate stripped, and what it tells
a reader (root cause, test plan, numbers, what is left open, code names). Pure functions over text;
evidence is the sentence itself. The discussion and cross-references are in discussion.py.

The description is read as Markdown blocks (headings, list items, paragraphs, code), because what is
left open is told by structure as often as by words: a "**TODO:**" label over a list, a "Limitations"
section. Template text never counts: it is stripped before anything is read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .conventions import Conventions
from .model import Description, Evidence, Signal
from .words import WordFinder

_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.S)
# Git trailers and a tool's signature, which a squash commit appends to the description's last section
# (often the test plan): who wrote it, not what it does.
# Matched after a newline, which the engine skips to fast, on "\n" + the text (as _FENCE_OR_HEADING).
_TRAILER = re.compile(
    r"\n[ \t]*(?:(?:co-authored|signed-off|reviewed|tested|acked|reported|suggested|helped)-by:|"
    r"🤖 generated with\b)[^\n]*",
    re.I,
)
# The lines that open or close a code block, and heading lines: up to three blanks, one to six '#',
# then a blank and the title (group 2) or nothing. Matched after a newline, which the engine skips to
# fast, on "\n" + the text.
_FENCE_OR_HEADING = re.compile(r"\n(?:[ \t]*```|( {0,3}#{1,6})(?:[ \t]+([^\n]*?))?[ \t#]*(?=\n))")
_LIST_ITEM = re.compile(r"\s*(?:[-*+]|\d+[.)])\s+(?:\[([ xX])\]\s*)?")
_ITEM_START = re.compile(r"\n(?=\s*(?:[-*+]|\d+[.)])\s)")
_CHECKBOX = re.compile(r"\s*(?:[-*+]|\d+\.)\s*\[[ xX]\]")
_PARA_SPLIT = re.compile(r"\n[ \t]*\n")
# Where a sentence ends inside a block: after . ! ? followed by a blank, or after a CJK stop.
_SENTENCE_SPLIT = re.compile(r"(?<=[.!?])\s+|(?<=[。！？；])")
_CODE_SPAN = re.compile(r"`([^`\n]{2,80})`")
# A fenced code block; an unclosed one runs to the end, as GitHub shows it (discussion.py reads it too).
FENCED_BLOCK = re.compile(r"```.*?(?:```|\Z)", re.S)

# A number with a unit: measurements, speedups, memory (no re.I: units are spelled as people write them).
# The number part is possessive: no unit starts with a digit, comma, dot or blank, so retrying shorter
# numbers can never help, and it made long digit runs quadratic. A number glued to a letter is part of a
# name (MI300X, s390x, cupy-cuda12x, K8s, a URL's %3A...), except the seconds of a duration ("7m22s"); it
# starts after no digit, dot or "%" either: "MI300X" would read as "00X", "%E2%80%94" as "80%". (The first
# digit is matched before it is looked behind: a pattern that starts with a digit is tried only at digits.)
_NUMBER = re.compile(
    r"\d(?:(?<![A-Za-z0-9_.%]\d)|(?<=\d[hm]\d))"
    r"(?:,*+\d)*+(?:\.\d++)?+\s?+(?:%|[xX](?!\w)|×(?!\w)|ms\b|s\b|sec\b|seconds|min\b|minutes|hours?|"
    r"[MGK]i?B\b|[MG]bps|tok(?:ens?)?/s|it/s|samples/s|TFLOPS|steps?/s|倍|秒|分钟)"
)
_FROM_TO = re.compile(r"\bfrom\s+\d[\d.,]*\s*\S*\s+to\s+\d")  # on lowercased text: "from 3 to 5"


ROOT_CAUSE = (
    "root cause",
    "root-cause",
    "caused by",
    "because",
    "due to",
    "the reason",
    "the problem is",
    "the issue is",
    "the bug is",
    "happens when",
    "occurs when",
    "this leads to",
    "根因",
    "原因",
    "导致",
)
TEST_PLAN = (
    "test plan",
    "tested",
    "unit test",
    "pytest",
    "verified",
    "reproduc",
    "regression test",
    "ci pass",
    "added test",
    "new test",
    "test case",
    "e2e",
    "测试",
    "验证",
    "复现",
)

# ---- what is left open ------------------------------------------------------------------------------
# A heading or a label line ("**TODO:**", "Limitations", "Deliberately out of scope") that announces
# what the PR does not do: the list under it holds the open items, never the label itself.
_OPEN_LABEL = re.compile(
    r"(?:future |remaining |open |known |pending )?(?:todos?|to-dos?)"
    r"|(?:future|remaining|follow[- ]?up|further|planned) (?:work|plans?|improvements?|items?|tasks?|prs?)"
    r"|follow[- ]?ups?|next steps?|what'?s (?:left|next|missing)|open (?:questions?|issues?|items?)"
    r"|(?:known )?limitations?|known (?:issues?|problems?|bugs?)|caveats?|unsupported"
    r"|(?:\w+ )?out of scope|not (?:yet )?(?:supported|implemented|done|included|covered|addressed)"
    r"|not (?:in|part of|covered by|addressed (?:in|by)) this pr|left for later"
    r"|后续(?:工作|计划)?|待办(?:事项)?|待完成|限制|已知问题|遗留问题"
)
# A sentence that says something is left open, on lowercased text. "separate process" is no
# "separate PR". The alternatives start with a letter, not with \b, so the engine skips ahead to the
# letters they can start with; a word before one of them ("cannot yet") only ever reads the same.
# _OPEN_KEYS holds a piece of every alternative: a sentence without any of them is not searched.
_OPEN_PHRASE = re.compile(
    r"todos?\b"
    r"|not (?:yet|currently)\b"
    r"|(?:is|are|was|were)(?:n't| not) (?:yet )?(?:supported|handled|covered|implemented|tested)\b"
    r"|not (?:supported|covered|handled|addressed)\b"
    r"|(?:separate|follow[- ]?up|future|later|subsequent|next|another|upcoming|dedicated) "
    r"(?:prs?|pull requests?)\b"
    r"|follow[- ]?ups?\s*(?:[:(]|work\b|items?\b|tasks?\b)|(?:in|as|for) a (?:separate |future )?follow[- ]?up\b"
    r"|(?:should|will|plan to|need to|would like to)\b[^.]{0,80}\bin the future\b"
    r"|(?:left|leave|leaving|deferred?) (?:for|to|as) (?:later|a follow|future|another|a separate|the next)"
    r"|out of scope\b|known (?:issues?|limitations?|problems?|bugs?)\b|limitations?:"
    r"|will be (?:addressed|handled|fixed|added|supported|done|implemented) (?:later|separately|in a|as a)\b"
    r"|后续|暂不|未覆盖|尚未|待办|暂未"
)
_OPEN_KEYS = (
    "todo", "not yet", "not curr", "not supp", "not cov", "not hand", "n't supp", "n't cov", "n't hand",
    "n't impl", "n't test", "not impl", "not test", "separate", "follow", "future", "later", "subsequent",
    "next pr", "next pull", "another", "upcoming", "dedicated", "left ", "leav", "defer", "scope", "known ",
    "limitation", "will be ", "后续", "暂不", "未覆盖", "尚未", "待办", "暂未",
    # and the words of _OPEN_LABEL the ones above miss: a text holding none has no open-work label
    "to-do", "next step", "caveat", "unsupported", "what's", "whats", "open question", "open issue",
    "open item", "remaining", "planned", "further", "pending", "not done", "not incl", "not addr",
    "not in this", "not part of", "待完成", "限制", "已知问题", "遗留问题",
)  # fmt: skip
# Every key of every list in one automaton (a DFA in Rust): one pass over a block says which lists it
# touches, where asking each list with `in` costs a scan per key.
_KEY_LISTS = {"cause": ROOT_CAUSE, "test": TEST_PLAN, "open": _OPEN_KEYS}
_KEY_KIND = [kind for kind, keys in _KEY_LISTS.items() for _ in keys]
_FINDER = WordFinder([k for keys in _KEY_LISTS.values() for k in keys])


def _kinds(low: str) -> set[str]:
    """Which of _KEY_LISTS have a key in `low` (lowercased text)."""
    return {_KEY_KIND[i] for i, _start, _end in _FINDER.places(low)}


# After "follow-up PR" or "follow-up task": this PR's relation to an earlier one, not work left open.
_RELATION_AFTER = re.compile(r"\s*(?:to|of|for|from|on)\b")
# Words before a hit that say the thing is done, not open: "removing the old TODO", "no follow-ups".
_DONE_BEFORE = re.compile(
    r"\b(?:remov\w*|resolv\w*|address\w*|fix\w*|clean\w*|clear\w*|clos\w*|drop\w*|delet\w*|no|without)\b"
    r"[^.!?]{0,30}\Z"
)

# Bounds of what is kept per list: a reader needs a few good sentences, not every match.
_LIMIT = 8
_CLIP = 240


def strip_template(body: str, conv: Conventions) -> tuple[str, list[tuple[str, str]]]:
    """Remove HTML comments, checklists, template guidance and headings left empty.

    -> (kept text, [(heading, section text)]). Sections whose heading is a known checklist go whole;
    in the others, paragraphs that are template (checkboxes, guidance phrases, placeholder code) go.
    A checklist under a heading or label that names open work ("TODO", "Limitations") is the author's.
    """
    if not body:
        return "", []
    body = _COMMENT.sub("", body).replace("\r\n", "\n")
    if "-by:" in body or "-By:" in body or "enerated with" in body:
        body = _TRAILER.sub("", "\n" + body)[1:]
    drop = tuple(conv.drop_headings)
    memo = conv.template_memo
    kept: list[tuple[str, str]] = []
    for heading, sec in _sections(body):
        if heading and drop and heading.lower().strip(" :*_").startswith(drop):
            continue
        sec = sec.strip()
        if not sec:
            continue
        # A repository's template sections come back verbatim in most of its PRs: each is cleaned once.
        # Whether the heading names open work matters only to a checklist under it.
        key = ("[" in sec and _is_open_label(heading), sec)
        cleaned = memo.get(key)
        if cleaned is None:
            cleaned = _without_template(sec, conv, open_section=key[0])
            if len(sec) <= _MEMO_CHARS:
                if len(memo) >= _MEMO_ENTRIES:
                    memo.clear()
                memo[key] = cleaned
        if cleaned:
            kept.append((heading, cleaned))
    out = "\n\n".join((f"### {h}\n{t}" if h else t) for h, t in kept)
    return out, kept


# Bounds of Conventions.template_memo: template sections are short and a repository has few of them.
_MEMO_CHARS = 2000
_MEMO_ENTRIES = 5000


def _sections(body: str) -> list[tuple[str, str]]:
    """[(heading, text under it)], the text before the first heading under "". A '#' line inside a
    code block is code, not a heading."""
    text = "\n" + body + "\n"
    cuts: list[tuple[int, int, str]] = []  # (heading start, content start, heading text)
    in_code = False
    for m in _FENCE_OR_HEADING.finditer(text):
        if m.group(1) is None:
            in_code = not in_code
        elif not in_code:
            cuts.append((m.start(), m.end(), (m.group(2) or "").strip()))
    sections = [("", text[: cuts[0][0] if cuts else len(text)])]
    for i, (_start, content, heading) in enumerate(cuts):
        sections.append((heading, text[content : cuts[i + 1][0] if i + 1 < len(cuts) else len(text)]))
    return sections


def _without_template(sec: str, conv: Conventions, open_section: bool = False) -> str:
    """The section without its template paragraphs."""
    # What makes a paragraph template is looked for in the whole section first: a guidance phrase, a
    # checkbox, a code block or a callout absent from the section is absent from each of its paragraphs,
    # and most sections an author wrote hold none of them.
    phrases = conv.is_boilerplate(sec)
    if not phrases and "[ ]" not in sec and "[x]" not in sec and "[X]" not in sec and "```" not in sec:
        if "> [!" not in sec:
            return sec
    kept = []
    after_open_label = open_section
    for para in _paragraphs(sec):
        if not _is_template(para, conv, checklist_allowed=after_open_label, phrases=phrases):
            kept.append(para)
        first = para.lstrip().split("\n", 1)[0]
        after_open_label = open_section or _is_label(first) and _is_open_label(first)
    return "\n\n".join(kept).strip()


def _paragraphs(sec: str) -> list[str]:
    """Blank-line separated paragraphs; a code block is a paragraph of its own, whatever blank lines it
    holds and even when no blank line sets it apart from the text before or after it."""
    if "```" not in sec:
        return [p for p in _PARA_SPLIT.split(sec) if p.strip()]
    paras: list[str] = []
    cur: list[str] = []

    def flush() -> None:
        if cur:
            paras.append("\n".join(cur))
            cur.clear()

    fence = False
    for line in sec.split("\n"):
        if line.lstrip().startswith("```"):
            if not fence:
                flush()
            fence = not fence
            cur.append(line)
            if not fence:
                flush()
        elif fence:
            cur.append(line)
        elif not line.strip():
            flush()
        else:
            cur.append(line)
    flush()
    return paras


def _is_template(para: str, conv: Conventions, checklist_allowed: bool = False, phrases: bool = True) -> bool:
    first = para.lstrip()
    if _CHECKBOX.match(first) and not checklist_allowed:
        return True
    if first.startswith("```"):  # a fence holding only comments is the template's placeholder
        inner = (ln.strip() for ln in para.strip().split("\n")[1:])
        if all(ln.startswith(("#", "//")) for ln in inner if ln and not ln.startswith("```")):
            return True
    if first.startswith("> [!"):  # a GitHub callout: the template's guidance
        return True
    return phrases and conv.is_boilerplate(para)


def _label_text(line: str) -> str:
    """A line as a label reads: without emphasis, a trailing colon and blanks."""
    return line.strip().strip("#*_ ").rstrip(":：").strip("*_ ")


def _is_label(line: str) -> bool:
    """A short line standing for what follows: "**TODO:**", "Limitations:", "**Deliberately out of scope**",
    or a bare "TODO" on its own line."""
    s = line.strip()
    if not s or len(s) > 80 or _LIST_ITEM.match(s):
        return False
    if (s.startswith(("**", "__")) and s.rstrip(":：").endswith(("**", "__"))) or s.endswith((":", "：")):
        return True
    return len(s) <= 40 and _is_open_label(s)


def _is_open_label(text: str) -> bool:
    """A heading or label that announces open work; "Perf follow-ups (not this PR)" counts too."""
    if not text:
        return False
    label = _label_text(text).lower()
    if "(" in label:  # a parenthesis qualifies the label, it does not decide it
        label = re.sub(r"\s*\(.*?\)\s*", " ", label).strip()
    return _OPEN_LABEL.fullmatch(label) is not None


# ---- blocks and sentences ---------------------------------------------------------------------------


@dataclass(slots=True)
class _Block:
    kind: str  # heading | label | item | para | code | table
    text: str
    section: str  # the heading it is under ("" before the first)
    checked: bool = False  # a ticked checklist item: done, not open
    kinds: set[str] = field(default_factory=set)  # which key lists the text touches (prose only)


# A screenshot or a chart, as HTML or Markdown: a brief cannot quote its markup, only say it is there
# (a test section holding only a screenshot of the curves still shows how the author tested).
_IMAGE = re.compile(r"<img\b[^>]*>|!\[[^\]]*\]\([^)]*\)", re.I)


def _words(chunk: str) -> str:
    """A block's text on one line, each image as "(image)"."""
    return " ".join(_IMAGE.sub(" (image) ", chunk).split())


def _blocks(sections: list[tuple[str, str]]) -> list[_Block]:
    """The kept sections as Markdown blocks, in order: paragraph by paragraph, a paragraph's list split
    into its items, a label line apart from what it labels."""
    blocks: list[_Block] = []
    for heading, sec in sections:
        if heading:
            blocks.append(_Block("heading", heading, heading))
        for para in _paragraphs(sec):
            first = para.lstrip()
            if first.startswith("```"):
                blocks.append(_Block("code", para, heading))
                continue
            if first.startswith("|"):
                blocks.append(_Block("table", para, heading))
                continue
            for k, chunk in enumerate(_ITEM_START.split(para)):
                item = _LIST_ITEM.match(chunk)
                if item:
                    text = _words(chunk[item.end() :])
                    blocks.append(
                        _Block("item", text, heading, (item.group(1) or " ") in "xX", _kinds(text.lower()))
                    )
                    continue
                line, _, rest = chunk.strip().partition("\n")
                if k == 0 and _is_label(line):
                    blocks.append(_Block("label", _label_text(line), heading))
                    chunk = rest
                text = _words(chunk)
                if text:
                    blocks.append(_Block("para", text, heading, False, _kinds(text.lower())))
    return blocks


def _split_sentences(text: str) -> list[str]:
    out = []
    for s in _SENTENCE_SPLIT.split(text):
        s = s.strip().lstrip("-*>+ ").strip()
        if len(s) > 3:
            out.append(s)
    return out


def _clip(s: str, n: int = _CLIP) -> str:
    """A sentence as a brief quotes it: one line, at most `n` characters, without bold markers left
    unpaired (a sentence cut out of "**Root cause:** a race ..." keeps one of them)."""
    if s.count("**") % 2:
        s = s.replace("**", "")
    s = " ".join(s.split())
    return s if len(s) <= n else s[: n - 1] + "…"


def _sentences(text: str, enough: int = 301) -> list[str]:
    """The sentences of `text` (a comment, a section), line by line; stops once `enough` are found."""
    out: list[str] = []
    for line in text.split("\n"):
        line = line.strip()
        if not line or line.startswith(("```", "### ")):
            continue
        out.extend(_split_sentences(line))
        if len(out) >= enough:
            break
    return out


def open_work(sentence: str) -> bool:
    """Whether a sentence says something is left open (TODO, not yet, a follow-up PR, out of scope)
    and not that it was done ("removes the old TODO", "no follow-ups")."""
    low = sentence.lower()
    if "open" not in _kinds(low):
        return False
    for m in _OPEN_PHRASE.finditer(low):
        if _DONE_BEFORE.search(low, 0, m.start()):
            continue
        if "follow" in m.group(0) and _RELATION_AFTER.match(low, m.end()):
            continue  # "a follow-up PR to #3362", "a follow up task from above PR": what this PR is
        return True
    return False


def _open_items(blocks: list[_Block]) -> list[str]:
    """What the author leaves open: the items under an open-work heading or label, and sentences that
    say so anywhere else. Labels, ticked items, code and tables never count."""
    items: list[str] = []
    context = None  # "section": under an open-work heading; "label": in the list an open label heads
    for b in blocks:
        if b.kind == "heading":
            context = "section" if _is_open_label(b.text) else None
            continue
        if b.kind == "label":
            label, _, inline = b.text.partition(":")
            if _is_open_label(label):
                context = context or "label"
                if inline.strip():  # "Perf follow-ups (not this PR): closed-form tables"
                    items.append(inline.strip())
            elif context == "label":
                context = None
            continue
        if b.kind in ("code", "table"):
            continue
        if context and b.kind == "item":
            if not b.checked:
                items.append(b.text)
            continue
        if context:
            # the prose an open label or heading stands over: its first sentence says what is open
            first = _split_sentences(b.text)[:1]
            items += first
            if context == "label":
                context = None
            continue
        if "open" in b.kinds:  # most blocks have none: split only those that do
            items.extend(s for s in _split_sentences(b.text) if open_work(s))
    return list(dict.fromkeys(_clip(s) for s in items if len(s.strip()) > 3))[:_LIMIT]


# ---- the description as a whole ---------------------------------------------------------------------


def read_description(title: str, body: str, conv: Conventions) -> Description:
    """Root cause, test plan, numbers and open items of the stripped description."""
    text, sections = strip_template(body, conv)
    desc = Description(text=text, raw_chars=len(body or ""))
    if not text:
        return desc
    if "`" in text:
        desc.code_spans = list(dict.fromkeys(s.strip() for s in _CODE_SPAN.findall(text)))[:40]
    if "reaking" in text:  # "Breaking", "breaking", "[BREAKING]"
        desc.breaking = _breaking_statement(text)
    # What the text holds at all, asked once of the whole text: most descriptions hold none of the
    # keys and no number, and are then never split into blocks.
    kinds = _kinds(text.lower())
    numbers = _has_number(text)
    tests = "test" in kinds or any(_is_test_heading(h) for h, _ in sections)
    if not (kinds or numbers or tests):
        return desc
    blocks = _blocks(sections)
    if "cause" in kinds or tests or numbers:
        project = (conv.repo or "").rsplit("/", 1)[-1].lower()
        desc.root_cause, desc.test_plan, desc.numbers = _sentences_of_kinds(blocks, numbers, project)
    if "open" in kinds:
        desc.open_items = _open_items(blocks)
    return desc


# ---- a breaking change the author announces --------------------------------------------------------
# Not the author's own words: release notes quoted from a dependency (<details>, <blockquote>, "> "
# lines) and text struck through (~~...~~).
_QUOTED = re.compile(r"<(details|blockquote)\b.*?(?:</\1>|\Z)|^>[^\n]*|~~.*?~~", re.S | re.I | re.M)
# "No breaking changes", "this is not a breaking change", "I don't think this is a breaking change",
# "not sure if this would qualify as a breaking change": the author says it is not, or does not know.
_NOT_BREAKING = re.compile(
    r"(?:\b(?:no|not|non|zero|without|never|whether|if)\b|n't\b)[^.!?]{0,40}breaking|non-breaking|arguabl"
)
# a sentence about a linked PR, issue or release of a repository: that change broke something
_LINKED_CHANGE = re.compile(r"https?://github\.com/[^/\s]+/[^/\s]+/(?:pull|issues|releases|compare)/")
# "### Breaking changes", "**Breaking:**", "API changes (breaking)"; not "breaking the pattern:" (a line
# break, a formatter's words)
_BREAKING_LABEL = re.compile(r"\bbreaking(?:\s+changes?)?\b(?!\s+[a-z`])", re.I)
_NOTHING = re.compile(r"(?:none|no|n/?a|-|nothing)\.?", re.I)  # a "Breaking changes" section left empty


def _breaking_statement(text: str) -> str | None:
    """Where the author says this PR breaks callers or configs: a "[BREAKING]" mark, a sentence that
    says it does ("This is a breaking change because ..."), or what a "Breaking changes" heading or label
    stands over. Not a sentence that says it does not, weighs whether it might, or is about a linked
    change or a dependency's release notes."""
    if "[BREAKING]" in text:
        return "[BREAKING] in the description"
    lines = [line.strip() for line in _QUOTED.sub("", text).split("\n") if line.strip()]
    for i, line in enumerate(lines):
        low = line.lower()
        if "breaking" not in low or _NOT_BREAKING.search(low) or _LINKED_CHANGE.search(line):
            continue
        if (line.startswith("#") or _is_label(line)) and _BREAKING_LABEL.search(line):
            under = lines[i + 1] if i + 1 < len(lines) else ""
            told = under and not under.startswith("#") and not _NOTHING.fullmatch(under.strip("-* "))
            if told and not _NOT_BREAKING.search(under.lower()):
                return _clip(f"{_label_text(line)}: {under.lstrip('-* ')}")
        elif "breaking change" in low:
            return _clip(next(s for s in _split_sentences(line) if "breaking change" in s.lower()))
    return None


def _sentences_of_kinds(
    blocks: list[_Block], numbers: bool = True, project: str = ""
) -> tuple[list[str], list[str], list[str]]:
    """(root-cause, test-plan, number) sentences of the blocks (number sentences only if `numbers`;
    `project`: the repository's name, see _checks_form_only).
    Each kind is first asked of the whole block: most blocks hold none, and are never split."""
    found: tuple[list[str], list[str], list[str]] = ([], [], [])
    for b in blocks:
        if b.kind not in ("para", "item"):
            continue
        in_test_section = _is_test_heading(b.section)
        has = (
            "cause" in b.kinds,
            in_test_section or "test" in b.kinds,
            numbers and len(found[2]) < _LIMIT and _has_number(b.text),
        )
        if not any(has):
            continue
        for k, s in enumerate(_split_sentences(b.text)):
            # a link's address is no word of the sentence: a search for `e2e_ppo_trainer` tests nothing
            low = _LINK_ADDRESS.sub("", s).lower() if has[0] or has[1] else ""
            kinds = _kinds(low) if low else set()
            if "cause" in kinds:
                found[0].append(s)
            # a filled-in "Test" section is a test plan whatever its wording, but for the issues it closes
            # and for linters run: those say the code is well-formed, not that it works
            tested = in_test_section and k < 3 and not _ONLY_REFERENCES.match(s) or "test" in kinds
            if has[1] and tested and not _checks_form_only(low, project):
                found[1].append(s)
            if has[2] and _has_number(s):
                found[2].append(s)
    # a measurement with its unit ("3371 tok/s, +60.6%") tells more than a range ("from 1K to 16K")
    measured_first = sorted(found[2], key=lambda s: _NUMBER.search(s) is None)
    return _first_clipped(found[0]), _first_clipped(found[1]), _first_clipped(measured_first)


_LINK_ADDRESS = re.compile(r"https?://[^\s)]+")

# "Closes #15557", "Fixes #22429, #21873", "Refs https://github.com/o/r/issues/1": what a PR closes, said
# wherever the author ends the description (often under its test plan)
_ONLY_REFERENCES = re.compile(
    r"(?i)\W*(?:fix(?:es|ed)?|close[sd]?|resolve[sd]?|contributes to|related(?: to)?|part of|see|refs?)"
    r"\b[\s:]*(?:(?:[\w.-]+/[\w.-]+)?#\d+|https?://\S+)(?:[\s,.;&#\d]|and\b)*\Z"
)


# Linters, formatters and compile checks (pre-commit's hooks, which CI runs on every PR) and a bare
# result ("pass") under them say the code is well-formed, not that it works. A sentence that also runs
# something ("pytest ... and ruff", "snapshots") is a test; so is a run of the project itself (ruff's
# own PRs test by running ruff). File paths and links are read as names, not as checks run.
# All read in lowercased text (a case-blind pattern costs several times more).
_FORM_CHECK = re.compile(
    r"\b(?:pre-?commit|ruff|mypy|flake8|pylint|shellcheck|clippy|rustfmt|py_compile|compileall|hooks)\b"
)
_RUNS_SOMETHING = re.compile(
    r"test|\be2e\b|\btrain(?:s|ed|ing)?\b|benchmark|\bgpus?\b|\bnpus?\b|snapshot|insta\b|fixture"
    r"|reproduc|manual|playground|ecosystem|primer|verif|confirm|compar|same result|example|against"
)
_PATH = re.compile(r"\S*\w[/.]\w\S*")
_BARE_RESULT = re.compile(r"\W*(?:result\s*:\s*)?(?:all\s+)?(?:pass(?:ed|es)?|ok|done|success)\W*")


def _checks_form_only(low: str, project: str) -> bool:
    """Whether a test-plan sentence (`low`: lowercased) only says the code passes linters, formatters or
    a compile check (`project`: the repository's name, lowercased, whose own runs test it)."""
    if _BARE_RESULT.fullmatch(low):
        return True
    if not _FORM_CHECK.search(low):
        return False
    words = _PATH.sub(" ", low)
    checks = {m.group(0) for m in _FORM_CHECK.finditer(words)} - {project}
    return bool(checks) and not _RUNS_SOMETHING.search(words)


def _has_number(text: str) -> bool:
    return bool(_NUMBER.search(text) or "from " in text.lower() and _FROM_TO.search(text.lower()))


def _is_test_heading(heading: str) -> bool:
    h = heading.lower()
    return h.startswith("test") or "test plan" in h or "测试" in h


def _first_clipped(sentences: list[str]) -> list[str]:
    return list(dict.fromkeys(_clip(s) for s in sentences))[:_LIMIT]


def prose_of(text: str) -> str:
    """The description without its code blocks: a pasted traceback or log names the threads, locks and
    dtypes of every library it passes through, which the change itself may never touch."""
    return FENCED_BLOCK.sub("", text) if "```" in text else text


# What a description shows of its author's work: why, measured how, tested how. A fix's root cause and
# its measurements say how subtle the bug was, and a reader weighs them; a feature's motivation,
# benchmark and test plan say the author did the work, not that the code needs a close read.
_AUTHORS_WORK = frozenset({"desc.root_cause", "desc.numbers", "desc.test_plan"})


def description_signals(desc: Description, conv: Conventions, kind: str | None = None) -> list[Signal]:
    """The description's signals; `kind` is the title's (feat, fix, ...): a feature's account of its
    author's work is shown but weighs nothing (see _AUTHORS_WORK)."""
    n_ev = int(conv.threshold("max_evidence", 3))
    sigs = []
    table = (
        (desc.root_cause, "desc.root_cause", "description explains the root cause"),
        (desc.numbers, "desc.numbers", "description gives numbers (measurements)"),
        (desc.test_plan, "desc.test_plan", "description has a test plan"),
        (desc.open_items, "desc.followups", "description names follow-ups / things not addressed"),
    )
    for found, name, label in table:
        if found:
            weight = 0.0 if kind == "feat" and name in _AUTHORS_WORK else conv.weight(name)
            sigs.append(Signal(name, label, weight, [Evidence(None, None, s) for s in found[:n_ev]]))
    if desc.empty:
        what = f"{desc.raw_chars} characters, all template" if desc.raw_chars else "no description"
        sigs.append(
            Signal(
                "desc.empty",
                "no description beyond the template",
                conv.weight("desc.empty"),
                [Evidence(None, None, what)],
            )
        )
    return sigs
