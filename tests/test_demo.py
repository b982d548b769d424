"""`workbench demo` end to end in a subprocess: the sample's digest and report are written under
./exports of the working directory, the printed URL lands in the review notebook of a real JupyterLab
on a loopback port, and SIGTERM stops the server it started: no jupyter process of it survives."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from urllib.parse import urlparse

import pytest
from jupyter_server_helper import free_port
from process_helpers import alive, descendants

ROOT = Path(__file__).resolve().parents[1]

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("jupyter") is None, reason="needs jupyter on PATH (pip install -e .)"),
]


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads the process tree from /proc")
def test_demo_serves_the_review_notebook_and_stops_on_sigterm(tmp_path):
    port = free_port()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    env.pop("WORKBENCH_EXPORTS", None)
    env.pop("WORKBENCH_CACHE", None)
    env["JUPYTER_RUNTIME_DIR"] = str(tmp_path / "runtime")  # no server file left in the user's runtime dir
    log = (tmp_path / "demo.log").open("w+")
    proc = subprocess.Popen(
        [sys.executable, "-m", "workbench.cli", "--cache", str(tmp_path / "cache"), "demo",
         f"--port={port}", "--no-browser"],
        cwd=tmp_path, env=env, stdout=log, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    try:
        url = None
        deadline = time.time() + 240
        while time.time() < deadline and proc.poll() is None:
            m = re.search(
                r"JupyterLab is serving at\s+(http://127\.0\.0\.1:\d+/\S+)", Path(log.name).read_text()
            )
            if m:
                url = m.group(1)
                break
            time.sleep(0.5)
        text = Path(log.name).read_text()
        assert url, f"demo printed no URL:\n{text[-3000:]}"
        assert (tmp_path / "exports" / "sample-digest.md").is_file(), text
        assert (tmp_path / "exports" / "sample-report.html").is_file(), text

        parsed = urlparse(url)
        assert parsed.port == port
        assert parsed.path == "/lab/tree/review.ipynb", url
        token = re.search(r"token=(\w+)", parsed.query).group(1)
        with urllib.request.urlopen(url, timeout=30) as r:  # noqa: S310 (loopback)
            assert r.status == 200
        api = f"http://127.0.0.1:{port}/api/contents/review.ipynb?content=0&token={token}"
        with urllib.request.urlopen(api, timeout=30) as r:  # noqa: S310 (loopback)
            assert json.load(r)["type"] == "notebook"

        servers = descendants(proc.pid)
        assert servers, "the demo started no server process"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0
        deadline = time.time() + 20
        while time.time() < deadline and any(alive(p) for p in servers):
            time.sleep(0.3)
        assert not [p for p in servers if alive(p)], "a process the demo started is still running"
        with pytest.raises(OSError):
            urllib.request.urlopen(f"http://127.0.0.1:{port}/api/status", timeout=3)  # noqa: S310
    finally:
        if proc.poll() is None:
            proc.kill()
        for p in descendants(proc.pid):  # only what this test started
            try:
                os.kill(p, signal.SIGKILL)
            except OSError:
                pass
        log.close()


@pytest.mark.browser
def test_the_printed_url_opens_the_review_notebook_not_the_launcher(tmp_path):
    from browser_helpers import CHROMIUM_ARGS, chromium_path, require_browser

    sync_api = require_browser()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    env["JUPYTER_RUNTIME_DIR"] = str(tmp_path / "runtime")
    env["JUPYTER_CONFIG_DIR"] = str(tmp_path / "jupyter")  # a fresh user: no saved workspace to restore
    env["JUPYTERLAB_WORKSPACES_DIR"] = str(tmp_path / "workspaces")
    log = (tmp_path / "demo.log").open("w+")
    proc = subprocess.Popen(
        [sys.executable, "-m", "workbench.cli", "--cache", str(tmp_path / "cache"), "demo",
         f"--port={free_port()}", "--no-browser"],
        cwd=tmp_path, env=env, stdout=log, stderr=subprocess.STDOUT, text=True, start_new_session=True,
    )  # fmt: skip
    try:
        url = None
        deadline = time.time() + 240
        while time.time() < deadline and proc.poll() is None and url is None:
            m = re.search(r"JupyterLab is serving at\s+(\S+)", Path(log.name).read_text())
            url = m and m.group(1)
            time.sleep(0.5)
        assert url, Path(log.name).read_text()[-3000:]
        with sync_api.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
            page = browser.new_page()
            try:
                page.goto(url, timeout=120_000)
                tab = page.locator(
                    ".lm-TabBar-tab.lm-mod-current .lm-TabBar-tabLabel", has_text="review.ipynb"
                )
                tab.first.wait_for(timeout=120_000)  # the notebook is the active document
                page.locator(".jp-NotebookPanel .jp-MarkdownCell", has_text="Review PRs").first.wait_for(
                    timeout=60_000
                )
                assert page.locator(".jp-Launcher:visible").count() == 0, "the Launcher is showing"
            except Exception:
                page.screenshot(path=str(tmp_path / "demo-failure.png"))
                raise
            finally:
                browser.close()
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
        log.close()
