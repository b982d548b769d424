"""Title conventions: tags, kind and breaking marks parsed from a PR title.

Two styles are common upstream: verl's `[rollout, vllm] fix: ...` (and `[BREAKING][trainer] feat: ...`),
and conventional commits `fix(scope)!: ...`. Per-repository overrides live in the conventions TOML.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

KINDS = (
    "feat",
    "fix",
    "refactor",
    "chore",
    "test",
    "doc",
    "docs",
    "ci",
    "perf",
    "misc",
    "build",
    "style",
    "revert",
)
_BRACKETS = re.compile(r"^\s*((?:\[[^\]]*\]\s*)+)")
_GROUP = re.compile(r"\[([^\]]*)\]")
_TAG_SEPARATORS = re.compile(r"[,;/]")
_CONVENTIONAL = re.compile(r"^\s*(?P<kind>[a-zA-Z]+)(?:\((?P<scope>[^)]*)\))?(?P<bang>!)?\s*:\s*")
_REVERT = re.compile(r"^\s*(revert\b|\[revert\])", re.IGNORECASE)
_KINDS = frozenset(KINDS)


@dataclass(frozen=True)
class TitleParts:
    tags: list[str] = field(default_factory=list)
    kind: str | None = None
    breaking: bool = False
    revert: bool = False
    subject: str = ""


def _split_tags(group: str) -> list[str]:
    # most groups hold a single tag: the regex split is for those that hold several
    if "," in group or ";" in group or "/" in group:
        return _TAG_SEPARATORS.split(group)
    return [group]


def parse_title(title: str) -> TitleParts:
    title = title or ""
    rest = title
    tags: list[str] = []
    breaking = False
    m = _BRACKETS.match(title) if "[" in title else None
    if m:
        for group in _GROUP.findall(m.group(1)):
            for tag in _split_tags(group):
                tag = tag.strip().lower()
                if not tag:
                    continue
                if tag == "breaking":
                    breaking = True
                else:
                    tags.append(tag)
        rest = title[m.end() :]
    kind = None
    c = _CONVENTIONAL.match(rest) if ":" in rest else None
    if c and c.group("kind").lower() in _KINDS:
        kind = c.group("kind").lower()
        kind = "doc" if kind == "docs" else kind
        if c.group("scope"):
            tags.extend(t.strip().lower() for t in _split_tags(c.group("scope")) if t.strip())
        breaking = breaking or bool(c.group("bang"))
        rest = rest[c.end() :]
    revert = bool(_REVERT.match(title)) or kind == "revert" or "revert" in tags
    uniq = list(dict.fromkeys(tags)) if len(tags) > 1 else tags  # first mention kept, in order
    return TitleParts(tags=uniq, kind=kind, breaking=breaking, revert=revert, subject=rest.strip())
