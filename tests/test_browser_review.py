"""The review notebook in real JupyterLab, driven by headless Debian Chromium through Playwright.

Runs all cells, steps with Next and with the `j` key (without moving JupyterLab's active cell), types a
brief, waits for the autosave, exports and reads the exported file; the first PR in the queue carries
script/onerror/javascript: payloads in its title, body, comment, label, file name and patch, and nothing
of it may run.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest
from browser_helpers import TIMEOUT, browser_page, copy_notebook, no_news_toast, require_browser, run_notebook
from jupyter_server_helper import start_lab
from ui_helpers import REPO, make_cache

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.browser
sync_api = require_browser()


def _notebook_copy(dst: Path) -> Path:
    shutil.copytree(ROOT / "notebooks", dst)
    return copy_notebook(dst / "review.ipynb", dst / "review.ipynb", REPO)


@pytest.fixture
def lab(tmp_path):
    cache = tmp_path / "cache"
    make_cache(cache).close()
    root = tmp_path / "root"
    _notebook_copy(root)
    server = start_lab(
        root,
        {
            "WORKBENCH_CACHE": str(cache),
            "WORKBENCH_EXPORTS": str(tmp_path / "exports"),
            "JUPYTER_CONFIG_DIR": str(tmp_path / "jcfg"),
            "WORKBENCH_MODEL": "",
        },
        tmp_path / "lab.log",
    )
    server.exports = tmp_path / "exports"
    yield server
    server.stop()


def test_review_notebook_in_jupyterlab(lab, tmp_path):
    with browser_page(lab, width=1600, height=1000, name="review") as (page, dialogs):
        _drive(page, lab, dialogs)


def _status(page) -> str:
    return page.locator(
        ".wb-app .wb-status-ok, .wb-app .wb-status-warn, .wb-app .wb-status-err"
    ).first.inner_text()


def _drive(page, lab, dialogs):
    run_notebook(page, lab, "review.ipynb")
    app = page.locator(".wb-app")
    app.wait_for(state="visible", timeout=120_000)
    pos = app.locator(".widget-label", has_text=" / ").first
    sync_api.expect(pos).to_have_text("1 / 4", timeout=TIMEOUT)

    # 1. The first PR (#7) is the hostile one: everything shows as text, nothing runs.
    header = app.locator(".wb-header")
    sync_api.expect(header).to_contain_text("<script>window.__xss=1", timeout=TIMEOUT)
    sync_api.expect(app.locator(".wb-diff").first).to_be_visible(timeout=TIMEOUT)  # first file auto-opened
    # Render the hostile text everywhere it can show: a draft in the editor and preview, the second file,
    # the heuristics tab (evidence quotes the title and patch).
    app.get_by_role("button", name="Draft (offline)").click()
    sync_api.expect(app.locator(".wb-preview")).to_contain_text("<script>", timeout=TIMEOUT)
    app.locator(".lm-AccordionPanel-title, .jupyter-widget-Collapse-header, .p-Collapse-header").nth(
        1
    ).click()
    app.get_by_role("tab", name="Heuristics").click()
    sync_api.expect(app.locator(".wb-verdict")).to_be_visible(timeout=TIMEOUT)
    page.wait_for_timeout(500)
    app.get_by_role("tab", name="Brief").click()
    assert page.evaluate("() => window.__xss === undefined"), "an injected script or handler ran"
    assert page.locator(".wb-app img[src='x']").count() == 0
    assert page.locator(".wb-app script").count() == 0
    assert page.locator(".wb-app a[href^='javascript']").count() == 0
    assert not dialogs, f"a dialog fired: {dialogs}"
    assert no_news_toast(page), "JupyterLab asks about Jupyter news over the app"

    # 2. j moves the queue, not JupyterLab's active cell.
    header.click()  # JupyterLab makes the app's cell active; the app takes the keyboard focus
    active_before = page.evaluate("() => window.jupyterapp.shell.currentWidget.content.activeCellIndex")
    page.keyboard.press("j")
    sync_api.expect(pos).to_have_text("2 / 4", timeout=TIMEOUT)
    assert (
        page.evaluate("() => window.jupyterapp.shell.currentWidget.content.activeCellIndex") == active_before
    )

    # 3. Next, type a brief, wait for the autosave.
    app.get_by_role("button", name="Next").click()
    sync_api.expect(pos).to_have_text("3 / 4", timeout=TIMEOUT)
    sync_api.expect(header).to_contain_text("#2", timeout=TIMEOUT)
    editor = app.locator(".widget-textarea textarea").first
    editor.click()
    editor.press_sequentially("# Bump the CI runner\n\nSkim: only `ci.yml` changes.", delay=10)
    sync_api.expect(app.locator(".wb-status-ok").first).to_contain_text("saved v1", timeout=TIMEOUT)

    # 4. Export this PR and read the file.
    app.get_by_role("button", name="Export PR").click()
    sync_api.expect(app.locator(".wb-status-ok, .wb-status-err").first).to_contain_text(
        "exported", timeout=TIMEOUT
    )
    deadline = time.monotonic() + 30
    files = []
    while time.monotonic() < deadline and not files:
        files = [f for f in lab.exports.rglob("*.md")] if lab.exports.exists() else []
        time.sleep(0.2)
    assert files, f"nothing exported under {lab.exports}; status: {_status(page)}"
    text = "\n".join(f.read_text() for f in files)
    assert "Bump the CI runner" in text and "`ci.yml`" in text
    assert not dialogs and page.evaluate("() => window.__xss === undefined")
