"""Values written into calls and signatures that a PR changes: `max_colocate_count=1` -> `3` in a call,
`strict: bool = False` -> `True` in a signature. No config file holds them, so no user's config
overrides them: every run through that call, or every caller that leaves the parameter out, behaves
differently (signal code.values, a behaviour-change risk). Pure."""

from __future__ import annotations

import re

from .conventions import Conventions
from .diff import FileDiff
from .model import Signal
from .signals import Find, counted_signals

# A diff shows lines it rewrites as a run of removed lines followed by a run of added ones. Possessive
# runs, each matched once where it starts: a long deletion followed by no addition costs one pass.
_REMOVED_RUN = re.compile(r"\n-(?!--)[^\n]*+(?:\n-(?!--)[^\n]*+)*+")
_ADDED_RUN = re.compile(r"\n\+(?!\+\+)[^\n]*+(?:\n\+(?!\+\+)[^\n]*+)*+")
# `name=value` in a call, or `name: type = value` in a signature, before a comma or a closing paren:
# a dataclass field (`x: int = 5` alone on its line) is a config default (config_changes) instead. Only
# switches, numbers and None: a string is as often a label or a message as a setting.
_WRITTEN = re.compile(
    r"\b(\w+)\s*(?::\s*[\w\[\], .|]+?)?\s*=\s*(True|False|None|-?\d[\d_]*(?:\.\d+)?(?:[eE]-?\d+)?)(?=\s*[,)])"
)


# The value alone, found from its `=` (a literal the regex engine scans for): most lines have none, and
# the name in front of it is then never looked for.
_VALUE = re.compile(r"=\s*(?:True|False|None|-?\d)[^,)\n]*[,)]")

# `field(default=256, ...)` declares a config field: its change is a config default (config_changes)
_FIELD_DECLARATION = frozenset({"default", "default_factory"})


def scan_call_values(files: list[FileDiff], conv: Conventions) -> list[Signal]:
    """Rewritten Python lines that differ only in a keyword argument's or a parameter default's value
    (a switch, a number, None), in the library's code (not its tests, examples or recipes)."""
    finds: list[Find] = []
    for fd in files:
        p = fd.patch
        if (
            fd.role != "code"
            or fd.language != "Python"
            or not p
            or "\n-" not in p
            or conv.in_satellite(fd.filename)
        ):
            continue
        text = "\n" + p
        for removed in _REMOVED_RUN.finditer(text):
            added = _ADDED_RUN.match(text, removed.end())
            if not added:
                continue
            old = removed.group().split("\n")[1:]
            new = added.group().split("\n")[1:]
            at = added.start()  # the first added line's start in `p` ("\n" + p shifts by one)
            for was, now in zip(old, new, strict=False):  # the rewritten lines pair up in order
                if change := _value_change(was[1:], now[1:]):
                    finds.append((fd.filename, p, at, change))
                at += len(now) + 1
    return counted_signals("code.values", "values written into calls or signatures changed", finds, conv)


def _value_change(old: str, new: str) -> str | None:
    """What changes ("name: old -> new") when two lines are the same but for the values their keyword
    arguments or parameter defaults are given, else None."""
    before = _values(old)
    if not before or old.lstrip().startswith("#") or _without_values(old) != _without_values(new):
        return None
    after = _values(new)
    changed = [
        f"{k}: {before[k]} -> {v}"
        for k, v in after.items()
        if k in before and before[k] != v and k not in _FIELD_DECLARATION
    ]
    return "; ".join(changed) or None


def _values(line: str) -> dict[str, str]:
    """name -> the value it is given, for the keyword arguments and parameter defaults of the line."""
    if not _VALUE.search(line):
        return {}
    return dict(m.group(1, 2) for m in _WRITTEN.finditer(line))


def _without_values(line: str) -> str:
    """The line with the values of its keyword arguments and parameter defaults left out."""
    return _WRITTEN.sub(lambda m: m.group(0)[: m.start(2) - m.start()], line)
