"""What a PR's configuration changes: defaults (dataclass fields and argparse defaults in code, values
of existing keys in YAML/TOML/JSON), config keys added or removed, new switches on by default, the
settings of CI jobs and scripts, and dependency versions and releases in manifests.

Keys and values are read with regexes anchored on line starts, one pass over each patch's first lines.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

from .codelines import SCRIPT_LANGUAGES
from .conventions import Conventions
from .diff import FileDiff, added_lines_with, is_generated_copy
from .model import Evidence, Signal
from .patchscan import in_added_section, in_python_function, yaml_key_paths
from .signals import GIT_INSTALL, Find, counted_signals


def _value(v: str) -> str:
    """A default or config value without its trailing comment, separator or a shell line's `\\`."""
    return v.split(" #", 1)[0].strip().rstrip(",\\").rstrip()


def _first_argument(text: str) -> str:
    """The first argument of a call's remaining text (`"x", metadata={...})` -> `"x"`): up to the first
    comma or closing bracket outside brackets and quotes."""
    depth, quote = 0, None
    for i, c in enumerate(text):
        if quote:
            quote = None if c == quote else quote
        elif c in "\"'":
            quote = c
        elif c in "([{":
            depth += 1
        elif c in ")]}" and depth:
            depth -= 1
        elif c in ",)]}" and not depth:
            return text[:i].strip()
    return _value(text)


_FIELD_CALLS = ("field(", "dataclasses.field(")
_DEFAULT_ARGUMENT = re.compile(r"\bdefault(_factory)?\s*=\s*")


def _default_of(value: str) -> str | None:
    """A field's default as its line gives it: a `field(...)` call's `default=` argument (`X()` for a
    `default_factory=X`), None when the call's line has neither (a call rewrapped: nothing to compare);
    any other value as it is."""
    if not value.startswith(_FIELD_CALLS):
        return value
    m = _DEFAULT_ARGUMENT.search(value)
    if not m:
        return None
    default = _first_argument(value[m.end() :])
    return f"{default}()" if m.group(1) else default


_NULL_SPELLINGS = frozenset({"", "~", "null", "none"})


def _canonical(value: str) -> str:
    """A value as YAML (or a shell) reads it: quotes, inner blanks, and the YAML or Python spelling of a
    null, a switch or a number do not change it (`None`/`null`, `True`/`true`, `"mean"`/`mean`,
    `0.`/`0.0`, `{ }`/`{}`, `['a']`/`["a"]`)."""
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        value = value[1:-1]
    low = value.lower()
    if low in _NULL_SPELLINGS:
        return "null"
    if low in ("true", "false"):
        return low
    try:
        return repr(float(value))
    except ValueError:
        return "".join(value.split()).replace("'", '"')


# A key with nothing after its colon heads a section (its keys on the lines below): emptied to `{}`, or
# filled from it, the section changes by its keys, which config.keys reports; no default changes.
_SECTION_SPELLINGS = frozenset({"", "{}", "[]"})


def _changed(old: str | None, new: str) -> bool:
    """Whether a key's value really changed, not only its spelling (a config reformatted, or moved
    between YAML and Python, sets no new default)."""
    if old is None or (old.strip() in _SECTION_SPELLINGS and new.strip() in _SECTION_SPELLINGS):
        return False
    return _canonical(old) != _canonical(new)


_FIELD_DEFAULT = re.compile(r"\n-([ \t]++)(\w++)[ \t]*+:[ \t]*[^=\n]{1,80}?=[ \t]*([^\n]+)")
# A dataclass field whose default stands on its own line, first in its `field(...)` call, as the Hugging
# Face libraries write their configs: `vllm_mode: str = field(` / `-    default="server",` /
# `+    default="colocate",`.
_FIELD_CALL_DEFAULT = re.compile(
    r"\n[ -][ \t]*(\w+)[ \t]*(?::[^=\n]*)?=[ \t]*(?:dataclasses\.)?field\([ \t]*"
    r"\n-([ \t]+)default[ \t]*=[ \t]*([^\n]+)"
    r"\n\+\2default[ \t]*=[ \t]*([^\n]+)"
)
_ARG_DEFAULT = re.compile(
    r"\n-[^\n]*?add_argument\(\s*[\"']-{0,2}([\w-]+)[\"'][^\n]*?default\s*=\s*([^,)\n]+)"
)
# Possessive for the same reason as _DEP below: a key is followed by a quote, a blank or the separator.
_CONFIG_KEY = re.compile(r"([+-])[ \t]*+[\"']?([\w.\-]++)[\"']?[ \t]*+[:=][ \t]*(.*)")
# The same, as one scan of the patch anchored on newlines (nothing in it matches a newline, so each match
# is one line, as matching line by line was) instead of a Python loop over every line.
_CONFIG_LINE = re.compile("\n" + _CONFIG_KEY.pattern)
_MAX_KEY_LINES = 401  # config and dependency keys are read in a patch's first lines only


def _first_lines(text: str, n: int) -> str:
    """`text` cut after its first `n` lines."""
    if text.count("\n") < n:
        return text
    return "\n".join(text.split("\n", n)[:n])


def _is_meta(key: str) -> bool:
    """A key about the config, not a setting: which class reads the section (Hydra's `_target_`,
    `_recursive_`) or the file's own version."""
    leaf = key.rsplit(".", 1)[-1]
    return leaf.startswith("_") or leaf == "version"


_RELEASE = re.compile(r"^[\"']?v?\d+\.\d+\.\d+")
_DOC_KEYS = frozenset(
    {"description", "markdownDescription", "title", "help", "doc", "docs", "summary", "$comment"}
)
# a dependency in a manifest: a version, a path/git/workspace source, or a list of features
_DEPENDENCY_VALUE = re.compile(r"\d+\.\d+|\bversion\b|\bpath\s*=|\bgit\s*=|\bworkspace\b|^\[")


def scan_defaults(files: list[FileDiff], conv: Conventions) -> list[Signal]:
    """Defaults changed: dataclass fields and argparse defaults in code, values of existing keys in
    YAML/TOML/JSON files (config.defaults); keys added or removed in those files (config.keys); values of
    existing keys in CI workflows and shell scripts (settings.changed)."""
    defaults: list[Find] = []
    keys: list[Find] = []
    # A CI job's or a script's own setting (a timeout, a Hydra override in a run script) is no user's
    # default, but it is what such a PR changes: its key is the symbol a reader looks for.
    settings: list[Find] = []
    switched_on: list[Find] = []
    for fd in files:
        p = fd.patch
        # no removed line (an added file has none: no need to scan its patch, often the PR's longest)
        if not p or fd.status == "added" or (not p.startswith("-") and "\n-" not in p):
            if not (p and fd.role == "config"):
                continue
        if fd.role == "code" and fd.language == "Python":
            defaults += _code_defaults(fd)
        elif fd.role == "config" or (fd.role == "build" and fd.filename.endswith(".toml")):
            changed, came_or_went, on = _config_values(fd)
            defaults += changed
            keys += came_or_went
            switched_on += on
        elif fd.role == "ci" or fd.language in SCRIPT_LANGUAGES:
            _old, new_vals = _key_values(p)
            for k, (v, at, was) in new_vals.items():
                if _changed(was, v):
                    settings.append((fd.filename, p, at, f"{k}: {was} -> {v}"[:200]))
    # a generated copy of a config follows its source: the source's lines are the evidence shown, and a
    # sample's follow the project's own (a sample's default is no risk to the project's runs: risks.py)
    for finds in (defaults, switched_on):
        finds.sort(key=lambda find: (conv.in_sample(find[0]), is_generated_copy(find[0])))
    # Defaults that change in the generated (composed) config while the PR reshapes its sources and no
    # source line changes a value: the composition moved them, which nobody wrote down (a trainer's
    # config now inheriting another's `use_remove_padding: true`).
    drifted = []
    if defaults and all(is_generated_copy(find[0]) for find in defaults):
        if any(fd.role == "config" and not is_generated_copy(fd.filename) for fd in files):
            drifted = defaults
    # a key removed breaks the configs that set it, a key added breaks none: removals are shown first
    keys.sort(key=lambda find: not find[3].startswith("removed "))
    return (
        counted_signals("config.defaults", "default values changed", defaults, conv)
        + counted_signals("config.keys", "config keys changed", keys, conv)
        + counted_signals("settings.changed", "settings of CI jobs or scripts changed", settings, conv)
        + counted_signals("config.on_by_default", "new settings on by default", switched_on, conv)
        + counted_signals("config.drift", "defaults changed only in the generated config", drifted, conv)
    )


def _code_defaults(fd: FileDiff) -> list[Find]:
    """Defaults a Python file changes: dataclass fields (`n: int = 1` -> `4`, `field(default=...)`) and
    argparse options (`add_argument("--lr", default=...)`)."""
    p = fd.patch or ""
    text = "\n" + p
    defaults: list[Find] = []
    for m in _FIELD_DEFAULT.finditer(text):
        declared = m.group(0).split("=", 1)[0]
        if m.group(3).rstrip().endswith((",", "(")) or "def " in declared or "," in declared:
            continue  # a function's parameter, not a field: a signature change, not a default
        indent, name, old = m.group(1), m.group(2), _value(m.group(3))
        added = re.search(rf"\n\+{indent}{name}\b[^\n]*", text)  # `param_version`, not `..._start`
        if added:
            line = added.group(0)
            new = _value(line.split("=", 1)[1]) if "=" in line else None
            if new is not None:
                old, new = _default_of(old), _default_of(new)
            # a function's annotated local (`val_metrics: dict = self._validate()`) is no field
            if new is not None and _changed(old, new) and not in_python_function(p, m.start()):
                defaults.append((fd.filename, p, added.start(), f"{name}: {old} -> {new}"[:200]))
    if "field(" in p:
        for m in _FIELD_CALL_DEFAULT.finditer(text):
            name, old, new = m.group(1), _first_argument(m.group(3)), _first_argument(m.group(4))
            if _changed(old, new):
                at = text.rfind("\n", 0, m.start(4))  # the added line's start in `p`
                defaults.append((fd.filename, p, at, f"{name}: {old} -> {new}"[:200]))
    if "default" in p and "add_argument(" in p:  # both literal in _ARG_DEFAULT
        for m in _ARG_DEFAULT.finditer(text):
            name, old = m.group(1), m.group(2).strip()
            for start, line in added_lines_with(p, name, word=False, limit=5):
                if "default" in line:
                    new = line.split("default", 1)[1].lstrip(" =").split(",")[0].split(")")[0].strip()
                    if _changed(old, new):
                        defaults.append((fd.filename, p, start, f"--{name}: default {old} -> {new}"[:200]))
                    break
    return defaults


def _config_values(fd: FileDiff) -> tuple[list[Find], list[Find], list[Find]]:
    """(defaults changed, keys added or removed, new switches on by default) of a config file, or of a
    TOML manifest's values: its keys are its dependencies (scan_deps reads them), its metadata and its own
    tools' settings, so no key a user's config holds comes or goes with them."""
    p = fd.patch or ""
    manifest = fd.role == "build"
    defaults: list[Find] = []
    keys: list[Find] = []
    switched_on: list[Find] = []
    old_vals, new_vals = _key_values(p, yaml=fd.filename.endswith((".yaml", ".yml")))
    for k, (v, at, was) in new_vals.items():
        if _is_meta(k) or k.rsplit(".", 1)[-1] in _DOC_KEYS:
            # meta keys (`_target_`: which class reads the section) and documentation are not settings,
            # and a package's own version is a release: a workspace bump is one release, not N defaults
            continue
        if manifest and (_DEPENDENCY_VALUE.search(v) or _DEPENDENCY_VALUE.search(was or "")):
            continue  # a manifest's dependency entry (scan_deps reads those), not a setting
        if _RELEASE.search(v) or _RELEASE.search(was or ""):
            continue  # a pinned release (a toolchain channel, an image tag): a version, not a default
        if was and not v:
            # `reward_manager: naive` -> `reward_manager:` over new sub-keys: no default changed, the
            # setting became a section, and a config that sets it as a value breaks
            keys.append((fd.filename, p, at, f"removed {k}: {was} (now a section)"[:200]))
        elif _changed(was, v) and not v.startswith("${"):
            # (a value bound to another key, "${...}", follows that key's default: no new one)
            defaults.append((fd.filename, p, at, f"{k}: {was} -> {v}"[:200]))
        elif was is None and not manifest:
            keys.append((fd.filename, p, at, f"added {k}: {v}"[:200]))
            # a new switch, on, in a section runs already have: every run that never heard of it now
            # takes its path (a new section's fields configure a new feature)
            on = v.lower() == "true"
            if on and fd.status != "added" and not in_added_section(p, at):
                switched_on.append((fd.filename, p, at, f"added {k}: {v}"[:200]))
    gone = [] if manifest else [k for k in old_vals if k not in new_vals and not _is_meta(k)]
    for k in gone:  # in file order: a set difference's order changes with the hash seed
        keys.append((fd.filename, None, None, f"removed {k}"[:200]))
    return defaults, keys, switched_on


def _key_values(
    patch: str, yaml: bool = False
) -> tuple[dict[str, str], dict[str, tuple[str, int, str | None]]]:
    """({key: removed value}, {key: (added value, where its line starts in the patch, the value it
    replaces or None)}) of the `key: value` / `key=value` lines in the patch's first lines.

    A diff shows a changed line as its removal followed by its addition, so an added key replaces the
    removal of that key nearest above it; a key removed twice (`train_tp=1` changed to 2 here, and a
    branch that set `train_tp=2` deleted further down) is then compared with the right one. A key
    removed only below its addition moved: it is compared with that removal. In a YAML file a key is
    named with the sections above it where the hunk shows them all (`trainer.use_v1`): two sections'
    `mode` keys are two keys, and a reader knows which one changed."""
    old_vals: dict[str, str] = {}
    new_vals: dict[str, tuple[str, int, str | None]] = {}
    head = _first_lines(patch, _MAX_KEY_LINES)
    lines = list(_CONFIG_LINE.finditer("\n" + head))
    # m.start() in "\n" + head is where the line starts in the patch
    paths = _yaml_paths(head, lines) if yaml else {}
    for m in lines:
        key, value = paths.get(m.start(), m.group(2)), _value(m.group(3))
        if m.group(1) == "-":
            old_vals[key] = value
        else:
            new_vals[key] = (value, m.start(), old_vals.get(key))
    for key, (value, at, was) in new_vals.items():
        if was is None and key in old_vals:  # removed only below: moved down
            new_vals[key] = (value, at, old_vals[key])
    return old_vals, new_vals


def _yaml_paths(patch: str, lines: list[re.Match]) -> dict[int, str]:
    """Each key line's full YAML path, by where the line starts. Where a hunk does not show every level
    above a key, the path that the key's other side shows, if only one path ends in its name (a key
    moved between hunks); else its bare name, as before."""
    sections = yaml_key_paths(patch)
    found = {}
    for m in lines:
        above = sections.get(m.start())
        path = None if above is None else f"{above}.{m.group(2)}" if above else m.group(2)
        found[m.start()] = (m.group(1), m.group(2), path)
    ends: dict[tuple[str, str], set[str]] = {}  # (side, name) -> the full paths seen on that side
    for sign, name, path in found.values():
        if path is not None:
            ends.setdefault((sign, name), set()).add(path)
    paths = {}
    for at, (sign, name, path) in found.items():
        if path is None:
            seen = ends.get(("+" if sign == "-" else "-", name), set())
            path = next(iter(seen)) if len(seen) == 1 else name
        paths[at] = path
    return paths


# Possessive `*+`: no character the name may hold can follow it in a match (a quote, a blank or an
# operator must), so giving back part of the name never helps; without them every word of a Dockerfile
# or setup.py line was retried letter by letter.
_DEP = re.compile(
    r"([+-])[ \t]*+[\"']?([A-Za-z][\w.\-]*+(?:\[[\w,\- ]+\])?)[\"']?[ \t]*(==|>=|<=|~=|!=|<|>|=|:|@)[ \t]*[\"']?[\^~v]?(\d[\w.\-*]*)"
)
_DEP_LINE = re.compile("\n" + _DEP.pattern)  # one scan anchored on newlines, as _CONFIG_LINE
# operators that bound a range from one side: the same version under another of them pins other releases
_BOUNDS = frozenset({">=", "<=", "<", ">", "!="})
_BUMP_TITLE = re.compile(
    r"\b(bump|upgrade|pin|unpin|update|downgrade)\b.{0,60}\b(to|from|version|v?\d)", re.I
)


# A manifest's own version (`version = "0.5.1"` in Cargo.toml/pyproject.toml, `"version": "0.5.1"` in
# package.json): set across a workspace, it is a release, not a dependency change.
_OWN_VERSION = re.compile(r"\n([+-])[ \t]*+\"?version\"?[ \t]*+[:=][ \t]*+\"([^\"\n]+)\"")
# A dependency on a member of the same workspace: Cargo's `path = ...`, npm's `workspace:` protocol.
_INTERNAL_DEP = re.compile(r"\bpath[ \t]*=|workspace:")


def _unpinned(fd: FileDiff, head: str, old: dict[str, str], seen: set[str]) -> list[Find]:
    """Pinned dependencies whose added line names no version any more (`ray==2.46.0` -> `ray[default]`):
    what gets installed now depends on the day."""
    finds: list[Find] = []
    if fd.role != "build":  # a manifest, not a vendored or generated file that happens to hold `x = 2`
        return finds
    for name, version in old.items():
        if name in seen or "." not in version:  # `2.46.0` is a pin; `debug = 1` is a setting
            continue
        m = re.search(r"\n\+[ \t]*+[\"']?" + re.escape(name) + r"(?![\w.\-])([^\n]*)", head, re.I)
        if m is None:
            continue  # no added line names it: see _dropped
        # a version in another spelling (`{ version = "2.2" }`) or from the workspace still pins it
        rest = m.group(1)
        pinned = any(c.isdigit() for c in rest) or "workspace" in rest or _INTERNAL_DEP.search(rest)
        if not pinned:
            spec = m.group(0)[2:].strip()[:60]
            finds.append((fd.filename, fd.patch, m.start(), f"{name}: {version} -> {spec} (no version)"))
    return finds


def _dropped(fd: FileDiff, head: str, old: dict[str, str]) -> list[tuple[str, Find]]:
    """(package, find) for pip-style pins (`triton-ascend==3.2.1`, `x>=1.2`) that go with nothing in
    the manifest naming the package again: every install now resolves it on the day, or takes whatever
    else pulls it in. Not from a manifest deleted whole (a redundant image unpins nothing)."""
    if fd.role != "build" or fd.status == "removed":
        return []
    finds: list[tuple[str, Find]] = []
    for name, version in old.items():
        named = r"[ \t]*+[\"']?" + re.escape(name)
        # still named on the new side: added, or on a context line (`transformers>=4.56` beside a marker
        # line that went)
        if "." not in version or re.search(r"\n[+ ]" + named + r"(?![\w.\-])", head, re.I):
            continue
        # `debug = 1.5` in setup.cfg is a setting that went, not a pin
        gone = re.search(r"\n-" + named + r"(?:\[[\w,\- ]+\])?[\"']?[ \t]*(?:[=<>~!]=|[<>])", head, re.I)
        if gone:
            finds.append((name, (fd.filename, fd.patch, gone.start(), f"{name}: {version} -> removed")))
    return finds


# `pip install torch==2.9.1 vllm==0.12.0` in a Dockerfile's RUN line: the pins stand after the command
_PIP_INSTALL = re.compile(r"\n([+-])[^\n]*?\bpip3? install\b([^\n]*)")
_PIP_PIN = re.compile(r"(?<![\w.\-])([A-Za-z][\w.\-]*)(?:\[[\w,\- ]+\])?==([\w.\-+]+)")


def _pip_pins(fd: FileDiff, head: str, seen: set[str]) -> list[Find]:
    """Versions that a manifest's `pip install` commands pin and the PR changes: `torch==2.9.0` ->
    `torch==2.9.1` (the manifest reads as a Dockerfile: one command per line)."""
    if fd.role != "build" or "pip" not in head:
        return []
    pins = (
        (m.group(1), pin.group(1).lower(), pin.group(2), m.start())
        for m in _PIP_INSTALL.finditer(head)
        for pin in _PIP_PIN.finditer(m.group(2))
    )
    return _versions_moved(fd, pins, seen)


# A package built from a repository at a ref, in a Dockerfile's or install script's commands:
# `pip install git+https://github.com/NVIDIA/TransformerEngine.git@release_v2.8` (signals.GIT_INSTALL),
# `cd MindSpeed && git checkout 2.3.0_core_r0.12.1`, `git clone -b v0.5.10 https://github.com/x/sglang.git`.
_CHECKOUTS = (
    re.compile(r"\bcd[ \t]+(?P<name>[\w.\-]+)[ \t]*&&[ \t]*git[ \t]+checkout[ \t]+(?P<ref>[\w.\-/]+)"),
    re.compile(
        r"\bgit[ \t]+clone[ \t]+(?:-b|--branch)[ \t]+(?P<ref>[\w.\-/]+)[ \t]+\S*/(?P<name>[\w.\-]+?)(?:\.git)?(?![\w.\-])"
    ),
)
_GIT_LINE = re.compile(r"\n([+-])([^\n]*\bgit\b[^\n]*)")


def _source_refs(fd: FileDiff, head: str, seen: set[str]) -> list[Find]:
    """Repositories a build file installs from moved to another branch, tag or commit (`TransformerEngine:
    release_v2.8 -> release_v2.10`): what the image holds changes as a pinned version's would."""
    if fd.role != "build" or "git" not in head:
        return []
    refs = []
    for line in _GIT_LINE.finditer(head):
        text = line.group(2)
        # a build argument (`@${TE_VERSION}`) is set elsewhere: no ref here to compare
        found = [
            (_repository(m.group("url")), m.group("ref"))
            for m in GIT_INSTALL.finditer(text)
            if m.group("ref") and not m.group("ref").startswith("$")
        ]
        found += [(m.group("name"), m.group("ref")) for pattern in _CHECKOUTS for m in pattern.finditer(text)]
        refs += [(line.group(1), name.lower(), ref, line.start()) for name, ref in found]
    return _versions_moved(fd, refs, seen)


def _repository(url: str) -> str:
    """A repository's name from its URL: `github.com/NVIDIA/TransformerEngine.git` -> TransformerEngine."""
    return url.rstrip("/").rsplit("/", 1)[-1].removesuffix(".git")


# a Dockerfile's base image and its tag: `FROM lmsysorg/sglang:v0.5.12 AS base`
_BASE_IMAGE = re.compile(r"\n([+-])FROM\s+(?:--platform=\S+\s+)?(\S+):([\w.\-]+)(?=\s|$)")


def _base_images(fd: FileDiff, head: str, seen: set[str]) -> list[Find]:
    """A Dockerfile's base image moved to another tag (`lmsysorg/sglang: v0.5.9 -> v0.5.12`): every
    package the image holds changes with it."""
    if fd.role != "build" or "FROM" not in head:
        return []
    images = ((m.group(1), m.group(2), m.group(3), m.start()) for m in _BASE_IMAGE.finditer(head))
    return _versions_moved(fd, images, seen)


def _versions_moved(
    fd: FileDiff, versions: Iterable[tuple[str, str, str, int]], seen: set[str]
) -> list[Find]:
    """From (sign, name, version, where) in patch order: each name a removed line gives one version and
    an added line another. Names in `seen` are reported already; each one reported here joins them."""
    old: dict[str, str] = {}
    finds: list[Find] = []
    for sign, name, version, at in versions:
        if sign == "-":
            old[name] = version
        elif name not in seen and old.get(name, version) != version:
            seen.add(name)
            finds.append((fd.filename, fd.patch, at, f"{name}: {old[name]} -> {version}"))
    return finds


_RELEASE_TITLE = re.compile(r"\b(release|bump version|prepare (?:for )?v?\d)", re.I)


def scan_deps(files: list[FileDiff], title: str, conv: Conventions) -> list[Signal]:
    """Dependency version changes in build files (requirements, pyproject, Cargo.toml, package.json,
    setup.py, Dockerfile, ...), and releases: a version set in the manifests of a workspace reads as one
    release (signal "release"), with the workspace's own crates/packages pinned to it, not as dozens of
    dependency changes."""
    ev: list[Find] = []
    releases: dict[str, list[str]] = {}  # new version -> manifests that set it as their own
    internal = 0  # workspace members' versions moved along with the release
    dropped: list[tuple[str, Find]] = []  # (package, find) for each pin a manifest drops
    for fd in files:
        if fd.role not in ("build", "generated") or not fd.patch or fd.filename.endswith(".lock"):
            continue
        head = "\n" + _first_lines(fd.patch, _MAX_KEY_LINES)
        own = {m.group(1): m.group(2) for m in _OWN_VERSION.finditer(head)}
        if "+" in own and own.get("-") != own["+"]:
            releases.setdefault(own["+"], []).append(fd.filename)
        old: dict[str, str] = {}  # package -> the version a removed line pins
        old_bound: dict[str, str] = {}  # package -> that line's operator and version
        for m in _DEP_LINE.finditer(head):
            sign, name, op, version = m.group(1), m.group(2).lower(), m.group(3), m.group(4)
            if name == "version":  # the manifest's own version, above
                continue
            # `numpy>=2.0.0` -> `numpy<2.0.0` names one version on either side of it: the bound moved
            bound = op + version if op in _BOUNDS else version
            if sign == "-":
                old[name], old_bound[name] = version, bound
            elif old_bound.get(name) != bound:
                line_end = head.find("\n", m.end())
                if _INTERNAL_DEP.search(head, m.start(), line_end if line_end >= 0 else len(head)):
                    internal += 1
                    continue
                if name not in old:
                    change = f"added {version}"
                elif old[name] == version:  # the same version under another bound
                    change = f"{old_bound[name]} -> {bound}"
                else:
                    change = f"{old[name]} -> {version}"
                ev.append((fd.filename, fd.patch, m.start(), f"{name}: {change}"))
        named = {f[3].split(":", 1)[0] for f in ev if f[0] == fd.filename}  # each package once per file
        ev += _base_images(fd, head, named)  # adds the images it names
        ev += _pip_pins(fd, head, named)  # adds the packages it names
        ev += _source_refs(fd, head, named)  # adds the repositories it names
        ev += _unpinned(fd, head, old, named)
        dropped += _dropped(fd, head, old)
    # a pin that leaves one manifest for another (requirements.txt -> pyproject.toml) moved, not went;
    # one that went is shown after the versions that moved
    moved = {f[3].split(":", 1)[0] for f in ev}
    ev += [find for name, find in dropped if name not in moved]
    n_ev = int(conv.threshold("max_evidence", 3))
    sigs: list[Signal] = []
    manifests = sum(len(v) for v in releases.values())
    if releases and (manifests >= 2 or internal or _RELEASE_TITLE.search(title or "")):
        # the version the title names, else the one most manifests set (internal crates keep 0.0.x)
        named = [v for v in releases if v in (title or "")]
        main = named[0] if named else max(releases, key=lambda v: len(releases[v]))
        label = f"release {main}: version set in {manifests} manifest(s)" + (
            f", {internal} workspace member pin(s) moved with it" if internal else ""
        )
        sigs.append(
            Signal(
                "release",
                label,
                conv.weight("release", conv.weight("deps.bump")),
                [Evidence(f, None, f"version -> {main}") for f in releases[main][:n_ev]],
            )
        )
    elif releases:  # one manifest's version alone: as before, a version change among the deps
        ev += [(f, None, None, f"version -> {v}") for v, fs in releases.items() for f in fs]
    if not ev and not sigs and any(f.role == "build" for f in files) and _BUMP_TITLE.search(title or ""):
        ev.append((None, None, None, title))
    sigs += counted_signals("deps.bump", "dependency versions changed", _in_telling_order(ev), conv)
    return sigs


def _in_telling_order(finds: list[Find]) -> list[Find]:
    """Versions that moved first (what environments pinned elsewhere must follow), then packages added,
    then pins dropped. Within each, every manifest's first find comes before any manifest's second: the
    manifests the evidence names lead the key files, and two images bumped together both lead."""
    ranked = []
    earlier: Counter[tuple[str | None, int]] = Counter()  # (manifest, kind) -> finds ranked so far
    for find in finds:
        kind = _kind_of_find(find)
        ranked.append(((kind, earlier[find[0], kind]), find))
        earlier[find[0], kind] += 1
    ranked.sort(key=lambda pair: pair[0])  # stable: within a rank, the manifests keep their order
    return [find for _rank, find in ranked]


def _kind_of_find(find: Find) -> int:
    """0 a version that moved, 1 a package added, 2 a pin dropped (`name: 1.2 -> removed`)."""
    text = find[3]
    if text.endswith(" -> removed"):
        return 2
    return 0 if " -> " in text else 1
