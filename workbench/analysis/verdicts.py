"""The verdict: the one ordered table of verdict rules (VERDICT_RULES), what they look at (Facts), and
the effort and minutes a verdict implies. Pure functions; `pipeline.analyze` gathers the facts."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from .codelines import changes_only_comments, is_program
from .conventions import Conventions
from .diff import FileDiff
from .model import Signal

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
# How much a file of each role matters when ranking key files. A CI job, like a test, is read after the
# code it runs, however long its steps.
ROLE_RANK = {
    "code": 1.0,
    "test": 0.6,
    "config": 0.7,
    "ci": 0.6,
    "build": 0.5,
    "notebook": 0.5,
    "docs": 0.4,
    "data": 0.2,
    "generated": 0.05,
    "binary": 0.05,
}
ROLE_AREAS = frozenset({"ci", "docs", "tests", "build", "examples", "benchmarks"})


# A changed default that flips a switch ("use_v1: false -> true"), not one that sizes something.
SWITCH_FLIP = re.compile(r":\s*(?:true|false)\s*->\s*(?:true|false)\s*$", re.I)


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
    removal: bool = False  # deletes far more than it adds
    moved: bool = False  # mostly moves code between files
    satellite: bool = False  # what runs stays in examples, benchmarks or recipes
    code_lines: int = 0
    reports: bool = False  # the title says the PR changes what runs report: metrics, profiles, traces, logs

    def has(self, name: str) -> bool:
        return any(s.name == name for s in self.signals)

    @property
    def risk_themes(self) -> int:
        """How many risk themes weigh 1 or more (code markers aside)."""
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
    audience: str | None = None  # a role area the audience starts with: "ci" | "docs" | "build" | "tests"
    label: str = ""


def _only(*roles: str) -> Callable[[Facts, Conventions], bool]:
    allowed = frozenset(roles)
    return lambda f, c: f.scope <= allowed and bool(f.scope)


# ---- THE VERDICT RULES: first match wins ----------------------------------------------------------
# Thresholds come from the conventions (default.toml [thresholds]); the numbers here are fallbacks.


def _tiny(f: Facts, c: Conventions) -> bool:
    return f.churn <= c.threshold("tiny_lines", 10)


def _deep_bar(f: Facts, c: Conventions) -> float:
    # Without patch text code evidence cannot show and themes named only in the text count half,
    # so a facts-only record clears a lower bar.
    return c.threshold("deep_score", 3) if f.has_patches else c.threshold("deep_score_no_patch", 2.25)


def _deep_if_strong(f: Facts, c: Conventions) -> str:
    return "deep" if f.score >= _deep_bar(f, c) else "skim"


def _skip_if_tiny_or_cut(f: Facts, c: Conventions) -> str:
    # a job, a page or a test that only goes (a redundant workflow, an outdated guide, a dead script) is
    # told by its title, and so is housekeeping its author calls a chore (a readme touched up, a CI
    # machine changed, code owners), up to a medium change; so is a fix of a guide or an example (a wrong
    # path or flag corrected), but not a CI fix: why the jobs failed is what CI maintainers read
    if _tiny(f, c) or not any(fd.additions for fd in f.files):
        return "skip"
    corrects = f.kind == "fix" and "ci" not in f.scope
    if (f.kind == "chore" or corrects) and f.churn <= c.threshold("medium_lines", 80):
        return "skip"
    return "skim"


def _satellite_verdict(f: Facts, c: Conventions) -> str:
    # launch scripts alone (a model's run on a cluster, its flags) are copied by the users of that run,
    # not read: told by the title up to a large change; a new recipe's code is read by its users
    scripts_only = all(fd.role == "code" and not is_program(fd) for fd in f.files)
    if scripts_only and f.churn <= c.threshold("large_lines", 500):
        return "skip"
    return _skip_if_tiny_or_cut(f, c)


def _deps_verdict(f: Facts, c: Conventions) -> str:
    # a small pin or bump is read in its title, unless it closes a security hole
    if f.churn <= c.threshold("medium_lines", 80) and not f.has("risk.security"):
        return "skip"
    return "skim"


def _revert_verdict(f: Facts, c: Conventions) -> str:
    # Judged on what it undoes: a tiny revert, or one that only deletes what an earlier PR added, puts
    # the code back as readers knew it; one that rewrites code back is worth a skim.
    added = sum(fd.additions for fd in f.files)
    return "skip" if _tiny(f, c) or added <= c.threshold("tiny_lines", 10) else "skim"


def _changes_what_runs(files: list[FileDiff]) -> bool:
    """Whether a code file changes more than its comments."""
    return any(
        fd.role in ("code", "notebook") and fd.changes and not changes_only_comments(fd) for fd in files
    )


def _is_trivial(f: Facts, c: Conventions) -> bool:
    # a tiny edit of program code is still worth a look: one changed line can change what runs
    # nor is a changed default: runs that never set it change
    return (
        _tiny(f, c)
        and f.score <= c.threshold("skip_score", 0)
        and not f.has("config.defaults")
        and not _changes_what_runs(f.files)  # read last: it reads the patches
    )


def _breaking_switch(f: Facts, c: Conventions) -> bool:
    """Marked breaking by its author, and a switch's default flips: every run that never set it takes
    another path (a new trainer, a backend made the default), which the author says callers feel."""
    return f.has("api.breaking") and any(
        SWITCH_FLIP.search(e.text) for s in f.signals if s.name == "config.defaults" for e in s.evidence
    )


def _satellite(f: Facts, c: Conventions) -> bool:
    """What runs stays in examples, benchmarks or recipes, and its author does not mark it breaking
    (then its users must act on it)."""
    return f.satellite and not f.has("api.breaking")


def _about_reports(f: Facts, c: Conventions) -> bool:
    """The title says the PR changes what runs report (metrics, profiles, traces, logs), and the PR is
    neither huge nor marked breaking nor a security risk: what a run computes stays as it was."""
    return (
        f.reports
        and f.churn <= c.threshold("huge_lines", 2000)
        and not any(f.has(name) for name in ("api.breaking", "risk.security", "security.shell"))
    )


def _always(verdict: str) -> Callable[[Facts, Conventions], str]:
    return lambda f, c: verdict


VERDICT_RULES: list[Rule] = [
    # name               applies when                                  verdict             audience
    Rule("no files",     lambda f, c: not f.files,                     _deep_if_strong,    None,
         "no file list: judged from title and description"),
    Rule("generated only", lambda f, c: not f.scope,                   _always("skip"),    None,
         "only generated, vendored or binary files"),
    # docs, CI and tests are never a deep read: at most a skim for their maintainers; a risk they carry
    # (an unpinned download, a secret on a command line) is flagged, not read closely
    Rule("docs only",    _only("docs"),                                _skip_if_tiny_or_cut, "docs",
         "docs-only change"),
    Rule("CI only",      _only("ci"),                                  _skip_if_tiny_or_cut, "ci",
         "CI-only change"),
    Rule("dependencies only", _only("build", "generated"),             _deps_verdict,      "build",
         "build/dependency-only change"),
    Rule("revert",       lambda f, c: f.revert,                        _revert_verdict,    None,
         "revert of earlier work"),
    Rule("tests only",   _only("test"),                                _skip_if_tiny_or_cut, "tests",
         "tests-only change"),
    # an example, a benchmark or a recipe is run by its own users: told by its title when tiny, a chore
    # or only going (a recipe moved to its own repository), else a skim for them, however large or
    # risky (a new recipe's async code is its own)
    Rule("satellite",    _satellite,                                   _satellite_verdict, None,
         "changes only examples, benchmarks or recipes: for their users"),
    # a removal's size and its removed functions say how much goes, not how much there is to read
    Rule("removal",      lambda f, c: f.removal,                       _always("skim"),    None,
         "mostly removes code: a skim for the users of what goes"),
    # a move's size is the code it carries; what changes is where callers find it
    Rule("move",         lambda f, c: f.moved,                         _always("skim"),    None,
         "mostly moves code between files: a skim for where things now live"),
    # a metric, a profiler or a trace is read by whoever reads the reports: however much code it takes,
    # what a run computes is as it was
    Rule("reports",      _about_reports,                               _skip_if_tiny_or_cut, None,
         "changes what runs report (metrics, profiles, traces, logs): for those who read them"),
    # what the author calls breaking, shown in a default that turns a path on or off for every run
    Rule("breaking switch", _breaking_switch,                          _always("deep"),    None,
         "marked breaking, and a switch's default flips for every run"),
    Rule("strong signals", lambda f, c: f.score >= _deep_bar(f, c),    _always("deep"),    None,
         "signals add up to a close read"),
    Rule("trivial",      _is_trivial,                                  _always("skip"),    None,
         "tiny change with nothing notable"),
    Rule("default",      lambda f, c: True,                            _always("skim"),    None,
         "worth a skim"),
]  # fmt: skip


def decide(f: Facts, conv: Conventions) -> tuple[str, Rule, list[str]]:
    """-> (verdict, the rule that decided, deciding labels). See VERDICT_RULES."""
    rule = next(r for r in VERDICT_RULES if r.when(f, conv))  # the last rule always applies
    verdict = rule.verdict(f, conv)
    # The deciding labels: the rule's, then the signals that push towards the verdict, strongest first.
    deep = verdict == "deep"
    pushing = [s for s in f.signals if s.weight != 0 and (s.weight > 0) == deep]
    pushing.sort(key=lambda s: abs(s.weight), reverse=True)
    deciding = [] if rule.name == "strong signals" else [rule.label]
    deciding += [s.label for s in pushing]
    return verdict, rule, deciding[:3]


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
