"""Conclusions from signals: the verdict rules (one ordered table), effort and minutes, key files,
key symbols and open items. Pure functions; `heuristics.analyze` gathers the facts and calls these."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from operator import attrgetter

from ..records import PRRecord
from .conventions import Conventions
from .diff import FileDiff
from .model import Description, Discussion, KeyFile, Signal
from .signals import CodeFacts

READ_COST = {
    "code": 1.0,
    "test": 0.5,
    "config": 0.6,
    "ci": 0.7,
    "build": 0.5,
    "notebook": 0.5,
    "docs": 0.3,
    "data": 0.05,
    "generated": 0.0,
    "binary": 0.0,
}
# How much a file of each role matters when ranking key files.
ROLE_RANK = {
    "code": 1.0,
    "test": 0.6,
    "config": 0.7,
    "ci": 0.8,
    "build": 0.5,
    "notebook": 0.5,
    "docs": 0.4,
    "data": 0.2,
    "generated": 0.05,
    "binary": 0.05,
}
ROLE_AREAS = frozenset({"ci", "docs", "tests", "build", "examples", "benchmarks"})


@dataclass
class Facts:
    """What the verdict rules look at: scope, size, score, and the signals themselves.

    Built once the signals are final: `risk_themes` is counted on first use and kept."""

    files: list[FileDiff]
    roles: dict[str, int]  # role -> changed lines
    scope: frozenset[str]  # roles that matter for "X-only" (generated and binary left out when others exist)
    churn: int  # changed lines outside generated/binary files
    read_lines: float  # churn weighted by READ_COST
    score: float
    signals: list[Signal]
    kind: str | None
    revert: bool
    has_patches: bool
    dominant_area: str | None
    # counted on first use: decide and effort_and_minutes may both ask
    _risk_themes: int | None = field(default=None, init=False, repr=False, compare=False)

    def has(self, name: str) -> bool:
        return any(s.name == name for s in self.signals)

    @property
    def risk_themes(self) -> int:
        """How many risk themes weigh 1 or more (code markers aside)."""
        n = self._risk_themes
        if n is None:
            n = 0
            for s in self.signals:  # the weight first: most signals weigh less than 1
                if s.weight >= 1 and s.name.startswith("risk.") and s.name != "risk.markers":
                    n += 1
            self._risk_themes = n
        return n


@dataclass
class Rule:
    name: str  # also the label shown as the first deciding reason
    when: Callable[[Facts, Conventions], bool]
    verdict: Callable[[Facts, Conventions], str]
    audience: str | None = None  # an area key: "ci" | "docs" | "build" | "tests" | "dominant"
    label: str = ""


def _only(*roles: str) -> Callable[[Facts, Conventions], bool]:
    allowed = frozenset(roles)  # built once per rule, not once per PR
    return lambda f, c: f.scope <= allowed and bool(f.scope)


# ---- THE VERDICT RULES: first match wins ----------------------------------------------------------
# Thresholds come from the conventions (default.toml [thresholds]); the numbers here are fallbacks.


def _deep_bar(f: Facts, c: Conventions) -> float:
    # Without patch text code evidence cannot show and themes named only in the text count half,
    # so a facts-only record clears a lower bar.
    return c.threshold("deep_score", 3) if f.has_patches else c.threshold("deep_score_no_patch", 2.25)


def _deep_if_strong(f: Facts, c: Conventions) -> str:
    return "deep" if f.score >= _deep_bar(f, c) else "skim"


def _ci_verdict(f: Facts, c: Conventions) -> str:
    # CI maintainers read a CI change closely when it is big, explains a root cause or touches risky shell
    close = (
        f.score >= c.threshold("ci_deep_score", 1.5)
        or f.churn >= c.threshold("ci_deep_lines", 150)
        or f.risk_themes
    )
    return "deep" if close else "skim"


def _deps_verdict(f: Facts, c: Conventions) -> str:
    return "skip" if f.churn <= c.threshold("medium_lines", 80) and not f.risk_themes else "skim"


def _is_trivial(f: Facts, c: Conventions) -> bool:
    return f.score <= c.threshold("skip_score", 0) and f.churn <= c.threshold("tiny_lines", 10)


def _always(verdict: str) -> Callable[[Facts, Conventions], str]:
    return lambda f, c: verdict


VERDICT_RULES: list[Rule] = [
    # name               applies when                                  verdict             audience
    Rule("no files",     lambda f, c: not f.files,                     _deep_if_strong,    None,
         "no file list: judged from title and description"),
    Rule("generated only", lambda f, c: not f.scope,                   _always("skip"),    None,
         "only generated, vendored or binary files"),
    # docs are never a deep read: at most a skim, for the docs maintainers
    Rule("docs only",    _only("docs"),                                _always("skim"),    "docs",
         "docs-only change"),
    Rule("CI only",      _only("ci"),                                  _ci_verdict,        "ci",
         "CI-only change"),
    Rule("dependencies only", _only("build", "generated"),             _deps_verdict,      "build",
         "build/dependency-only change"),
    Rule("revert",       lambda f, c: f.revert,                        _always("skim"),    None,
         "revert of earlier work"),
    Rule("tests only",   _only("test"),                                _always("skim"),    "tests",
         "tests-only change"),
    Rule("strong signals", lambda f, c: f.score >= _deep_bar(f, c), _always("deep"), "dominant",
         "signals add up to a close read"),
    Rule("trivial",      _is_trivial,                                  _always("skip"),    None,
         "tiny change with nothing notable"),
    Rule("default",      lambda f, c: True,                            _always("skim"),    "dominant",
         "worth a skim"),
]  # fmt: skip


_weight = attrgetter("weight")


def decide(f: Facts, conv: Conventions) -> tuple[str, str | None, str | None, list[str]]:
    """-> (verdict, audience text, audience key, deciding labels). See VERDICT_RULES."""
    for rule in VERDICT_RULES:  # the last rule always applies
        if rule.when(f, conv):
            break
    verdict = rule.verdict(f, conv)
    key = rule.audience
    if key == "dominant":  # a code area's maintainers; role areas (ci, docs, ...) only via the X-only rules
        key = (
            f.dominant_area
            if f.dominant_area in conv.audiences and f.dominant_area not in ROLE_AREAS
            else None
        )
    audience = conv.audiences.get(key) if key else None
    # The deciding labels: the rule's, then the signals that push towards the verdict, strongest first.
    # Those are all positive for "deep" and all negative otherwise, so sorting by weight (descending for
    # deep) sorts by strength without a key function; the sort is stable: ties keep signal order.
    deep = verdict == "deep"
    pushing = []
    for s in f.signals:  # a plain loop: a comprehension costs a function call, for 0-3 signals mostly
        if (s.weight > 0) == deep and s.weight != 0:
            pushing.append(s)
    if len(pushing) > 1:
        pushing.sort(key=_weight, reverse=deep)
    deciding = [] if rule.name == "strong signals" else [rule.label]
    for s in pushing:
        if len(deciding) == 3:  # at most 3 labels are shown
            break
        deciding.append(s.label)
    return verdict, audience, key, deciding


def effort_and_minutes(f: Facts, verdict: str, conv: Conventions) -> tuple[int, int]:
    lines = f.read_lines
    if lines <= conv.threshold("tiny_lines", 10):
        effort = 1
    elif lines <= conv.threshold("medium_lines", 80):
        effort = 2
    elif lines <= 300:
        effort = 3
    elif lines <= conv.threshold("huge_lines", 2000) / 2:
        effort = 4
    else:
        effort = 5
    if effort < 5 and f.risk_themes >= 2:  # several risk themes: one level more, at most 5
        effort += 1
    if verdict == "skip":
        return effort, 1
    if verdict == "skim":
        skim = conv.minutes.get("skim", [3, 5])
        return effort, (skim[0] + skim[-1]) // 2 if effort <= 2 else skim[-1] + 2 * (effort - 2)
    table = conv.minutes.get("effort", [5, 10, 20, 40, 75])
    return effort, table[min(effort, len(table)) - 1]


def named_paths(desc: Description, record: PRRecord) -> set[str]:
    """Files the description or the reviewers point at: by path, or by a base name in `code`."""
    comments = record.review_comments
    named = {c.get("path") for c in comments if c.get("path")} if comments else set()
    text = desc.text
    if len(text) < 4:  # no base name that counts (4 characters or more) fits
        return named
    for fd in record.files:
        fn = (fd.get("filename") if isinstance(fd, dict) else None) or ""
        base = fn[fn.rfind("/") + 1 :]  # = fn.rsplit("/", 1)[-1], without the list
        if len(base) > 3 and base in text:
            named.add(fn)
    return named


_SHOWN_STATUS = frozenset({"added", "removed", "renamed"})


def rank_files(files: list[FileDiff], facts: CodeFacts, named: set[str], conv: Conventions) -> list[KeyFile]:
    risk_of, syms_of = facts.risk_per_file, facts.file_symbols
    scores = []
    for fd in files:
        name = fd.filename
        # role and size, then the bonuses in this order (float sums depend on the order): risk hits
        # (at most 5), named in the description or review, symbols touched (at most 3). A bonus of 0
        # is skipped: adding 0 to a score >= 0 gives the same float.
        score = ROLE_RANK.get(fd.role, 0.5) * math.log2(2 + fd.changes)
        risk = risk_of.get(name)
        if risk:
            score += risk if risk < 5 else 5
        if name in named:
            score += 1.5
        syms = syms_of.get(name)
        if syms:
            score += 0.3 * (len(syms) if len(syms) < 3 else 3)
        scores.append(score)
    # highest first, equal scores in file order (a reverse sort is stable); only the shown files get reasons
    order = sorted(range(len(files)), key=scores.__getitem__, reverse=True)
    top = order[: int(conv.threshold("max_key_files", 6))]
    # the risk themes each file has hits of, in theme order: one pass over the hits, not one per file
    file_themes: dict[int, list[str]] = {}
    for n, hits in facts.theme_hits.items():
        if hits:
            theme = n.split(".", 1)[1]
            for fid in {id(h.file) for h in hits}:  # each file once per theme
                file_themes.setdefault(fid, []).append(theme)
    out = []
    for i in top:
        fd = files[i]
        name, role, flags = fd.filename, fd.role, fd.flags
        syms = syms_of.get(name) or []
        reason = f"{role}, +{fd.additions}/-{fd.deletions}"
        if fd.status in _SHOWN_STATUS:
            reason += "; " + fd.status
        if file_themes:
            themes = file_themes.get(id(fd))
            if themes:
                reason += "; risk: " + ", ".join(themes)
        if name in named:
            reason += "; named in the description or review"
        if syms:
            reason += "; touches " + ", ".join(syms[:3])
        if flags and flags.count("empty") != len(flags):  # a flag other than "empty"; no generator
            reason += "; flags: " + ", ".join(flags)
        out.append(KeyFile(name, role, reason, round(scores[i], 2), fd.additions, fd.deletions, syms[:8]))
    return out


_IDENT = re.compile(r"[A-Za-z_][\w.]*(?:\(\))?\Z")
_COMMON_SYMBOLS = frozenset({"__init__", "main", "forward", "setUp", "tearDown", "test"})


def _has_upper(s: str) -> bool:
    """Any c.isupper() in s. In ASCII only A-Z are upper and only they change in lower(): no generator."""
    if s.isascii():
        return s != s.lower()
    return any(c.isupper() for c in s)  # e.g. a titlecase letter changes in lower() without being upper


def pick_key_symbols(facts: CodeFacts, desc: Description, patch_text: str, conv: Conventions) -> list[str]:
    spans = desc.code_spans
    if not facts.symbols and not spans:
        return []  # nothing to rank (most stats-only records)
    # a plain dict, copied only when the spans add to it: Counter() and most_common() cost more than
    # the few names most PRs have
    scores = dict(facts.symbols) if spans else facts.symbols
    for span in spans:
        name = span.rstrip("()")
        if _IDENT.match(span) and ("_" in name or "." in name or _has_upper(name[1:])):
            short = name.rsplit(".", 1)[-1]
            if short in scores:
                scores[short] += 2.0
            elif not patch_text or short in patch_text:
                scores[short] = 1.0 if patch_text else 0.5  # a new name: Counter's 0 + this
    # most_common() order: by score, highest first; equal scores in first-seen order (sort is stable)
    ranked = sorted(scores, key=scores.__getitem__, reverse=True)
    if not _COMMON_SYMBOLS.isdisjoint(scores):
        ranked = [n for n in ranked if n not in _COMMON_SYMBOLS]
    return ranked[: int(conv.threshold("max_key_symbols", 8))]


def open_items_of(
    signals: list[Signal], desc: Description, disc: Discussion, truncated: list[str], facts: CodeFacts, n: int
) -> list[str]:
    items: list[str] = []
    # The prefixes below are stable: the offline drafter matches them to translate the items.
    # Each list is looked at only when it has something (most PRs have none of them).
    markers = facts.theme_hits.get("risk.markers")
    if markers:
        for h in markers[:n]:
            where = f"{h.file.filename}:{h.line}" if h.line else h.file.filename
            items.append(f"marker added in {where}: {h.text}")
    for s in signals:
        if s.name == "tests.missing":
            items.append(f"changed code without tests: {s.label}")
    for s in desc.open_items[:n]:
        items.append(f"author notes a follow-up / not addressed: {s}")
    for p in disc.promises[:n]:
        items.append(f"author promised: {p}")
    for d in disc.deferred[:n]:
        items.append(f"reviewer left for later: {d}")
    for u in disc.unresolved[:n]:
        items.append(f"unresolved review thread: {u}")
    if disc.changes_requested_outstanding:
        items.append("changes still requested by " + ", ".join(disc.changes_requested_outstanding))
    for t in truncated:
        items.append(f"data: {t}")
    return items
