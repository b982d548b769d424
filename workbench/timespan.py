"""`--since` values: the one grammar every command and the apps accept.

A window start is either a moment (an ISO date or date-time, `today`, `yesterday`) or a span back from
now (`12h`, `7d`, `2w`, `3m`, `1y`; the unit may be spelled out: `7 days`, `3 months`). Months and years
are calendar months and years (3m on 31 May is 28 Feb), not multiples of 30 days, so a span reads the
way a person means it. Everything comes back as an aware UTC datetime; `since_iso` gives the store's
string form. Standard library only: every command parses its arguments before any heavy import.
"""

from __future__ import annotations

import calendar
import re
from datetime import UTC, date, datetime, timedelta

from .config import WorkbenchError

ACCEPTED = (
    "a date (2026-01-31), a date-time (2026-01-31T09:00Z), today, yesterday, or a span: 12h, 7d, 2w, 3m, 1y"
)

_SPAN = re.compile(
    r"^(?P<n>\d+)\s*(?P<unit>h|hours?|d|days?|w|weeks?|m|mo|months?|y|years?)$",
    re.IGNORECASE,
)


def _months_back(when: datetime, months: int) -> datetime:
    """The same day `months` calendar months earlier, clamped to the month's last day."""
    index = when.year * 12 + (when.month - 1) - months
    year, month = divmod(index, 12)
    day = min(when.day, calendar.monthrange(year, month + 1)[1])
    return when.replace(year=year, month=month + 1, day=day)


def parse_since(value: str | date | datetime | None, *, now: datetime | None = None) -> datetime | None:
    """The start of a window as an aware UTC datetime; None or blank means no window.

    A bad value raises WorkbenchError with one line naming the accepted forms."""
    if value is None:
        return None
    if isinstance(value, datetime):
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day, tzinfo=UTC)
    text = str(value).strip()
    if not text:
        return None
    now = (now or datetime.now(UTC)).astimezone(UTC)
    lowered = text.lower()
    if lowered in ("today", "yesterday"):
        midnight = now.replace(hour=0, minute=0, second=0, microsecond=0)
        return midnight if lowered == "today" else midnight - timedelta(days=1)
    m = _SPAN.match(text)
    if m:
        n, unit = int(m.group("n")), m.group("unit").lower()
        if unit.startswith("h"):
            return now - timedelta(hours=n)
        if unit.startswith("d"):
            return now - timedelta(days=n)
        if unit.startswith("w"):
            return now - timedelta(weeks=n)
        if unit.startswith("m"):
            return _months_back(now, n)
        return _months_back(now, 12 * n)
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise WorkbenchError(f"--since {text!r} is not understood: give {ACCEPTED}") from None
    return when.replace(tzinfo=UTC) if when.tzinfo is None else when.astimezone(UTC)


def since_iso(value: str | date | datetime | None, *, now: datetime | None = None) -> str | None:
    """parse_since as the store's form, 'YYYY-MM-DDTHH:MM:SSZ'; None stays None."""
    when = parse_since(value, now=now)
    return None if when is None else when.strftime("%Y-%m-%dT%H:%M:%SZ")


__all__ = ["ACCEPTED", "parse_since", "since_iso"]
