"""How values are normalised on their way into the cache: times as UTC ISO strings, JSON compact."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any


def utcnow() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def iso_utc(value: Any) -> str | None:
    """Normalise a datetime or ISO string (any offset) to 'YYYY-MM-DDTHH:MM:SSZ' in UTC."""
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        dt = value
    else:
        s = str(value).replace("Z", "+00:00")
        dt = datetime.fromisoformat(s)
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def login(obj: Any) -> str | None:
    return obj.get("login") if isinstance(obj, dict) else None


def dumps(obj: Any) -> str | None:
    return None if obj is None else json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
