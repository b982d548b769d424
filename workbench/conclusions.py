"""Conclusions from signals: the verdict rules (one ordered table), effort and minutes, key files,
key symbols and open items. Pure functions; `heuristics.analyze` gathers the facts and calls these."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from .analysis import KeyFile, Signal
from .conventions import Conventions
from .diff import FileDiff
from .records import PRRecord
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
    """What the verdict rules look at: scope, size, score, and the signals themselves."""

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

    def has(self, name: str) -> bool:
        return any(s.name == name for s in self.signals)

    @property
    def risk_themes(self) -> int:
        return sum(
            1
            for s in self.signals
            if s.name.startswith("risk.") and s.name != "risk.markers" and s.weight >= 1
        )


@dataclass
class Rule:
    name: str  # also the label shown as the first deciding reason
    when: Callable[[Facts, Conventions], bool]
    verdict: Callable[[Facts, Conventions], str]
    audience: str | None = None  # an area key: "ci" | "docs" | "build" | "tests" | "dominant"
    label: str = ""


def _t(conv: Conventions, name: str, default: float) -> float:
    return conv.threshold(name, default)


def _only(*roles: str) -> Callable[[Facts, Conventions], bool]:
    return lambda f, c: bool(f.scope) and f.scope <= set(roles)


# ---- THE VERDICT RULES: first match wins ----------------------------------------------------------
# Thresholds come from the conventions (default.toml [thresholds]); the numbers here are fallbacks.


def _deep_bar(f: Facts, c: Conventions) -> float:
    # Without patch text code evidence cannot show and themes named only in the text count half,
    # so a facts-only record clears a lower bar.
    return _t(c, "deep_score", 3) if f.has_patches else _t(c, "deep_score_no_patch", 2.25)


def _deep_if_strong(f: Facts, c: Conventions) -> str:
    return "deep" if f.score >= _deep_bar(f, c) else "skim"


def _ci_verdict(f: Facts, c: Conventions) -> str:
    # CI maintainers read a CI change closely when it is big, explains a root cause or touches risky shell
    close = f.score >= _t(c, "ci_deep_score", 1.5) or f.churn >= _t(c, "ci_deep_lines", 150) or f.risk_themes
    return "deep" if close else "skim"


def _deps_verdict(f: Facts, c: Conventions) -> str:
    return "skip" if f.churn <= _t(c, "medium_lines", 80) and not f.risk_themes else "skim"


def _is_trivial(f: Facts, c: Conventions) -> bool:
    return f.score <= _t(c, "skip_score", 0) and f.churn <= _t(c, "tiny_lines", 10)


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


def decide(f: Facts, conv: Conventions) -> tuple[str, str | None, str | None, list[str]]:
    """-> (verdict, audience text, audience key, deciding labels). See VERDICT_RULES."""
    rule = next(r for r in VERDICT_RULES if r.when(f, conv))
    verdict = rule.verdict(f, conv)
    key = rule.audience
    if key == "dominant":  # a code area's maintainers; role areas (ci, docs, ...) only via the X-only rules
        key = (
            f.dominant_area
            if f.dominant_area in conv.audiences and f.dominant_area not in ROLE_AREAS
            else None
        )
    audience = conv.audiences.get(key) if key else None
    pushing = [s for s in f.signals if (s.weight > 0) == (verdict == "deep") and s.weight != 0]
    pushing.sort(key=lambda s: -abs(s.weight))
    deciding = ([rule.label] if rule.name not in ("strong signals",) else []) + [s.label for s in pushing]
    return verdict, audience, key, deciding[:3]


def effort_and_minutes(f: Facts, verdict: str, conv: Conventions) -> tuple[int, int]:
    lines = f.read_lines
    effort = (
        1
        if lines <= _t(conv, "tiny_lines", 10)
        else 2
        if lines <= _t(conv, "medium_lines", 80)
        else 3
        if lines <= 300
        else 4
        if lines <= _t(conv, "huge_lines", 2000) / 2
        else 5
    )
    effort = min(5, effort + (1 if f.risk_themes >= 2 else 0))
    table = conv.minutes.get("effort", [5, 10, 20, 40, 75])
    skim = conv.minutes.get("skim", [3, 5])
    if verdict == "skip":
        return effort, 1
    if verdict == "skim":
        return effort, (skim[0] + skim[-1]) // 2 if effort <= 2 else skim[-1] + 2 * (effort - 2)
    return effort, table[min(effort, len(table)) - 1]


def named_paths(desc: dict, record: PRRecord) -> set[str]:
    """Files the description or the reviewers point at: by path, or by a base name in `code`."""
    named = {c.get("path") for c in record.review_comments if c.get("path")}
    text = desc.get("text") or ""
    for fd in record.files:
        fn = (fd.get("filename") if isinstance(fd, dict) else None) or ""
        base = fn.rsplit("/", 1)[-1]
        if base and len(base) > 3 and base in text:
            named.add(fn)
    return named


def rank_files(files: list[FileDiff], facts: CodeFacts, named: set[str], conv: Conventions) -> list[KeyFile]:
    scored = []
    for fd in files:
        risk = facts.risk_per_file.get(fd.filename, 0)
        syms = facts.file_symbols.get(fd.filename, [])
        score = (
            ROLE_RANK.get(fd.role, 0.5) * math.log2(2 + fd.changes)
            + min(risk, 5)
            + (1.5 if fd.filename in named else 0)
            + 0.3 * min(len(syms), 3)
        )
        scored.append((score, fd, risk, syms))
    scored.sort(key=lambda x: -x[0])
    # the risk themes each file has hits of, in theme order: one pass over the hits, not one per file
    file_themes: dict[int, list[str]] = {}
    for n, hits in facts.theme_hits.items():
        for fid in dict.fromkeys(id(h.file) for h in hits):
            file_themes.setdefault(fid, []).append(n.split(".", 1)[1])
    out = []
    for score, fd, _risk, syms in scored[: int(conv.threshold("max_key_files", 6))]:
        reason = [f"{fd.role}, +{fd.additions}/-{fd.deletions}"]
        if fd.status in ("added", "removed", "renamed"):
            reason.append(fd.status)
        themes = file_themes.get(id(fd))
        if themes:
            reason.append("risk: " + ", ".join(themes))
        if fd.filename in named:
            reason.append("named in the description or review")
        if syms:
            reason.append("touches " + ", ".join(syms[:3]))
        if fd.flags and set(fd.flags) - {"empty"}:
            reason.append("flags: " + ", ".join(fd.flags))
        out.append(
            KeyFile(
                fd.filename, fd.role, "; ".join(reason), round(score, 2), fd.additions, fd.deletions, syms[:8]
            )
        )
    return out


_IDENT = re.compile(r"[A-Za-z_][\w.]*(?:\(\))?\Z")


def pick_key_symbols(facts: CodeFacts, desc: dict, patch_text: str, conv: Conventions) -> list[str]:
    if not facts.symbols and not desc.get("code_spans"):
        return []  # nothing to rank (most stats-only records)
    scores = Counter(facts.symbols)
    for span in desc.get("code_spans", []):
        name = span.rstrip("()")
        if _IDENT.match(span) and ("_" in name or "." in name or any(c.isupper() for c in name[1:])):
            short = name.rsplit(".", 1)[-1]
            if short in scores:
                scores[short] += 2.0
            elif not patch_text or short in patch_text:
                scores[short] += 1.0 if patch_text else 0.5
    common = {"__init__", "main", "forward", "setUp", "tearDown", "test"}
    ranked = [n for n, _ in scores.most_common() if n not in common]
    return ranked[: int(conv.threshold("max_key_symbols", 8))]


def open_items_of(
    signals: list[Signal], desc: dict, disc: dict, truncated: list[str], facts: CodeFacts, n: int
) -> list[str]:
    items: list[str] = []
    # The prefixes below are stable: the offline drafter matches them to translate the items.
    for h in facts.theme_hits.get("risk.markers", [])[:n]:
        where = f"{h.file.filename}:{h.line}" if h.line else h.file.filename
        items.append(f"marker added in {where}: {h.text}")
    for s in signals:
        if s.name == "tests.missing":
            items.append(f"changed code without tests: {s.label}")
    for s in desc.get("followups", [])[:n]:
        items.append(f"author notes a follow-up / not addressed: {s}")
    for p in disc.get("promises", [])[:n]:
        items.append(f"author promised: {p}")
    for u in disc.get("unresolved", [])[:n]:
        items.append(f"unresolved review thread: {u}")
    if disc.get("changes_requested_outstanding"):
        items.append("changes still requested by " + ", ".join(disc["changes_requested_outstanding"]))
    items += [f"data: {t}" for t in truncated]
    return items
