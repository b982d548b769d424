"""`workbench sync` as a user runs it: a subprocess against the loopback GitHub, killed, stopped, misused."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fake_github import FakeGitHub, assert_whole, generate_prs

from workbench.store import Store

ROOT = Path(__file__).resolve().parents[1]
REPO = "octo/cli"


def cli(cache: Path, *args: str, env: dict | None = None, wait: bool = True, timeout: float = 120):
    full_env = {
        k: v for k, v in os.environ.items() if k not in ("GITHUB_TOKEN", "GH_TOKEN", "WORKBENCH_DEBUG")
    }
    full_env["GITHUB_TOKEN"] = "ghp_any_token_the_fake_takes"  # GraphQL has no anonymous access
    full_env.update(env or {})
    cmd = [sys.executable, "-m", "workbench.cli", "--cache", str(cache), "sync", *args]
    if not wait:
        return subprocess.Popen(cmd, cwd=ROOT, env=full_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return subprocess.run(cmd, cwd=ROOT, env=full_env, capture_output=True, text=True, timeout=timeout)


@pytest.fixture
def gh():
    with FakeGitHub() as fake:
        fake.repo = fake.add_repo(REPO)
        yield fake


def count_prs(db: Path) -> int:
    try:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
        try:
            return con.execute("SELECT count(*) FROM prs").fetchone()[0]
        finally:
            con.close()
    except sqlite3.Error:
        return 0


def test_kill_9_mid_run_then_rerun_gives_every_pr_once_and_whole(gh, tmp_path):
    generate_prs(gh.repo, 120)
    gh.latency = 0.02  # slow enough to be caught mid-run (~3 s in all)
    proc = cli(tmp_path, REPO, "--api-url", gh.url, wait=False)
    db = tmp_path / "workbench.db"
    deadline = time.time() + 60
    while time.time() < deadline and count_prs(db) < 25:
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)
    assert proc.returncode == -signal.SIGKILL
    killed_at = count_prs(db)
    assert 25 <= killed_at < 120, killed_at  # really mid-run
    gh.latency = 0.0
    gh.reset_counts()
    done = cli(tmp_path, REPO, "--api-url", gh.url)
    assert done.returncode == 0, done.stderr
    assert gh.counts["files"] <= 120 - killed_at + 1  # resumed, not restarted
    with Store(tmp_path) as store:
        assert len(store.prs(REPO)) == 120
        for n in gh.repo.prs:
            assert_whole(store, REPO, gh.repo, n)
        dup = store.conn.execute(
            "SELECT count(*) FROM (SELECT number, files_key, filename FROM pr_files GROUP BY 1,2,3 HAVING count(*) > 1)"
        ).fetchone()[0]
        assert dup == 0
        assert store.conn.execute("SELECT count(*) FROM issue_comments").fetchone()[0] == sum(
            len(p.issue_comments) for p in gh.repo.prs.values()
        )
        runs = store.sync_runs()
        # the killed run is visible as never finished: its process is gone, so it is not "running"
        assert list(runs["status"]) == ["interrupted", "ok"]
        assert f"process {proc.pid} ended without finishing" in runs["note"][0]


def test_no_wait_exits_3_with_the_reset_time_then_resumes(gh, tmp_path):
    generate_prs(gh.repo, 20)
    gh.inject("primary", kind="files", times=1, after=5, reset_in=1200)
    out = cli(tmp_path, REPO, "--api-url", gh.url, "--no-wait")
    assert out.returncode == 3, out.stderr
    assert "rate limit" in out.stderr and "resets at" in out.stderr and "Traceback" not in out.stderr
    out = cli(tmp_path, REPO, "--api-url", gh.url, "--no-wait")
    assert out.returncode == 0, out.stderr
    with Store(tmp_path) as store:
        assert len(store.prs(REPO)) == 20


def test_since_limit_and_number_flags(gh, tmp_path):
    prs = generate_prs(gh.repo, 30)
    out = cli(tmp_path, REPO, "--api-url", gh.url, "--number", "4", "5")
    assert out.returncode == 0, out.stderr
    out = cli(tmp_path, REPO, "--api-url", gh.url, "--limit", "5")
    assert out.returncode == 0 and "limit 5 reached" in out.stdout
    out = cli(tmp_path, REPO, "--api-url", gh.url, "--since", prs[25].updated_at[:10])
    assert out.returncode == 0, out.stderr
    with Store(tmp_path) as store:
        assert {4, 5} <= set(store.prs(REPO)["number"]) and len(store.prs(REPO)) >= 7


def one_line_error(out: subprocess.CompletedProcess, *words: str) -> None:
    assert out.returncode not in (0, None)
    assert "Traceback" not in out.stderr
    lines = [x for x in out.stderr.splitlines() if x.strip() and "error" in x]
    assert len(lines) == 1, out.stderr
    for w in words:
        assert w in lines[0], lines[0]


def test_unknown_repository(gh, tmp_path):
    out = cli(tmp_path, "octo/missing", "--api-url", gh.url)
    one_line_error(out, "unknown repository octo/missing")
    with Store(tmp_path) as store:
        assert store.repos().empty and store.sync_runs().empty


def test_bad_token_never_echoed(tmp_path):
    with FakeGitHub(token="ghp_the_right_one_123456") as gh:
        gh.add_repo(REPO)
        out = cli(tmp_path, REPO, "--api-url", gh.url, env={"GITHUB_TOKEN": "ghp_wrong_one_987654"})
    one_line_error(out, "401")
    assert "ghp_wrong_one_987654" not in out.stderr + out.stdout
    with Store(tmp_path) as store:
        assert store.repos().empty


def test_unreachable_api(tmp_path):
    out = cli(tmp_path, REPO, "--api-url", "http://127.0.0.1:9/api/v3")
    one_line_error(out, "cannot reach")


def test_corrupt_cache_file_is_named_and_left_alone(gh, tmp_path):
    db = tmp_path / "workbench.db"
    garbage = b"this is not sqlite \x00\xff" * 500
    db.write_bytes(garbage)
    out = cli(tmp_path, REPO, "--api-url", gh.url)
    one_line_error(out, "workbench.db")
    assert db.read_bytes() == garbage
    assert gh.counts["repo"] == 0  # nothing asked of GitHub either
