"""The model's input under a token budget: what it sees, in priority order, and what it did not see.

Order (PR-Agent's lesson: say what was left out, or a partial review looks complete):
title; description without template boilerplate; discussion (bots and duplicates dropped); our
heuristics summary; cross-referenced PRs; the team's final briefs as style examples (nearest by area);
then the key files' hunks (each with its enclosing-function @@ header), other files' hunks,
deletion-only hunks last; every file not shown is listed with its stats, and the prompt names the
files left out or clipped. Every piece of PR text is fenced as data.

Pure: record + analysis in, messages out. Counting is exact (o200k via bpe-openai).
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..analysis.model import Analysis
from ..brief import check_lang
from ..config import WorkbenchError
from ..records import PRRecord
from . import tokens

PROMPTS_DIR = Path(__file__).resolve().parent / "prompts"
DEFAULT_BUDGET = 16000

# Share of the budget (after the system prompt) each text section may take at most; what a section
# does not use flows on to the patches.
CAPS = {
    "title": 0.02,
    "description": 0.22,
    "discussion": 0.14,
    "heuristics": 0.08,
    "crossrefs": 0.03,
    "examples": 0.15,
}
FLOORS = {"title": 120, "description": 150}  # even a tiny budget shows the title and the description's start
# kept free for the one corrective message the LLM drafter may add after a wrong-language reply
CORRECTION_RESERVE = 120
MAX_HUNK_SHARE = 0.4  # one hunk never takes more than this share of the patch budget: clipped instead
_ROLE_ORDER = {"code": 0, "test": 1, "config": 2, "build": 3, "ci": 4, "notebook": 5, "docs": 6, "data": 7}
_NO_PATCH_ROLES = {"generated", "binary"}
BOT_LOGINS = {
    "codecov",
    "github-actions",
    "dependabot",
    "coderabbitai",
    "gemini-code-assist",
    "copilot",
    "mergify",
}


@dataclass
class Example:
    """A final brief the team wrote, offered as a style example."""

    number: int
    text: str
    areas: list[str] = field(default_factory=list)
    repo: str = ""


@dataclass
class Context:
    messages: list[dict[str, str]]
    tokens: int  # exact o200k count of `messages` with chat framing
    budget: int
    lang: str
    prompt_version: str
    left_out: list[str] = field(default_factory=list)  # files whose diff the model did not see at all
    clipped: list[str] = field(default_factory=list)  # files shown in part
    sections: dict[str, int] = field(default_factory=dict)  # section -> tokens
    key_hunks_total: int = 0
    key_hunks_shown: int = 0
    examples_used: list[int] = field(default_factory=list)
    reserved: int = 0  # tokens kept for the response schema sent beside the messages

    def render(self) -> str:
        """The exact messages, for `--show-context` and the UI."""
        out = []
        for m in self.messages:
            out.append(f"===== {m['role']} =====\n{m['content']}")
        out.append(
            f"===== {self.tokens} tokens (o200k, framing included) of a {self.budget} budget; "
            f"{len(self.left_out)} files left out, {len(self.clipped)} clipped ====="
        )
        return "\n".join(out)


# ---- prompt files ------------------------------------------------------------------------------------
def prompt_version() -> str:
    return (PROMPTS_DIR / "VERSION").read_text(encoding="utf-8").strip()


def system_prompt(lang: str) -> str:
    return (PROMPTS_DIR / f"system_{check_lang(lang)}.md").read_text(encoding="utf-8").strip()


def response_schema() -> dict[str, Any]:
    return json.loads((PROMPTS_DIR / "brief_schema.json").read_text(encoding="utf-8"))


def _labels(lang: str) -> dict[str, str]:
    return json.loads((PROMPTS_DIR / "user_labels.json").read_text(encoding="utf-8"))[lang]


# ---- fencing -----------------------------------------------------------------------------------------
def fence(text: str, info: str = "untrusted") -> str:
    """A code block the text cannot close: the fence is longer than any backtick run inside."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{info}\n{text.rstrip()}\n{ticks}"


# ---- the PR's own text ---------------------------------------------------------------------------------
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


def discussion_items(record: PRRecord) -> list[str]:
    """One line per human comment or review, oldest first; bots, empty and duplicate texts dropped."""
    seen: set[str] = set()
    items: list[tuple[str, str]] = []
    rows = [(c.get("created_at") or "", "comment", c) for c in record.issue_comments]
    rows += [(r.get("submitted_at") or "", "review", r) for r in record.reviews]
    rows += [(c.get("created_at") or "", "inline", c) for c in record.review_comments]
    rows.sort(key=lambda r: r[0])
    for when, kind, c in rows:
        body = (c.get("body") or "").strip()
        state = c.get("state") if kind == "review" else None
        if is_bot(c) or (not body and state not in ("CHANGES_REQUESTED", "APPROVED")):
            continue
        key = re.sub(r"\s+", " ", body).lower()
        if body and key in seen:
            continue
        seen.add(key)
        where = (
            f" on {c.get('path')}:{c.get('line') or c.get('original_line') or ''}" if kind == "inline" else ""
        )
        what = f" ({state})" if state else ""
        items.append((when, f"- @{_login(c)}{what}{where}: {body}"))
    return [x for _, x in items]


def heuristics_text(analysis: Analysis | None) -> str:
    if analysis is None:
        return ""
    a = analysis
    lines = [f"verdict: {a.verdict}; effort {a.effort}/5; about {a.minutes} min"]
    if a.audience:
        lines.append(f"audience: {a.audience}")
    if a.deciding:
        lines.append("deciding signals: " + "; ".join(a.deciding))
    if a.areas:
        lines.append("areas: " + ", ".join(a.areas))
    for s in a.signals[:8]:
        ev = "; ".join(
            f"{e.file or 'text'}{':' + str(e.line) if e.line else ''}: {e.text}" for e in s.evidence[:2]
        )
        lines.append(f"signal {s.name} ({s.weight:+.1f}): {s.label}" + (f" — {ev}" if ev else ""))
    for k in a.key_files[:6]:
        sym = f" symbols: {', '.join(k.symbols[:6])}" if k.symbols else ""
        lines.append(f"key file {k.filename} ({k.role}, +{k.additions}/−{k.deletions}): {k.reason}.{sym}")
    if a.key_symbols:
        lines.append("key symbols: " + ", ".join(a.key_symbols[:12]))
    for item in a.open_items[:6]:
        lines.append(f"open: {item}")
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


# ---- hunks --------------------------------------------------------------------------------------------
@dataclass
class _Hunk:
    file_idx: int
    idx: int
    text: str  # "@@ ... @@ section" + lines
    deletion_only: bool
    tokens: int = -1


def split_hunks(patch: str | None) -> list[tuple[str, bool]]:
    """(hunk text with its @@ header, deletion-only?) per hunk; fast string splitting, no full parse."""
    if not patch:
        return []
    parts = re.split(r"(?m)^(?=@@ )", patch.replace("\r\n", "\n"))
    out = []
    for part in parts:
        if not part.startswith("@@"):
            continue
        body = part.split("\n")[1:]
        adds = any(x.startswith("+") for x in body)
        dels = any(x.startswith("-") for x in body)
        out.append((part.rstrip("\n"), dels and not adds))
    return out


def _role(filename: str) -> str:
    try:
        from ..analysis.diff import file_role

        return file_role(filename)
    except Exception:  # the diff model is optional here: a plain guess is enough to order files
        return "code"


def _file_order(record: PRRecord, analysis: Analysis | None) -> tuple[list[int], set[int]]:
    key_names = [k.filename for k in (analysis.key_files if analysis else [])]
    index = {f.get("filename"): i for i, f in enumerate(record.files)}
    key_idx = [index[n] for n in key_names if n in index]
    keys = set(key_idx)
    rest = [i for i in range(len(record.files)) if i not in keys]

    def rank(i: int) -> tuple:
        f = record.files[i]
        size = int(f.get("additions") or 0) + int(f.get("deletions") or 0)
        return (_ROLE_ORDER.get(_role(f.get("filename") or ""), 9), -size, f.get("filename") or "")

    rest.sort(key=rank)
    return key_idx + rest, keys


def _stat_line(f: dict, note: str = "") -> str:
    status = f.get("status") or "modified"
    name = f.get("filename") or "?"
    if f.get("previous_filename") and status == "renamed":
        name = f"{f['previous_filename']} -> {name}"
    extra = f"; {note}" if note else ""
    return f"- {name} ({_role(f.get('filename') or '')}, {status}, +{int(f.get('additions') or 0)}/−{int(f.get('deletions') or 0)}{extra})"


# ---- assembly -------------------------------------------------------------------------------------------
def _section(title: str, body: str, info: str = "untrusted") -> str:
    return f"## {title}\n{fence(body, info)}" if body.strip() else ""


def _clip_section(title: str, body: str, cap: int, clipped_names: list[str], name: str) -> str:
    if not body.strip() or cap <= 40:
        if body.strip():
            clipped_names.append(name)
        return ""
    text = _section(title, body)
    if tokens.count(text) <= cap:
        return text
    clipped_names.append(name)
    inner, _ = tokens.clip(body, max(0, cap - 40))
    return _section(title + " (clipped to fit the budget)", inner + "\n[… clipped]")


def _pick_examples(examples, analysis: Analysis | None, number: int) -> list[Example]:
    areas = set(analysis.areas if analysis else [])
    cands = [e for e in examples if e.number != number and e.text.strip()]
    cands.sort(key=lambda e: (-len(areas & set(e.areas)), -e.number))
    return cands


def build_context(
    record: PRRecord,
    analysis: Analysis | None,
    *,
    lang: str,
    budget: int = DEFAULT_BUDGET,
    examples=(),
) -> Context:
    lang = check_lang(lang)
    labels = _labels(lang)
    system = system_prompt(lang)
    reserved = tokens.count(json.dumps(response_schema(), ensure_ascii=False)) + CORRECTION_RESERVE
    base_msgs = [
        {"role": "system", "content": system},
        {"role": "user", "content": labels["intro"] + "\n\n" + labels["reply"]},
    ]
    fixed = tokens.count_messages(base_msgs) + reserved + 64  # 64: the join newlines and the header line
    if fixed > budget:
        raise WorkbenchError(
            f"a {budget}-token budget cannot hold even the instructions ({fixed} tokens): use --budget {fixed + 2000} or more"
        )
    room = budget - fixed
    first = _fit(record, analysis, lang, budget, examples, system, labels, reserved, room, extra=0)
    slack = budget - first["total"] - reserved
    if first["section_notes"] and slack > 150:
        # a section was clipped to its cap but the diff did not need the room: give it the slack
        extra = (slack - 100) // len(first["section_notes"])
        first = _fit(record, analysis, lang, budget, examples, system, labels, reserved, room, extra=extra)
    parts, messages, total = first["parts"], first["messages"], first["total"]
    diff_part, stats_part, left_out, clipped = (
        first["diff"],
        first["stats"],
        first["left_out"],
        first["clipped"],
    )
    key_total, key_shown, chosen = first["key_total"], first["key_shown"], first["chosen"]
    sections: dict[str, int] = {}
    for name, text in parts:
        sections[name] = tokens.count(text)
    sections["diff"] = tokens.count(diff_part)
    sections["file_stats"] = tokens.count(stats_part)
    return Context(
        messages=messages,
        tokens=total,
        budget=budget,
        lang=lang,
        prompt_version=prompt_version(),
        left_out=left_out,
        clipped=clipped,
        sections=sections,
        key_hunks_total=key_total,
        key_hunks_shown=key_shown,
        examples_used=[n for n, _ in chosen],
        reserved=reserved,
    )


def _fit(
    record, analysis, lang, budget, examples, system, labels, reserved, room, *, extra: int
) -> dict[str, Any]:
    """One assembly: text sections within their caps (+extra), examples, then files in what is left."""
    section_notes: list[str] = []

    f_count = len(record.files)
    author = re.sub(r"[^A-Za-z0-9_.\-\[\]]", "", record.author or "ghost")
    header = (
        f"## PR\n{record.repo}#{record.number} · {record.state} · @{author} · "
        f"+{record.additions}/−{record.deletions} · {f_count} files"
        + (" (GitHub lists at most 3,000: more exist)" if record.files_truncated else "")
    )
    parts: list[tuple[str, str]] = [("header", header)]
    plan = [
        ("title", "Title", record.title),
        ("description", "Description (template boilerplate removed)", description_text(record, analysis)),
        ("discussion", "Discussion (bots and duplicates dropped)", "\n".join(discussion_items(record))),
        (
            "heuristics",
            "Heuristics (our pre-analysis; file names and quotes come from the PR)",
            heuristics_text(analysis),
        ),
        ("crossrefs", "Cross-referenced PRs", crossref_text(analysis)),
    ]
    for name, title, body in plan:
        cap = max(int(room * CAPS[name]), FLOORS.get(name, 0)) + extra
        text = _clip_section(title, body, cap, section_notes, name)
        if text:
            parts.append((name, text))
    used = sum(tokens.count(t) + 1 for _, t in parts)

    # style examples: nearest by area first, whole examples only, within their cap
    ex_cap = min(int(room * CAPS["examples"]), max(0, room - used) // 3)
    ex_used, chosen = 0, []
    for ex in _pick_examples(examples, analysis, record.number):
        block = f"### Example: a final brief for #{ex.number}\n{fence(ex.text, 'untrusted example')}"
        n = tokens.count(block) + 1
        if ex_used + n <= ex_cap:
            chosen.append((ex.number, block))
            ex_used += n
    if chosen:
        intro = "## The team's final briefs (follow their style and tone, not their content)"
        parts.append(("examples", intro + "\n" + "\n".join(b for _, b in chosen)))
        used += tokens.count(parts[-1][1]) + 1

    files_room = max(0, room - used)
    # exact check; the parts were counted one by one, so re-assemble the files smaller until the whole fits
    for _attempt in range(8):
        diff_part, stats_part, left_out, clipped, key_total, key_shown = _assemble_files(
            record, analysis, files_room
        )
        body_parts = [t for _, t in parts] + [diff_part, _notes(left_out, clipped, section_notes), stats_part]
        user = labels["intro"] + "\n\n" + "\n\n".join(p for p in body_parts if p) + "\n\n" + labels["reply"]
        messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        total = tokens.count_messages(messages)
        if total + reserved <= budget:
            break
        files_room = max(0, files_room - (total + reserved - budget) - 50)
    else:
        raise WorkbenchError(f"could not fit the context into {budget} tokens: raise --budget")
    return {
        "parts": parts,
        "messages": messages,
        "total": total,
        "diff": diff_part,
        "stats": stats_part,
        "left_out": left_out,
        "clipped": clipped,
        "key_total": key_total,
        "key_shown": key_shown,
        "chosen": chosen,
        "section_notes": section_notes,
    }


def _notes(left_out: list[str], clipped: list[str], section_notes: list[str]) -> str:
    out = []
    if left_out or clipped:
        out.append(
            f"NOTE: you did not see the diff of {len(left_out)} file(s) (listed below with their stats) "
            f"and saw {len(clipped)} file(s) only in part. Do not describe what you have not seen; say in "
            f"open_items when it matters."
        )
    if section_notes:
        out.append("NOTE: these sections were clipped to fit the budget: " + ", ".join(section_notes) + ".")
    return "\n".join(out)


def _assemble_files(
    record: PRRecord, analysis: Analysis | None, room: int, stats_reserve: int | None = None
) -> tuple[str, str, list[str], list[str], int, int]:
    """(diff text, stats text, left-out files, clipped files, key hunks total, key hunks shown) within `room`."""
    if stats_reserve is None:
        # keep room for the stats lines of files we may not show (bounded: a 3,000-file PR lists what fits);
        # when the stats turn out smaller than the reserve, hand the difference back to the hunks
        reserve = min(int(room * 0.15), 30 * len(record.files) + 200)
        first = _assemble_files(record, analysis, room, reserve)
        needed = tokens.count(first[1])
        if first[2] and needed + 150 < reserve:
            return _assemble_files(record, analysis, room, needed + 100)
        return first
    order, keys = _file_order(record, analysis)
    hunks: list[_Hunk] = []
    per_file: dict[int, int] = {}
    for i in order:
        f = record.files[i]
        if _role(f.get("filename") or "") in _NO_PATCH_ROLES:
            per_file[i] = 0
            continue
        hs = split_hunks(f.get("patch"))
        per_file[i] = len(hs)
        hunks.extend(_Hunk(i, j, text, del_only) for j, (text, del_only) in enumerate(hs))
    key_total = sum(1 for h in hunks if h.file_idx in keys)
    rank = {i: r for r, i in enumerate(order)}

    # key files before the rest; within each, deletion-only hunks are the first to go
    def tier(h: _Hunk) -> int:
        return (0 if h.file_idx in keys else 2) + (1 if h.deletion_only else 0)

    # key files take turns (first hunk of each, then the second, ...) so that a huge key file cannot
    # crowd the others out; other files go file by file
    def order_key(h: _Hunk) -> tuple:
        t = tier(h)
        return (t, h.idx, rank[h.file_idx]) if t < 2 else (t, rank[h.file_idx], h.idx)

    hunks.sort(key=order_key)

    patch_room = max(0, room - stats_reserve - 60)
    max_hunk = max(200, int(patch_room * MAX_HUNK_SHARE))
    chosen: dict[int, list[tuple[int, str]]] = {}
    clipped_files: set[int] = set()
    spent = 0
    for h in hunks:
        if patch_room - spent < 40:
            break
        overhead = (
            0 if h.file_idx in chosen else 30 + tokens.count(record.files[h.file_idx].get("filename") or "")
        )
        cost = tokens.count(h.text) + 1
        text = h.text
        limit = min(max_hunk, patch_room - spent - overhead)
        if cost > limit:
            if limit < 120 or h.deletion_only:
                continue
            text, _ = tokens.clip(h.text, limit - 20)
            text += "\n[… hunk clipped]"
            cost = tokens.count(text) + 1
            clipped_files.add(h.file_idx)
        chosen.setdefault(h.file_idx, []).append((h.idx, text))
        spent += cost + overhead

    key_shown = sum(len(v) for i, v in chosen.items() if i in keys)
    blocks = []
    for i in order:
        if i not in chosen:
            continue
        f = record.files[i]
        shown = sorted(chosen[i])
        if len(shown) < per_file[i]:
            clipped_files.add(i)
        note = f"; {len(shown)} of {per_file[i]} hunks shown" if len(shown) < per_file[i] else ""
        # the file name is PR data too: it goes inside the fence, on the first line
        head = f"### File {len(blocks) + 1}{' (key file)' if i in keys else ''}{note}"
        body = _stat_line(f)[2:] + "\n" + "\n".join(t for _, t in shown)
        blocks.append(head + "\n" + fence(body, "untrusted diff"))
    diff = (
        (
            "## Diff (key files first; hunks carry their enclosing function in the @@ line)\n"
            + "\n".join(blocks)
        )
        if blocks
        else ""
    )

    left = [i for i in order if i not in chosen]
    left_out = [record.files[i].get("filename") or "?" for i in left]
    clipped = [record.files[i].get("filename") or "?" for i in order if i in clipped_files]
    stats = ""
    if left or clipped:
        stats_room = room - spent - 60
        lines, n_used = [], 0
        entries = [(i, "diff not shown" if per_file[i] else "no patch text") for i in left]
        entries += [(i, "shown in part") for i in order if i in clipped_files]
        for k, (i, note) in enumerate(entries):
            line = _stat_line(record.files[i], note)
            c = tokens.count(line) + 1
            if n_used + c > stats_room - 40:
                rest = entries[k:]
                adds = sum(int(record.files[j].get("additions") or 0) for j, _ in rest)
                dels = sum(int(record.files[j].get("deletions") or 0) for j, _ in rest)
                lines.append(f"- … and {len(rest)} more files (+{adds}/−{dels}) not listed for lack of room")
                break
            lines.append(line)
            n_used += c
        stats = "## Files left out or clipped (stats only)\n" + fence("\n".join(lines))
    return diff, stats, left_out, clipped, key_total, key_shown
