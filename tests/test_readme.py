"""Every command of the README's "Everyday use" block runs as written, so the README cannot drift from
the code again.

The block is parsed from README.md, not copied here. Each line runs in a fresh working directory with
its own cache (WORKBENCH_CACHE), in the block's order; the only substitutes are network-free stand-ins
for what the README leaves to the reader:
- GitHub is the loopback fake (GITHUB_API_URL), holding the README's repository with PRs of this week;
- `export GITHUB_TOKEN=...` sets a token the fake accepts;
- the clone path of `--from-git` is a small generated clone;
- `workbench` runs as `python -m workbench.cli` (the same main; the console script may point elsewhere);
- servers (`jupyter lab ...`, `workbench app`) must print their URL and answer it; then they are stopped.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from backfill_repo import build_repo
from fake_github import FAKE_TOKEN, FakeGitHub, generate_prs
from jupyter_server_helper import free_port

ROOT = Path(__file__).resolve().parents[1]
SERVERS = ("jupyter lab", "workbench app", "workbench demo")


def everyday_block() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    m = re.search(r"^## Everyday use\n.*?^```bash\n(.*?)^```", text, re.S | re.M)
    assert m, "README.md has no ```bash block under '## Everyday use'"
    lines = [line for line in m.group(1).splitlines() if shlex.split(line, comments=True)]
    return lines


def test_the_block_is_there_and_names_the_everyday_commands():
    words = {shlex.split(line, comments=True)[1] for line in everyday_block() if line.startswith("workbench")}
    assert {"sync", "analyze", "draft", "digest", "report"} <= words


def _wait_for_url(log: Path, proc: subprocess.Popen, timeout: float = 180) -> str:
    deadline = time.time() + timeout
    while time.time() < deadline and proc.poll() is None:
        m = re.search(
            r"(http://(?:127\.0\.0\.1|localhost):\d+/\S*token=\w+)", log.read_text(errors="replace")
        )
        if m:
            return m.group(1)
        time.sleep(0.5)
    raise AssertionError(f"no URL from {proc.args}:\n{log.read_text(errors='replace')[-3000:]}")


def _answers(url: str, proc: subprocess.Popen, timeout: float = 60) -> int:
    """The HTTP status `url` answers with. Jupyter logs its URL a few milliseconds before its socket
    accepts connections: a refused connection is tried again while the server runs."""
    deadline = time.time() + timeout
    while True:
        try:
            with urllib.request.urlopen(url, timeout=60) as r:  # noqa: S310 (loopback)
                return r.status
        except urllib.error.HTTPError as e:
            return e.code
        except urllib.error.URLError as e:
            refused = isinstance(e.reason, ConnectionRefusedError)
            if not refused or proc.poll() is not None or time.time() > deadline:
                raise
            time.sleep(0.2)


@pytest.mark.slow
def test_every_everyday_command_runs_as_written(tmp_path):
    lines = everyday_block()
    work = tmp_path / "work"
    work.mkdir()
    shutil.copytree(ROOT / "notebooks", work / "notebooks")  # `jupyter lab notebooks/...` from here
    clone = build_repo(tmp_path)
    jupyter_config = tmp_path / "jupyter_config"
    jupyter_config.mkdir()
    # `jupyter lab` as written takes port 8888 on localhost, which any other server on the machine may hold
    # or be releasing (once in CI's layout the URL it printed refused the connection): the test's server
    # gets a free port of its own, set in its config, so the command stays word for word.
    server = {"ip": "127.0.0.1", "port": free_port()}
    if hasattr(os, "geteuid") and os.geteuid() == 0:  # CI runs as root; jupyter refuses that by default
        server["allow_root"] = True
    (jupyter_config / "jupyter_server_config.json").write_text(json.dumps({"ServerApp": server}))

    repo_name = next(shlex.split(line)[2] for line in lines if line.startswith("workbench sync"))
    with FakeGitHub() as gh:
        repo = gh.add_repo(repo_name)
        generate_prs(repo, 12)
        for number in (10, 11, 12):  # PRs of this week, so `--since 7d` and the digest's window hold some
            gh.touch(repo, number, comment=True)
        env = {
            k: v for k, v in os.environ.items() if k not in ("GITHUB_TOKEN", "GH_TOKEN", "WORKBENCH_DEBUG")
        }
        env.update(
            PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
            WORKBENCH_CACHE=str(tmp_path / "cache"),
            GITHUB_API_URL=gh.url,
            JUPYTER_RUNTIME_DIR=str(tmp_path / "runtime"),
            JUPYTER_CONFIG_DIR=str(jupyter_config),
            BROWSER="true",  # a server that opens a browser opens nothing
        )
        env.pop("WORKBENCH_EXPORTS", None)
        env.pop("OPENAI_BASE_URL", None)
        for line in lines:
            argv = shlex.split(line, comments=True)
            if argv[0] == "export":
                name, _, value = argv[1].partition("=")
                env[name] = FAKE_TOKEN if name in ("GITHUB_TOKEN", "GH_TOKEN") else value
                continue
            if "--from-git" in argv:
                argv[argv.index("--from-git") + 1] = str(clone)
            if argv[0] == "workbench":
                argv = [sys.executable, "-m", "workbench.cli", *argv[1:]]
            if any(line.startswith(s) for s in SERVERS):
                _run_server(line, argv, env, work, tmp_path)
                continue
            r = subprocess.run(argv, cwd=work, env=env, capture_output=True, text=True, timeout=600)
            assert r.returncode == 0, f"{line}\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}"
            assert "Traceback" not in r.stderr, line
    # the files the block says it writes, where it says (relative to the working directory)
    for line in lines:
        argv = shlex.split(line, comments=True)
        if "-o" in argv:
            out = work / argv[argv.index("-o") + 1]
            assert out.is_file() and out.stat().st_size > 0, line
    digest = next(
        (work / a[a.index("-o") + 1]) for a in map(shlex.split, lines) if "digest" in a and "-o" in a
    )
    linked = {int(n) for n in re.findall(r"^\[#(\d+) ", digest.read_text(encoding="utf-8"), re.M)}
    assert linked == {10, 11, 12}, "the digest holds this week's PRs, not the whole history"


def _run_server(line: str, argv: list[str], env: dict, cwd: Path, tmp_path: Path) -> None:
    if line.startswith("workbench app") and shutil.which("voila") is None:
        pytest.skip("needs voila for `workbench app`: pip install -e '.[app]'")
    log = tmp_path / f"server-{abs(hash(line))}.log"
    with log.open("w") as fh:
        proc = subprocess.Popen(
            argv, cwd=cwd, env=env, stdout=fh, stderr=subprocess.STDOUT, start_new_session=True
        )
        try:
            url = _wait_for_url(log, proc)
            assert _answers(url, proc) == 200, f"{line}: {url} does not answer"
        finally:
            try:
                os.killpg(proc.pid, signal.SIGTERM)  # only the process group this test started
            except ProcessLookupError:
                pass
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
