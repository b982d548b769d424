"""The review notebook served as an app by Voila on 127.0.0.1 with a token (README one-liner), driven
in headless Chromium: the page needs the token, the app renders, and Next moves through the queue."""

from __future__ import annotations

import os
import shutil
import subprocess
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
    pytest.mark.skipif(shutil.which("voila") is None, reason="needs voila (pip install -e '.[test]')"),
]
sync_api = require_browser()


@pytest.fixture
def voila(tmp_path):
    from workbench.sources.sample import load_sample
    from workbench.store import Store

    cache = tmp_path / "cache"
    load_sample(Store(cache), include_verl=False)
    port, token = free_port(), "voila-test-token"
    log = (tmp_path / "voila.log").open("w")
    env = dict(os.environ, WORKBENCH_CACHE=str(cache), WORKBENCH_EXPORTS=str(tmp_path / "exports"))
    proc = subprocess.Popen(
        [shutil.which("voila"), str(ROOT / "notebooks" / "review.ipynb"), "--Voila.ip=127.0.0.1",
         f"--port={port}", f"--token={token}", "--no-browser"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    deadline = time.time() + 60
    while time.time() < deadline:
        try:
            urllib.request.urlopen(f"{base}/?token={token}", timeout=2)  # noqa: S310 (loopback)
            break
        except (urllib.error.URLError, ConnectionError, OSError):
            time.sleep(0.5)
    else:
        proc.kill()
        pytest.fail("voila did not start: " + (tmp_path / "voila.log").read_text()[-2000:])
    yield base, token
    proc.terminate()
    try:
        proc.wait(timeout=15)
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
