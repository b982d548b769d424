"""The reading brief: its model, Markdown render/parse, and the per-repository digest.

Layout follows ../shared/reference/example-digest-zh.txt: a headline rewritten for the team, a verdict,
what the PR teaches, 2-4 focus points naming files and symbols, what it leaves open, next steps.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class Brief:
    repo: str
    number: int
    lang: str  # zh | en
    headline: str  # rewritten for the team, not the raw PR title
    verdict: str  # deep | skim | skip
    minutes: int | None = None  # for skim: "3-5 minutes"
    audience: str | None = None  # "CI maintainers" / "CI 维护者"
    summary: str = ""  # one or two sentences: what the PR teaches or changes
    focus: list[str] = field(default_factory=list)  # 2-4 design decisions, naming files and symbols
    open_items: list[str] = field(default_factory=list)
    next_steps: list[str] = field(default_factory=list)
    extra: str = ""  # reviewer text outside the known sections: kept on round trip, never dropped
    draft: bool = True  # a machine draft until a person edits or marks it final
    source: str = "offline"  # offline | llm | human

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Brief:
        return cls(**{k: v for k, v in d.items() if k in cls.__dataclass_fields__})
