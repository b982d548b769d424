"""Read a PR like a senior reviewer: signals with evidence, then deep read / skim / skip.

`analyze(record)` is pure: a PRRecord in, an Analysis out; no network, no database. It is a short
pipeline of named stages, each a function below:

    read_pr        the record's files, title and description, and whether it reverts something
    measure        roles, areas and size of what changed (what a reader must read)
    scope_signals  size, tests, X-only, generated, title kind, breaking, revert
    diff_signals   what the code does (signals.py: risk themes and shell commands; symbols.py: API;
                   config_changes.py: defaults, settings and dependencies)
    people_signals what the description and discussion say, and the cross-references
    data_gaps      what the data lacks (truncated lists, omitted patches)
    conclude       the verdict (verdicts.VERDICT_RULES), audiences, risks, effort, key files (focus.py)

A record with no patch text (a clone's facts, corpus metadata) is analysed from file stats, title and
description, and says so in `truncated`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from operator import itemgetter

from ..records import PRRecord
from .audiences import audiences_of
from .call_values import scan_call_values
from .codelines import changes_only_comments, is_program
from .config_changes import scan_defaults, scan_deps
from .conventions import Conventions, default_conventions, load_conventions
from .description import description_signals, prose_of, read_description
from .diff import Concat, FileDiff, parse_files
from .discussion import (
    WrittenRefs,
    read_discussion,
    resolve_refs,
    revert_statement,
    reverted_pr,
    written_refs,
)
from .focus import named_paths, open_items_of, pick_key_symbols, rank_files, title_paths
from .model import Analysis, CrossRef, Description, Discussion, Evidence, Signal
from .monkeypatch import scan_patches
from .patchscan import moved_share
from .risks import risks_of
from .signals import (
    RISK_ROLES,
    CodeFacts,
    find_words,
    scan_commands,
    scan_loss_math,
    scan_themes,
    scan_unsupported,
    text_theme_evidence,
    theme_signals,
)
from .symbols import scan_module_paths, scan_registrations, scan_symbols
from .titles import TitleParts, reports_on
from .verdicts import READ_COST, VERDICT_RULES, Facts, Rule, decide, effort_and_minutes
from .words import counted

# role -> the "X-only" signal a PR whose readable files all have that role gets
_ONLY_SIGNALS = {
    "docs": ("docs_only", "docs-only"),
    "ci": ("ci_only", "CI-only"),
    "build": ("deps_only", "build/dependency files only"),
    "test": ("tests_only", "tests only"),
}
# A PR that deletes this many times what it adds is a removal: its deleted lines need no close reading.
_REMOVAL_RATIO = 3
# a title that says code goes: remove, retire, delete, drop, deprecate, clean up, migrate out, prune
_SAYS_REMOVAL = re.compile(
    r"\b(?:remov|retir|delet|drop|deprecat|clean|migrat|prun|purg|unused|dead|obsolete)", re.I
)


@dataclass
class PRInput:
    """What the later stages read of the record, parsed once."""

    record: PRRecord
    title: str
    parts: TitleParts
    files: list[FileDiff]
    desc: Description
    revert: bool
    revert_evidence: str | None
    revert_commit: str | None  # the commit the body's own revert line names, if it names one


@dataclass
class Measure:
    """Roles, areas and size: one pass over the files."""

    roles: dict[str, int]  # role -> changed lines (deleted files' lines at READ_COST of a deletion)
    area_lines: dict[str, int]
    readable: list[FileDiff]  # neither generated nor binary, in file order
    test_files: list[FileDiff]
    generated: list[FileDiff]
    has_patches: bool
    scope: frozenset[str]
    churn: int
    read_lines: float
    code_lines: int
    testable_lines: int  # program code lines, which a unit test covers (run scripts are run instead)
    removal: bool  # deletes far more than it adds: a backend, a feature or a file set goes
    moved: float  # the share of added program lines that another file removes (0 when not a move)
    satellite: bool  # its code and configs all live in satellite areas (examples, recipes)
    dominant_area: str | None
    size_label: str


@dataclass
class Gathered:
    """What the signal stages gather for `conclude`: signals, the diff's facts, the discussion."""

    signals: list[Signal] = field(default_factory=list)
    facts: CodeFacts = field(default_factory=CodeFacts)
    cat: Concat | None = None
    disc: Discussion = field(default_factory=Discussion)
    refs: list[CrossRef] = field(default_factory=list)
    written: WrittenRefs = field(default_factory=lambda: WrittenRefs([]))  # before the cache resolved them
    truncated: list[str] = field(default_factory=list)


def analyze(
    record: PRRecord, *, conventions: Conventions | None = None, known_prs: dict | None = None
) -> Analysis:
    conv = conventions or default_conventions(record.repo)
    pr = read_pr(record, conv, known_prs)
    m = measure(pr, conv)
    g = Gathered()
    g.signals += scope_signals(pr, m, conv)
    g.cat = diff_signals(pr, m, g, conv)
    g.signals += people_signals(pr, g, conv, known_prs)
    g.truncated = data_gaps(record, pr.files, m)
    return conclude(pr, m, g, conv)


# ---- stages ------------------------------------------------------------------------------------------


def read_pr(record: PRRecord, conv: Conventions, known_prs: dict | None = None) -> PRInput:
    title = record.title
    parts = conv.parse_title(title)
    body = record.body
    # "Reverts owner/name#N" (GitHub's revert button), "This reverts commit", or a title starting
    # "Revert" (a body line merely starting "Revert the default ..." is a sentence, not a revert)
    revert_m = revert_statement(body)
    revert = parts.revert or bool(revert_m) or title.lower().startswith("revert")
    evidence = title if parts.revert or not revert_m else revert_m.group(0)
    return PRInput(
        record=record,
        title=title,
        parts=parts,
        files=parse_files(record.files, conv.role_of),
        desc=read_description(title, body, conv),
        revert=revert,
        revert_evidence=evidence if revert else None,
        revert_commit=revert_m.group(1) if revert_m else None,
    )


def _omitted_lines(record: PRRecord, files: list[FileDiff]) -> dict[int, int]:
    """Changed lines of files whose patch and counts were both omitted: the PR's own totals minus what
    the files account for, shared among them (else a 4,000-line PR reads as "2 changed lines")."""
    silent = [i for i, fd in enumerate(files) if not fd.patch and not fd.changes and not fd.binary]
    if not silent:
        return {}
    try:
        total = record.additions + record.deletions
    except (AttributeError, TypeError, ValueError):  # a malformed record: its files are all there is
        return {}
    unseen = total - sum(fd.changes for fd in files)
    if unseen <= 0:
        return {}
    shares = {i: unseen // len(silent) for i in silent}
    shares[silent[0]] += unseen % len(silent)  # every line counted once
    return shares


def measure(pr: PRInput, conv: Conventions) -> Measure:
    files = pr.files
    extra = _omitted_lines(pr.record, files)
    roles: dict[str, int] = {}
    area_lines: dict[str, int] = {}
    readable, test_files, generated = [], [], []
    has_patches = False
    added = deleted = testable = added_code = 0
    for i, fd in enumerate(files):
        changes = fd.changes + extra.get(i, 0)
        if fd.status == "removed":
            changes = max(1, changes // 10)  # a deleted file is not read line by line
        roles[fd.role] = roles.get(fd.role, 0) + changes
        if is_program(fd):
            testable += changes
        if fd.role == "code":
            added_code += fd.additions
        has_patches = has_patches or bool(fd.patch)
        if fd.role == "generated":
            generated.append(fd)
        elif fd.role != "binary":
            readable.append(fd)
            added += fd.additions
            deleted += fd.deletions
            if fd.role == "test" or fd.inline_tests:  # a Rust `#[test]` beside the code is a test too
                test_files.append(fd)
            area = conv.area_of(fd.filename)
            area_lines[area] = area_lines.get(area, 0) + max(1, changes) * (2 if fd.role == "code" else 1)
    scope = frozenset(r for r in roles if r not in ("generated", "binary"))
    if not scope and any(
        fd.role == "binary" and fd.filename.lower().startswith(("docs/", "doc/")) for fd in files
    ):
        scope = frozenset({"docs"})
    churn = sum(v for r, v in roles.items() if r not in ("generated", "binary"))
    dominant = None
    if area_lines:
        top, lines = max(area_lines.items(), key=itemgetter(1))
        if lines >= 0.8 * sum(area_lines.values()):
            dominant = top
    return Measure(
        roles=roles,
        area_lines=area_lines,
        readable=readable,
        test_files=test_files,
        generated=generated,
        has_patches=has_patches,
        scope=scope,
        churn=churn,
        read_lines=sum(READ_COST.get(r, 1.0) * v for r, v in roles.items()),
        code_lines=roles.get("code", 0) + roles.get("notebook", 0),
        testable_lines=testable,
        removal=_is_removal(added, deleted, added_code, pr.title, conv),
        moved=_moved_code(readable, conv),
        satellite=_is_satellite(readable, conv),
        dominant_area=dominant,
        size_label=f"{counted(churn, 'changed line')} in {counted(len(files), 'file')}",
    )


# The roles whose files decide what a user's run does: code, and the configs and manifests it reads.
_RUN_ROLES = frozenset({"code", "notebook", "config", "build"})


def _is_satellite(readable: list[FileDiff], conv: Conventions) -> bool:
    """Whether the PR changes code, and every file of what runs stays in the conventions' satellite
    areas (examples, benchmarks, recipes): its tests, docs and CI may live anywhere."""
    running = [fd for fd in readable if fd.role in _RUN_ROLES]
    return any(fd.role in ("code", "notebook") for fd in running) and all(
        conv.in_satellite(fd.filename) for fd in running
    )


def _is_removal(added: int, deleted: int, added_code: int, title: str, conv: Conventions) -> bool:
    """Whether a PR is read as a removal: it deletes far more than it adds, and what it adds only
    rewires what is left. A little added code does; so does more, under a title that says code goes
    ("retire spmd mode", "remove the sampler"), unless it is a large change of its own. A rework
    titled as one ("refactor to use the new APIs") that adds a medium change is read for what it adds."""
    if deleted < _REMOVAL_RATIO * max(added, 1) or deleted < conv.threshold("medium_lines", 80):
        return False
    if added_code < conv.threshold("medium_lines", 80):
        return True
    return bool(_SAYS_REMOVAL.search(title)) and added_code < conv.threshold("large_lines", 500)


def _moved_code(files: list[FileDiff], conv: Conventions) -> float:
    """The share of the program lines a PR adds that come from another of its files, when it is a move
    (at least `move_share` of them): a module moved to a new package, a helper extracted. 0 otherwise."""
    program = [fd for fd in files if is_program(fd)]
    added = sum(fd.additions for fd in program)
    deleted = sum(fd.deletions for fd in program)
    grown = sum(max(0, fd.additions - fd.deletions) for fd in program)
    # A move deletes about what it adds, and the files it moves code into grow. Most PRs fail one of
    # these (a rewrite in place deletes and adds in the same files) and are not scanned.
    if added < conv.threshold("tests_missing_min_lines", 20) or 2 * deleted < added or 2 * grown < added:
        return 0.0
    share = moved_share(program)
    return share if share >= conv.threshold("move_share", 0.7) else 0.0


def _size_signal(pr: PRInput, m: Measure, conv: Conventions) -> Signal | None:
    n_ev = int(conv.threshold("max_evidence", 3))
    shown = sorted(m.readable, key=lambda f: -f.changes)[:n_ev] or pr.files[:n_ev]
    ev = [Evidence(fd.filename, None, f"{fd.role}: +{fd.additions}/-{fd.deletions}") for fd in shown]
    code, label = m.code_lines, m.size_label
    if code >= conv.threshold("huge_lines", 2000):
        return Signal("size.large", f"very large change: {label}", conv.weight("size.large") + 0.5, ev)
    if code >= conv.threshold("large_lines", 500):
        return Signal("size.large", f"large change: {label}", conv.weight("size.large"), ev)
    if code >= conv.threshold("medium_lines", 80):
        return Signal("size.medium", f"medium change: {label}", conv.weight("size.medium"), ev)
    if m.churn <= conv.threshold("tiny_lines", 10) and pr.files:
        return Signal("size.tiny", f"tiny change: {label}", conv.weight("size.tiny"), ev)
    return None


def _tests_signal(pr: PRInput, m: Measure, conv: Conventions) -> Signal | None:
    n_ev = int(conv.threshold("max_evidence", 3))
    # deleted tests are not tests added: a removal takes its tests with it
    kept = [fd for fd in m.test_files if fd.status != "removed"]
    if m.code_lines and kept:
        ev = [Evidence(fd.filename, None, f"+{fd.additions}/-{fd.deletions}") for fd in kept[:n_ev]]
        return Signal(
            "tests.added",
            f"code change comes with test changes ({counted(len(kept), 'file')})",
            conv.weight("tests.added"),
            ev,
        )
    min_lines = conv.threshold("tests_missing_min_lines", 20)
    if m.testable_lines < min_lines or m.test_files or m.removal:
        return None
    # reworded comments and docstrings run nothing a test could cover
    reworded = [fd for fd in pr.files if is_program(fd) and changes_only_comments(fd)]
    untested = m.testable_lines - sum(fd.changes for fd in reworded)
    if untested < min_lines:
        return None
    ev = [
        Evidence(fd.filename, None, f"code: +{fd.additions}/-{fd.deletions}, no test beside it")
        for fd in sorted(pr.files, key=lambda f: -f.changes)
        if is_program(fd) and fd not in reworded
    ]
    return Signal(
        "tests.missing",
        f"{untested} lines of code changed, no test changed",
        conv.weight("tests.missing"),
        ev[:n_ev],
    )


def scope_signals(pr: PRInput, m: Measure, conv: Conventions) -> list[Signal]:
    """Size, tests, X-only, generated files, and what the title says (kind, breaking, revert)."""
    n_ev = int(conv.threshold("max_evidence", 3))
    out = [s for s in (_size_signal(pr, m, conv), _tests_signal(pr, m, conv)) if s]
    if len(m.scope) == 1 and next(iter(m.scope)) in _ONLY_SIGNALS:
        name, label = _ONLY_SIGNALS[next(iter(m.scope))]
        out.append(Signal(name, label, 0.0, [Evidence(fd.filename, None, fd.role) for fd in pr.files[:n_ev]]))
    if m.generated:
        ev = [Evidence(fd.filename, None, "generated") for fd in m.generated[:n_ev]]
        out.append(
            Signal("generated", f"{len(m.generated)} generated/vendored/lock file(s), not read", 0.0, ev)
        )
    if m.moved:
        ev = Evidence(None, None, f"{m.moved:.0%} of the added code lines are removed from another file")
        out.append(Signal("move", "mostly moves code between files", conv.weight("move"), [ev]))
    if m.removal:
        out.append(
            Signal(
                "removal",
                "mostly removes code: read by the users of what goes",
                conv.weight("removal"),
                [
                    Evidence(
                        None,
                        None,
                        f"+{sum(f.additions for f in m.readable)}/-{sum(f.deletions for f in m.readable)}",
                    )
                ],
            )
        )
    parts, title = pr.parts, pr.title
    if parts.kind and f"kind.{parts.kind}" in conv.weights:
        w = conv.weight(f"kind.{parts.kind}")
        out.append(Signal(f"kind.{parts.kind}", f"title says {parts.kind}", w, [Evidence(None, None, title)]))
    # a revert's description says what broke in the PR it undoes
    if parts.breaking or (pr.desc.breaking and not pr.revert):
        ev = Evidence(None, None, title if parts.breaking else pr.desc.breaking)
        out.append(Signal("api.breaking", "marked as breaking", conv.weight("api.breaking"), [ev]))
    if pr.revert:
        ev = Evidence(None, None, pr.revert_evidence or title)
        out.append(Signal("revert", "reverts earlier work", conv.weight("revert"), [ev]))
    return out


def diff_signals(pr: PRInput, m: Measure, g: Gathered, conv: Conventions) -> Concat | None:
    """What the code does. A revert's added lines restore old code, a removal's few added lines rewire
    what is left, and a move's added lines ran before from another file: their themes are not raised
    as new risks (removed API and changed defaults still are)."""
    cat = None
    if m.has_patches:
        cat = Concat(pr.files, RISK_ROLES)
        words = find_words(cat)
        if not (pr.revert or m.removal or m.moved):  # judged on what they undo, remove or move
            scan_themes(words, g.facts)
            scan_loss_math(words, g.facts)
            scan_unsupported(words, g.facts)
            g.signals += scan_patches(cat, conv)
            g.signals += scan_call_values(pr.files, conv)
        g.signals += scan_symbols(pr.files, g.facts, conv)
        g.signals += scan_registrations(pr.files, conv)
        g.signals += scan_defaults(pr.files, conv)
        g.signals += scan_commands(words, conv)
    g.signals += scan_module_paths(pr.files, conv)
    g.signals += scan_deps(pr.files, pr.title, conv)
    return cat


def people_signals(pr: PRInput, g: Gathered, conv: Conventions, known_prs: dict | None) -> list[Signal]:
    """The description's and the discussion's signals, and the cross-references (g.disc, g.refs)."""
    record, desc = pr.record, pr.desc
    out = description_signals(desc, conv, pr.parts.kind)
    text_ev = {} if pr.revert else text_theme_evidence([pr.title, prose_of(desc.text)[:4000]])
    out += theme_signals(g.facts, text_ev, conv)
    g.disc, disc_signals = read_discussion(record, conv)
    out += disc_signals
    texts = [pr.title, desc.text] + [c.get("body") or "" for c in record.issue_comments[:50]]
    g.written = written_refs(record.repo, record.number, texts, pr.revert_commit)
    g.refs = resolve_refs(
        g.written.refs, record.number, known_prs, g.written.revert_commit, g.written.revert_title
    )
    return out


def data_gaps(record: PRRecord, files: list[FileDiff], m: Measure) -> list[str]:
    out = []
    if record.files_truncated:
        out.append("file list truncated (GitHub lists at most 3,000 files)")
    if record.commits_truncated:
        out.append("commit list truncated (GitHub lists at most 250 commits)")
    missing = [fd for fd in files if fd.patch_missing]
    if files and not m.has_patches:
        out.append("no patch text: judged from file stats, title and description")
    elif missing:
        out.append(f"{len(missing)} patch(es) omitted: " + ", ".join(fd.filename for fd in missing[:3]))
    odd = [fd.filename for fd in files if "malformed" in fd.flags]
    if odd:
        out.append(f"malformed patch text in {len(odd)} file(s): " + ", ".join(odd[:3]))
    if not files:
        out.append("no file list")
    return out


def conclude(pr: PRInput, m: Measure, g: Gathered, conv: Conventions) -> Analysis:
    signals = g.signals
    score = sum(s.weight for s in signals)
    f = Facts(
        pr.files,
        dict(m.roles),
        m.scope,
        m.churn,
        m.read_lines,
        score,
        signals,
        pr.parts.kind,
        pr.revert,
        m.has_patches,
        m.dominant_area,
        removal=m.removal,
        moved=bool(m.moved),
        satellite=m.satellite,
        code_lines=m.code_lines,
        reports=reports_on(pr.parts.subject),
    )
    verdict, rule, deciding = decide(f, conv)
    audiences = audiences_of(f, rule, pr.parts.tags, conv, pr.title)
    display = None if audiences == ["everyone"] else conv.audience_text(audiences[0])
    effort, minutes = effort_and_minutes(f, verdict, conv)
    named = named_paths(pr.desc, pr.record)
    key_files = rank_files(
        pr.files,
        g.facts,
        named,
        conv,
        removal=m.removal,
        moved=bool(m.moved),
        signals=signals,
        titled=title_paths(pr.parts.subject, pr.files),
    )
    patch_text = g.cat.text if g.cat is not None else ""
    key_symbols = pick_key_symbols(
        g.facts, pr.desc, patch_text, conv, signals, pr.files, subject=pr.parts.subject
    )
    areas = [a for a, _ in sorted(m.area_lines.items(), key=itemgetter(1), reverse=True)]
    areas += [t for t in pr.parts.tags if t not in areas]
    n_ev = int(conv.threshold("max_evidence", 3))
    return Analysis(
        repo=pr.record.repo,
        number=pr.record.number,
        verdict=verdict,
        audience=display,
        effort=effort,
        minutes=minutes,
        deciding=deciding,
        signals=sorted(signals, key=lambda s: -abs(s.weight)),
        key_files=key_files,
        key_symbols=key_symbols,
        open_items=open_items_of(signals, pr.desc, g.disc, g.truncated, g.facts, n_ev),
        cross_refs=g.refs,
        areas=areas,
        roles=dict(m.roles),
        description=pr.desc,
        discussion=g.disc,
        truncated=g.truncated,
        kind=pr.parts.kind,
        tags=list(pr.parts.tags),
        score=round(score, 2),
        audience_key=audiences[0],
        audiences=audiences,
        risks=risks_of(signals, f, g.facts, conv, pr.title),
        reverts=reverted_pr(g.refs),
        revert_commit=g.written.revert_commit,
        revert_title=g.written.revert_title,
    )


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
    "risks",
    "reverts",
    "related_prs",
]


def analysis_frame(analyses):
    """One row per PR; list columns stay lists (charts and filters use them directly). `audience` is
    the display text of the first audience (the brief's wording); `audiences` holds the whole list."""
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
                "risks": [r.kind for r in a.risks],
                "reverts": a.reverts,
                "related_prs": [r.number for r in a.cross_refs if r.repo is None],
            }
        )
    return pd.DataFrame(rows, columns=FRAME_COLUMNS)


__all__ = [
    "analyze",
    "analysis_frame",
    "decide",
    "VERDICT_RULES",
    "load_conventions",
    "Facts",
    "Rule",
]
