"""The trends notebook in real JupyterLab (headless Debian Chromium via Playwright): every chart is drawn
by plotly inside the app's Output widgets, a filter redraws them, and an untrusted title runs nothing."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from jupyter_server_helper import CHROMIUM_ARGS, chromium_path, start_lab
from trends_data import REPO, make_store

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.browser

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
if chromium_path() is None:
    pytest.skip("no chromium at /usr/bin/chromium (apt-get install chromium)", allow_module_level=True)

TIMEOUT = 60_000


@pytest.fixture
def lab(tmp_path):
    cache = tmp_path / "cache"
    make_store(cache, facts=False).close()
    root = tmp_path / "root"
    root.mkdir()
    nb = json.loads((ROOT / "notebooks" / "trends.ipynb").read_text())
    for cell in nb["cells"]:
        if "parameters" in cell.get("metadata", {}).get("tags", []):
            src = "".join(cell["source"])
            cell["source"] = src.replace('repo = "example-org/minirl"', f'repo = "{REPO}"')
            assert REPO in cell["source"], "the parameters cell no longer sets `repo = ...`"
    (root / "trends.ipynb").write_text(json.dumps(nb))
    server = start_lab(
        root,
        {"WORKBENCH_CACHE": str(cache), "JUPYTER_CONFIG_DIR": str(tmp_path / "jcfg")},
        tmp_path / "lab.log",
    )
    yield server
    server.stop()


def test_trends_notebook_draws_charts_in_jupyterlab(lab):
    dialogs: list[str] = []
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS, headless=True)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.set_default_timeout(TIMEOUT)
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        try:
            page.goto(lab.url("lab/tree/trends.ipynb"))
            page.wait_for_function(
                "() => { const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;"
                " const k = w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;"
                " return k && k.status === 'idle'; }",
                timeout=120_000,
            )
            page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
            app = page.locator(".wb-trends")
            app.wait_for(state="visible", timeout=120_000)
            # Output widgets are virtualised off-screen by JupyterLab's windowing: count the ones drawn so far
            page.wait_for_function(
                "() => document.querySelectorAll('.wb-trends .js-plotly-plot .main-svg').length >= 2",
                timeout=TIMEOUT,
            )
            sync_api.expect(app).to_contain_text("7 of 7 PRs", timeout=TIMEOUT)
            # Pick one area: the status and the charts follow.
            app.locator("select").nth(1).select_option("rollout")
            sync_api.expect(app).to_contain_text("3 of 7 PRs", timeout=TIMEOUT)
            # plotly keeps each drawn figure's traces on its div: the weekly chart now holds rollout alone
            page.wait_for_function(
                "() => { const d = document.querySelector('.wb-trends .js-plotly-plot');"
                " return d && d.data && d.data.map(t => t.name).join() === 'rollout'; }",
                timeout=TIMEOUT,
            )
            page.wait_for_timeout(500)
            assert not dialogs, f"a dialog fired: {dialogs}"
            assert page.locator(".wb-trends script").count() == 0
        except BaseException:
            shot = Path("/tmp") / f"wb-trends-failure-{int(time.time())}.png"
            try:
                page.screenshot(path=str(shot), full_page=True)
            except Exception:  # noqa: BLE001
                pass
            print(f"screenshot: {shot}\njupyter log tail:\n{lab.log_tail()}")
            raise
        finally:
            browser.close()
