"""The review queue: filters over the store's frames, and the cursor."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from ui_helpers import REPO, make_cache

from workbench.config import WorkbenchError
from workbench.timespan import since_iso as parse_since
from workbench.ui.queue import Queue, QueueFilters, filter_numbers

NOW = datetime(2026, 1, 20, tzinfo=UTC)


def test_parse_since_dates_spans_and_errors():
    assert parse_since("7d", now=NOW) == "2026-01-13T00:00:00Z"
    assert parse_since("2w", now=NOW) == "2026-01-06T00:00:00Z"
    assert parse_since("2026-01-05") == "2026-01-05T00:00:00Z"
    assert parse_since("2026-01-05T10:00:00+02:00") == "2026-01-05T08:00:00Z"
    assert parse_since("") is None and parse_since(None) is None
    with pytest.raises(WorkbenchError, match="7d"):
        parse_since("last tuesday")


@pytest.fixture(scope="module")
def frames(tmp_path_factory):
    store = make_cache(tmp_path_factory.mktemp("q") / "c")
    store.save_brief(REPO, 1, "brief one", source="human", base_version=None, is_final=True)
    store.save_brief(REPO, 3, "brief three", source="offline", base_version=None)
    yield store.prs(REPO), store.briefs(REPO)
    store.close()


def test_filters_state_since_briefed(frames):
    prs, briefs = frames
    assert filter_numbers(prs, QueueFilters()) == [7, 3, 2, 1]
    assert filter_numbers(prs, QueueFilters(oldest_first=True)) == [1, 2, 3, 7]
    assert filter_numbers(prs, QueueFilters(state="open")) == [2]
    assert filter_numbers(prs, QueueFilters(state="merged")) == [7, 3, 1]
    # ui_helpers dates: day = 1 + number % 27 -> #1 Jan 2, #2 Jan 3, #3 Jan 4, #7 Jan 8
    assert filter_numbers(prs, QueueFilters(since="2026-01-04")) == [7, 3]
    assert filter_numbers(prs, QueueFilters(since="2026-01-03", date_field="merged")) == [7, 3]  # #2 is open
    assert filter_numbers(prs, QueueFilters(briefed="briefed"), briefs=briefs) == [3, 1]
    assert filter_numbers(prs, QueueFilters(briefed="not briefed"), briefs=briefs) == [7, 2]
    assert filter_numbers(prs, QueueFilters(briefed="final"), briefs=briefs) == [1]
    assert filter_numbers(prs, QueueFilters(briefed="not final"), briefs=briefs) == [7, 3, 2]


def test_verdict_filter_needs_verdicts(frames):
    prs, _ = frames
    f = QueueFilters(verdict="skip")
    assert filter_numbers(prs, f, verdicts={1: "deep", 2: "skip", 3: "skip", 7: "skim"}) == [3, 2]
    with pytest.raises(WorkbenchError, match="heuristics"):
        filter_numbers(prs, f)


def test_bad_filter_values_are_named():
    with pytest.raises(WorkbenchError, match="state='bogus'"):
        QueueFilters(state="bogus").check()
    with pytest.raises(WorkbenchError, match="briefed"):
        QueueFilters(briefed="yes").check()


def test_queue_cursor_stays_inside():
    q = Queue.of([9, 8, 7], current=8)
    assert q.label() == "2 / 3" and q.current == 8
    assert q.next() == 7 and q.at_end
    assert q.next() == 7
    assert q.prev() == 8 and q.prev() == 9 and q.at_start and q.prev() == 9
    assert q.jump(7) == 7 and q.label() == "3 / 3"
    with pytest.raises(WorkbenchError, match="#5 is not in the current queue"):
        q.jump(5)
    empty = Queue()
    assert empty.label() == "0 / 0" and empty.next() is None and empty.current is None
