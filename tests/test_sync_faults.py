"""Faults a real GitHub throws at a sync: each is survived (or stops cleanly) with a real PyGithub client."""

from __future__ import annotations

import time

import pytest
from fake_github import FAKE_TOKEN, FakeGitHub, assert_whole, generate_prs

from workbench.config import WorkbenchError
from workbench.sources.github import sync_repo
from workbench.store import Store

TOKEN = FAKE_TOKEN
REPO = "octo/faulty"


@pytest.fixture
def gh():
    with FakeGitHub() as fake:
        fake.repo = fake.add_repo(REPO)
        generate_prs(fake.repo, 30)
        yield fake


def run(store, gh, **kw):
    kw.setdefault("progress", False)
    kw.setdefault("token", TOKEN)
    return sync_repo(store, REPO, api_url=gh.url, **kw)


def all_whole(store, gh):
    assert len(store.prs(REPO)) == len(gh.repo.prs)
    for n in gh.repo.prs:
        assert_whole(store, REPO, gh.repo, n)


@pytest.mark.parametrize("status", ["502", "503", "504"])
def test_5xx_burst_is_retried_with_exponential_backoff(gh, store, sleeps, status):
    gh.inject(status, kind="pulls", times=4)
    gh.inject(status, kind="files", times=2, after=5)
    res = run(store, gh)
    assert res.prs_written == 30 and not res.errors
    assert sleeps[:4] == [1.0, 2.0, 4.0, 8.0]  # doubling, not PyGithub's ten instant retries
    assert gh.counts["error"] == 6
    all_whole(store, gh)


def test_burst_longer_than_the_retries_stops_with_a_message_and_keeps_what_was_written(gh, store, sleeps):
    gh.inject("503", kind="files", times=100, after=10)
    with pytest.raises(WorkbenchError, match="stopped.*rerun resumes"):
        run(store, gh)
    assert len(store.prs(REPO)) >= 1
    runs = store.sync_runs()
    assert runs["status"].iloc[-1] == "failed" and "503" in runs["errors"].iloc[-1]
    gh.faults.clear()
    res = run(store, gh)
    assert not res.errors
    all_whole(store, gh)


@pytest.mark.parametrize("fault", ["drop", "truncate"])
def test_dropped_connection_and_truncated_json_are_retried(gh, store, sleeps, fault):
    gh.inject(fault, kind="pulls", times=1)
    gh.inject(fault, kind="files", times=2, after=3)
    gh.inject(fault, kind="graphql", times=1)
    res = run(store, gh)
    assert res.prs_written == 30 and not res.errors and len(sleeps) == 4
    all_whole(store, gh)


def test_secondary_limit_honours_retry_after(gh, store, sleeps):
    gh.inject("secondary", kind="files", times=1, after=2, retry_after=7)
    gh.inject("secondary", kind="graphql", times=1, retry_after=11)
    res = run(store, gh)
    assert res.prs_written == 30 and 7.0 in sleeps and 11.0 in sleeps
    all_whole(store, gh)


def test_429_without_retry_after_pauses_a_minute(gh, store, sleeps):
    gh.inject("secondary429", kind="pulls", times=1, retry_after=None)
    res = run(store, gh)
    assert res.prs_written == 30 and sleeps and sleeps[0] >= 60


def test_a_persisting_secondary_limit_backs_off_exponentially_with_jitter(gh, store, sleeps, monkeypatch):
    from workbench.sources import github_http

    draws = iter([0.0, 0.5, 0.99, 0.2])
    monkeypatch.setattr(github_http, "_jitter", lambda: next(draws))
    gh.inject("secondary", kind="files", times=4, after=3, retry_after=None)
    res = run(store, gh)
    assert res.prs_written == 30 and not res.errors
    # a minute, then doubling while it lasts, each with up to +25 % jitter (not a flat 60 s each time)
    assert sleeps == [60.0, 120.0 * 1.125, 240.0 * (1 + 0.25 * 0.99), 480.0 * 1.05]
    all_whole(store, gh)


def test_secondary_wait_is_capped_and_always_at_least_a_minute(monkeypatch):
    from workbench.sources import github_http
    from workbench.sources.github_http import Transport

    monkeypatch.setattr(github_http, "_jitter", lambda: 0.0)
    assert Transport.secondary_wait(1) == 60.0 and Transport.secondary_wait(20) == 900.0
    monkeypatch.setattr(github_http, "_jitter", lambda: 0.999)
    assert 60.0 < Transport.secondary_wait(1) < 75.0 and Transport.secondary_wait(20) < 1125.0


def test_primary_limit_waits_for_the_reset(gh, store, sleeps):
    gh.inject("primary", kind="files", times=1, after=4, reset_in=1800)
    res = run(store, gh, wait=True)
    assert res.prs_written == 30 and res.stopped_reason is None
    assert sleeps and 1790 <= max(sleeps) <= 1802  # until the reset the server named, not a guess


def test_primary_limit_shows_the_wait_on_a_bar(gh, store, sleeps):
    bars = []

    class Bar:
        def __init__(self, total=None, desc="", **kw):
            self.total, self.desc, self.n = total, desc, 0
            bars.append(self)

        def update(self, k=1):
            self.n += k

        def set_postfix(self, **kw):
            pass

        def close(self):
            pass

        def __enter__(self):
            return self

        def __exit__(self, *a):
            pass

    gh.inject("primary", kind="files", times=1, after=1, reset_in=120)
    res = sync_repo(store, REPO, api_url=gh.url, progress=True, tqdm_cls=Bar, token=TOKEN)
    assert res.prs_written == 30
    wait = [b for b in bars if "rate limit" in b.desc]
    assert wait and "resets at" in wait[0].desc and 115 <= wait[0].n <= 122


def test_primary_limit_without_waiting_stops_cleanly_and_resumes(gh, store, sleeps):
    gh.inject("primary", kind="files", times=1, after=12, reset_in=600)
    res = run(store, gh, wait=False)
    assert res.stopped_reason and "resets at" in res.stopped_reason and res.reset_at > time.time() + 500
    assert res.prs_written == 12 and sleeps == []
    runs = store.sync_runs()
    assert runs["status"].iloc[-1] == "stopped" and "rate limit" in runs["note"].iloc[-1]
    state = store.repo_state(REPO)
    assert state.cursor is not None and state.watermark is None
    gh.reset_counts()
    res = run(store, gh, wait=False)
    assert res.prs_written == 18 and res.stopped_reason is None
    assert gh.counts["files"] == 18  # the 12 already written were not fetched again
    assert store.repo_state(REPO).cursor is None
    all_whole(store, gh)


def test_primary_limit_at_the_first_request_writes_nothing(gh, store, sleeps):
    gh.inject("primary", kind="repo", times=1)
    res = run(store, gh, wait=False)
    assert res.stopped_reason and res.prs_written == 0
    assert store.repos().empty


def test_graphql_rate_limited_error_is_the_primary_limit(gh, store, sleeps):
    gh.inject("primary", kind="graphql", times=1, reset_in=300)
    res = run(store, gh, wait=False)
    assert res.stopped_reason and res.reset_at
    res = run(store, gh)
    assert res.prs_written == 30


def test_graphql_200_with_rate_limited_error_waits_for_the_reset(gh, store, sleeps):
    gh.inject("graphql_rate_limited", kind="graphql", times=1, reset_in=900)
    res = run(store, gh)
    assert res.prs_written == 30 and 890 <= max(sleeps) <= 902
    all_whole(store, gh)


def test_a_stalled_answer_times_out_and_is_retried(gh, store, sleeps):
    gh.inject("stall", kind="files", times=1, after=3, seconds=2.0)
    res = run(store, gh, timeout=1)  # PyGithub insists on whole seconds
    assert res.prs_written == 30 and len(sleeps) == 1
    all_whole(store, gh)


def test_notebook_entry_point(gh, tmp_path, sleeps):
    import workbench

    res = workbench.sync(REPO, cache=tmp_path, api_url=gh.url, token=TOKEN)
    assert res.prs_written == 30 and res.repo == REPO
    with Store(tmp_path) as s:
        assert len(s.prs(REPO)) == 30


def test_interrupt_is_recorded_as_stopped_and_resumes(gh, store, monkeypatch):
    from workbench.sources import github as sync_module

    real = sync_module._Pass._write_one
    calls = {"n": 0}

    def interrupted(self, item, build):
        calls["n"] += 1
        if calls["n"] == 8:
            raise KeyboardInterrupt
        return real(self, item, build)

    monkeypatch.setattr(sync_module._Pass, "_write_one", interrupted)
    with pytest.raises(KeyboardInterrupt):
        run(store, gh)
    assert store.sync_runs()["status"].iloc[-1] == "stopped" and len(store.prs(REPO)) == 7
    monkeypatch.setattr(sync_module._Pass, "_write_one", real)
    res = run(store, gh)
    assert res.prs_written == 23
    all_whole(store, gh)
