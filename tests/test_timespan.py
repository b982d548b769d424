"""One `--since` grammar for every command and the apps (workbench.timespan)."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from workbench.config import WorkbenchError
from workbench.timespan import ACCEPTED, parse_since, since_iso

NOW = datetime(2026, 5, 31, 15, 30, tzinfo=UTC)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("12h", "2026-05-31T03:30:00Z"),
        ("7d", "2026-05-24T15:30:00Z"),
        ("7 days", "2026-05-24T15:30:00Z"),
        ("1 day", "2026-05-30T15:30:00Z"),
        ("2w", "2026-05-17T15:30:00Z"),
        ("2 weeks", "2026-05-17T15:30:00Z"),
        # calendar months, clamped to the month's end: 31 May minus 3 months is 28 Feb, not 2 Mar
        ("3m", "2026-02-28T15:30:00Z"),
        ("3mo", "2026-02-28T15:30:00Z"),
        ("1 month", "2026-04-30T15:30:00Z"),
        ("1y", "2025-05-31T15:30:00Z"),
        ("2 years", "2024-05-31T15:30:00Z"),
        ("today", "2026-05-31T00:00:00Z"),
        ("Yesterday", "2026-05-30T00:00:00Z"),
        ("2026-01-31", "2026-01-31T00:00:00Z"),
        ("2026-01-31T09:00Z", "2026-01-31T09:00:00Z"),
        ("2026-01-31T10:00:00+02:00", "2026-01-31T08:00:00Z"),
        (" 7D ", "2026-05-24T15:30:00Z"),
    ],
)
def test_accepted_forms(value, expected):
    assert since_iso(value, now=NOW) == expected


def test_nothing_means_no_window():
    assert parse_since(None) is None
    assert parse_since("") is None and parse_since("   ") is None


def test_dates_and_datetimes_pass_through_as_utc():
    assert parse_since(date(2026, 1, 2)) == datetime(2026, 1, 2, tzinfo=UTC)
    assert parse_since(datetime(2026, 1, 2, 3)) == datetime(2026, 1, 2, 3, tzinfo=UTC)
    assert parse_since("7d", now=NOW).tzinfo is not None


def test_a_leap_day_minus_a_year_is_the_last_of_february():
    assert since_iso("1y", now=datetime(2028, 2, 29, tzinfo=UTC)) == "2027-02-28T00:00:00Z"


@pytest.mark.parametrize("bad", ["7", "last tuesday", "7x", "-3d", "2026-13-01", "d7"])
def test_a_bad_value_is_one_line_naming_the_accepted_forms(bad):
    with pytest.raises(WorkbenchError) as err:
        parse_since(bad, now=NOW)
    message = str(err.value)
    assert "\n" not in message
    assert repr(bad.strip()) in message and ACCEPTED in message


def test_every_window_parser_in_the_package_is_this_one():
    """The four grammars of the past (sync, drafting, review queue, trends) must not come back."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[1] / "workbench"
    defs = [
        str(p.relative_to(root))
        for p in root.rglob("*.py")
        if re.search(r"^def parse_since\(", p.read_text(encoding="utf-8"), re.M)
    ]
    assert defs == ["timespan.py"]
