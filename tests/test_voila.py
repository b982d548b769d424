"""The review notebook served as an app by `workbench app` (Voila on 127.0.0.1 with a generated token),
driven in headless Chromium: the page needs the token, the app renders, and Next moves through the queue."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from browser_helpers import CHROMIUM_ARGS, chromium_path, require_browser
from jupyter_server_helper import free_port

ROOT = Path(__file__).resolve().parents[1]

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(shutil.which("voila") is None, reason="needs voila (pip install -e '.[app]')"),
]
sync_api = require_browser()


@pytest.fixture
def voila(tmp_path):
    from workbench.sources.sample import load_sample
    from workbench.store import Store

    cache = tmp_path / "cache"
    load_sample(Store(cache), include_verl=False)
    port = free_port()
    log_path = tmp_path / "voila.log"
    log = log_path.open("w")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    env["WORKBENCH_EXPORTS"] = str(tmp_path / "exports")
    proc = subprocess.Popen(
        [sys.executable, "-m", "workbench.cli", "--cache", str(cache), "app", f"--port={port}", "--no-browser"],
        cwd=tmp_path, env=env, stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    deadline = time.time() + 120
    url = None
    while time.time() < deadline and proc.poll() is None and url is None:
        m = re.search(r"Voila is serving at\s+(\S+)", log_path.read_text(errors="replace"))
        url = m and m.group(1)
        time.sleep(0.5)
    if url is None:
        proc.kill()
        pytest.fail("workbench app did not start: " + log_path.read_text()[-2000:])
    token = re.search(r"token=(\w+)", url).group(1)
    yield f"http://127.0.0.1:{port}", token
    proc.send_signal(signal.SIGTERM)  # the command stops the Voila it started
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
    log.close()


def test_voila_needs_the_token(voila):
    base, _ = voila
    req = urllib.request.Request(f"{base}/")
    opener = urllib.request.build_opener(_NoRedirect)
    try:
        status = opener.open(req, timeout=5).status
    except urllib.error.HTTPError as e:
        status = e.code
    assert status in (302, 401, 403), "the app must not be served without the token"


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def test_review_app_runs_under_voila(voila, tmp_path):
    base, token = voila
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        page = browser.new_page()
        dialogs: list[str] = []
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        try:
            page.goto(f"{base}/?token={token}", timeout=60_000)
            nxt = page.locator("button", has_text="Next").first
            nxt.wait_for(timeout=90_000)
            position = page.locator("text=/\\d+ \\/ \\d+/").first
            position.wait_for(timeout=30_000)
            before = position.inner_text()
            nxt.click()
            page.wait_for_function(
                "([sel, before]) => { const el = [...document.querySelectorAll('*')].find("
                "e => e.childElementCount === 0 && /^\\s*\\d+ \\/ \\d+\\s*$/.test(e.textContent));"
                " return el && el.textContent.trim() !== before.trim(); }",
                arg=["", before],
                timeout=30_000,
            )
            assert not dialogs, f"a dialog fired: {dialogs}"
        except Exception:
            page.screenshot(path=str(tmp_path / "voila-failure.png"))
            raise
        finally:
            browser.close()
