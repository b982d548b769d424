"""Risks by kind, each with the lines that show it: from the signals (RISK_OF_SIGNAL) and from what
the PR is (a fix, a revert, a removal, a title about speed or memory, changed defaults). Pure."""

from __future__ import annotations

import re

from .codelines import first_behaviour_change, first_code_change, is_program
from .conventions import Conventions
from .diff import FileDiff
from .model import RISK_KINDS, Evidence, Risk, Signal
from .patchscan import new_line_at, new_python_definition
from .signals import CodeFacts
from .symbols import param_name, same_python_type, split_signature
from .verdicts import SWITCH_FLIP, Facts

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
    "api.module_gone": ("breaking-api", "a module is removed or renamed: imports of its old path break"),
    "config.defaults": (
        "config-default-change",
        "a default changes: runs that never set it behave differently",
    ),
    "config.on_by_default": (
        "config-default-change",
        "a new setting is on by default: runs that never set it take the new path",
    ),
    "code.values": (
        "behaviour-change",
        "a value written into a call or a signature changes: no config overrides it",
    ),
    "risk.compatibility": (
        "compatibility",
        "code branches on library versions: behaviour differs per environment",
    ),
    "compat.patches": (
        "compatibility",
        "patches another library's code at run time: breaks when that library changes its internals",
    ),
    "ci.branch_install": (
        "compatibility",
        "a package is installed from a repository's branch: what runs changes with that branch",
    ),
    "risk.refusal": ("compatibility", "a new error path: inputs or setups that ran before may now stop"),
    "deps.bump": ("compatibility", "dependency versions change: environments pinned elsewhere may break"),
}


_SIZING_KEY = re.compile(
    r"size|seqs|bucket|batch|offload|parallel|pad|memory|cache|shard|chunk|max_num", re.I
)
_REMOVED_NAME = re.compile(r"removed: (\w+)")


def _leaf_key(evidence_text: str) -> str:
    """The key a default's evidence names, without the sections above it: "added trainer.balance_batch:
    true" -> balance_batch (a section's name says where, not what is sized)."""
    return evidence_text.split(":", 1)[0].removeprefix("added ").rsplit(".", 1)[-1]


# A title that says the change is made to use less memory ("memory usage" alone is a topic: reports,
# stats, attributes). A title that promises speed raises nothing: readers call a speed-up a performance
# risk where its code shows one (a default that sizes batches), seldom for what it is for.
_MEMORY_WORDS = re.compile(
    r"\b(?:(?:reduc|lower|sav|cut|optimi[sz]|opt\b)\w*\b[^.]{0,30}\bmemory"
    r"|memory[- ](?:efficient|saving)|less memory)\b",
    re.I,
)
# A fix titled by the failure it ends (a crash, a raised exception, a hang, a shape that did not fit)
# makes runs that stopped go through; a run that went through before does what it did. "Error" and
# "typo" are left out: an off-by-one error or a typo in a key name changes what working runs compute;
# so does a failure that was silent (wrong scores, not a stop), and an error the PR starts to raise.
_FAILURE_FIXED = re.compile(
    r"\b(?:fail(?:s|ed|ing|ures?)?|crash(?:es|ed|ing)?|exceptions?|deadlocks?|hang(?:s|ing)?"
    r"|not supported|unsupported|(?:shape|device|size|dtype|type) mismatch(?:es|ed)?|[A-Z]\w*Error)\b"
)
_NOT_A_STOP = re.compile(r"\bsilent(?:ly)?\b|\braise[sd]?\b", re.I)


def _fixes_a_stop(title: str) -> bool:
    return bool(_FAILURE_FIXED.search(title)) and not _NOT_A_STOP.search(title)


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
    if not typed and change.group(1)[0].isupper():  # a Python class (PEP 8 names them in CapWords)
        return set(old_params) <= set(new_params)  # keeps its bases: a mixin added takes nothing away

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


# the same release rebuilt: a post release or a local build of it (`torch_npu: 2.7.1 -> 2.7.1.post2`,
# `torch: 2.6.0 -> 2.6.0+cu124`) changes packaging, not the API a caller meets
_REBUILD = re.compile(r": ([\w.]+) -> \1(?:\.post\d+|\+[\w.]+)$")
# a call that hands the allocator's cached blocks back (`torch.cuda.empty_cache()`, a helper around it)
_FREES_CACHE = re.compile(r"[\w.()]*empty_cache\([^)]*\)\s*$")
# a setting's or parameter's name in an error message: snake_case, with one underscore at least
_SNAKE_NAME = re.compile(r"\b[a-z][a-z0-9]*_[a-z0-9_]*[a-z0-9]\b")


def _refuses_a_new_setting(message: str, files: list[FileDiff]) -> bool:
    """Whether an error's message is about a setting or parameter this PR brings in
    (`max_samples_per_step_per_worker must be a non-negative integer`): it names one the PR declares,
    on lines it adds only, and nothing the PR's diff shows was there before. Only runs that set the
    new thing meet the error; nothing that ran before stops. (An old function that now raises "use the
    new one instead" names the old one; a new local variable says nothing of what is set.)"""
    ages = [_age(name, files) for name in dict.fromkeys(_SNAKE_NAME.findall(message))]
    return "new" in ages and "old" not in ages


def _age(name: str, files: list[FileDiff]) -> str:
    """How old `name` is, as the PR shows it: "old" when a line the PR keeps or removes holds it, "new"
    when only lines it adds do and one of them declares it, "" otherwise."""
    declared = False
    for fd in files:
        patch = fd.patch or ""
        at = patch.find(name)
        while at >= 0:
            start = patch.rfind("\n", 0, at) + 1
            if patch[start] != "+":
                return "old"
            end = patch.find("\n", at)
            declared = declared or _declares(fd, patch[start : end if end >= 0 else len(patch)], name)
            at = patch.find(name, at + len(name))
    return "new" if declared else ""


def _declares(fd: FileDiff, added_line: str, name: str) -> bool:
    """A setting with a default: a YAML key, or a field or keyword parameter on its own line
    (`name: int | None = None`). Old code does not pass it, so the default is what old runs take; a
    parameter without one may be one that old callers now pass."""
    code = added_line[1:].lstrip()
    if not code.startswith((f"{name}:", f"{name} :")):
        return False
    return fd.language == "YAML" or "=" in code


def _fix_rewrite(fd: FileDiff) -> Evidence | None:
    """Where a fix rewrites program code in `fd`: it takes out a line of code and writes one that does
    something (the first such line is shown) or writes nothing (its counts are). Not a run script's
    arguments (an example, not what users' runs do), nor a line that only logs, quotes or imports
    written in its place (a message reworded, a type hint put in quotes), nor code added beside a
    reworded docstring. None where it rewrites nothing."""
    if not is_program(fd) or first_code_change(fd, signs="-") is None:
        return None
    if not fd.additions:
        return Evidence(fd.filename, None, f"code: +0/-{fd.deletions}")
    line = first_behaviour_change(fd, signs="+")
    if line is None:
        return None
    return Evidence(fd.filename, new_line_at(fd.patch, line.start()), line.group(1).strip()[:200])


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


def _showing_risk(s: Signal, f: Facts, facts: CodeFacts) -> list[Evidence]:
    """The lines of a signal that show its risk (a breaking mark's text stands on no line)."""
    ev = s.evidence if s.name == "api.breaking" else [e for e in s.evidence if e.file]
    if s.name == "api.removed":  # a function defined in another file of the PR moved
        return [e for e in ev if not _moved(e.text, e.file, facts)]
    if s.name == "api.signature":
        language = {fd.filename: fd.language for fd in f.files}
        return [e for e in ev if not _keeps_callers_working(e.text, typed=language.get(e.file) != "Python")]
    if s.name == "risk.memory":  # freeing the allocator's cache holds nothing: a sync, paid in speed
        return [e for e in ev if not _FREES_CACHE.match(e.text)]
    if s.name == "risk.refusal":
        return [e for e in ev if not _refuses_a_new_setting(e.text, f.files)]
    if s.name == "deps.bump":  # a package's own version is its release, not a dependency
        return [e for e in ev if not e.text.startswith("version:") and not _REBUILD.search(e.text)]
    return ev


# A sample (conventions' `sample_areas`) is run by hand by whoever copies it: its dtypes, locks, fixes
# and defaults change no run of the project, and readers flag none of them. A sample that runs shell
# input is a hole on the machine it runs on; a config key gone from a sample breaks the command lines
# that pass it.
_KINDS_SAMPLES_SHOW = frozenset({"security", "breaking-api"})


def risks_of(
    signals: list[Signal], f: Facts, facts: CodeFacts, conv: Conventions, title: str = ""
) -> list[Risk]:
    """Risks by kind, each with the lines that show it (see RISK_OF_SIGNAL), plus the kinds that follow
    from what the PR is: a fix or revert of program code changes behaviour; a change titled as made
    to use less memory is a memory risk; a dependency change for a security advisory is a security risk.
    A sample's lines (conventions' `sample_areas`) raise security and breaking risks only."""
    n_ev = int(conv.threshold("max_evidence", 3))
    by_kind: dict[str, Risk] = {}

    def add(kind: str, why: str, evidence: list[Evidence]) -> None:
        if kind not in _KINDS_SAMPLES_SHOW:
            evidence = [e for e in evidence if not (e.file and conv.in_sample(e.file))]
            if not evidence:
                return
        risk = by_kind.setdefault(kind, Risk(kind, why, []))
        for e in evidence:
            if len(risk.evidence) < n_ev:
                risk.evidence.append(e)

    for s in signals:
        if s.name in RISK_OF_SIGNAL:
            kind, why = RISK_OF_SIGNAL[s.name]
            ev = _showing_risk(s, f, facts)
            if ev:
                add(kind, why, ev)
    title_ev = [Evidence(None, None, title)] if title else []
    # A fix changes what runs where it rewrites code; one that only adds lines supplies a missing piece,
    # unless what it adds makes old code stop early. A revert changes behaviour back where it rewrites
    # code; one that only deletes removes an addition.
    code = [fd for fd in f.files if fd.role in ("code", "notebook") and not conv.in_sample(fd.filename)]
    if f.revert:
        if any(fd.additions for fd in code):
            add("behaviour-change", "restores earlier behaviour", title_ev)
    # A removal takes a path from the users who chose it, which breaking-api tells them; it changes
    # what everyone else's runs do when a default moves them onto another path too (a mode retired and
    # the default flipped away from it). Deleted workflows or docs run nothing of users'; nor do deleted
    # examples or recipes: users copy them, the library they call stays as it was.
    elif f.removal and any(fd.deletions for fd in code):
        if not f.satellite and "config-default-change" in by_kind:
            add("behaviour-change", "a code path goes away and a default moves runs off it", title_ev)
    elif f.kind == "fix" and not _fixes_a_stop(title):
        rewrites = [(fd, ev) for fd in code if (ev := _fix_rewrite(fd))]
        if rewrites:
            _biggest, where = max(rewrites, key=lambda rewrite: rewrite[0].changes)
            add("behaviour-change", "a fix changes what the code does on the path it fixes", [where])
        elif exits := _early_exits(code):
            add("behaviour-change", "a fix makes code that ran before stop early on the path it fixes", exits)
    # a guide about memory changes nothing that runs: the title speaks of what runs only beside code
    runs = bool(f.scope - {"docs"})
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
        if e.file and _SIZING_KEY.search(_leaf_key(e.text)) and not SWITCH_FLIP.search(e.text)
    ]
    if sizing:
        add("memory", "a default that sizes buffers, batches or parallelism changes", sizing)
        add("performance", "a default that sizes buffers, batches or parallelism changes", sizing)
    # a switch whose default flips turns a code path on or off for every run that never set it
    defaults = [e for s in signals if s.name == "config.defaults" for e in s.evidence if e.file]
    flips = [e for e in defaults if SWITCH_FLIP.search(e.text)]
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
