"""Read a PR like a senior reviewer: signals with evidence, then deep read / skim / skip.

`analyze(record)` is pure: a PRRecord in, an Analysis out; no network, no database. Every verdict rule
lives in `VERDICT_RULES` below, in order, with its thresholds taken from the repository's conventions.
A record with no patch text (a clone's facts, corpus metadata) is analysed from file stats, title and
description, and says so in `truncated`.
"""

from __future__ import annotations

import math
import re
import sys
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from .analysis import Analysis, Evidence, KeyFile, Signal
from .conventions import Conventions, default_conventions, load_conventions
from .describe import cross_refs, description_signals, read_description, read_discussion
from .diff import Concat, FileDiff, parse_files
from .records import PRRecord
from .signals import (
    RISK_ROLES,
    CodeFacts,
    scan_defaults,
    scan_deps,
    scan_symbols,
    scan_themes,
    text_theme_evidence,
    theme_signals,
)

# How much one changed line of each role costs a reader, relative to code.
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
_REVERT_BODY = re.compile(r"This reverts commit|Reverts\s+[\w.-]+/[\w.-]+#(\d+)|^Revert\b", re.M)


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


def analyze(
    record: PRRecord, *, conventions: Conventions | None = None, known_prs: dict | None = None
) -> Analysis:
    conv = conventions or default_conventions(record.repo)
    n_ev = int(conv.threshold("max_evidence", 3))
    title = record.title
    parts = conv.parse_title(title)
    files = parse_files(record.files)
    signals: list[Signal] = []
    truncated: list[str] = []

    # ---- scope and size -------------------------------------------------------------------------
    roles: Counter = Counter()
    area_lines: Counter = Counter()
    for fd in files:
        roles[fd.role] += fd.changes
        if fd.role not in ("generated", "binary"):
            area_lines[conv.area_of(fd.filename)] += max(1, fd.changes) * (2 if fd.role == "code" else 1)
    present = {fd.role for fd in files}
    scope = frozenset(r for r in present if r not in ("generated", "binary"))
    if not scope and any(
        fd.role == "binary" and fd.filename.lower().startswith(("docs/", "doc/")) for fd in files
    ):
        scope = frozenset({"docs"})
    churn = sum(v for r, v in roles.items() if r not in ("generated", "binary"))
    read_lines = sum(READ_COST.get(r, 1.0) * v for r, v in roles.items())
    code_lines = roles.get("code", 0) + roles.get("notebook", 0)
    biggest = sorted(
        (fd for fd in files if fd.role not in ("generated", "binary")), key=lambda f: -f.changes
    )[:n_ev]
    shown = biggest or files[:n_ev]
    size_ev = [Evidence(fd.filename, None, f"{fd.role}: +{fd.additions}/-{fd.deletions}") for fd in shown]
    size_label = f"{churn} changed lines in {len(files)} files"
    if code_lines >= _t(conv, "huge_lines", 2000):
        weight = conv.weight("size.large") + 0.5
        signals.append(Signal("size.large", f"very large change: {size_label}", weight, size_ev))
    elif code_lines >= _t(conv, "large_lines", 500):
        signals.append(
            Signal("size.large", f"large change: {size_label}", conv.weight("size.large"), size_ev)
        )
    elif code_lines >= _t(conv, "medium_lines", 80):
        signals.append(
            Signal("size.medium", f"medium change: {size_label}", conv.weight("size.medium"), size_ev)
        )
    elif churn <= _t(conv, "tiny_lines", 10) and files:
        signals.append(Signal("size.tiny", f"tiny change: {size_label}", conv.weight("size.tiny"), size_ev))

    # ---- tests and scope signals ----------------------------------------------------------------
    test_files = [fd for fd in files if fd.role == "test"]
    if code_lines and test_files:
        signals.append(
            Signal(
                "tests.added",
                f"code change comes with test changes ({len(test_files)} files)",
                conv.weight("tests.added"),
                [Evidence(fd.filename, None, f"+{fd.additions}/-{fd.deletions}") for fd in test_files[:n_ev]],
            )
        )
    elif code_lines >= _t(conv, "tests_missing_min_lines", 20) and not test_files:
        signals.append(
            Signal(
                "tests.missing",
                f"{code_lines} lines of code changed, no test changed",
                conv.weight("tests.missing"),
                [
                    Evidence(fd.filename, None, f"code: +{fd.additions}/-{fd.deletions}, no test beside it")
                    for fd in sorted(files, key=lambda f: -f.changes)
                    if fd.role in ("code", "notebook")
                ][:n_ev],
            )
        )
    for name, roleset, label in (
        ("docs_only", {"docs"}, "docs-only"),
        ("ci_only", {"ci"}, "CI-only"),
        ("deps_only", {"build"}, "build/dependency files only"),
        ("tests_only", {"test"}, "tests only"),
    ):
        if scope and scope <= roleset:
            signals.append(
                Signal(name, label, 0.0, [Evidence(fd.filename, None, fd.role) for fd in files[:n_ev]])
            )
    generated = [fd for fd in files if fd.role == "generated"]
    if generated:
        signals.append(
            Signal(
                "generated",
                f"{len(generated)} generated/vendored/lock file(s), not read",
                0.0,
                [Evidence(fd.filename, None, "generated") for fd in generated[:n_ev]],
            )
        )

    # ---- title kind, breaking, revert -----------------------------------------------------------
    if parts.kind and f"kind.{parts.kind}" in conv.weights:
        signals.append(
            Signal(
                f"kind.{parts.kind}",
                f"title says {parts.kind}",
                conv.weight(f"kind.{parts.kind}"),
                [Evidence(None, None, title)],
            )
        )
    body = record.body
    desc = read_description(title, body, conv)
    dtext = desc["text"]
    if parts.breaking or "[BREAKING]" in dtext or "breaking change" in dtext.lower():
        signals.append(
            Signal(
                "api.breaking",
                "marked as breaking",
                conv.weight("api.breaking"),
                [Evidence(None, None, title if parts.breaking else "description mentions a breaking change")],
            )
        )
    revert_m = _REVERT_BODY.search(body[:2000]) if body else None
    revert = parts.revert or bool(revert_m) or title.lower().startswith("revert")
    if revert:
        signals.append(
            Signal(
                "revert",
                "reverts earlier work",
                conv.weight("revert"),
                [Evidence(None, None, title if parts.revert or not revert_m else revert_m.group(0))],
            )
        )

    # ---- the diff ---------------------------------------------------------------------------------
    facts = CodeFacts()
    has_patches = any(fd.patch for fd in files)
    if has_patches:
        cat = Concat(files, RISK_ROLES)
        scan_themes(cat, facts)
        signals += scan_symbols(files, facts, conv)
        signals += scan_defaults(files, conv)
    signals += scan_deps(files, title, conv)

    # ---- what the people say --------------------------------------------------------------------
    signals += description_signals(desc, conv)
    signals += theme_signals(facts, text_theme_evidence([title, desc["text"][:4000]]), conv)
    disc, disc_signals = read_discussion(record, conv)
    signals += disc_signals
    texts = [title, desc["text"]] + [c.get("body") or "" for c in record.issue_comments[:50]]
    refs = cross_refs(record.repo, record.number, texts, known_prs)
    if revert_m and revert_m.group(1):
        n = int(revert_m.group(1))
        ref = next((r for r in refs if r.number == n), None)
        if ref:
            ref.relation = "revert"
        else:
            from .analysis import CrossRef

            t, s = (known_prs or {}).get(n, (None, None))
            refs.append(CrossRef(n, "revert", t, s, None))

    # ---- truncation: say what the data lacks ------------------------------------------------------
    if record.files_truncated:
        truncated.append("file list truncated (GitHub lists at most 3,000 files)")
    if record.commits_truncated:
        truncated.append("commit list truncated (GitHub lists at most 250 commits)")
    missing = [fd for fd in files if fd.patch_missing]
    if files and not has_patches:
        truncated.append("no patch text: judged from file stats, title and description")
    elif missing:
        truncated.append(f"{len(missing)} patch(es) omitted: " + ", ".join(fd.filename for fd in missing[:3]))
    odd = [fd.filename for fd in files if "malformed" in fd.flags]
    if odd:
        truncated.append(f"malformed patch text in {len(odd)} file(s): " + ", ".join(odd[:3]))
    if not files:
        truncated.append("no file list")

    # ---- conclusions ------------------------------------------------------------------------------
    score = sum(s.weight for s in signals)
    dominant = None
    if area_lines:
        top, lines = area_lines.most_common(1)[0]
        if lines >= 0.8 * sum(area_lines.values()):
            dominant = top
    f = Facts(
        files,
        dict(roles),
        scope,
        churn,
        read_lines,
        score,
        signals,
        parts.kind,
        revert,
        has_patches,
        dominant,
    )
    verdict, audience, audience_key, deciding = decide(f, conv)
    effort, minutes = effort_and_minutes(f, verdict, conv)
    named = _named_paths(desc, record)
    key_files = rank_files(files, facts, named, conv)
    key_symbols = _key_symbols(facts, desc, cat.text if has_patches else "", conv)
    areas = [a for a, _ in area_lines.most_common()]
    for t in parts.tags:
        if t not in areas:
            areas.append(t)

    return Analysis(
        repo=record.repo,
        number=record.number,
        verdict=verdict,
        audience=audience,
        effort=effort,
        minutes=minutes,
        deciding=deciding,
        signals=sorted(signals, key=lambda s: -abs(s.weight)),
        key_files=key_files,
        key_symbols=key_symbols,
        open_items=_open_items(signals, desc, disc, truncated, facts, n_ev),
        cross_refs=refs,
        areas=areas,
        roles=dict(roles),
        description=desc,
        discussion=disc,
        truncated=truncated,
        kind=parts.kind,
        tags=list(parts.tags),
        score=round(score, 2),
        audience_key=audience_key,
    )


def _named_paths(desc: dict, record: PRRecord) -> set[str]:
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
    out = []
    for score, fd, _risk, syms in scored[: int(conv.threshold("max_key_files", 6))]:
        reason = [f"{fd.role}, +{fd.additions}/-{fd.deletions}"]
        if fd.status in ("added", "removed", "renamed"):
            reason.append(fd.status)
        themes = [
            n.split(".", 1)[1] for n, hits in facts.theme_hits.items() if any(h.file is fd for h in hits)
        ]
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


def _key_symbols(facts: CodeFacts, desc: dict, patch_text: str, conv: Conventions) -> list[str]:
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


def _open_items(
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


# ---- many PRs ---------------------------------------------------------------------------------------

FRAME_COLUMNS = [
    "repo",
    "number",
    "verdict",
    "audience",
    "effort",
    "minutes",
    "score",
    "kind",
    "key_files",
    "key_symbols",
    "flags",
    "deciding",
    "areas",
    "open_items",
]


def analysis_frame(analyses: Iterable[Analysis]):
    """One row per PR; list columns stay lists (charts and filters use them directly)."""
    import pandas as pd

    rows = []
    for a in analyses:
        rows.append(
            {
                "repo": a.repo,
                "number": a.number,
                "verdict": a.verdict,
                "audience": a.audience,
                "effort": a.effort,
                "minutes": a.minutes,
                "score": a.score,
                "kind": a.kind,
                "key_files": [k.filename for k in a.key_files],
                "key_symbols": list(a.key_symbols),
                "flags": [s.name for s in a.signals] + (["truncated"] if a.truncated else []),
                "deciding": list(a.deciding),
                "areas": list(a.areas[:5]),
                "open_items": len(a.open_items),
            }
        )
    return pd.DataFrame(rows, columns=FRAME_COLUMNS)


def run_cli(args: Any) -> int:
    """`workbench analyze OWNER/REPO [--since] [--number ...] [--format table|csv|json]`."""
    import json

    from .config import WorkbenchError
    from .store import Store

    repo = args.repo
    if "/" not in repo:
        raise WorkbenchError(
            f"{repo!r} is not OWNER/REPO: name the repository as on GitHub, e.g. verl-project/verl"
        )
    store = Store(getattr(args, "cache", None), create=False)
    try:
        if store.repo_pk(repo) is None:
            raise WorkbenchError(
                f"{repo} is not in the cache: run `workbench sync {repo}` (or `workbench sample`) first"
            )
        numbers = store.prs(repo, numbers=args.number, since=args.since)["number"].tolist()
        known = store.known_prs(repo)
        conv = load_conventions(repo, getattr(args, "conventions", None), cache=getattr(args, "cache", None))
        it = store.records(repo, numbers)
        if len(numbers) > 50 and sys.stderr.isatty() or len(numbers) > 200:
            from tqdm import tqdm

            it = tqdm(it, total=len(numbers), desc=f"analyze {repo}", unit="PR", file=sys.stderr)
        df = analysis_frame(analyze(r, conventions=conv, known_prs=known) for r in it)
    finally:
        store.close()
    fmt = getattr(args, "format", "table") or "table"
    if fmt == "json":
        print(json.dumps(df.to_dict(orient="records"), ensure_ascii=False, indent=1, default=str))
        return 0
    flat = df.copy()
    for col in ("key_files", "key_symbols", "flags", "deciding", "areas"):
        flat[col] = flat[col].map(lambda v: "; ".join(v))
    if fmt == "csv":
        sys.stdout.write(flat.to_csv(index=False))
        return 0
    if flat.empty:
        print(f"no cached PRs of {repo} match")
        return 0
    view = flat[
        ["number", "verdict", "audience", "effort", "minutes", "key_files", "key_symbols", "flags"]
    ].copy()
    view["audience"] = view["audience"].fillna("")
    for col, width in (("key_files", 60), ("key_symbols", 40), ("flags", 60)):
        view[col] = view[col].map(lambda s, w=width: s if len(s) <= w else s[: w - 1] + "…")
    print(view.to_string(index=False))
    return 0


__all__ = [
    "analyze",
    "analysis_frame",
    "decide",
    "VERDICT_RULES",
    "run_cli",
    "load_conventions",
    "Facts",
    "Rule",
]
