"""What the author says: the PR description with the template's boilerplate stripped, and what it tells
a reader (root cause, test plan, numbers, follow-ups, code names). Pure functions over text; evidence is
the sentence itself. The discussion and cross-references are in discussion.py."""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterator
from itertools import chain
from typing import Any

from .conventions import Conventions
from .model import Evidence, Signal

_CHECKBOX = re.compile(r"^\s*(?:[-*+]|\d+\.)\s*\[[ xX]\]")
_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.S)
_SENTENCE_SPLIT = re.compile(r"(?<=[.!?。！？；])\s+")
# A number with a unit: measurements, speedups, memory. Starts with a digit, so the regex engine skips
# to digits at C speed (no re.I: the units are spelled in the cases people write them).
# The number part is possessive: no unit starts with a digit, comma, dot or blank, so a shorter number
# than the longest can never be followed by a unit, and retrying them made long digit runs quadratic.
_UNITS = (
    r"%|[xX](?!\w)|×(?!\w)|ms\b|s\b|sec\b|seconds|min\b|minutes|hours?|[MGK]i?B\b|"
    r"[MG]bps|tokens?/s|it/s|samples/s|TFLOPS|steps?/s|倍|秒|分钟"
)
_NUMBER = re.compile(r"\d(?:,*+\d)*+(?:\.\d++)?+\s?+(?:" + _UNITS + ")")
# The same search for ASCII text, on its bytes with every digit made "0": the regex then starts with a
# literal, which the engine skips to at memchr speed instead of testing a digit class at each
# character (2x cheaper). The blank class is what \s matches among ASCII characters; the units that
# are not ASCII cannot be in ASCII text.
_ASCII_NUMBER = re.compile(
    (
        r"0(?:,*+0)*+(?:\.0++)?+[ \t\n\r\f\v\x1c-\x1f]?+(?:"
        + "|".join(u for u in _UNITS.split("|") if u.isascii())
        + ")"
    ).encode()
)
_DIGITS_TO_ZERO = bytes.maketrans(b"123456789", b"000000000")


def _number_starts(text: str, end: int) -> Iterator[int]:
    """Where `_NUMBER` matches in text[:end], in order."""
    if text.isascii():
        return (m.start() for m in _ASCII_NUMBER.finditer(text.encode().translate(_DIGITS_TO_ZERO), 0, end))
    return (m.start() for m in _NUMBER.finditer(text, 0, end))


# "from 3 to 5". re.I leaves the regex no literal to skip to, so it is only tried where the lowercased
# text has "from" (the letters of "from" have no other case-insensitive match, nor does any other
# character lowercase to them); the leading \b is checked by `_from_to` on each hit.
_FROM_TO = re.compile(r"from\s+\d[\d.,]*\s*\S*\s+to\s+\d", re.I)


def _from_to(text: str, low: str, end: int) -> Iterator[int]:
    """Where the matches of `\\bfrom...` in text[:end] start, in order (`low` is text.lower())."""
    if len(low) != len(text):  # a character lowercased to several: positions differ, search it all
        yield from _from_to_searched(text, end)
        return
    pos = 0
    while True:
        i = low.find("from", pos, end)
        if i < 0:
            return
        m = _FROM_TO.match(text, i, end)
        if m is None or (i and (text[i - 1].isalnum() or text[i - 1] == "_")):
            pos = i + 1  # no match here, or a hit inside a word: retried one character on
            continue
        yield i
        pos = m.end()


def _from_to_searched(text: str, end: int) -> Iterator[int]:
    """`_from_to` by searching all of text[:end]: a hit inside a word is retried one character on."""
    pos = 0
    while True:
        m = _FROM_TO.search(text, pos, end)
        if m is None:
            return
        i = m.start()
        if i and (text[i - 1].isalnum() or text[i - 1] == "_"):
            pos = i + 1
            continue
        yield i
        pos = m.end()


_CODE_SPAN = re.compile(r"`([^`\n]{2,80})`")

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
FOLLOWUP = (
    "follow-up",
    "follow up",
    "followup",
    "not addressed",
    "out of scope",
    "separate pr",
    "future pr",
    "next pr",
    "later pr",
    "in the future",
    "todo",
    "left for",
    "not covered",
    "not yet supported",
    "will be addressed",
    "another pr",
    "后续",
    "暂不",
    "未覆盖",
)


# The lists of keys searched in every description, in the order read_description asks for them.
_KEY_LISTS = (ROOT_CAUSE, TEST_PLAN, FOLLOWUP)
_AnchorTable = tuple[tuple[str, tuple[tuple[str, int, int], ...]], ...]


def _anchor_table(anchors: tuple[str, ...]) -> _AnchorTable:
    """(anchor, ((key, offset of the anchor in the key, index of the key's list), ...)) for the keys
    of _KEY_LISTS; a key that contains no anchor is its own anchor."""
    table: dict[str, list[tuple[str, int, int]]] = {}
    for which, keys in enumerate(_KEY_LISTS):
        for k in keys:
            a = next((a for a in anchors if a in k), k)
            table.setdefault(a, []).append((k, k.index(a), which))
    return tuple((a, tuple(ks)) for a, ks in table.items())


# Each key's text contains its anchor, so one scan for the anchor stands for the scans of its keys: most
# keys are absent from most descriptions, and a str.find costs a whole scan whether it finds or not.
# Anchors are worth it only where they are rare too ("the " or " pr" are in most descriptions, several
# times each, and checking their keys at every hit costs more than the scans saved). A Chinese key's
# first character is its anchor: a one-character find is a fast memchr-like loop; ASCII text skips them.
_ANCHORS = _anchor_table(
    ("cause", "when", "test", "follow", "not ", "future", "addressed")
    + ("根", "原", "导", "测", "验", "复", "后", "暂", "未")
)
_ASCII_ANCHORS = tuple(entry for entry in _ANCHORS if entry[0].isascii())


def _key_positions(low: str) -> list[list[int]]:
    """For each list of _KEY_LISTS, every position where one of its keys starts in `low` (overlapping
    ones too), ascending."""
    found: list[list[int]] = [[] for _ in _KEY_LISTS]
    table = _ASCII_ANCHORS if low.isascii() else _ANCHORS
    for anchor, keys in [entry for entry in table if entry[0] in low]:
        q = low.find(anchor)
        while q >= 0:
            for key, off, which in keys:
                if q >= off and low.startswith(key, q - off):
                    found[which].append(q - off)
            q = low.find(anchor, q + 1)
    for positions in found:
        positions.sort()
    return found


# One scan for the lines that open or close a code block (``` after blanks) and the lines that may be
# headings: up to three blanks and one to six '#', then the rest of the line (group 1), a heading if
# it starts with a blank or holds nothing but '#'s and blanks (see `_heading`). A plain greedy rest of
# line: the exact Markdown rule written as one regex (a lazy title before optional closing '#'s)
# retried the line's tail at every character.
_FENCE_OR_HEADING = re.compile(r"\n(?:[ \t]*```| {0,3}#{1,6}([^\n]*))")
_PARA_SPLIT = re.compile(r"\n[ \t]*\n")


def strip_template(body: str, conv: Conventions) -> tuple[str, list[tuple[str, str]]]:
    """Remove HTML comments, checklists, template guidance and headings left empty.

    -> (kept text, [(heading, section text)]). Sections whose heading is a known checklist go whole.
    Works on whole sections and paragraphs with C-speed searches: descriptions are read for every PR.
    """
    if not body:
        return "", []
    if "<!--" in body:
        body = _COMMENT.sub("", body)
    if "\r" in body:
        body = body.replace("\r\n", "\n")
    text = "\n" + body + "\n"
    cuts: list[tuple[int, int, str]] = []  # (heading start, content start, heading text)
    in_code = False  # a "# comment" inside a code block is not a heading
    for m in _FENCE_OR_HEADING.finditer(text):
        rest = m.group(1)
        if rest is None:
            in_code = not in_code
        elif not in_code:
            heading = _heading(rest)
            if heading is not None:
                cuts.append((m.start(), m.end(), heading))
    spans = [("", 0, cuts[0][0] if cuts else len(text))]
    for i, (_hs, cs, h) in enumerate(cuts):
        spans.append((h, cs, cuts[i + 1][0] if i + 1 < len(cuts) else len(text)))
    kept: list[tuple[str, str]] = []
    drop = tuple(conv.drop_headings)  # startswith(d) covers == d
    memo = conv.template_memo
    for heading, a, b in spans:
        if heading:
            hl = heading.lower().strip(" :*_")
            if drop and hl.startswith(drop):
                continue
        sec = text[a:b].strip()
        if not sec:
            continue
        cleaned = memo.get(sec)
        if cleaned is None:
            cleaned = _without_template(sec, conv)
            # A section that lost template text is likely to come back verbatim in the repository's
            # next PRs (an unfilled template section); one that kept everything is the author's own.
            if cleaned != sec and len(sec) <= _MEMO_CHARS:
                if len(memo) >= _MEMO_ENTRIES:
                    memo.clear()
                memo[sec] = cleaned
        if cleaned:
            kept.append((heading, cleaned))
    out = "\n\n".join((f"### {h}\n{t}" if h else t) for h, t in kept)
    return out, kept


# Bounds of Conventions.template_memo: template sections are short and a repository has few of them.
_MEMO_CHARS = 2000
_MEMO_ENTRIES = 5000


def _without_template(sec: str, conv: Conventions) -> str:
    """The section without its template paragraphs (checkboxes, guidance, placeholder code); `sec`
    itself if nothing template-like is in it."""
    # paragraph by paragraph only where something template-like is in the (small) kept section;
    # a template phrase absent from the section is absent from each of its paragraphs
    phrases = conv.is_boilerplate(sec)
    if phrases or _droppable_marks(sec):
        paras = _PARA_SPLIT.split(sec) if "```" not in sec else _paragraphs(sec.split("\n"))
        return "\n\n".join(p for p in paras if not _is_boilerplate(p, conv, phrases)).strip()
    if ">" in sec and "> " in sec:
        # Quotes alone drop nothing (a quote goes with a template phrase, or as a "> [!" callout),
        # but the section's paragraphs are joined by one blank line, as when some are dropped.
        return _PARA_SPLIT.sub("\n\n", sec).strip()
    return sec


def _droppable_marks(sec: str) -> bool:
    """A checkbox, a code fence or a "> [!" callout in `sec`: what makes a paragraph template without a
    template phrase (see `_is_boilerplate`). Each needle's first character is looked for first: a
    one-character find is a memchr, several times cheaper than a substring scan."""
    return ("[" in sec and ("[ ]" in sec or "[x]" in sec or "[X]" in sec or "> [!" in sec)) or (
        "`" in sec and "```" in sec
    )


def _heading(rest: str) -> str | None:
    """The title of a heading line from what follows its (up to six) '#'s; None if not a heading.

    `#tag` is no heading; `## Title ##` is "Title"; a line of only '#'s and blanks is an empty heading
    (so is `#######`, whose seventh '#' is part of the closing run)."""
    if rest and rest[0] not in " \t":
        return None if rest.strip(" \t#") else ""
    return rest.lstrip(" \t").rstrip(" \t#").strip()


def _paragraphs(lines: list[str]) -> list[str]:
    paras, cur, fence = [], [], False
    for line in lines:
        if line.lstrip().startswith("```"):
            fence = not fence
        if not fence and not line.strip():
            if cur:
                paras.append("\n".join(cur))
                cur = []
            continue
        cur.append(line)
    if cur:
        paras.append("\n".join(cur))
    return paras


def _is_boilerplate(para: str, conv: Conventions, phrases: bool = True) -> bool:
    first = para.lstrip()
    if _CHECKBOX.match(first):
        return True
    if first.startswith("```"):  # a fence holding only comments is the template's placeholder
        # lazily: a pasted script answers at its first line of code
        inner = (ln.strip() for ln in para.strip().split("\n")[1:])
        if all(ln.startswith(("#", "//")) for ln in inner if ln and not ln.startswith("```")):
            return True
    if first.startswith("> [!"):
        return True
    return phrases and conv.is_boilerplate(para)


def _sentences(text: str, enough: int = 301) -> list[str]:
    """The sentences of `text`, line by line; stops after the line that brings `enough` or more."""
    out = []
    for line in text.split("\n"):
        line = line.strip().lstrip("-*>+ ").strip()
        if not line or line.startswith("```") or line.startswith("### "):
            continue
        out.extend(s.strip() for s in _SENTENCE_SPLIT.split(line) if len(s.strip()) > 3)
        if len(out) >= enough:
            break
    return out


def _clip(s: str, n: int = 240) -> str:
    s = " ".join(s.split())
    return s if len(s) <= n else s[: n - 1] + "…"


# Where sentences end: a blank line, a list item / heading / quote / table row, or ". " and friends.
# A single newline is only wrapping. The end positions are found once per text, then bisected.
# One regex per break character, each starting with its character: the engine skips to a literal at
# memchr speed, where a class of five characters is tested at every position (and the characters a
# text lacks cost no scan at all).
_LINE_BREAK = re.compile(r"\n(?=\n|[-*#>|] |\d+\. )")
_STOP_BREAKS = (
    (".", re.compile(r"\.(?= )")),
    ("!", re.compile(r"!(?= )")),
    ("?", re.compile(r"\?(?= )")),
    ("。", re.compile("。")),
)


def _sentence_ends(text: str) -> list[int]:
    """The positions just after each sentence break of `text`, ascending."""
    ends = [m.end() for m in _LINE_BREAK.finditer(text)]
    for char, rx in _STOP_BREAKS:
        if char in text:
            ends += [m.end() for m in rx.finditer(text)]
    ends.sort()
    return ends


class _Sentences:
    """Sentence bounds around positions of `text`; the breaks are found on the first question (most
    descriptions contain none of the keys, so most never ask)."""

    __slots__ = ("text", "_ends")

    def __init__(self, text: str):
        self.text = text
        self._ends: list[int] | None = None

    def around(self, i: int) -> tuple[int, int]:
        ends = self._ends
        if ends is None:
            ends = self._ends = _sentence_ends(self.text)
        k = bisect_right(ends, i)
        start = ends[k - 1] if k else 0
        end = ends[k] if k < len(ends) else len(self.text)
        return start, min(end, start + 600)

    def find_at(
        self, low: str, keys: tuple[str, ...], positions: list[int], limit: int = 8
    ) -> list[tuple[int, str]]:
        """What `find(low, keys, limit)` gives, from where the keys start (ascending, from _key_positions).

        `find` visits every sentence holding a key unless it has collected 2 * limit sentences, which
        makes its pick depend on the order of the keys; below that it collected exactly the sentences
        around the positions, so only then is the pick taken from them (else `find` itself decides).
        """
        if not positions:
            return []
        found: dict[int, str] = {}
        for i in positions:
            a, b = self.around(i)
            if a not in found:
                sent = self.text[a:b].strip().lstrip("-*>+ ").strip()
                if len(sent) > 3 and not sent.startswith("#"):
                    found[a] = sent
        if len(found) >= limit * 2:
            return self.find(low, keys, limit)
        return sorted(found.items())[:limit]

    def find(self, low: str, keys: tuple[str, ...], limit: int = 8) -> list[tuple[int, str]]:
        """(position, sentence) for sentences containing any key; str.find per key."""
        found: dict[int, str] = {}
        for k in keys:
            i = low.find(k)
            while i >= 0 and len(found) < limit * 2:
                a, b = self.around(i)
                sent = self.text[a:b].strip().lstrip("-*>+ ").strip()
                if len(sent) > 3 and not sent.startswith("#"):
                    found.setdefault(a, sent)
                i = low.find(k, max(b, i + 1))
        return sorted(found.items())[:limit]


def read_description(title: str, body: str, conv: Conventions) -> dict[str, Any]:
    """Root cause, test plan, numbers and follow-up sentences of the stripped description."""
    text, sections = strip_template(body, conv)
    out: dict[str, Any] = {
        "text": text,
        "empty": not text.strip(),
        "raw_chars": len(body or ""),
        "root_cause": [],
        "test_plan": [],
        "numbers": [],
        "followups": [],
        "code_spans": [],
    }
    if not text:
        return out
    low = text.lower()
    sents = _Sentences(text)
    root_at, tests_at, followups_at = _key_positions(low)
    out["root_cause"] = [_clip(s) for _, s in sents.find_at(low, ROOT_CAUSE, root_at)]
    tests = sents.find_at(low, TEST_PLAN, tests_at)
    for heading, sec in sections:  # a filled-in "Test" section is a test plan whatever its wording
        hl = heading.lower()
        if hl.startswith("test") or "test plan" in hl or "测试" in hl:
            tests = [(0, ln) for ln in _sentences(sec, 3)[:3]] + tests
    out["test_plan"] = list(dict.fromkeys(_clip(s) for _, s in tests))[:8]
    nums: dict[int, str] = {}
    # taken lazily: the search stops once 8 sentences with numbers are found
    num_hits = _number_starts(text, 8000)
    if "from " in low:
        num_hits = chain(num_hits, _from_to(text, low, 8000))
    for i in num_hits:
        a, b = sents.around(i)
        if a not in nums:
            nums[a] = _clip(text[a:b].strip().lstrip("-*>+ "))
            if len(nums) >= 8:
                break
    out["numbers"] = list(nums.values())
    out["followups"] = [_clip(s) for _, s in sents.find_at(low, FOLLOWUP, followups_at)]
    if "`" in text:
        out["code_spans"] = list(dict.fromkeys([s.strip() for s in _CODE_SPAN.findall(text)]))[:40]
    return out


def description_signals(desc: dict[str, Any], conv: Conventions) -> list[Signal]:
    sigs = []
    table = (
        ("root_cause", "desc.root_cause", "description explains the root cause"),
        ("numbers", "desc.numbers", "description gives numbers (measurements)"),
        ("test_plan", "desc.test_plan", "description has a test plan"),
        ("followups", "desc.followups", "description names follow-ups / things not addressed"),
    )
    for key, name, label in table:
        if desc.get(key):
            ev = [Evidence(None, None, s) for s in desc[key][: int(conv.threshold("max_evidence", 3))]]
            sigs.append(Signal(name, label, conv.weight(name), ev))
    if desc.get("empty"):
        what = (
            f"{desc.get('raw_chars', 0)} characters, all template"
            if desc.get("raw_chars")
            else "no description"
        )
        sigs.append(
            Signal(
                "desc.empty",
                "no description beyond the template",
                conv.weight("desc.empty"),
                [Evidence(None, None, what)],
            )
        )
    return sigs
