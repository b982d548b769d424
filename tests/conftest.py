"""Fixtures shared across test files."""

from __future__ import annotations

import pytest


@pytest.fixture
def sleeps(monkeypatch):
    """Backoff sleeps of the GitHub transport, recorded instead of slept."""
    from workbench.sources import github_http

    calls: list[float] = []
    monkeypatch.setattr(github_http, "_sleep", calls.append)
    return calls
