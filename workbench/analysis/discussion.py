"""What the people said after the description: reviews, review threads and comments (who reviewed, what
is still requested or unresolved, what the author promised), and the cross-references to other PRs in
all of that text. Pure functions over the record; evidence is the sentence itself."""

from __future__ import annotations

import re
from typing import Any

from .conventions import Conventions
from .description import _clip, _sentences
from .model import CrossRef, Evidence, Signal

_REF_FIXES = re.compile(r"\b(?:fix(?:es|ed)?|close[sd]?|resolve[sd]?)\s*:?\s*$", re.I)
_REF_FOLLOW = re.compile(
    r"(?:follow[- ]?ups?|part|continuation|builds?|based|depends|extends|on\s+top)\s*(?:to|of|on|up\s+on|for)?\s*:?\s*$",
    re.I,
)
# The letters a match of _REF_FIXES / _REF_FOLLOW can end on before its blanks and colon (re.I: either
# case, and the long s that matches "s"). Checked first: the regexes have no literal to skip to and are
# tried at every position of the 60 characters before each reference.
_FIXES_LAST = frozenset("xXsSſdDeE")
_FOLLOW_LAST = frozenset("oOfFnNrRpPsSſtTdD")

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


def read_discussion(record: Any, conv: Conventions) -> tuple[dict[str, Any], list[Signal]]:
    """Reviews, unresolved threads, reviewers (not the author, not bots) and the author's promises."""
    if not record.reviews and not record.review_comments and not record.issue_comments:
        return _no_discussion(), []  # stats-only sources: nothing to read
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
            if not _has_any(t.lower(), PROMISE):
                continue  # a key absent from the text is absent from each of its sentences
            for s in _sentences(t):
                low = s.lower()
                if _has_any(low, PROMISE) and (
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


def _has_any(low: str, keys: tuple[str, ...]) -> bool:
    for k in keys:  # a loop, not any(<generator>): cheaper for a handful of keys
        if k in low:
            return True
    return False


def _no_discussion() -> dict[str, Any]:
    """What `read_discussion` builds for a PR nobody discussed (same keys, same order), without the loops."""
    return {
        "reviewers": [],
        "approved_by": [],
        "changes_requested_by": [],
        "changes_requested_outstanding": [],
        "unresolved_threads": 0,
        "unresolved": [],
        "promises": [],
        "comments": 0,
    }


def _login(obj: dict) -> str | None:
    if not isinstance(obj, dict):
        return None
    user = obj.get("user")
    if isinstance(user, dict):
        return user.get("login")
    author = obj.get("author")
    return author if isinstance(author, str) else None


_REF_NUM = re.compile(r"#(\d{1,7})\b")
_REF_URL = re.compile(r"github\.com/([\w.-]+)/([\w.-]+)/(?:pull|issues)/(\d+)")


def _last_word_char(before: str) -> str:
    """The last character of `before` once the blanks and the one colon that may end it are dropped
    (what `\\s*:?\\s*$` matches); "" if none."""
    tail = before.rstrip()
    if tail.endswith(":"):
        tail = tail[:-1].rstrip()
    return tail[-1:]


def cross_refs(repo: str, number: int, texts: list[str], known_prs: dict | None) -> list[CrossRef]:
    """#N, Fixes #N, follow-up to #N and PR URLs; resolved against the cache's (title, state)."""
    found: dict[tuple[str, int], CrossRef] = {}
    owner_name = (repo or "").lower()
    rank = {"mentions": 0, "follow-up": 1, "fixes": 2, "revert": 3}
    for text in texts:
        if not text:
            continue
        # (where, owner/name as written, number, url); a bare #N is this repository's
        hits: list[tuple[int, str, int, str | None]] = []
        if "#" in text:
            for m in _REF_NUM.finditer(text):
                before = text[m.start() - 1] if m.start() else " "
                if not (before.isalnum() or before in "_/&#"):
                    hits.append((m.start(), repo or "", int(m.group(1)), None))
        if "github.com/" in text:
            for m in _REF_URL.finditer(text):
                hits.append(
                    (m.start(), f"{m.group(1)}/{m.group(2)}", int(m.group(3)), "https://" + m.group(0))
                )
        for start, written, num, url in hits:
            target = written.lower()
            if target == owner_name and num == number:
                continue
            before = text[max(0, start - 60) : start]
            if url:
                before = before.removesuffix("https://").removesuffix("http://")
            last = _last_word_char(before)
            if last in _FIXES_LAST and _REF_FIXES.search(before):
                rel = "fixes"
            elif "revert" in before[-40:].lower():
                rel = "revert"
            elif last in _FOLLOW_LAST and _REF_FOLLOW.search(before):
                rel = "follow-up"
            else:
                rel = "mentions"
            key = (target, num)
            old = found.get(key)
            if old is None:
                title = state = None
                if target == owner_name and known_prs and num in known_prs:
                    title, state = known_prs[num]
                other = written if target != owner_name else None
                found[key] = CrossRef(num, rel, title, state, url, other)
            elif rank[rel] > rank[old.relation]:
                old.relation = rel
            if len(found) >= 50:
                break
    return list(found.values())
