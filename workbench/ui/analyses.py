"""What the heuristics say about the queue's PRs: computed once per PR per queue build, with the
repository's conventions and known PR titles (for cross-references).

Unchanged PRs come from the analysis memo beside the cache, as for `workbench analyze` and the trends
(workbench/analysis_memo.py): filtering a 3,000-PR queue on the verdict then costs about what reading
the PRs costs. The memo is written after a bulk pass (a verdict filter) and on `save()`.

The heuristics are optional at this layer: without them, or when they fail on one PR, the app still shows
the diff and the editor, and `note` says why there is no analysis.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable
from typing import Any

from ..config import WorkbenchError
from ..store import Store
from .status import optional


class Analyses:
    def __init__(self, store: Store, heuristics, why_missing: str | None, log: Callable[[str], None]):
        self.store = store
        self._heuristics, self._why_missing = heuristics, why_missing
        self._log = log  # where a heuristics traceback goes (the app's log pane)
        self.cache: dict[tuple[str, int], Any] = {}  # (repo, number) -> Analysis | None
        self.conventions = None
        self.known: dict[int, tuple[str, str]] = {}
        self.note: str | None = None  # why the last PR has no analysis
        self.memo = None  # AnalysisMemo of the open repository, when the heuristics are there

    def open_repo(self, repo: str | None) -> str | None:
        """Load the repository's conventions and known PRs; returns an error message when conventions fail."""
        self.save()
        self.known = self.store.known_prs(repo) if repo else {}
        self.conventions = self.memo = None
        conv, _ = optional("workbench.analysis.conventions")
        if conv is None or not repo:
            return None
        error = None
        try:
            self.conventions = conv.load_conventions(repo, cache=self.store.path.parent)
        except Exception as err:  # noqa: BLE001 - a bad conventions file degrades to defaults, loudly
            error = f"conventions for {repo} not loaded: {err}"
        memo, _ = optional("workbench.analysis.memo")
        if memo is not None and self._heuristics is not None:
            self.memo = memo.AnalysisMemo.for_repo(repo, self.conventions, self.store.path.parent)
        return error

    def save(self) -> None:
        """Write the memo; a read-only cache still answers, and the next session analyses again."""
        if self.memo is not None:
            try:
                self.memo.save()
            except OSError as err:
                self._log(f"analysis memo not saved: {err}\n")

    def refresh(self, repo: str) -> None:
        """Forget every analysis: a sync may have changed the PRs (and their titles) since."""
        self.cache.clear()
        self.known = self.store.known_prs(repo)

    def of_number(self, repo: str, number: int):
        key = (repo, number)
        if key not in self.cache:
            self.cache[key] = self.analyze(self.store.pr(repo, number))
        return self.cache[key]

    def of_record(self, repo: str, record):
        """The record's analysis (cached; a failed one is retried), setting `note` when there is none."""
        self.note = None
        key = (repo, record.number)
        if self.cache.get(key) is None:
            self.cache[key] = self.analyze(record)
        return self.cache[key]

    def verdicts(self, repo: str, numbers: list[int]) -> dict[int, str]:
        out = {}
        for n in numbers:
            a = self.of_number(repo, n)
            if a is None:
                raise WorkbenchError(f"cannot filter on the verdict: {self.note}")
            out[n] = a.verdict
        self.save()
        return out

    def analyze(self, record):
        if self._heuristics is None:
            self.note = f"heuristics unavailable: {self._why_missing}"
            return None
        try:
            if self.memo is not None:
                return self.memo.analyze(record, known_prs=self.known)
            return self._heuristics.analyze(record, conventions=self.conventions, known_prs=self.known)
        except Exception as err:  # noqa: BLE001 - a heuristics bug must not hide the diff and the editor
            self.note = f"heuristics failed on #{record.number}: {type(err).__name__}: {err}"
            self._log(traceback.format_exc())
            return None
