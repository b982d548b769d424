"""The text sections of the model's context, each a plain string built from the record and analysis.

Why this order inside the heuristics section: the open items and the risks with their evidence are
what the brief's 未闭环 / "left open" needs and what a budget clips first when they come last, so they
lead; the verdict and scores follow, labelled as hints that can be wrong.

Pure: record + analysis in, text out.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict
from typing import Any

from ..analysis.model import Analysis
from ..analysis.risks import RISK_OF_SIGNAL
from ..records import PRRecord

BOT_LOGINS = {
    "codecov",
    "github-actions",
    "dependabot",
    "coderabbitai",
    "gemini-code-assist",
    "copilot",
    "mergify",
}
POINTED_LINES = 4  # lines of the diff hunk an inline comment points at, shown under the comment
_COMMENT_RX = re.compile(r"<!--.*?-->", re.S)
_UNCHECKED_RX = re.compile(r"^\s*[-*]\s*\[ \]\s.*$", re.M)


def strip_template(body: str) -> str:
    """The description without template boilerplate: HTML comments, unticked checklists, empty headings."""
    text = _COMMENT_RX.sub("", body or "")
    text = _UNCHECKED_RX.sub("", text)
    lines = text.replace("\r\n", "\n").split("\n")
    out: list[str] = []
    for i, line in enumerate(lines):
        if re.match(r"^\s*#{1,6}\s", line):
            # a heading followed only by blank lines until the next heading: an unfilled template section
            rest = next((x for x in lines[i + 1 :] if x.strip()), None)
            if rest is None or re.match(r"^\s*#{1,6}\s", rest):
                continue
        out.append(line)
    return re.sub(r"\n{3,}", "\n\n", "\n".join(out)).strip()


def description_text(record: PRRecord, analysis: Analysis | None) -> str:
    if analysis is not None and analysis.description.text.strip():
        return analysis.description.text.strip()
    return strip_template(record.body)


def _login(obj: dict) -> str:
    user = obj.get("user")
    return (user.get("login") if isinstance(user, dict) else None) or "ghost"


def is_bot(obj: dict) -> bool:
    user = obj.get("user") if isinstance(obj.get("user"), dict) else {}
    login = (user.get("login") or "").lower()
    return user.get("type") == "Bot" or login.endswith("[bot]") or login in BOT_LOGINS


def _pointed_code(comment: dict) -> str:
    """The last lines of the diff hunk an inline comment is attached to: the code it talks about."""
    hunk = (comment.get("diff_hunk") or "").rstrip("\n").split("\n")
    lines = [x for x in hunk[1:] if x.strip()][-POINTED_LINES:]
    return "\n".join("    | " + x for x in lines)


def discussion_items(record: PRRecord) -> list[str]:
    """One entry per human comment or review, oldest first; bots, empty and duplicate texts dropped.

    Inline comments say whether their thread is resolved (when the source knows) and show the code
    they point at; replies sit under their thread's first comment.
    """
    seen: set[str] = set()
    rows = [(c.get("created_at") or "", "comment", c) for c in record.issue_comments]
    rows += [(r.get("submitted_at") or "", "review", r) for r in record.reviews]
    roots = [c for c in record.review_comments if not c.get("in_reply_to_id")]
    replies: dict[Any, list[dict]] = {}
    for c in record.review_comments:
        if c.get("in_reply_to_id"):
            replies.setdefault(c["in_reply_to_id"], []).append(c)
    rows += [(c.get("created_at") or "", "inline", c) for c in roots]
    rows.sort(key=lambda r: r[0])
    known_roots = {c.get("id") for c in roots}
    # replies whose root is not stored stand on their own
    for root_id, cs in replies.items():
        if root_id not in known_roots:
            rows += [(c.get("created_at") or "", "inline", c) for c in cs]
    items: list[str] = []
    for _when, kind, c in rows:
        body = (c.get("body") or "").strip()
        state = c.get("state") if kind == "review" else None
        if is_bot(c) or (not body and state not in ("CHANGES_REQUESTED", "APPROVED")):
            continue
        key = re.sub(r"\s+", " ", body).lower()
        if body and key in seen:
            continue
        seen.add(key)
        what = f" ({state})" if state else ""
        if kind != "inline":
            items.append(f"- @{_login(c)}{what}: {body}")
            continue
        thread = [c] + sorted(replies.get(c.get("id"), []), key=lambda x: x.get("created_at") or "")
        resolved = next(
            (x.get("thread_resolved") for x in thread if x.get("thread_resolved") is not None), None
        )
        status = {True: "resolved", False: "UNRESOLVED", None: "status unknown"}[resolved]
        line = c.get("line") or c.get("original_line") or ""
        entry = [f"- @{_login(c)} on {c.get('path')}:{line} [thread {status}]: {body}"]
        code = _pointed_code(c)
        if code:
            entry.append(code)
        for r in thread[1:]:
            rb = (r.get("body") or "").strip()
            if rb and not is_bot(r):
                seen.add(re.sub(r"\s+", " ", rb).lower())
                entry.append(f"  - reply @{_login(r)}: {rb}")
        items.append("\n".join(entry))
    return items


def commits_text(record: PRRecord) -> str:
    """Commit messages that say more than the title: merges, duplicates and one-word fixups dropped."""
    title = " ".join((record.title or "").split()).lower()
    seen: set[str] = {title}
    out = []
    for c in record.commits:
        msg = ((c.get("commit") or {}).get("message") or c.get("message") or "").strip()
        first = msg.split("\n", 1)[0].strip()
        key = " ".join(msg.split()).lower()
        if not msg or key in seen or first.lower().startswith("merge ") or len(key) < 12:
            continue
        seen.add(key)
        out.append("- " + msg.replace("\n", "\n  "))
    return "\n".join(out)


def _evidence(e) -> str:
    where = f"{e.file}{':' + str(e.line) if e.line else ''}" if e.file else "text"
    return f"{where}: {e.text}"


def heuristics_text(analysis: Analysis | None) -> str:
    """Our pre-analysis: open items and risks with evidence first, then verdict, key files, symbols."""
    if analysis is None:
        return ""
    a = analysis
    lines = [f"open: {item}" for item in a.open_items[:8]]
    # the judged risks (kind, why, the lines that show it); then the themes and signals no judged risk
    # covers: what the patterns saw that the rules did not call a risk
    for r in a.risks:
        lines.append(f"risk {r.kind}: {r.why}")
        lines += [f"  evidence {_evidence(e)}" for e in r.evidence[:3]]
    judged = {r.kind for r in a.risks}
    covered = [s for s in a.signals if RISK_OF_SIGNAL.get(s.name, ("",))[0] in judged]
    risky = [
        s
        for s in a.signals
        if s.name.startswith(("risk.", "api.", "config.", "deps.", "tests.missing"))
        and s.evidence
        and s not in covered
    ]
    for s in risky[:6]:
        lines.append(f"theme {s.name}: {s.label}")
        lines += [f"  evidence {_evidence(e)}" for e in s.evidence[:3]]
    lines.append(f"verdict hint: {a.verdict}; effort {a.effort}/5; about {a.minutes} min")
    if a.audience:
        lines.append(f"audience hint: {a.audience}")
    if a.deciding:
        lines.append("deciding signals: " + "; ".join(a.deciding))
    if a.areas:
        lines.append("areas: " + ", ".join(a.areas))
    for s in a.signals[:10]:
        if s in risky[:6] or s in covered:
            continue
        ev = "; ".join(_evidence(e) for e in s.evidence[:2])
        lines.append(f"signal {s.name} ({s.weight:+.1f}): {s.label}" + (f" — {ev}" if ev else ""))
    for k in a.key_files[:6]:
        sym = f" symbols: {', '.join(k.symbols[:6])}" if k.symbols else ""
        lines.append(f"key file {k.filename} ({k.role}, +{k.additions}/−{k.deletions}): {k.reason}.{sym}")
    if a.key_symbols:
        lines.append("key symbols: " + ", ".join(a.key_symbols[:12]))
    d = a.description
    for key, v in (
        ("root_cause", d.root_cause),
        ("test_plan", d.test_plan),
        ("numbers", d.numbers),
        ("open_items", d.open_items),
    ):
        if v:
            lines.append(f"description {key}: {_flat(v)}")
    for key, v in asdict(a.discussion).items():
        if v:
            lines.append(f"discussion {key}: {_flat(v)}")
    if a.truncated:
        lines.append("data gaps: " + "; ".join(a.truncated))
    return "\n".join(lines)


def _flat(v: Any) -> str:
    if isinstance(v, list | tuple):
        return " | ".join(str(x) for x in v[:6])
    return v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)


def crossref_text(analysis: Analysis | None) -> str:
    if analysis is None:
        return ""
    return "\n".join(
        f"- {x.name} ({x.relation}): {x.title or 'title unknown'} [{x.state or 'state unknown'}]"
        for x in analysis.cross_refs
    )
