"""What the people say: the PR description (template boilerplate stripped), the discussion, and
cross-references to other PRs. Pure functions over text; evidence is the sentence itself."""

from __future__ import annotations

import re
from typing import Any

from .analysis import CrossRef, Evidence, Signal
from .conventions import Conventions

_CHECKBOX = re.compile(r"^\s*(?:[-*+]|\d+\.)\s*\[[ xX]\]")
_HEADING = re.compile(r"^\s{0,3}#{1,6}(?:[ \t]+(.*?))?[ \t]*$")
_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.S)
_SENTENCE_SPLIT = re.compile(r"(?<=[.!?。！？；])\s+")
_NUMBER = re.compile(
    r"\d(?:[\d,]*\d)?(?:\.\d+)?\s?(?:%|x\b|×|ms\b|s\b|sec\b|seconds|min\b|minutes|hours?|MiB|GiB|MB|GB|KB|KiB|"
    r"tokens?/s|it/s|samples/s|TFLOPS|steps?/s|倍|秒|分钟)|\bfrom\s+\d[\d.,]*\s*\w*\s+to\s+\d",
    re.I,
)
_REF = re.compile(
    r"https?://github\.com/(?P<owner>[\w.-]+)/(?P<name>[\w.-]+)/(?:pull|issues)/(?P<unum>\d+)"
    r"|(?<![\w/&#])#(?P<num>\d{1,7})\b"
)
_REF_FIXES = re.compile(r"\b(?:fix(?:es|ed)?|close[sd]?|resolve[sd]?)\s*:?\s*$", re.I)
_REF_FOLLOW = re.compile(
    r"(?:follow[- ]?ups?|part|continuation|builds?|based|depends|extends|on\s+top)\s*(?:to|of|on|up\s+on|for)?\s*:?\s*$",
    re.I,
)
_REF_REVERT = re.compile(r"\brevert(?:s|ed|ing)?\s*(?:of\s*)?\"?.{0,80}$", re.I)
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
PROMISE = (
    "follow-up",
    "follow up",
    "followup",
    "separate pr",
    "another pr",
    "next pr",
    "future pr",
    "later pr",
    "will do",
    "will add",
    "will fix",
    "will address",
    "will update",
    "i'll",
    "i will",
    "后续",
    "下一个 pr",
)


def strip_template(body: str, conv: Conventions) -> tuple[str, list[tuple[str, str]]]:
    """Remove HTML comments, checklists, template guidance and headings left empty.

    -> (kept text, [(heading, section text)]). Sections whose heading is a known checklist go whole.
    """
    if not body:
        return "", []
    if "<!--" in body:
        body = _COMMENT.sub("", body)
    if "\r" in body:
        body = body.replace("\r\n", "\n")
    sections: list[tuple[str, list[str]]] = [("", [])]
    fence = False
    for line in body.split("\n"):
        stripped = line.lstrip()
        if stripped.startswith("```"):
            fence = not fence
        elif not fence and stripped.startswith("#"):
            m = _HEADING.match(line)
            if m:
                sections.append(((m.group(1) or "").strip().rstrip("#").strip(), []))
                continue
        sections[-1][1].append(line)
    kept: list[tuple[str, str]] = []
    for heading, lines in sections:
        hl = heading.lower().strip(" :*_")
        if hl and any(hl == d or hl.startswith(d) for d in conv.drop_headings):
            continue
        paras = _paragraphs(lines)
        text = "\n\n".join(p for p in paras if not _is_boilerplate(p, conv)).strip()
        if text:
            kept.append((heading, text))
    out = "\n\n".join((f"### {h}\n{t}" if h else t) for h, t in kept)
    return out, kept


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


def _is_boilerplate(para: str, conv: Conventions) -> bool:
    first = para.lstrip()
    if _CHECKBOX.match(first):
        return True
    if first.startswith("```"):  # a fence holding only comments is the template's placeholder
        inner = [
            ln.strip()
            for ln in para.strip().split("\n")[1:]
            if ln.strip() and not ln.strip().startswith("```")
        ]
        if all(ln.startswith(("#", "//")) for ln in inner):
            return True
    if first.startswith("> [!"):
        return True
    return conv.is_boilerplate(para)


def _sentences(text: str) -> list[str]:
    out = []
    for line in text.split("\n"):
        line = line.strip().lstrip("-*>+ ").strip()
        if not line or line.startswith("```") or line.startswith("### "):
            continue
        out.extend(s.strip() for s in _SENTENCE_SPLIT.split(line) if len(s.strip()) > 3)
        if len(out) > 300:
            break
    return out


def _clip(s: str, n: int = 240) -> str:
    s = " ".join(s.split())
    return s if len(s) <= n else s[: n - 1] + "…"


def _sentence_at(text: str, i: int) -> tuple[int, int]:
    """Bounds of the sentence (or list item / line) around position i."""
    start = max(text.rfind("\n", 0, i), text.rfind(". ", 0, i) + 1, text.rfind("。", 0, i))
    ends = [e for e in (text.find("\n", i), text.find(". ", i), text.find("。", i)) if e >= 0]
    return start + 1, (min(ends) + 1 if ends else len(text))


def _find_sentences(text: str, low: str, keys: tuple[str, ...], limit: int = 8) -> list[tuple[int, str]]:
    """(position, sentence) for sentences containing any key; str.find per key, no per-sentence loop."""
    found: dict[int, str] = {}
    for k in keys:
        i = low.find(k)
        while i >= 0 and len(found) < limit * 2:
            a, b = _sentence_at(text, i)
            s = text[a:b].strip().lstrip("-*>+ ").strip()
            if len(s) > 3 and not s.startswith("#"):
                found.setdefault(a, s)
            i = low.find(k, b)
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
    out["root_cause"] = [_clip(s) for _, s in _find_sentences(text, low, ROOT_CAUSE)]
    tests = _find_sentences(text, low, TEST_PLAN)
    for heading, sec in sections:  # a filled-in "Test" section is a test plan whatever its wording
        hl = heading.lower()
        if hl.startswith("test") or "test plan" in hl or "测试" in hl:
            tests = [(0, ln) for ln in _sentences(sec)[:3]] + tests
    out["test_plan"] = list(dict.fromkeys(_clip(s) for _, s in tests))[:8]
    nums: dict[int, str] = {}
    for m in _NUMBER.finditer(text):
        a, b = _sentence_at(text, m.start())
        if a not in nums:
            nums[a] = _clip(text[a:b].strip().lstrip("-*>+ "))
            if len(nums) >= 8:
                break
    out["numbers"] = list(nums.values())
    out["followups"] = [_clip(s) for _, s in _find_sentences(text, low, FOLLOWUP)]
    if "`" in text:
        out["code_spans"] = list(dict.fromkeys(m.group(1).strip() for m in _CODE_SPAN.finditer(text)))[:40]
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
        sigs.append(Signal("desc.empty", "no description beyond the template", conv.weight("desc.empty")))
    return sigs


def read_discussion(record: Any, conv: Conventions) -> tuple[dict[str, Any], list[Signal]]:
    """Reviews, unresolved threads, reviewers (not the author, not bots) and the author's promises."""
    author = record.author
    latest: dict[str, str] = {}
    requested: list[Evidence] = []
    for rv in record.reviews or []:
        login = _login(rv)
        state = (rv.get("state") or "").upper()
        if not login or login == author or conv.is_bot(login) or state in ("", "PENDING"):
            continue
        if state != "COMMENTED" or login not in latest:
            latest[login] = state
        if state == "CHANGES_REQUESTED":
            requested.append(
                Evidence(None, None, f"{login}: {_clip(rv.get('body') or 'changes requested', 160)}")
            )
    reviewers = set(latest)
    threads: dict[Any, list[dict]] = {}
    for c in record.review_comments or []:
        login = _login(c)
        if login and login != author and not conv.is_bot(login):
            reviewers.add(login)
        threads.setdefault(c.get("in_reply_to_id") or c.get("id") or id(c), []).append(c)
    unresolved: list[Evidence] = []
    for comments in threads.values():
        if any(c.get("thread_resolved") is False for c in comments):
            root = comments[0]
            line = root.get("line") or root.get("original_line")
            unresolved.append(
                Evidence(
                    root.get("path"),
                    int(line) if line else None,
                    _clip(f"{_login(root) or '?'}: {root.get('body') or ''}", 200),
                )
            )
    promises: list[Evidence] = []
    if author:
        texts = [c.get("body") or "" for c in (record.issue_comments or []) if _login(c) == author]
        texts += [c.get("body") or "" for c in (record.review_comments or []) if _login(c) == author]
        texts += [r.get("body") or "" for r in (record.reviews or []) if _login(r) == author]
        for t in texts:
            for s in _sentences(t):
                low = s.lower()
                if any(k in low for k in PROMISE) and (
                    "will" in low or "follow" in low or "后续" in low or "later" in low or "pr" in low
                ):
                    promises.append(Evidence(None, None, _clip(s, 200)))
    outstanding = sorted(u for u, s in latest.items() if s == "CHANGES_REQUESTED")
    disc = {
        "reviewers": sorted(reviewers),
        "approved_by": sorted(u for u, s in latest.items() if s == "APPROVED"),
        "changes_requested_by": sorted({e.text.split(":", 1)[0] for e in requested}),
        "changes_requested_outstanding": outstanding,
        "unresolved_threads": len(unresolved),
        "unresolved": [e.text for e in unresolved],
        "promises": [e.text for e in promises],
        "comments": len(record.issue_comments or []) + len(record.review_comments or []),
    }
    n_ev = int(conv.threshold("max_evidence", 3))
    sigs = []
    if requested:
        sigs.append(
            Signal(
                "discussion.changes_requested",
                f"changes requested by {', '.join(disc['changes_requested_by'])}"
                + (" (still outstanding)" if outstanding else ""),
                conv.weight("discussion.changes_requested"),
                requested[:n_ev],
            )
        )
    if unresolved:
        sigs.append(
            Signal(
                "discussion.unresolved",
                f"{len(unresolved)} unresolved review thread(s)",
                conv.weight("discussion.unresolved"),
                unresolved[:n_ev],
            )
        )
    if len(reviewers) >= 3:
        sigs.append(
            Signal(
                "discussion.reviewers",
                f"{len(reviewers)} reviewers took part",
                conv.weight("discussion.reviewers"),
                [Evidence(None, None, ", ".join(sorted(reviewers)))],
            )
        )
    if promises:
        sigs.append(
            Signal(
                "discussion.promises",
                "the author promised follow-ups",
                conv.weight("discussion.promises"),
                promises[:n_ev],
            )
        )
    return disc, sigs


def _login(obj: dict) -> str | None:
    user = obj.get("user") if isinstance(obj, dict) else None
    if isinstance(user, dict):
        return user.get("login")
    return obj.get("author") if isinstance(obj, dict) and isinstance(obj.get("author"), str) else None


def cross_refs(repo: str, number: int, texts: list[str], known_prs: dict | None) -> list[CrossRef]:
    """#N, Fixes #N, follow-up to #N and PR URLs; resolved against the cache's (title, state)."""
    found: dict[tuple[str, int], CrossRef] = {}
    owner_name = (repo or "").lower()
    rank = {"mentions": 0, "follow-up": 1, "fixes": 2, "revert": 3}
    for text in texts:
        if not text or ("#" not in text and "github.com" not in text):
            continue
        for m in _REF.finditer(text):
            if m.group("unum"):
                target = f"{m.group('owner')}/{m.group('name')}".lower()
                num, url = int(m.group("unum")), m.group(0)
            else:
                target, num, url = owner_name, int(m.group("num")), None
            if target == owner_name and num == number:
                continue
            before = text[max(0, m.start() - 60) : m.start()]
            if _REF_FIXES.search(before):
                rel = "fixes"
            elif _REF_REVERT.search(before[-40:]) and "revert" in before.lower()[-40:]:
                rel = "revert"
            elif _REF_FOLLOW.search(before):
                rel = "follow-up"
            else:
                rel = "mentions"
            key = (target, num)
            old = found.get(key)
            if old is None:
                title = state = None
                if target == owner_name and known_prs and num in known_prs:
                    title, state = known_prs[num]
                found[key] = CrossRef(num, rel, title, state, url)
            elif rank[rel] > rank[old.relation]:
                old.relation = rel
            if len(found) >= 50:
                break
    return list(found.values())
