"""`workbench sync` as a user runs it: a subprocess against the loopback GitHub, killed, stopped, misused."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
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


def runs_of(db: Path) -> list[dict]:
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
    con.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in con.execute("SELECT * FROM sync_runs ORDER BY id")]
    except sqlite3.Error:
        return []
    finally:
        con.close()


def test_killed_runs_show_what_they_did_even_while_waiting_before_the_lookup(gh, tmp_path):
    generate_prs(gh.repo, 10)
    assert cli(tmp_path, REPO, "--api-url", gh.url).returncode == 0  # the cache exists from here on
    gh.inject("primary", kind="repo", times=1, reset_in=900)  # the next run waits at its first request
    proc = cli(tmp_path, REPO, "--api-url", gh.url, wait=False)
    db = tmp_path / "workbench.db"
    deadline = time.time() + 60
    while time.time() < deadline and not any("waiting" in (r["note"] or "") for r in runs_of(db)):
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)
    with Store(tmp_path) as store:
        runs = store.sync_runs()
        last = runs.iloc[-1]
        assert last["status"] == "interrupted" and last["repo"] == REPO and pd.isna(last["repo_pk"])
        assert (
            "waiting" in last["note"]
            and "rate limit" in last["note"]
            and "ended without finishing" in last["note"]
        )
        assert int(last["rest_requests"]) == 1  # the refused lookup was counted


def test_a_killed_run_shows_the_prs_it_wrote(gh, tmp_path):
    generate_prs(gh.repo, 80)
    gh.latency = 0.02
    proc = cli(tmp_path, REPO, "--api-url", gh.url, wait=False)
    db = tmp_path / "workbench.db"
    deadline = time.time() + 60
    while time.time() < deadline and count_prs(db) < 10:
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)
    written = count_prs(db)
    assert 10 <= written < 80
    (run,) = runs_of(db)
    assert run["prs_written"] == written and run["rest_requests"] >= written  # one /files per PR at least


def test_two_concurrent_syncs_one_writes_the_other_refuses(gh, tmp_path):
    generate_prs(gh.repo, 40)
    gh.latency = 0.15  # the first sync takes several seconds: long enough for the second to meet it
    first = cli(tmp_path, REPO, "--api-url", gh.url, wait=False)
    db = tmp_path / "workbench.db"
    deadline = time.time() + 60
    while time.time() < deadline and count_prs(db) < 3:
        time.sleep(0.02)
    second = cli(tmp_path, REPO, "--api-url", gh.url)
    assert second.returncode == 4, second.stderr
    assert f"process {first.pid}" in second.stderr and "another sync of octo/cli" in second.stderr
    assert "Traceback" not in second.stderr
    # a reader does not wait for the writer
    t0 = time.time()
    assert count_prs(db) >= 3 and time.time() - t0 < 1.0
    out, err = first.communicate(timeout=120)
    assert first.returncode == 0, err
    assert gh.counts["files"] == 40  # the work was done once
    statuses = [r["status"] for r in runs_of(db)]
    assert statuses == ["ok", "refused"] or statuses == ["refused", "ok"]


def test_a_pr_that_keeps_failing_gives_exit_1_and_is_named(gh, tmp_path):
    generate_prs(gh.repo, 12)
    gh.repo.prs[7].files_status = 503
    out = cli(tmp_path, REPO, "--api-url", gh.url, timeout=300)
    assert out.returncode == 1, out.stderr
    assert "1 PRs failed (#7)" in out.stdout and "failed: #7:" in out.stderr
    status = subprocess.run(
        [sys.executable, "-m", "workbench.cli", "--cache", str(tmp_path), "status", REPO],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert status.returncode == 0, status.stderr
    assert "11 merged" in status.stdout or "PRs cached" in status.stdout
    assert "1 PRs owed" in status.stdout and "#7" in status.stdout
    assert "last api full run: partial" in status.stdout


def test_no_wait_before_the_lookup_names_the_repository(gh, tmp_path):
    gh.inject("primary", kind="repo", times=1, reset_in=900)
    out = cli(tmp_path, REPO, "--api-url", gh.url, "--no-wait")
    assert out.returncode == 3 and "None" not in out.stdout
    assert out.stdout.startswith(f"{REPO}: stopped before the repository lookup")


@pytest.mark.parametrize(
    "args, words",
    [
        (["--limit", "0"], "0 is not a positive number"),
        (["--limit", "-5"], "-5 is not a positive number"),
        (["--number", "-1"], "-1 is not a positive number"),
        (["--api-url", "not a url"], "not an http(s) URL"),
        (["--since", "the other day"], "is not understood"),
    ],
)
def test_bad_arguments_are_refused_before_anything_happens(gh, tmp_path, args, words):
    cache = tmp_path / "c"
    out = cli(cache, REPO, "--api-url", gh.url, *args)
    one_line_error(out, words)
    assert not cache.exists() and gh.log == []


def test_cache_naming_a_file_is_refused_with_advice(gh, tmp_path):
    afile = tmp_path / "notes.txt"
    afile.write_text("mine")
    out = cli(afile, REPO, "--api-url", gh.url)
    one_line_error(out, "is a file, not a directory")
    assert afile.read_text() == "mine" and gh.log == []


def test_a_page_corrupt_cache_is_named_with_what_to_do(gh, tmp_path):
    generate_prs(gh.repo, 60)
    assert cli(tmp_path, REPO, "--api-url", gh.url).returncode == 0
    db = tmp_path / "workbench.db"
    data = bytearray(db.read_bytes())
    page = 4096
    assert len(data) > 6 * page
    data[2 * page :] = b"\x5a" * (len(data) - 2 * page)  # every page past the schema page is garbage
    db.write_bytes(bytes(data))
    before = db.read_bytes()
    gh.touch(gh.repo, 3, comment=True)
    out = cli(tmp_path, REPO, "--api-url", gh.url)
    one_line_error(out, str(db), "move it aside")
    assert "internal error" not in out.stderr and db.read_bytes() == before
