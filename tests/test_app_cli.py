"""`workbench app`: Voila on 127.0.0.1 with a generated token; the printed URL opens the review app,
the page refuses a request without the token, and SIGTERM stops the server (nothing of it survives)."""

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
from urllib.parse import urlparse

import pytest
from jupyter_server_helper import free_port
from process_helpers import alive, descendants

ROOT = Path(__file__).resolve().parents[1]

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("voila") is None, reason="needs voila: pip install -e '.[app]'"),
    pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads the process tree from /proc"),
]


def test_app_prints_a_working_url_with_its_token_and_stops_on_sigterm(tmp_path):
    from workbench.sources.sample import load_sample
    from workbench.store import Store

    cache = tmp_path / "cache"
    load_sample(Store(cache), include_verl=False)
    port = free_port()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    env["JUPYTER_RUNTIME_DIR"] = str(tmp_path / "runtime")
    log = (tmp_path / "app.log").open("w+")
    proc = subprocess.Popen(
        [sys.executable, "-m", "workbench.cli", "--cache", str(cache), "app", f"--port={port}", "--no-browser"],
        cwd=tmp_path, env=env, stdout=log, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    try:
        url = None
        deadline = time.time() + 180
        while time.time() < deadline and proc.poll() is None:
            m = re.search(r"Voila is serving at\s+(http://127\.0\.0\.1:\d+/\S+)", Path(log.name).read_text())
            if m:
                url = m.group(1)
                break
            time.sleep(0.5)
        assert url, f"app printed no URL:\n{Path(log.name).read_text()[-3000:]}"
        parsed = urlparse(url)
        assert parsed.hostname == "127.0.0.1" and parsed.port == port
        assert re.fullmatch(r"token=[0-9a-f]{32}", parsed.query), "a generated 128-bit token"
        opener = urllib.request.build_opener(_NoRedirect)  # a redirect to the login page is a refusal too
        try:
            status = opener.open(f"http://127.0.0.1:{port}/", timeout=60).status
        except urllib.error.HTTPError as e:
            status = e.code
        assert status in (302, 401, 403), "the app must not be served without the token"
        with urllib.request.urlopen(url, timeout=120) as r:  # noqa: S310 (loopback)
            page = r.read().decode("utf-8", "replace")
        assert r.status == 200 and "Review PRs" in page

        servers = descendants(proc.pid)
        assert servers
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0
        deadline = time.time() + 20
        while time.time() < deadline and any(alive(p) for p in servers):
            time.sleep(0.3)
        assert not [p for p in servers if alive(p)], "a process the app started is still running"
    finally:
        if proc.poll() is None:
            proc.kill()
        for p in descendants(proc.pid):
            try:
                os.kill(p, signal.SIGKILL)
            except OSError:
                pass
        log.close()


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None
