"""The model's input under a token budget: what a reader of the brief needs, in that order, and what
the model did not see.

Order and budget follow what the brief needs (issue 12): the description (boilerplate stripped); our
heuristics with their open items and risk evidence first; the key files' added code with the
enclosing function in each @@ line; the discussion with each thread's status and the code an inline
comment points at; commit messages; cross-referenced PRs; style examples (the team's final briefs, or
the built-in one); then the other files. Patches are made cheap before they are cut: unchanged context
trimmed, deletion-only hunks collapsed to what was removed, tests shown as names and asserts unless
the PR is about tests (see hunks.py). Every file not shown is listed with its stats and the prompt
says what was left out. Every piece of PR text sits inside a fence whose tag is random per request.

Pure: record + analysis in, messages out. Counting is exact (o200k via bpe-openai).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from ..analysis.model import Analysis
from ..brief import check_lang
from ..config import WorkbenchError
from ..records import PRRecord
from . import tokens
from .fencing import Fence, new_fence
from .hunks import effective_role, file_hunks, file_order, pr_shape, split_hunks
from .prompts import builtin_example, labels, prompt_version, response_schema, system_prompt
from .sections import (
    commits_text,
    crossref_text,
    description_text,
    discussion_items,
    heuristics_text,
    strip_template,
)

__all__ = [
    "DEFAULT_BUDGET",
    "Context",
    "Example",
    "build_context",
    "crossref_text",
    "description_text",
    "discussion_items",
    "heuristics_text",
    "prompt_version",
    "response_schema",
    "split_hunks",
    "strip_template",
    "system_prompt",
]

DEFAULT_BUDGET = 16000

# Share of the budget (after the instructions) each text section may take at most; what a section does
# not use flows on to the patches.
CAPS = {
    "title": 0.02,
    "description": 0.16,
    "heuristics": 0.12,
    "discussion": 0.12,
    "commits": 0.05,
    "crossrefs": 0.03,
    "examples": 0.12,
}
FLOORS = {"title": 120, "description": 150}  # even a tiny budget shows the title and the description's start
# kept free for the corrective user turn the LLM drafter may add after a wrong-language reply (the
# drafter rebuilds the context smaller when the assistant turn it repeats does not fit)
CORRECTION_RESERVE = 120
KEY_SHARE = 0.7  # the key files' share of the patch room while other files wait for theirs
MIN_FILE_SHARE = 200  # a file gets a look only with at least this many tokens: fewer files, each readable
_MIDDLE_ROLES = {"config", "build", "test", "ci", "notebook"}


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
    examples_used: list[int] = field(default_factory=list)  # team briefs used; [] with the built-in one
    builtin_example: bool = False  # the built-in example stood in for missing team briefs
    reserved: int = 0  # tokens kept for the response schema sent beside the messages
    fence_tag: str = ""  # this request's random fence tag

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


def _untrusted_texts(record: PRRecord, examples) -> list[str]:
    """Every piece of PR text that goes into the prompt: the fence tag must occur in none of them."""
    texts = [record.title, record.body, record.author or ""]
    for group in (record.issue_comments, record.reviews, record.review_comments):
        texts += [(c.get("body") or "") + (c.get("diff_hunk") or "") + (c.get("path") or "") for c in group]
    texts += [str((c.get("commit") or {}).get("message") or c.get("message") or "") for c in record.commits]
    texts += [(f.get("filename") or "") + (f.get("patch") or "") for f in record.files]
    texts += [e.text for e in examples]
    return texts


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
    seed: int | None = None,
) -> Context:
    """The messages for one PR within `budget` tokens (schema and a correction turn kept free).

    `seed` makes the fence tag reproducible (golden files, tests); leave it None in production.
    """
    lang = check_lang(lang)
    examples = list(examples)
    fence = new_fence(_untrusted_texts(record, examples), seed)
    words = {k: v.format(open=fence.opener, close=fence.closer) for k, v in labels(lang).items()}
    system = system_prompt(lang)
    reserved = tokens.count(json.dumps(response_schema(lang), ensure_ascii=False)) + CORRECTION_RESERVE
    base_msgs = [
        {"role": "system", "content": system},
        {"role": "user", "content": words["intro"] + "\n\n" + words["reply"]},
    ]
    fixed = tokens.count_messages(base_msgs) + reserved + 64  # 64: the join newlines and the header line
    if fixed > budget:
        raise WorkbenchError(
            f"a {budget}-token budget cannot hold even the instructions ({fixed} tokens): "
            f"use --budget {fixed + 2000} or more"
        )
    room = budget - fixed
    asm = _Assembly(record, analysis, lang, budget, examples, system, words, reserved, room, fence)
    first = asm.fit(extra=0)
    slack = budget - first["total"] - reserved
    if first["section_notes"] and slack > 150:
        # a section was clipped to its cap but the diff did not need the room: give it the slack
        first = asm.fit(extra=(slack - 100) // len(first["section_notes"]))
    sections = {name: tokens.count(text) for name, text in first["parts"]}
    return Context(
        messages=first["messages"],
        tokens=first["total"],
        budget=budget,
        lang=lang,
        prompt_version=prompt_version(),
        left_out=first["files"].left_out,
        clipped=first["files"].clipped,
        sections=sections,
        key_hunks_total=first["files"].key_total,
        key_hunks_shown=first["files"].key_shown,
        examples_used=first["examples_used"],
        builtin_example=first["builtin"],
        reserved=reserved,
        fence_tag=fence.tag,
    )


@dataclass
class _Files:
    key_diff: str
    other_diff: str
    stats: str
    left_out: list[str]
    clipped: list[str]
    key_total: int
    key_shown: int


class _Assembly:
    """One PR's context, assembled at a given extra allowance for the clipped text sections."""

    def __init__(self, record, analysis, lang, budget, examples, system, words, reserved, room, fence: Fence):
        self.record, self.analysis, self.lang, self.budget = record, analysis, lang, budget
        self.examples, self.system, self.words = examples, system, words
        self.reserved, self.room, self.fence = reserved, room, fence
        self.shape = pr_shape(record, analysis)
        self.order, self.keys = file_order(record, analysis, self.shape)
        self.hunks = {
            i: file_hunks(record, i, summarize_tests=not self.shape.about_tests and i not in self.keys)
            for i in self.order
        }
        # each hunk view's token count (+1 for its newline), counted once: assembly runs several times
        self.cost = {i: [tokens.count(h.text) + 1 for h in hs] for i, hs in self.hunks.items()}

    def _section(self, title: str, body: str, kind: str) -> str:
        return f"## {title}\n{self.fence(body, kind)}" if body.strip() else ""

    def _clip_section(self, title: str, body: str, kind: str, cap: int, notes: list[str], name: str) -> str:
        if not body.strip():
            return ""
        if cap <= 40:
            notes.append(name)
            return ""
        text = self._section(title, body, kind)
        if tokens.count(text) <= cap:
            return text
        notes.append(name)
        inner, _ = tokens.clip(body, max(0, cap - 40))
        return self._section(title + " (clipped to fit the budget)", inner + "\n[… clipped]", kind)

    def fit(self, *, extra: int) -> dict[str, Any]:
        rec, room = self.record, self.room
        notes: list[str] = []
        author = re.sub(r"[^A-Za-z0-9_.\-\[\]]", "", rec.author or "ghost")
        header = (
            f"## PR\n{rec.repo}#{rec.number} · {rec.state} · @{author} · "
            f"+{rec.additions}/−{rec.deletions} · {len(rec.files)} files"
            + (" (GitHub lists at most 3,000: more exist)" if rec.files_truncated else "")
        )
        plan = [
            ("title", "Title", rec.title, "title"),
            (
                "description",
                "Description (template boilerplate removed)",
                description_text(rec, self.analysis),
                "description",
            ),
            (
                "heuristics",
                "Heuristics (hints from pattern matching, can be wrong; open items and risk evidence first)",
                heuristics_text(self.analysis),
                "heuristics",
            ),
            (
                "discussion",
                "Discussion (bots and duplicates dropped; inline comments with thread status and the code they point at)",
                "\n".join(discussion_items(rec)),
                "discussion",
            ),
            ("commits", "Commit messages", commits_text(rec), "commits"),
            ("crossrefs", "Cross-referenced PRs", crossref_text(self.analysis), "crossrefs"),
        ]
        texts: dict[str, str] = {"header": header}
        for name, title, body, kind in plan:
            cap = max(int(room * CAPS[name]), FLOORS.get(name, 0)) + extra
            text = self._clip_section(title, body, kind, cap, notes, name)
            if text:
                texts[name] = text
        sources = {name: (title, body, kind) for name, title, body, kind in plan}
        used = sum(tokens.count(t) + 1 for t in texts.values())

        # style examples: the team's final briefs nearest by area, whole ones only; else the built-in one
        ex_cap = min(int(room * CAPS["examples"]), max(0, room - used) // 3)
        ex_used, chosen = 0, []
        for ex in _pick_examples(self.examples, self.analysis, rec.number):
            block = f"### Example: a final brief for #{ex.number}\n{self.fence(ex.text, 'example')}"
            n = tokens.count(block) + 1
            if ex_used + n <= ex_cap:
                chosen.append((ex.number, block))
                ex_used += n
        builtin = False
        if chosen:
            texts["examples"] = (
                "## The team's final briefs (follow their style and tone, not their content)\n"
                + "\n".join(b for _, b in chosen)
            )
        else:
            block = (
                "## Example brief (built in: follow its form and level of detail, not its content)\n"
                + builtin_example(self.lang)
            )
            if tokens.count(block) + 1 <= ex_cap:
                texts["examples"] = block
                builtin = True
        if "examples" in texts:
            used += tokens.count(texts["examples"]) + 1

        files_room = max(0, room - used)
        # exact check; the parts were counted one by one, so re-assemble the files smaller until the whole fits
        for _attempt in range(8):
            files = self._files(files_room)
            layout = [
                texts.get("header"),
                texts.get("title"),
                texts.get("description"),
                texts.get("heuristics"),
                files.key_diff,
                texts.get("discussion"),
                texts.get("commits"),
                texts.get("crossrefs"),
                texts.get("examples"),
                files.other_diff,
                _notes(files.left_out, files.clipped, notes),
                files.stats,
            ]
            body = "\n\n".join(p for p in layout if p)
            user = self.words["intro"] + "\n\n" + body + "\n\n" + self.words["reply"]
            messages = [{"role": "system", "content": self.system}, {"role": "user", "content": user}]
            total = tokens.count_messages(messages)
            over = total + self.reserved - self.budget
            if over <= 0:
                break
            if files_room == 0:
                # the files are down to their list, which always shows (a tiny budget, many files): what
                # is over comes out of the largest section instead
                name = max(
                    (n for n in sources if n in texts), key=lambda n: tokens.count(texts[n]), default=None
                )
                if name is None:
                    continue
                cap = tokens.count(texts[name]) - over - 20
                texts[name] = self._clip_section(*sources[name], cap, notes, name)
                notes = list(dict.fromkeys(notes))  # clipped twice, said once
            files_room = max(0, files_room - over - 50)
        else:
            raise WorkbenchError(f"could not fit the context into {self.budget} tokens: raise --budget")
        parts = [(k, v) for k, v in texts.items()]
        parts += [("key_diff", files.key_diff), ("other_diff", files.other_diff), ("file_stats", files.stats)]
        return {
            "parts": parts,
            "messages": messages,
            "total": total,
            "files": files,
            "examples_used": [n for n, _ in chosen],
            "builtin": builtin,
            "section_notes": notes,
        }

    # ---- files -------------------------------------------------------------------------------------
    def _overhead(self, i: int) -> int:
        return 40 + tokens.count(self.record.files[i].get("filename") or "")

    def _need(self, i: int) -> int:
        """Tokens to show file i whole (as its views: trimmed, collapsed or summarised)."""
        return self._overhead(i) + sum(self.cost[i])

    def _take(self, i: int, alloc: int) -> tuple[int, list[tuple[int, str]], bool]:
        """(tokens used, [(hunk index, text)], cut?) for file i within `alloc` tokens: hunks in order,
        the first that does not fit clipped when enough room is left, the ones after it only if they fit."""
        room = alloc - self._overhead(i)
        shown, used, cut = [], 0, False
        for h, cost in zip(self.hunks[i], self.cost[i], strict=True):
            if cost <= room - used:
                shown.append((h.idx, h.text))
                used += cost
            elif room - used >= 150 and not cut:
                text, _ = tokens.clip(h.text, room - used - 20)
                text += "\n[… hunk clipped]"
                shown.append((h.idx, text))
                used += tokens.count(text) + 1
                cut = True
            else:
                cut = True
        return (used + self._overhead(i) if shown else 0), shown, cut

    def _expand(self, chosen: dict[int, list[tuple[int, str]]], left: int) -> int:
        """With room left over, show summarised hunks whole: deletion-only hunks, then test files.

        Summaries exist to save room for other files; once every file had its share they only hide
        code (a revert that deletes a function should show it). Returns the tokens added."""
        added = 0
        for want_tests in (False, True):
            for i in self.order:
                by_idx = {h.idx: h for h in self.hunks[i]}
                for k, (idx, text) in enumerate(chosen.get(i, [])):
                    h = by_idx.get(idx)
                    if h is None or h.full is None or text != h.text or h.deletion_only == want_tests:
                        continue
                    extra = tokens.count(h.full) - tokens.count(h.text)
                    if extra <= left - added:
                        chosen[i][k] = (idx, h.full)
                        added += extra
        return added

    def _files(self, room: int, stats_reserve: int | None = None) -> _Files:
        rec = self.record
        if stats_reserve is None:
            # keep room for the stats lines of files we may not show (bounded: a 3,000-file PR lists what
            # fits); when the stats turn out smaller than the reserve, hand the difference back to the hunks
            reserve = min(int(room * 0.15), 30 * len(rec.files) + 200)
            first = self._files(room, reserve)
            needed = tokens.count(first.stats)
            if first.left_out and needed + 150 < reserve:
                return self._files(room, needed + 100)
            return first
        order, keys = self.order, self.keys
        key_total = sum(len(self.hunks[i]) for i in keys)
        patch_room = max(0, room - stats_reserve - 60)
        need = {i: self._need(i) for i in order if self.hunks[i]}
        # tiers, each shared fairly (water-filling) among its files in rank order: the key files (at most
        # KEY_SHARE of the room while other files wait), then the other code (design docs and manifests
        # count as code when the PR is theirs), then config/build/tests/CI, then the rest
        tiers: list[list[int]] = [[i for i in order if i in keys and i in need], [], [], []]
        for i in order:
            if i in need and i not in keys:
                role = effective_role(self.record.files[i].get("filename") or "", self.shape)
                tiers[1 if role == "code" else 2 if role in _MIDDLE_ROLES else 3].append(i)
        rest_need = sum(need[i] for t in tiers[1:] for i in t)
        key_floor = sum(min(need[i], MIN_FILE_SHARE) for i in tiers[0])  # every key file gets a look
        key_room = min(patch_room, max(int(patch_room * KEY_SHARE), patch_room - rest_need, key_floor))
        chosen: dict[int, list[tuple[int, str]]] = {}
        clipped_files: set[int] = set()
        spent = 0
        for t, files in enumerate(tiers):
            tier_room = (key_room if t == 0 else patch_room) - spent
            for i, alloc in _water_fill([(i, need[i]) for i in files], tier_room).items():
                used, shown, cut = self._take(i, alloc)
                if shown:
                    chosen[i] = shown
                    spent += used
                    if cut:
                        clipped_files.add(i)
        spent += self._expand(chosen, patch_room - spent)

        key_shown = sum(len(v) for i, v in chosen.items() if i in keys)
        key_blocks, other_blocks = [], []
        for i in order:
            if i not in chosen:
                continue
            f = rec.files[i]
            shown = sorted(chosen[i])
            n = len(self.hunks[i])
            if len(shown) < n:
                clipped_files.add(i)
            note = f"; {len(shown)} of {n} hunks shown" if len(shown) < n else ""
            blocks = key_blocks if i in keys else other_blocks
            # the file name is PR data too: it goes inside the fence, on the first line
            head = f"### File {len(key_blocks) + len(other_blocks) + 1}{' (key file)' if i in keys else ''}{note}"
            body = _stat_line(f)[2:] + "\n" + "\n".join(t for _, t in shown)
            blocks.append(head + "\n" + self.fence(body, "diff"))
        key_diff = (
            "## Key files' diff (hunks carry their enclosing function in the @@ line)\n"
            + "\n".join(key_blocks)
            if key_blocks
            else ""
        )
        other_diff = "## Other files' diff\n" + "\n".join(other_blocks) if other_blocks else ""

        left = [i for i in order if i not in chosen]
        left_out = [rec.files[i].get("filename") or "?" for i in left]
        clipped = [rec.files[i].get("filename") or "?" for i in order if i in clipped_files]
        stats = ""
        if left or clipped:
            stats_room = room - spent - 60
            lines, n_used = [], 0
            entries = [(i, "diff not shown" if self.hunks[i] else "no patch text") for i in left]
            entries += [(i, "shown in part") for i in order if i in clipped_files]
            for k, (i, note) in enumerate(entries):
                line = _stat_line(rec.files[i], note)
                c = tokens.count(line) + 1
                if n_used + c > stats_room - 40:
                    rest = entries[k:]
                    adds = sum(int(rec.files[j].get("additions") or 0) for j, _ in rest)
                    dels = sum(int(rec.files[j].get("deletions") or 0) for j, _ in rest)
                    lines.append(
                        f"- … and {len(rest)} more files (+{adds}/−{dels}) not listed for lack of room"
                    )
                    break
                lines.append(line)
                n_used += c
            stats = "## Files left out or clipped (stats only)\n" + self.fence("\n".join(lines), "file list")
        return _Files(key_diff, other_diff, stats, left_out, clipped, key_total, key_shown)


def _water_fill(needs: list[tuple[int, int]], room: int) -> dict[int, int]:
    """Share `room` among files fairly: small files get all they need, big ones split what is left.

    Only as many files (in rank order) as can each get MIN_FILE_SHARE (or all they need) take part: a 3,000-file PR shows
    its first files readably instead of every file as a crumb.
    """
    if room <= 0 or not needs:
        return {}
    k, floor = 0, 0
    while k < len(needs) and floor + min(needs[k][1], MIN_FILE_SHARE) <= room:
        floor += min(needs[k][1], MIN_FILE_SHARE)
        k += 1
    part = needs[: max(1, k)]
    out: dict[int, int] = {}
    left, pending = room, sorted(part, key=lambda x: x[1])
    while pending:
        share = left // len(pending)
        i, n = pending[0]
        if n <= share:
            out[i] = n
            left -= n
            pending.pop(0)
        else:
            for j, _ in pending:
                out[j] = share
            break
    order = [i for i, _ in needs]
    return {i: out[i] for i in order if i in out}


def _stat_line(f: dict, note: str = "") -> str:
    from .hunks import file_role

    status = f.get("status") or "modified"
    name = f.get("filename") or "?"
    if f.get("previous_filename") and status == "renamed":
        name = f"{f['previous_filename']} -> {name}"
    extra = f"; {note}" if note else ""
    adds, dels = int(f.get("additions") or 0), int(f.get("deletions") or 0)
    return f"- {name} ({file_role(f.get('filename') or '')}, {status}, +{adds}/−{dels}{extra})"


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
