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
_CONVENTIONAL = re.compile(r"^\s*(?P<kind>[a-zA-Z]+)(?:\((?P<scope>[^)]*)\))?(?P<bang>!)?\s*:\s*")
_REVERT = re.compile(r"^\s*(revert\b|\[revert\])", re.IGNORECASE)


@dataclass(frozen=True)
class TitleParts:
    tags: list[str] = field(default_factory=list)
    kind: str | None = None
    breaking: bool = False
    revert: bool = False
    subject: str = ""


def parse_title(title: str) -> TitleParts:
    title = title or ""
    rest = title
    tags: list[str] = []
    breaking = False
    m = _BRACKETS.match(rest)
    if m:
        for group in re.findall(r"\[([^\]]*)\]", m.group(1)):
            for tag in re.split(r"[,;/]", group):
                tag = tag.strip().lower()
                if not tag:
                    continue
                if tag == "breaking":
                    breaking = True
                else:
                    tags.append(tag)
        rest = rest[m.end() :]
    kind = None
    c = _CONVENTIONAL.match(rest)
    if c and c.group("kind").lower() in KINDS:
        kind = c.group("kind").lower()
        kind = "doc" if kind == "docs" else kind
        if c.group("scope"):
            tags.extend(t.strip().lower() for t in re.split(r"[,;/]", c.group("scope")) if t.strip())
        breaking = breaking or bool(c.group("bang"))
        rest = rest[c.end() :]
    revert = bool(_REVERT.match(title)) or kind == "revert" or "revert" in tags
    seen: set[str] = set()
    uniq = [t for t in tags if not (t in seen or seen.add(t))]
    return TitleParts(tags=uniq, kind=kind, breaking=breaking, revert=revert, subject=rest.strip())
