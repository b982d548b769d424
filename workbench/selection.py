"""Which cached PRs a command works on: a window (`since`), explicit numbers, a state.

Every reading command (analyze, draft, digest, report) selects the same way, so an empty selection is
explained the same way too: when the window holds nothing but the cache holds the repository's PRs, the
answer names the newest cached PR and its date, so the user can widen the window or sync, instead of
receiving an empty table or an empty digest in silence.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .config import WorkbenchError
from .timespan import since_iso


@dataclass(frozen=True)
class Selection:
    repo: str
    numbers: list[int]  # newest first, or in the order asked for
    since: str | None  # the window's start, ISO UTC; None: no window
    since_text: str | None  # the window as the user wrote it ("7d"), for messages
    cached: int  # PRs of the repository in the cache, whatever the window
    newest_number: int | None  # the most recently updated cached PR, when the selection is empty
    newest_time: str | None  # its update time, ISO UTC

    @property
    def empty(self) -> bool:
        return not self.numbers

    def why_empty(self) -> str | None:
        """One line saying why nothing was selected, or None when something was."""
        if self.numbers:
            return None
        if not self.cached:
            return f"{self.repo} has no PRs in the cache: run `workbench sync {self.repo}` first"
        window = f"updated since {self.since[:10]}" + (
            f" ({self.since_text})" if self.since_text and self.since_text[:10] != self.since[:10] else ""
        ) if self.since else "matching"  # fmt: skip
        newest = (
            f"; the newest cached PR, #{self.newest_number}, was updated {self.newest_time[:10]}: widen "
            f"--since (e.g. --since {self.newest_time[:10]}) or sync newer PRs (`workbench sync {self.repo}`)"
            if self.newest_number is not None and self.newest_time
            else ""
        )
        return f"no PR of {self.repo} {window} in the cache ({self.cached} cached){newest}"


def select_prs(
    store,
    repo: str,
    *,
    since: str | None = None,
    numbers: Iterable[int] | None = None,
    state: str | None = None,
) -> Selection:
    """The PRs of `repo` in the window; explicit `numbers` keep their order. Raises WorkbenchError for a
    repository that is not in the cache or a `since` that is not a date or span."""
    if "/" not in repo:
        raise WorkbenchError(
            f"{repo!r} is not OWNER/REPO: name the repository as on GitHub, e.g. verl-project/verl"
        )
    start = since_iso(since)
    pk = store.repo_pk(repo)
    if pk is None:
        raise WorkbenchError(
            f"{repo} is not in the cache: run `workbench sync {repo}` (or `workbench sample`) first"
        )
    asked = [int(n) for n in numbers] if numbers else None
    found = store.pr_numbers(repo, numbers=asked, since=start, state=state)
    if asked:
        missing = sorted(set(asked) - set(found))
        if (
            missing and not start and state in (None, "all")
        ):  # asked for by number, so a gap is an error, not a filter
            raise WorkbenchError(
                f"{repo}: PR(s) {', '.join('#' + str(n) for n in missing)} not in the cache: "
                f"run `workbench sync {repo} --number {' '.join(map(str, missing))}`"
            )
        order = {n: i for i, n in enumerate(asked)}
        found.sort(key=lambda n: order.get(n, 0))
    cached = store.pr_count(pk)
    newest_number = newest_time = None
    if not found and cached:
        newest_number, newest_time = _newest(store, repo)
    return Selection(
        repo=repo,
        numbers=found,
        since=start,
        since_text=str(since).strip() if since else None,
        cached=cached,
        newest_number=newest_number,
        newest_time=newest_time,
    )


def _newest(store, repo: str) -> tuple[int | None, str | None]:
    """The most recently updated cached PR, by the same time the window filters on."""
    df = store.prs(repo)
    if df.empty:
        return None, None
    when = df["updated_at"].fillna(df["merged_at"]).fillna(df["created_at"])
    if when.notna().sum() == 0:
        return None, None
    i = when.idxmax()
    return int(df.loc[i, "number"]), when.loc[i].strftime("%Y-%m-%dT%H:%M:%SZ")


__all__ = ["Selection", "select_prs"]
