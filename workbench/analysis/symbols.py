"""Key symbols and API changes: the definitions a PR's hunk headers name and the definition lines it
adds or removes (Python, Rust, Go, TypeScript/JavaScript, Java/Kotlin, C/C++), weighed per file, the
public functions and classes it removes or whose signature it changes, and the names it newly registers
in the project's registries.
"""

from __future__ import annotations

import re
from functools import lru_cache

from .conventions import Conventions
from .diff import FileDiff
from .model import Evidence, Signal
from .patchscan import (
    definition_lines,
    documented_names,
    enclosing_names,
    environment_variables,
    in_python_function,
    is_noise_symbol,
    workflow_names,
)
from .signals import CodeFacts, Find, counted_signals

# Files whose "definitions" are prose or recorded output: their hunk headers may still name a symbol.
_PROSE_SUFFIXES = (".md", ".mdx", ".rst", ".txt", ".snap", ".new", ".golden")


# A CI job a PR adds or removes whole; a job or an environment variable it changes: under a code
# definition (1.0, 1.5 added), a whole job above a setting whose value changed (0.5, focus.py), the rest
# under it, and all above a test's (0.3).
_JOB_WEIGHT = {True: 0.8, False: 0.4}
# An environment variable the code reads or sets: half its file's weight, under the definitions there.
_VARIABLE_SHARE = 0.5

_RUST_PUB = re.compile(r"(?:^|\s)pub\s")


def _is_public(language: str | None, modifiers: str, name: str) -> bool:
    """Whether a definition is part of a module's public surface, by its language's own rule."""
    if language == "Rust":
        return _RUST_PUB.search(modifiers) is not None  # `pub(crate)` is not the crate's API
    if language == "Go":
        return name[:1].isupper()
    if language in ("TypeScript", "JavaScript", "TSX", "JSX"):
        return "export" in modifiers
    if language == "Java":
        return "public" in modifiers
    return not name.startswith("_")


_TEST_NAME = re.compile(r"_?[Tt]est")


def _tests_lead(fd: FileDiff, names: list[str]) -> list[str]:
    """A test file's names with its tests first: what it checks, before the stubs and helpers it builds
    (`_FakeTokenizer`, `_make_output`) to check it."""
    if fd.role != "test":
        return names
    return sorted(names, key=lambda name: not _TEST_NAME.match(name))


def scan_symbols(files: list[FileDiff], facts: CodeFacts, conv: Conventions) -> list[Signal]:
    """Enclosing definitions from @@ headers, and definition lines added or removed (Python, Rust, Go,
    TypeScript/JavaScript, Java/Kotlin, C/C++) -> key symbols and API-change signals.

    Keywords, modifiers, single letters and placeholder names never become symbols
    (`patchscan.is_noise_symbol`); snapshot files are recorded output, not definitions."""
    removed_ev: list[Evidence] = []
    signature_ev: list[Find] = []
    per_file: list[dict[str, float]] = []  # each file's symbol weights, combined below
    for fd in files:
        if fd.role == "docs" and fd.patch:
            # what a page documents is named in its inline code; weighed as a test's symbols, below any
            # code symbol, so they lead only a PR that is mostly documentation
            documented = documented_names(fd.patch)
            per_file.append(dict.fromkeys(documented, 0.3))
            facts.file_symbols[fd.filename] = documented
            continue
        if fd.role == "ci" and fd.patch and fd.filename.endswith((".yml", ".yaml")):
            # a workflow's jobs and variables are its definitions: below any code symbol, so they lead
            # a CI change
            names = workflow_names(fd.patch)
            weights = {n: _JOB_WEIGHT[whole] for n, whole in names.items() if not is_noise_symbol(n)}
            per_file.append(weights)
            facts.file_symbols[fd.filename] = sorted(weights, key=weights.__getitem__, reverse=True)
            continue
        if not fd.patch or fd.role not in ("code", "test", "notebook") or fd.snapshot:
            continue
        symbols: dict[str, float] = {}
        per_file.append(symbols)
        w = 1.0 if fd.role == "code" else 0.3
        if fd.filename.endswith(_PROSE_SUFFIXES):
            names = enclosing_names(fd.patch, [])
            facts.file_symbols[fd.filename] = names
            _credit(symbols, names, w)
            continue
        added: dict[str, tuple[str, int]] = {}
        removed: dict[str, tuple[str, int]] = {}
        context: list[tuple[int, int, str | None]] = []  # where, indentation and name, for enclosing_names
        public: set[str] = set()
        types: set[str] = set()  # classes, structs, enums, traits, interfaces added or removed
        # one scan anchored on newlines finds every definition line, added, removed or in the context
        for m in definition_lines(fd.patch, fd.language):
            name = m.group("name")
            noise = is_noise_symbol(name)
            if m.group("sign") == " ":  # m.start() in "\n"+patch == the line start in patch
                context.append((m.start(), len(m.group("indent")), None if noise else name))
                continue
            if noise:
                continue
            sig = " ".join((m.group("sig") or "").split())
            if _is_public(fd.language, m.group("mods"), name):
                public.add(name)
            if fd.role == "code" and _TYPE_KEYWORD.search(m.group(0), 0, m.start("name") - m.start()):
                types.add(name)
            if m.group("sign") == "+":
                added[name] = (sig, m.start())
            else:
                removed[name] = (sig, m.start())
        names = enclosing_names(fd.patch, context)
        _credit(symbols, names, w)
        if fd.language == "Python":
            for variable in environment_variables(fd.patch):  # a switch a user sets, beside the code
                symbols.setdefault(variable, w * _VARIABLE_SHARE)
        if not added and not removed:
            facts.file_symbols[fd.filename] = _tests_lead(fd, names)
            continue
        added_weight = 1.5 if fd.role == "code" else 0.3
        for name in added:
            names.append(name)
            symbols[name] = symbols.get(name, 0) + added_weight + (_TYPE_BONUS if name in types else 0)
        for name in removed:
            if name not in added:
                names.append(name)
                symbols[name] = symbols.get(name, 0) + w + (_TYPE_BONUS if name in types else 0)
        facts.file_symbols[fd.filename] = _tests_lead(fd, list(dict.fromkeys(names)))
        # code in a satellite area (examples, benchmarks, recipes) is run, not imported: no one's API
        if fd.role == "code" and not conv.in_satellite(fd.filename):
            gone, resigned = _api_changes(fd, added, removed, public)
            removed_ev += gone
            signature_ev += resigned
    _combine_files(facts.symbols, per_file)
    n_ev = int(conv.threshold("max_evidence", 3))
    sigs = []
    if removed_ev:
        sigs.append(
            Signal(
                "api.removed",
                f"public functions/classes removed or renamed ({len(removed_ev)})",
                conv.weight("api.removed"),
                removed_ev[:n_ev],
            )
        )
    sigs += counted_signals("api.signature", "public signatures changed", signature_ev, conv)
    return sigs


def scan_module_paths(files: list[FileDiff], conv: Conventions) -> list[Signal]:
    """Library modules the PR deletes or renames (by the files' statuses, with or without patches)."""
    gone = [ev for fd in files if (ev := _module_gone(fd, conv))]
    if not gone:
        return []
    n_ev = int(conv.threshold("max_evidence", 3))
    label = f"Python modules removed or renamed ({len(gone)})"
    return [Signal("api.module_gone", label, conv.weight("api.module_gone"), gone[:n_ev])]


# Top-level folders of developers' scripts: run from a checkout, not imported by users.
_SCRIPT_DIRS = ("scripts/", "tools/", "bin/", "dev/")


def _module_gone(fd: FileDiff, conv: Conventions) -> Evidence | None:
    """A library module that is deleted or renamed: code importing it by its old path breaks, even where
    every definition lives on in another file (a package reshaped, a module split). Not a test, an
    example's, a recipe's or a developer's script (`scripts/`, `tools/`: run, not imported), nor a
    private module (`_impl.py`)."""
    if fd.language != "Python" or fd.role != "code" or fd.status not in ("removed", "renamed"):
        return None
    old = fd.old_filename if fd.status == "renamed" and fd.old_filename else fd.filename
    base = old.rsplit("/", 1)[-1]
    private = base.startswith("_") and base != "__init__.py"
    if private or old.startswith(_SCRIPT_DIRS) or conv.in_satellite(old):
        return None
    if fd.status == "renamed":
        return Evidence(fd.filename, None, f"module moved: {_dotted(old)} -> {_dotted(fd.filename)}")
    return Evidence(fd.filename, None, f"module removed: {_dotted(old)}")


def _dotted(path: str) -> str:
    """The import path of a module file: `verl/workers/roles/actor.py` -> `verl.workers.roles.actor`,
    a package's `__init__.py` -> the package."""
    module = path.removeprefix("src/").removesuffix(".py").removesuffix("/__init__")
    return module.replace("/", ".")


def _api_changes(
    fd: FileDiff, added: dict[str, tuple[str, int]], removed: dict[str, tuple[str, int]], public: set[str]
) -> tuple[list[Evidence], list[Find]]:
    """(public definitions the file removes, public signatures it changes), from its definition lines
    (name -> (signature, where)): a change of type hints alone changes no call, and a function nested in
    another is called only there."""
    gone_ev: list[Evidence] = []
    signature_ev: list[Find] = []
    for name, (old_sig, old_at) in removed.items():
        gone = name not in added
        if gone:
            changed = True
        elif fd.language == "Python":
            changed = _calls_differ(old_sig, added[name][0])
        else:
            changed = _norm_sig(added[name][0]) != _norm_sig(old_sig)
        if name not in public or not changed:
            continue
        if fd.language == "Python" and in_python_function(fd.patch, old_at):
            continue
        if gone:
            gone_ev.append(Evidence(fd.filename, None, f"removed: {name}{old_sig}"[:200]))
        else:
            sig, start = added[name]
            signature_ev.append((fd.filename, fd.patch, start, f"{name}{old_sig} -> {name}{sig}"[:240]))
    return gone_ev, signature_ev


def scan_registrations(files: list[FileDiff], conv: Conventions) -> list[Signal]:
    """New entries in the project's registries (`conv.registries`): `@register_policy_loss("dppo_tv")`
    on an added line, with no removed line of the PR registering the same name (a registration moved or
    re-wrapped is none). A new policy loss, a new backend: the design its readers study first."""
    if not conv.registries:
        return []
    call = _registration(tuple(conv.registries))
    added: list[tuple[FileDiff, int, str]] = []
    removed: set[str] = set()
    for fd in files:
        if fd.role != "code" or not fd.patch or not any(r in fd.patch for r in conv.registries):
            continue
        for m in call.finditer(fd.patch):
            entry = f"{m.group('registry')}({_squeezed(m.group('args'))})"
            if m.group("sign") == "-":
                removed.add(entry)
            else:
                added.append((fd, m.start(), entry))
    finds: list[Find] = [
        (fd.filename, fd.patch, at, entry) for fd, at, entry in added if entry not in removed
    ]
    return counted_signals("api.registered", "registers a new algorithm or backend", finds, conv)


@lru_cache(maxsize=8)
def _registration(registries: tuple[str, ...]) -> re.Pattern[str]:
    names = "|".join(map(re.escape, registries))
    # the arguments may run over lines: `[^)]` crosses them
    return re.compile(rf"^(?P<sign>[+-])[ \t]*@?(?P<registry>{names})\((?P<args>[^)]*)\)", re.M)


def _squeezed(args: str) -> str:
    """The arguments without blanks, and without the signs of the lines they run over."""
    return re.sub(r"\n[+\- ]|\s", "", args)


# A type the PR adds is the design a reader studies, one it removes what users lose; its methods are how
# it works or worked. The type leads them.
_TYPE_BONUS = 0.25
_TYPE_KEYWORD = re.compile(r"\b(?:class|struct|enum|trait|interface)\b")


def _credit(symbols: dict[str, float], names: list[str], weight: float) -> None:
    for n in names:
        symbols[n] = symbols.get(n, 0) + weight


def _combine_files(symbols: dict[str, float], per_file: list[dict[str, float]]) -> None:
    """Each name's weight across files: its heaviest file's. A name defined or touched in many files is
    one interface implemented again and again (every tool's `run`, every callback's `on_step_end`);
    summed, such names outranked the interface and the types the PR is about."""
    for weights in per_file:
        for name, w in weights.items():
            symbols[name] = max(symbols.get(name, 0.0), w)


def split_signature(sig: str) -> tuple[list[str], str] | None:
    """(parameters, return annotation) of a one-line signature `(a, b: dict[str, int] = {}) -> T:`, split
    at its top-level commas (a class's bases are its parameters); None when it continues on later lines."""
    start, end = sig.find("("), sig.rfind(")")
    if start < 0:
        return [], ""  # `class Name:`
    if end < start:
        return None
    params, depth, cut = [], 0, start + 1
    for i in range(start + 1, end):
        if sig[i] in "([{":
            depth += 1
        elif sig[i] in ")]}":
            depth -= 1
        elif sig[i] == "," and depth == 0:
            params.append(sig[cut:i])
            cut = i + 1
    params.append(sig[cut:end])
    returns = sig[end + 1 :].strip().rstrip(":").removeprefix("->").strip()
    return [" ".join(p.split()) for p in params if p.strip()], " ".join(returns.split())


def param_name(param: str) -> str:
    return re.split(r"[:=]", param, maxsplit=1)[0].strip()


_TYPE_NAME = re.compile(r"[A-Za-z_][\w.]*")
# typing's spellings of what Python now writes with builtins and `|` (PEP 585, PEP 604)
_TYPING_ALIASES = {
    "List": "list", "Dict": "dict", "Tuple": "tuple", "Set": "set", "FrozenSet": "frozenset", "Type": "type",
    "Optional": "None", "Union": "", "typing.Optional": "None", "typing.Union": "",
}  # fmt: skip


def same_python_type(a: str, b: str) -> bool:
    """Whether two Python annotations name the same type in other spellings (`Optional[List[int]]`,
    `list[int] | None`): the same names, counted, once typing's aliases are read as builtins."""

    def names(annotation: str) -> list[str]:
        found = (_TYPING_ALIASES.get(n, n) for n in _TYPE_NAME.findall(annotation))
        return sorted(n for n in found if n)

    return names(a) == names(b)


def _calls_differ(old_sig: str, new_sig: str) -> bool:
    """Whether a Python signature changes for its callers: a parameter's name, place or default, or a
    return type both sides annotate (`-> Tensor` to `-> dict`). Parameter annotations are hints no
    call depends on, and a return hint added or dropped promises nothing new (as in risks_of)."""
    old, new = split_signature(old_sig), split_signature(new_sig)
    if old is None or new is None:
        return _norm_sig(old_sig) != _norm_sig(new_sig)  # continues on later lines: compared as text

    def plain(params: list[str]) -> list[str]:
        return [param_name(p) + ("=" + p.split("=", 1)[1].strip() if "=" in p else "") for p in params]

    (old_params, old_returns), (new_params, new_returns) = old, new
    if plain(old_params) != plain(new_params):
        return True
    return bool(old_returns and new_returns) and not same_python_type(old_returns, new_returns)


def _norm_sig(s: str) -> str:
    return re.sub(r"\s+|,\)", "", s).rstrip(":")
