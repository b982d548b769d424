"""The review queue: which PRs to step through, in which order, and where we are. Pure: no widgets, no I/O.

The app reads DataFrames from the store (`Store.prs`, `Store.briefs`) and verdicts from the heuristics,
then hands them here; tests exercise the filters without a cache.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime

import pandas as pd

from ..config import WorkbenchError
from ..timespan import since_iso

STATES = ("all", "open", "merged", "closed")
BRIEFED = ("any", "briefed", "not briefed", "final", "not final")
VERDICTS = ("any", "deep", "skim", "skip")
DATE_FIELDS = ("updated", "merged")


@dataclass
class QueueFilters:
    repo: str | None = None
    state: str = "all"  # all | open | merged | closed
    since: str | None = None  # date or span, see workbench.timespan
    date_field: str = "updated"  # updated | merged: which date `since` applies to
    verdict: str = "any"  # any | deep | skim | skip
    briefed: str = "any"  # any | briefed | not briefed | final | not final
    numbers: list[int] | None = None  # an explicit list wins over nothing else: it is intersected
    oldest_first: bool = False

    def check(self) -> None:
        for name, value, allowed in (
            ("state", self.state, STATES),
            ("verdict", self.verdict, VERDICTS),
            ("briefed", self.briefed, BRIEFED),
            ("date_field", self.date_field, DATE_FIELDS),
        ):
            if value not in allowed:
                raise WorkbenchError(f"queue filter {name}={value!r} is not one of {', '.join(allowed)}")
        since_iso(self.since)

    @property
    def needs_verdicts(self) -> bool:
        return self.verdict != "any"


def filter_numbers(
    prs: pd.DataFrame,
    filters: QueueFilters,
    *,
    briefs: pd.DataFrame | None = None,
    verdicts: Mapping[int, str] | None = None,
    now: datetime | None = None,
) -> list[int]:
    """PR numbers passing the filters, newest first (or oldest first).

    `prs` is `Store.prs(repo)`; `briefs` is `Store.briefs(repo)` (latest version per PR);
    `verdicts` maps number -> deep|skim|skip and is needed only when filtering on the verdict."""
    filters.check()
    df = prs
    if filters.state != "all":
        df = df[df["state"] == filters.state]
    since = since_iso(filters.since, now=now)
    if since:
        ts = pd.Timestamp(since)
        if filters.date_field == "merged":
            df = df[df["merged_at"].notna() & (df["merged_at"] >= ts)]
        else:
            when = df["updated_at"].fillna(df["merged_at"]).fillna(df["created_at"])
            df = df[when.notna() & (when >= ts)]
    if filters.numbers is not None:
        df = df[df["number"].isin([int(n) for n in filters.numbers])]
    numbers = [int(n) for n in df["number"]]
    if filters.briefed != "any":
        b = briefs if briefs is not None else pd.DataFrame(columns=["number", "is_final"])
        briefed = {int(n) for n in b["number"]}
        final = {int(n) for n, f in zip(b["number"], b["is_final"], strict=False) if f}
        keep = {
            "briefed": lambda n: n in briefed,
            "not briefed": lambda n: n not in briefed,
            "final": lambda n: n in final,
            "not final": lambda n: n not in final,
        }[filters.briefed]
        numbers = [n for n in numbers if keep(n)]
    if filters.needs_verdicts:
        if verdicts is None:
            raise WorkbenchError(
                "filtering on the verdict needs the heuristics (workbench.analysis.pipeline), which are unavailable"
            )
        numbers = [n for n in numbers if verdicts.get(n) == filters.verdict]
    return sorted(numbers, reverse=not filters.oldest_first)


@dataclass
class Queue:
    """An ordered list of PR numbers and a cursor. Moving past either end stays put."""

    numbers: list[int] = field(default_factory=list)
    index: int = 0

    @classmethod
    def of(cls, numbers: Iterable[int], current: int | None = None) -> Queue:
        q = cls(list(numbers), 0)
        if current is not None and current in q.numbers:
            q.index = q.numbers.index(current)
        return q

    @property
    def current(self) -> int | None:
        return self.numbers[self.index] if self.numbers else None

    def next(self) -> int | None:
        if self.numbers and self.index < len(self.numbers) - 1:
            self.index += 1
        return self.current

    def prev(self) -> int | None:
        if self.numbers and self.index > 0:
            self.index -= 1
        return self.current

    def jump(self, number: int) -> int:
        if number not in self.numbers:
            raise WorkbenchError(
                f"PR #{number} is not in the current queue ({len(self.numbers)} PRs): clear the filters to find it"
            )
        self.index = self.numbers.index(number)
        return number

    @property
    def at_start(self) -> bool:
        return self.index <= 0

    @property
    def at_end(self) -> bool:
        return not self.numbers or self.index >= len(self.numbers) - 1

    def label(self) -> str:
        """'12 / 48', or '0 / 0' for an empty queue."""
        return f"{self.index + 1} / {len(self.numbers)}" if self.numbers else "0 / 0"
