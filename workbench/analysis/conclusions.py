"""Conclusions from signals: the verdict rules (one ordered table), effort and minutes, key files,
key symbols, risks and open items. Pure functions; `pipeline.analyze` gathers the facts and calls these."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ..records import PRRecord
from .conventions import Conventions
from .diff import FileDiff
from .model import RISK_KINDS, Description, Discussion, Evidence, KeyFile, Risk, Signal
from .patchscan import is_noise_symbol, names_something, new_line_at, new_python_definition
from .signals import CodeFacts, Hit, changes_only_comments, first_code_change, is_program
from .symbols import param_name, same_python_type, split_signature

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
    removal: bool = False  # deletes far more than it adds
    moved: bool = False  # mostly moves code between files
    code_lines: int = 0

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


def _skip_if_tiny(f: Facts, c: Conventions) -> str:
    return "skip" if _tiny(f, c) else "skim"


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
        _BOOLEAN_CHANGE.search(e.text) for s in f.signals if s.name == "config.defaults" for e in s.evidence
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
    Rule("docs only",    _only("docs"),                                _skip_if_tiny,      "docs",
         "docs-only change"),
    Rule("CI only",      _only("ci"),                                  _skip_if_tiny,      "ci",
         "CI-only change"),
    Rule("dependencies only", _only("build", "generated"),             _deps_verdict,      "build",
         "build/dependency-only change"),
    Rule("revert",       lambda f, c: f.revert,                        _revert_verdict,    None,
         "revert of earlier work"),
    Rule("tests only",   _only("test"),                                _skip_if_tiny,      "tests",
         "tests-only change"),
    # a removal's size and its removed functions say how much goes, not how much there is to read
    Rule("removal",      lambda f, c: f.removal,                       _always("skim"),    None,
         "mostly removes code: a skim for the users of what goes"),
    # a move's size is the code it carries; what changes is where callers find it
    Rule("move",         lambda f, c: f.moved,                         _always("skim"),    None,
         "mostly moves code between files: a skim for where things now live"),
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


def audiences_of(f: Facts, rule: Rule, tags: list[str], conv: Conventions, title: str = "") -> list[str]:
    """Who should read it, most concerned first; never empty.

    The rule's role area first (a CI-only change is for CI maintainers), then the title's tags (the
    author's own naming of the module), then the audiences of the files by changed lines; "everyone"
    for a breaking change and when nothing narrower applies."""
    names: list[str] = []

    def add(name: str | None) -> None:
        if name and name not in names:
            names.append(name)

    curated = conv.curates_paths
    if rule.audience:
        # tests-only PRs hold CI's e2e scripts and nightly jobs too: tagged [ci] by their author, and not
        # titled as test work (`[ci] test: cover f`), they are CI maintainers' before test maintainers'
        if rule.audience == "tests" and f.kind != "test":
            roles = _role_audiences(conv)
            for name in (n for t in tags for n in conv.audiences_of_tag(t.strip("`")) if n in roles):
                add(name)
        for name in conv.audiences_of_tag(rule.audience) or [rule.audience]:
            add(name)
    # A removal of mostly program code is read by the users of what goes: a role area its title names
    # (`[ci]` beside the backend it removes) comes after the deleted files' audiences. Not when it updates
    # a dependency: the code it deletes is what the new version no longer needs.
    demoted = _role_audiences(conv) if _removes_program(f) and not f.has("deps.bump") else set()
    later: list[str] = []
    for tag in (t.strip("`") for t in tags):  # [`pylint`] names the area pylint
        mapped = conv.audiences_of_tag(tag)
        # uncurated, a one-word tag names a module; "[DistillationTrainer refactor]" names a project
        for name in mapped or ([] if curated or " " in tag else [tag]):
            if name in demoted:
                later.append(name)
            else:
                add(name)
    votes: dict[str, float] = {}
    votes_after_code: dict[str, float] = {}
    # A test is read by whoever owns the code it tests: beside code, test maintainers (the role area
    # "tests") are no reader of it, while the code area a test lives in (a linter rule's fixtures) is.
    with_code = any(fd.role == "code" for fd in f.files)
    about_docs = f.kind == "doc" or _DOCS_WORDS.search(title) is not None
    for fd in f.files:
        if fd.role in ("generated", "binary"):
            continue
        weight = max(1, fd.changes) * (2 if fd.role == "code" else 1)
        found = conv.audiences_of_path(fd.filename)
        if not found and not curated:
            found = _area_audiences(fd, conv)
        if with_code and fd.role == "test":
            found = [name for name in found if name not in ROLE_AREAS]
        # Docs beside code are written for the code's readers: docs maintainers come after them, unless
        # the title says the PR is about its docs.
        ballot = votes_after_code if with_code and fd.role == "docs" and not about_docs else votes
        for name in found:
            ballot[name] = ballot.get(name, 0) + weight
    total = sum(votes.values()) + sum(votes_after_code.values())
    for ballot in (votes, votes_after_code):
        for name, v in sorted(ballot.items(), key=lambda kv: -kv[1]):
            if v >= 0.15 * total or not names:  # a file or two on the side does not make an audience
                add(name)
    for name in later:
        add(name)
    if f.has("api.breaking") and "everyone" in conv.audiences:
        add("everyone")
    if not names:
        names.append("everyone")
    return names[: int(conv.threshold("max_audiences", 3))]


_DOCS_WORDS = re.compile(r"\b(?:docs?|documentation|autodocs?|readme)\b", re.I)


def _area_audiences(fd: FileDiff, conv: Conventions) -> list[str]:
    """Default conventions: a code area names its own audience. A file at the top level has no area of
    its own ("root" names no reader): its role's audience reads it (pyproject.toml, build maintainers)."""
    area = conv.area_of(fd.filename)
    if area == "root":
        return [fd.role] if fd.role in conv.audiences else []
    return [area] if area not in ROLE_AREAS or area in conv.audiences else []


def _removes_program(f: Facts) -> bool:
    """A removal whose deleted lines are mostly program code and its configs (a backend, a feature)."""
    program = sum(fd.deletions for fd in f.files if fd.role in ("code", "config", "notebook"))
    return f.removal and 2 * program >= sum(fd.deletions for fd in f.files)


def _role_audiences(conv: Conventions) -> set[str]:
    """The audiences the role areas (ci, docs, tests, build, ...) name in these conventions."""
    return {name for area in ROLE_AREAS for name in conv.audiences_of_tag(area) or [area]}


# ---- risks: what a reader is warned about, by kind ---------------------------------------------------
# signal -> (risk kind, why it is a risk). Only evidence from the diff counts (a theme named in the
# description alone raises none), so each risk points at the lines that show it.
RISK_OF_SIGNAL: dict[str, tuple[str, str]] = {
    "risk.memory": ("memory", "allocates, frees or moves device/host memory"),
    "risk.concurrency": ("concurrency", "threads, locks, async tasks or inter-process messages change"),
    "risk.numerics": ("numerics", "dtype, precision or a numerically sensitive operation changes"),
    "risk.security": ("security", "code that can run commands, load untrusted objects or leak secrets"),
    "security.shell": (
        "security",
        "a command string runs through a shell: injection if any part is user input",
    ),
    "security.ci_download": (
        "security",
        "CI or a script runs code not pinned to a version or digest, trusts an unverified package host "
        "or runs with elevated rights",
    ),
    "security.secret_cli": (
        "security",
        "a secret is passed on a command line, visible in logs and process lists",
    ),
    "api.breaking": ("breaking-api", "marked as breaking: callers or configs must change"),
    "api.removed": ("breaking-api", "public functions or classes are removed or renamed"),
    "api.signature": ("breaking-api", "public signatures change: callers must follow"),
    "config.defaults": (
        "config-default-change",
        "a default changes: runs that never set it behave differently",
    ),
    "config.on_by_default": (
        "config-default-change",
        "a new setting is on by default: runs that never set it take the new path",
    ),
    "risk.compatibility": (
        "compatibility",
        "code branches on library versions: behaviour differs per environment",
    ),
    "risk.refusal": ("compatibility", "a new error path: inputs or setups that ran before may now stop"),
    "deps.bump": ("compatibility", "dependency versions change: environments pinned elsewhere may break"),
}


_SIZING_KEY = re.compile(
    r"size|seqs|bucket|batch|offload|parallel|pad|memory|cache|shard|chunk|max_num", re.I
)
_BOOLEAN_CHANGE = re.compile(r":\s*(?:true|false)\s*->\s*(?:true|false)\s*$", re.I)  # a switch, not a size
_REMOVED_NAME = re.compile(r"removed: (\w+)")
# A title that says the change is made to use less memory, or for speed (a "perf" area tag alone says
# where, not what; "memory usage" alone is a topic: reports, stats, attributes).
_MEMORY_GOAL = (
    r"(?:reduc|lower|sav|cut|optimi[sz]|opt\b)\w*\b[^.]{0,30}\bmemory"
    r"|memory[- ](?:efficient|saving)|less memory"
)
_MEMORY_WORDS = re.compile(rf"\b(?:{_MEMORY_GOAL})\b", re.I)
_PERF_WORDS = re.compile(rf"\b(?:performance|speed ?up|faster|throughput|latency|{_MEMORY_GOAL})\b", re.I)


_SIGNATURE_CHANGE = re.compile(r"(\w+)(.*?) -> \1\b(.*)", re.S)  # "name(old) -> name(new)"


def _keeps_callers_working(evidence_text: str, typed: bool) -> bool:
    """Whether a changed signature (`f(a, b): -> f(a: int, b: str, c=1):`) still takes every call the
    old one took: the same positional parameters in the same order, none losing its default, then only
    parameters no caller has to pass (a default, `*args`, `**kwargs`, the bare `*`), the same return
    type if both have one (in a typed language, if the old one had one). What follows a `*` is passed by
    name: there, the old names must stay and keep their defaults, and new names need one. In a `typed`
    language a parameter's type is part of it; Python's annotations are hints that no call depends on."""
    change = _SIGNATURE_CHANGE.fullmatch(evidence_text)
    if change is None:
        return False
    before, after = split_signature(change.group(2)), split_signature(change.group(3))
    if before is None or after is None:
        return True  # a signature continues on later lines: too little seen to call it breaking
    (old_params, old_returns), (new_params, new_returns) = before, after
    # a different return type breaks callers; in Python, a hint added or dropped promises nothing new,
    # nor does another spelling of the same type (`Optional[List[int]]`, `list[int] | None`)
    if typed and old_returns and old_returns != new_returns:
        return False
    if not typed and old_returns and new_returns and not same_python_type(old_returns, new_returns):
        return False
    if not typed and change.group(2).strip() == ":":
        return True  # a Python class without bases gains some: every use of it still works

    def identity(param: str) -> str:
        return param if typed else param_name(param)

    def optional(param: str) -> bool:
        return "=" in param or param.startswith("*")

    (old_pos, old_named), (new_pos, new_named) = _split_at_star(old_params), _split_at_star(new_params)
    kept, added = new_pos[: len(old_pos)], new_pos[len(old_pos) :]
    if [identity(p) for p in kept] != [identity(p) for p in old_pos]:
        return False
    if any("=" in o and "=" not in n for o, n in zip(old_pos, kept, strict=True)):
        return False
    if not all(optional(p) for p in added):
        return False
    new_by_name = {identity(p): p for p in new_named}
    for param in old_named:  # `*args`, keyword-only parameters, `**kwargs`
        now = new_by_name.pop(identity(param), None)
        if now is None or ("=" in param and "=" not in now):
            return False
    return all(optional(p) for p in new_by_name.values())


def _split_at_star(params: list[str]) -> tuple[list[str], list[str]]:
    """(positional parameters, those from the first `*`, `*args` or `**kwargs` on)."""
    star = next((i for i, p in enumerate(params) if p.startswith("*")), len(params))
    return params[:star], params[star:]


_NEGATIONS = (("disable_", "enable_"), ("no_", ""), ("skip_", ""), ("without_", "with_"), ("not_", ""))


def _bare_flag(key: str) -> tuple[str, bool]:
    """(the flag without its negation, whether it was negated): disable_gc -> (gc, True)."""
    leaf = key.rsplit(".", 1)[-1]
    for neg, pos in _NEGATIONS:
        if leaf.startswith(neg):
            return leaf[len(neg) :], True
        if pos and leaf.startswith(pos):
            return leaf[len(pos) :], False
    return leaf, False


def _inverted_keys(signals: list[Signal]) -> list[Evidence]:
    """Config keys removed and added as each other's negation (disable_x -> enable_x, no_x -> x)."""
    ev = [e for s in signals if s.name == "config.keys" for e in s.evidence]
    removed = {_bare_flag(e.text.split()[1].rstrip(":")): e for e in ev if e.text.startswith("removed ")}
    out = []
    for e in ev:
        if e.text.startswith("added "):
            bare, negated = _bare_flag(e.text.split()[1].rstrip(":"))
            if (bare, not negated) in removed:
                out.append(e)
    return out


def _moved(evidence_text: str, file: str | None, facts: CodeFacts) -> bool:
    """A function "removed" from one file and defined in another of the same PR moved: no API goes."""
    m = _REMOVED_NAME.match(evidence_text)
    if not m:
        return False
    name = m.group(1)
    return any(name in syms for f, syms in facts.file_symbols.items() if f != file)


# `return`, `continue` or `break` standing as an added statement
_EARLY_EXIT = re.compile(r"^\+[ \t]+(?:return|continue|break)\b[^\n]*", re.M)


def _early_exits(code: list[FileDiff]) -> list[Evidence]:
    """The first exit a PR adds to Python code that ran before, per file (`if not offloaded: return` in
    an old function; not one in a function the PR adds): only adding lines, it still changes what runs."""
    exits = []
    for fd in code:
        if fd.language != "Python" or fd.status == "added" or not fd.patch:
            continue
        for m in _EARLY_EXIT.finditer(fd.patch):
            if new_python_definition(fd.patch, m.start()) is None:
                exits.append(Evidence(fd.filename, new_line_at(fd.patch, m.start()), m.group(0)[1:].strip()))
                break
    return exits


def risks_of(
    signals: list[Signal], f: Facts, facts: CodeFacts, conv: Conventions, title: str = ""
) -> list[Risk]:
    """Risks by kind, each with the lines that show it (see RISK_OF_SIGNAL), plus the kinds that follow
    from what the PR is: a fix or revert of program code changes behaviour; a change titled as a
    performance change is one; a dependency change for a security advisory is a security risk."""
    n_ev = int(conv.threshold("max_evidence", 3))
    by_kind: dict[str, Risk] = {}

    def add(kind: str, why: str, evidence: list[Evidence]) -> None:
        risk = by_kind.setdefault(kind, Risk(kind, why, []))
        for e in evidence:
            if len(risk.evidence) < n_ev:
                risk.evidence.append(e)

    language = {fd.filename: fd.language for fd in f.files}
    for s in signals:
        if s.name not in RISK_OF_SIGNAL:
            continue
        kind, why = RISK_OF_SIGNAL[s.name]
        ev = s.evidence if s.name == "api.breaking" else [e for e in s.evidence if e.file]
        if s.name == "api.removed":
            ev = [e for e in ev if not _moved(e.text, e.file, facts)]
        if s.name == "api.signature":
            ev = [e for e in ev if not _keeps_callers_working(e.text, typed=language.get(e.file) != "Python")]
        if s.name == "deps.bump":  # a package's own version is its release, not a dependency
            ev = [e for e in ev if not e.text.startswith("version:")]
        if ev:
            add(kind, why, ev)
    title_ev = [Evidence(None, None, title)] if title else []
    # A fix changes what runs where it rewrites code; one that only adds lines supplies a missing piece.
    # A revert changes behaviour back where it rewrites code; one that only deletes removes an addition.
    code = [fd for fd in f.files if fd.role in ("code", "notebook")]
    if f.revert:
        if any(fd.additions for fd in code):
            add("behaviour-change", "restores earlier behaviour", title_ev)
    elif f.removal and any(fd.deletions for fd in code):  # deleted workflows or docs run nothing of users'
        add("behaviour-change", "a code path users may run goes away", title_ev)
    elif f.kind == "fix":
        rewritten = [fd for fd in code if fd.deletions and not changes_only_comments(fd)]
        if rewritten:
            # the program the fix rewrites, before a run script that comes with it; a file it adds is new
            biggest = max(rewritten, key=lambda fd: (is_program(fd), fd.changes))
            # the first line it writes anew shows where; a file that only lost lines, its counts
            line = first_code_change(biggest, signs="+")
            if line:
                at = new_line_at(biggest.patch, line.start())
                ev = Evidence(biggest.filename, at, line.group(1).strip()[:200])
            else:
                ev = Evidence(biggest.filename, None, f"code: +{biggest.additions}/-{biggest.deletions}")
            add("behaviour-change", "a fix changes what the code does on the path it fixes", [ev])
        elif exits := _early_exits(code):
            add("behaviour-change", "a fix makes code that ran before stop early on the path it fixes", exits)
    # a guide about performance changes nothing that runs: the title speaks of what runs only beside code
    runs = bool(f.scope - {"docs"})
    if runs and (f.kind == "perf" or _PERF_WORDS.search(title or "")):
        add("performance", "the change is made for speed or memory: measure before relying on it", title_ev)
    if runs and _MEMORY_WORDS.search(title or ""):
        add(
            "memory", "the change is made to use less memory: measure the peak before relying on it", title_ev
        )
    # a changed default that sizes buffers, batches or parallelism changes memory use and speed; so does
    # a new switch of that kind that is on by default (padding, sharding, balancing batches)
    sizing = [
        e
        for s in signals
        if s.name in ("config.defaults", "config.on_by_default")
        for e in s.evidence
        if e.file and _SIZING_KEY.search(e.text.split(":")[0]) and not _BOOLEAN_CHANGE.search(e.text)
    ]
    if sizing:
        add("memory", "a default that sizes buffers, batches or parallelism changes", sizing)
        add("performance", "a default that sizes buffers, batches or parallelism changes", sizing)
    # a switch whose default flips turns a code path on or off for every run that never set it
    defaults = [e for s in signals if s.name == "config.defaults" for e in s.evidence if e.file]
    flips = [e for e in defaults if _BOOLEAN_CHANGE.search(e.text)]
    if flips:
        add(
            "behaviour-change",
            "a switch's default flips: a path turns on or off for runs that never set it",
            flips,
        )
    inverted = _inverted_keys(signals)
    if inverted:
        add(
            "behaviour-change",
            "a flag is replaced by its opposite: configs that set it now mean the reverse",
            inverted,
        )
    removed_keys = [
        e for s in signals if s.name == "config.keys" for e in s.evidence if e.text.startswith("removed ")
    ]
    if removed_keys:
        add("breaking-api", "config keys are removed or moved: configs that set them break", removed_keys)
    text_security = next((s for s in signals if s.name == "risk.security"), None)
    if text_security and "build" in f.scope and not by_kind.get("security"):
        add("security", "a dependency changes for a security advisory", text_security.evidence[-1:])
    return [by_kind[k] for k in RISK_KINDS if k in by_kind]


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
_MOVE_STATUS = {"added": "code moved here", "removed": "code moved out"}
# Signals whose evidence names the file a reader must see first: the manifest of a dependency change,
# the config file whose default changed.
_LEADING_SIGNALS = ("deps.bump", "config.defaults")


def rank_files(
    files: list[FileDiff],
    facts: CodeFacts,
    named: set[str],
    conv: Conventions,
    *,
    removal: bool = False,
    moved: bool = False,
    signals: list[Signal] | None = None,
) -> list[KeyFile]:
    """The files to read first, best first: role and size, then risk hits, files the description or
    a reviewer names, symbols touched, and files a leading signal points at. In a move, a file added
    or deleted is where code moved to or from."""
    leading = {e.file for s in signals or () if s.name in _LEADING_SIGNALS for e in s.evidence if e.file}
    scores = [_file_score(fd, facts, named, leading, removal) for fd in files]
    # snapshot files are test evidence (recorded output), never a file to read first
    shown = [i for i, fd in enumerate(files) if not fd.snapshot]
    order = sorted(shown, key=lambda i: scores[i], reverse=True)  # stable: ties in file order
    themes_of = _themes_per_file(facts, signals or [])
    out = []
    for i in order[: int(conv.threshold("max_key_files", 6))]:
        fd = files[i]
        syms = facts.file_symbols.get(fd.filename) or []
        reason = f"{fd.role}, +{fd.additions}/-{fd.deletions}"
        if fd.status in _SHOWN_STATUS:
            reason += "; " + (_MOVE_STATUS.get(fd.status, fd.status) if moved else fd.status)
        if themes_of.get(fd.filename):
            reason += "; risk: " + ", ".join(themes_of[fd.filename])
        if fd.filename in leading:
            reason += "; a changed default or dependency"
        if fd.filename in named:
            reason += "; named in the description or review"
        if syms:
            reason += "; touches " + ", ".join(syms[:3])
        flags = [x for x in fd.flags if x != "empty"]
        if flags:
            reason += "; flags: " + ", ".join(flags)
        out.append(
            KeyFile(fd.filename, fd.role, reason, round(scores[i], 2), fd.additions, fd.deletions, syms[:8])
        )
    return out


def _file_score(fd: FileDiff, facts: CodeFacts, named: set[str], leading: set[str], removal: bool) -> float:
    # A test is read after the code it tests, whatever its size: its rank grows with size more slowly.
    size = math.log2(2 + fd.changes)
    score = ROLE_RANK.get(fd.role, 0.5) * (size if fd.role != "test" else math.sqrt(size))
    score += min(facts.risk_per_file.get(fd.filename, 0), 5)
    if fd.filename in named:
        score += 1.5 if fd.role != "test" else 0.5  # a test the description points at still follows the fix
    if fd.role != "docs":  # a page's inline code names what it documents, not definitions it changes
        score += 0.3 * min(len(facts.file_symbols.get(fd.filename) or ()), 3)
    if fd.filename in leading:
        score += 4.0
    if "generated" in fd.filename.rsplit("/", 1)[-1].lower():
        score *= 0.5  # a generated copy of a config follows its source
    if fd.status == "removed" and not removal:
        score *= 0.2  # a deleted file is a key file only when removing is what the PR does
    if fd.role == "code" and not is_program(fd):
        score *= 0.5  # a run script sets up what the program beside it does: read after it
    return score


def _themes_per_file(facts: CodeFacts, signals: list[Signal]) -> dict[str, list[str]]:
    """file -> the risk themes its lines show: the theme hits, and commands run through a shell,
    unpinned downloads and secrets on command lines (security)."""
    out: dict[str, list[str]] = {}
    for name, hits in facts.theme_hits.items():
        theme = name.split(".", 1)[1]
        for filename in dict.fromkeys(h.file.filename for h in hits):
            out.setdefault(filename, []).append(theme)
    for s in signals:
        if not s.name.startswith("security."):
            continue
        for filename in dict.fromkeys(e.file for e in s.evidence if e.file):
            themes = out.setdefault(filename, [])
            if "security" not in themes:
                themes.append("security")
    return out


_IDENT = re.compile(r"[A-Za-z_][\w.]*(?:\(\))?\Z")
_COMMON_SYMBOLS = frozenset({"__init__", "main", "forward", "setUp", "tearDown", "test"})
# `check_license.py`, `ckpt_contents.json`: the description names a file (of data: what code reads)
_FILE_NAME = re.compile(
    r"\.(?:py|pyi|ipynb|sh|ya?ml|json|toml|cfg|ini|lock|md|rst|txt|csv|html|rs|go|js|ts|c|cc|cpp|h|cu)\Z"
)
_DATA_FILE = re.compile(r"\.(?:json|ya?ml|toml|cfg|ini|txt|csv)\Z")


# What a key weighs as a key symbol: a changed default changes every run that never set it, so it
# leads; a key added or removed is read like an added or removed definition. A CI job's or a script's
# setting and a dependency are what a PR changing only those is about; they weigh less than any code
# symbol (1.0 a hunk header, 1.5 an added definition), so in a PR with code they follow it.
_CONFIG_KEY_WEIGHT = {"config.defaults": 3.0, "config.keys": 1.5, "settings.changed": 0.5, "deps.bump": 0.5}
# A key as configs spell them: `max_num_seqs`, `timeout-minutes`, a package `ray`.
_KEY = re.compile(r"[A-Za-z_][\w\-]*\Z")


def _config_keys(signals: Iterable[Signal]) -> dict[str, float]:
    """The keys of changed defaults ("mode: sync -> async"), of added or removed config keys ("added
    pad_to_max: true"), of changed CI or script settings and the packages of changed dependencies, by
    weight. A key that comes or goes, or a setting, is a symbol only with a name of its own
    (`pad_to_max`, not `enable`, which says nothing without the section it is in); a package is named
    by its plain name (`ray`)."""
    keys: dict[str, float] = {}
    for s in signals:
        weight = _CONFIG_KEY_WEIGHT.get(s.name)
        for e in s.evidence if weight else []:
            text = e.text.removeprefix("added ").removeprefix("removed ")
            key = text.split(":", 1)[0].strip()
            if s.name == "deps.bump":
                key = key.split("[", 1)[0]  # `ray[default]`: the package, without its extras
            else:
                key = key.rsplit(".", 1)[-1]  # a Hydra path `actor.rollout.n`: its last part
            if not (e.file and _KEY.match(key)) or is_noise_symbol(key):
                continue
            if s.name in ("config.keys", "settings.changed") and not names_something(key):
                continue
            keys[key] = max(keys.get(key, 0.0), weight)
    return keys


def pick_key_symbols(
    facts: CodeFacts,
    desc: Description,
    patch_text: str,
    conv: Conventions,
    signals: Iterable[Signal] = (),
    files: Iterable[FileDiff] = (),
) -> list[str]:
    """Symbols by weight (code over tests) and config keys whose default changed or that come or go,
    raised when the description names them in `code`."""
    scores = dict(facts.symbols)
    for key, weight in _config_keys(signals).items():
        scores[key] = scores.get(key, 0.0) + weight
    changed = {fd.filename.rsplit("/", 1)[-1] for fd in files}
    for span in desc.code_spans:
        name = span.rstrip("()")
        if not (_IDENT.match(span) and names_something(name)):
            continue
        if _FILE_NAME.search(name):
            # a data file the code reads or writes (`ckpt_contents.json`) is a name to know; one the PR
            # changes is a key file already, and a suffix (`py`) is never a symbol
            if _DATA_FILE.search(name) and name not in changed and name in patch_text:
                scores[name] = scores.get(name, 0.0) + 1.0
            continue
        short = name.rsplit(".", 1)[-1]
        if is_noise_symbol(short) or not (short[0].isalpha() or short[0] == "_"):
            continue  # `typing.Self` -> Self, a version `v0.15.22` -> 22: not symbols
        if short in scores:
            scores[short] += 2.0
        elif not patch_text or short in patch_text:
            scores[short] = 1.0 if patch_text else 0.5
    ranked = sorted(scores, key=lambda n: scores[n], reverse=True)  # stable: ties in first-seen order
    ranked = [n for n in ranked if n not in _COMMON_SYMBOLS]
    return ranked[: int(conv.threshold("max_key_symbols", 8))]


# An open item stays one line a brief can quote: the cases a feature leaves out, up to this many characters.
_UNSUPPORTED_CHARS = 160


def _unsupported_item(hits: list[Hit], n: int) -> str:
    """One item for what the added code says it does not do: a feature's unbuilt cases are read together."""
    first = hits[0]
    where = f"{first.file.filename}:{first.line}" if first.line else first.file.filename
    texts = list(dict.fromkeys(h.text for h in hits))  # the same refusal raised by two engines
    shown = texts[:1]
    for t in texts[1:n]:
        if sum(map(len, shown)) + len(t) > _UNSUPPORTED_CHARS:
            break
        shown.append(t)
    more = len(texts) - len(shown)
    return f"not supported yet, raised in {where}: " + "; ".join(shown) + (f" (+{more} more)" if more else "")


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
    if facts.unsupported:
        items.append(_unsupported_item(facts.unsupported, n))
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
