"""What analysis hands to drafting, the UI and charts: plain dataclasses with `to_dict()`.

`workbench.analysis.pipeline.analyze(record, ...)` produces an `Analysis`; nothing here does I/O.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

VERDICTS = ("deep", "skim", "skip")


@dataclass
class Evidence:
    file: str | None  # None when the evidence is in the title, description or discussion
    line: int | None  # new-side line number where there is one
    text: str  # the line or sentence itself, trimmed


@dataclass
class Signal:
    name: str  # stable id, e.g. "risk.concurrency", "tests.missing", "docs_only"
    label: str  # short human text, e.g. "concurrency: locks / ACKs / races"
    weight: float  # how much it pushes towards a close read (negative: towards skim/skip)
    evidence: list[Evidence] = field(default_factory=list)


@dataclass
class KeyFile:
    filename: str
    role: str  # code | test | docs | ci | build | config | generated | binary | notebook | data
    reason: str  # one line: why this file matters
    score: float
    additions: int = 0
    deletions: int = 0
    symbols: list[str] = field(default_factory=list)


@dataclass
class CrossRef:
    number: int
    relation: str  # see workbench.analysis.discussion.RELATIONS: reverts, fixes, depends-on, ... mentions
    title: str | None = None  # from the cache, when known
    state: str | None = None
    url: str | None = None
    repo: str | None = None  # "owner/name" of another repository (as written); None: this repository

    @property
    def name(self) -> str:
        """How a reader sees it: #N in this repository, owner/name#N in another."""
        return f"{self.repo}#{self.number}" if self.repo else f"#{self.number}"


# The risk kinds a reader is warned about (the expert labels' vocabulary). Each analysis risk is one of
# these, with the lines that show it.
RISK_KINDS = (
    "memory",
    "concurrency",
    "numerics",
    "security",
    "breaking-api",
    "config-default-change",
    "behaviour-change",
    "performance",
    "compatibility",
)


@dataclass
class Risk:
    kind: str  # one of RISK_KINDS
    why: str  # one line: why this is a risk for a reader
    evidence: list[Evidence] = field(default_factory=list)


@dataclass
class Description:
    """What the PR description says (workbench.analysis.description.read_description)."""

    text: str = ""  # the description without the template's boilerplate
    raw_chars: int = 0  # length of the description as written, template included
    root_cause: list[str] = field(default_factory=list)  # sentences explaining why
    test_plan: list[str] = field(default_factory=list)
    numbers: list[str] = field(default_factory=list)  # sentences with measurements
    open_items: list[str] = field(default_factory=list)  # what the author leaves open: TODOs, limits
    code_spans: list[str] = field(default_factory=list)  # `names` the author quotes
    breaking: str | None = None  # where the author says this PR breaks callers or configs

    @property
    def empty(self) -> bool:
        """Nothing beyond the template."""
        return not self.text.strip()


@dataclass
class Discussion:
    """What reviewers and the author said after the description (discussion.read_discussion)."""

    reviewers: list[str] = field(default_factory=list)  # not the author, not bots
    approved_by: list[str] = field(default_factory=list)
    changes_requested_by: list[str] = field(default_factory=list)
    changes_requested_outstanding: list[str] = field(default_factory=list)  # their latest review
    unresolved: list[str] = field(default_factory=list)  # "login: text" of each unresolved thread
    promises: list[str] = field(default_factory=list)  # what the author promised to do later
    deferred: list[str] = field(default_factory=list)  # "login: sentence" a reviewer left for later
    comments: int = 0

    @property
    def unresolved_threads(self) -> int:
        return len(self.unresolved)


@dataclass
class Analysis:
    repo: str
    number: int
    verdict: str  # deep | skim | skip
    audience: str | None  # display text of the first audience, "CI maintainers"; None: for everyone
    effort: int  # 1..5
    minutes: int  # estimated reading time
    deciding: list[str]  # the two or three signal labels that decided the verdict
    signals: list[Signal] = field(default_factory=list)
    key_files: list[KeyFile] = field(default_factory=list)
    key_symbols: list[str] = field(default_factory=list)
    open_items: list[str] = field(default_factory=list)
    cross_refs: list[CrossRef] = field(default_factory=list)
    areas: list[str] = field(default_factory=list)
    roles: dict[str, int] = field(default_factory=dict)  # role -> changed lines
    description: Description = field(default_factory=Description)
    discussion: Discussion = field(default_factory=Discussion)
    # what the data lacks: "files past 3,000", "3 patches omitted"
    truncated: list[str] = field(default_factory=list)
    # added by the heuristics (additive): the title's kind and tags, the summed signal score, and which
    # area the audience came from ("ci" | "docs" | "build" | "tests" | an area name), for localisation
    kind: str | None = None
    tags: list[str] = field(default_factory=list)
    score: float = 0.0
    audience_key: str | None = None
    # who should read it, from the conventions' audience vocabulary, most concerned first; never empty
    audiences: list[str] = field(default_factory=list)
    risks: list[Risk] = field(default_factory=list)  # what a reader is warned about, by kind
    reverts: int | None = None  # the PR this one reverts, when it is a revert and says which
    # what a revert names its PR by when no number says it: the commit it reverts, the title it quotes;
    # looked up in the cache, again on every memo hit (discussion.resolve_refs)
    revert_commit: str | None = None
    revert_title: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def signal(self, name: str) -> Signal | None:
        return next((s for s in self.signals if s.name == name), None)
