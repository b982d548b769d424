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


class _NoServer:
    """browser_page prints a server log when a test fails; the report is a file, served by nobody."""

    def log_tail(self) -> str:
        return "(no server: the report is a standalone file)"


def test_report_in_chromium_fits_its_table_and_labels_its_axes(tmp_path):
    from workbench.report import write_report

    store = make_store(tmp_path / "cache", facts=False)
    out = write_report(store, REPO, tmp_path / "report.html", verdicts=False)
    store.close()
    with browser_page(_NoServer(), width=1100, height=900, name="report") as (page, dialogs):
        page.goto(out.as_uri())
        page.wait_for_function(
            "() => document.querySelectorAll('.js-plotly-plot .main-svg').length >= 8", timeout=TIMEOUT
        )
        # Every metric name and value of the summary sits on one line ("46.0 h" wrapped before).
        wrapped = page.evaluate(
            """() => [...document.querySelectorAll('table.summary th, table.summary td.num')].filter(el => {
                 const r = document.createRange(); r.selectNodeContents(el);
                 return new Set([...r.getClientRects()].map(x => Math.round(x.top))).size > 1;
               }).map(el => el.textContent)"""
        )
        assert wrapped == [], f"summary cells wrap: {wrapped}"
        # The churn heatmap (four weeks of data: weekly columns) is drawn with one tick per column.
        ticks = page.evaluate(
            "() => [...document.querySelectorAll('#churn_heatmap .xtick text')].map(t => t.textContent)"
        )
        assert ticks == ["Jan 08, 2024", "Jan 15, 2024", "Jan 22, 2024"], ticks
        page.locator("table.summary").screenshot(path=str(tmp_path / "summary.png"))
        assert not dialogs
