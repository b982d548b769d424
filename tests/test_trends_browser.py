"""The trends notebook in real JupyterLab (headless Debian Chromium via Playwright): every chart is drawn
by plotly inside the app's Output widgets, a filter redraws them, and an untrusted title runs nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from browser_helpers import TIMEOUT, browser_page, require_browser, run_notebook
from jupyter_server_helper import start_lab
from trends_data import REPO, make_store

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.browser
sync_api = require_browser()


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
    with browser_page(lab, width=1400, height=1000, name="trends") as (page, dialogs):
        run_notebook(page, lab, "trends.ipynb")
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
