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


@pytest.fixture
def store(tmp_path):
    """An empty cache in a temporary directory (test files may define their own)."""
    from workbench.store import Store

    s = Store(tmp_path)
    yield s
    s.close()
