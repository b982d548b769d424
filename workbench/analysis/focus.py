"""Where a reader starts: key files (ranked), key symbols and open items. Pure functions."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable

from ..records import PRRecord
from .codelines import is_program
from .conventions import Conventions
from .diff import FileDiff, is_generated_copy
from .model import Description, Discussion, KeyFile, Signal
from .patchscan import is_noise_symbol, names_something
from .signals import CodeFacts, Hit
from .verdicts import ROLE_RANK


def named_paths(desc: Description, record: PRRecord) -> set[str]:
    """Files the description or the reviewers point at: by path, or by a base name in `code`."""
    comments = record.review_comments
    named = {c.get("path") for c in comments if c.get("path")} if comments else set()
    text = desc.text
    if len(text) < 4:  # no base name that counts (4 characters or more) fits
        return named
    for fd in record.files:
        fn = (fd.get("filename") if isinstance(fd, dict) else None) or ""
        base = fn.rsplit("/", 1)[-1]
        if len(base) > 3 and base in text:
            named.add(fn)
    return named


# File stems too common to say what a PR is about when its title spells them (`fix the config`).
_GENERIC_STEMS = frozenset(
    {"base", "common", "config", "core", "init", "main", "model", "models", "setup", "test", "tests", "utils"}
)
_TITLE_WORD = re.compile(r"[A-Za-z_][\w\-]{3,}")


def title_paths(subject: str, files: list[FileDiff]) -> set[str]:
    """Files whose name the title's subject spells as a word ("refactor the reward configuration" ->
    `reward.yaml`, `config/reward.py`): what the PR says it is about. Code and config only: a CI job
    or a page named after a package (`vllm.yml`) follows the code it runs or documents."""
    words = {w.lower() for w in _TITLE_WORD.findall(subject)}
    out = set()
    for fd in files:
        if fd.role not in ("code", "config"):
            continue
        stem = fd.filename.rsplit("/", 1)[-1].split(".", 1)[0].lower()
        if stem in words and stem not in _GENERIC_STEMS:
            out.add(fd.filename)
    return out


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
    titled: set[str] | None = None,
) -> list[KeyFile]:
    """The files to read first, best first: role and size, then risk hits, files the title, the
    description or a reviewer names, symbols touched, and files a leading signal points at. In a move,
    a file added or deleted is where code moved to or from."""
    leading = {e.file for s in signals or () if s.name in _LEADING_SIGNALS for e in s.evidence if e.file}
    titled = titled or set()
    # beside library code, an example or a recipe shows how the change is used: read after it
    beside = {fd.filename for fd in files if conv.in_satellite(fd.filename)}
    if not any(fd.role == "code" and fd.filename not in beside for fd in files):
        beside = set()
    scores = [_file_score(fd, facts, named | titled, leading, removal, beside) for fd in files]
    # snapshot files are test evidence (recorded output), never a file to read first
    shown = [i for i, fd in enumerate(files) if not fd.snapshot]
    versions = _versions_of_one_file(files)
    # stable: ties in file order, but the newest of a file's versions first
    order = sorted(shown, key=lambda i: (scores[i], versions.get(i, ())), reverse=True)
    if removal:
        order = _survivor_second(order, files)
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
        if fd.filename in titled:
            reason += "; named in the title"
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


# a release in a path: dotted numbers (`8.3`, `0.12.1`); a model's size (`7b`) is no version
_RELEASE = re.compile(r"\d+(?:\.\d+)+")


def _versions_of_one_file(files: list[FileDiff]) -> dict[int, tuple[int, ...]]:
    """Files whose paths differ only in a release (`Dockerfile.ascend_8.2.rc1_a2`, `..._8.3.rc1_a2`) are
    versions of one file, and a PR that edits several of them repeats one change: each such file's
    index -> its release, so that among equal scores the newest, the one a reader opens, leads."""
    groups: dict[str, list[int]] = {}
    for i, fd in enumerate(files):
        if _RELEASE.search(fd.filename):
            groups.setdefault(_RELEASE.sub("#", fd.filename), []).append(i)
    return {
        i: tuple(int(n) for release in _RELEASE.findall(files[i].filename) for n in release.split("."))
        for same in groups.values()
        if len(same) > 1
        for i in same
    }


def _survivor_second(order: list[int], files: list[FileDiff]) -> list[int]:
    """A removal is read from both sides: the biggest thing it deletes, and the code that stays and lets
    go of it (a registry, an entry point, a config, the page saying where it went). Deleted files outweigh
    the few lines that stay, so the best file that stays is moved up to second place."""
    stays = [i for i in order if files[i].status != "removed" and files[i].role != "test"]
    if not stays or stays[0] in order[:2]:
        return order
    rest = [i for i in order if i != stays[0]]
    return rest[:1] + [stays[0]] + rest[1:]


def _file_score(
    fd: FileDiff, facts: CodeFacts, named: set[str], leading: set[str], removal: bool, beside: set[str]
) -> float:
    # A test is read after the code it tests, whatever its size: its rank grows with size more slowly.
    size = math.log2(2 + fd.changes)
    score = ROLE_RANK.get(fd.role, 0.5) * (size if fd.role != "test" else math.sqrt(size))
    score += min(facts.risk_per_file.get(fd.filename, 0), 5)
    if fd.filename in named:
        score += 1.5 if fd.role != "test" else 0.5  # a test the description points at still follows the fix
    # what a page's inline code names, or a workflow's jobs, are no code definitions that changed
    if fd.role not in ("docs", "ci"):
        score += 0.3 * min(len(facts.file_symbols.get(fd.filename) or ()), 3)
    if fd.filename in leading:
        score += 4.0
    if is_generated_copy(fd.filename):
        score *= 0.5  # a generated copy of a config follows its source
    if fd.status == "removed" and not removal:
        score *= 0.2  # a deleted file is a key file only when removing is what the PR does
    if fd.role == "code" and not is_program(fd):
        score *= 0.5  # a run script sets up what the program beside it does: read after it
    if fd.filename in beside:
        score *= 0.5  # an example or a recipe beside library code: read after the library's change
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
    subject: str = "",
) -> list[str]:
    """Symbols by weight (code over tests) and config keys whose default changed or that come or go,
    raised when the description names them in `code`, and most when the title names them."""
    scores = dict(facts.symbols)
    for key, weight in _config_keys(signals).items():
        scores[key] = scores.get(key, 0.0) + weight
    for name in _title_identifiers(subject, patch_text, facts.symbols):
        scores[name] = scores.get(name, 0.0) + _TITLE_WEIGHT
    changed, test_only = _changed_names_and_tests(files, facts)
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
        if is_noise_symbol(short):
            continue  # `typing.Self` -> Self, a version `v0.15.22` -> 22: not symbols
        if short in test_only:
            continue  # a description lists the tests it adds; a reader starts at what they test
        if short in scores:
            scores[short] += 2.0
        elif not patch_text or short in patch_text:
            scores[short] = 1.0 if patch_text else 0.5
    ranked = sorted(scores, key=lambda n: scores[n], reverse=True)  # stable: ties in first-seen order
    ranked = [n for n in ranked if n not in _COMMON_SYMBOLS]
    return ranked[: int(conv.threshold("max_key_symbols", 8))]


def _changed_names_and_tests(files: Iterable[FileDiff], facts: CodeFacts) -> tuple[set[str], set[str]]:
    """(the changed files' base names, the symbols only test files define or touch, when other files
    have symbols too: in a PR of tests alone, the tests are what it is about)."""
    changed, in_tests, elsewhere = set(), set(), set()
    for fd in files:
        changed.add(fd.filename.rsplit("/", 1)[-1])
        (in_tests if fd.role == "test" else elsewhere).update(facts.file_symbols.get(fd.filename, ()))
    return changed, (in_tests - elsewhere) if elsewhere else set()


# A name the title spells is what the PR is about: above any symbol the patch alone weighs (1.5 an added
# definition) and a name the description quotes (+2).
_TITLE_WEIGHT = 2.5
# A word in a title, maybe in `code` and dotted: an identifier when it is snake_case or dotted
# (`trust_remote_code`, `rollout.n`), or joins two words in CamelCase (`ServerAdapter`, `getData`) and
# the PR defines or edits it: `DeepSeek` or `HuggingFace` is a name a patch spells in comments too. An
# acronym, however spelled (`FSDP`, `LoRA`, `MoE`, `SGLang`), names a topic, not a symbol.
_TITLE_IDENT = re.compile(r"(?<![\w.`])`?([A-Za-z_]\w*(?:\.\w+)*)(?:\(\))?`?(?![\w.])")
# The words of a CamelCase name: `Server`, `Adapter`; `get`, `Data` (`LoRA`, `SGLang` hold one).
_CAMEL_WORD = re.compile(r"(?:^|[A-Z])[a-z]{2,}")


def _title_identifiers(subject: str, patch_text: str, defined: dict[str, float]) -> list[str]:
    """The identifiers a title names that the patch spells as a whole word (quoted ones included: an
    environment variable, a key read by `getattr`); a CamelCase one only among those `defined`."""
    out = []
    for name in dict.fromkeys(_TITLE_IDENT.findall(subject)):
        short = name.rsplit(".", 1)[-1]
        snake_or_dotted = "_" in name or "." in name
        if not snake_or_dotted and (len(_CAMEL_WORD.findall(name)) < 2 or short not in defined):
            continue
        if _FILE_NAME.search(name) or is_noise_symbol(short):
            continue
        at = patch_text.find(short)  # a whole word there or later: most often right there
        if at >= 0 and re.compile(rf"\b{re.escape(short)}\b").search(patch_text, at):
            out.append(short)
    return out


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
