"""Shared by the browser tests: headless Debian Chromium through Playwright, on a notebook served by
`jupyter_server_helper.start_lab`. One place for the launch flags, the parameters-cell rewrite, "run all
cells once the kernel is idle", and the screenshot + server log printed when a test fails."""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

TIMEOUT = 60_000  # ms: a cold kernel + widget manager on a 2-core CI box is slow
SAMPLE_REPO_LINE = 'repo = "example-org/minirl"'

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]


def chromium_path() -> str | None:
    for name in ("/usr/bin/chromium", shutil.which("chromium") or "", shutil.which("chromium-browser") or ""):
        if name and Path(name).exists():
            return name
    return None


def require_browser():
    """playwright.sync_api, or skip the calling test module (no playwright, or no chromium)."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    if chromium_path() is None:
        pytest.skip("no chromium at /usr/bin/chromium (apt-get install chromium)", allow_module_level=True)
    return sync_api


def copy_notebook(src: Path, dst: Path, repo: str) -> Path:
    """Write `src` to `dst` with the parameters cell's `repo = ...` pointing at `repo`."""
    nb = json.loads(src.read_text())
    for cell in nb["cells"]:
        if "parameters" in cell.get("metadata", {}).get("tags", []):
            source = "".join(cell["source"])
            cell["source"] = source.replace(SAMPLE_REPO_LINE, f'repo = "{repo}"')
            assert repo in cell["source"], "the parameters cell no longer sets `repo = ...`"
    dst.write_text(json.dumps(nb))
    return dst


@contextmanager
def browser_page(lab, *, width: int, height: int, name: str) -> Iterator[tuple[object, list[str]]]:
    """A page in headless Chromium and the list of dialogs it raised (each dismissed). When the body fails,
    a full-page screenshot goes to /tmp/wb-<name>-failure-*.png and the server log's tail is printed."""
    from playwright.sync_api import sync_playwright

    dialogs: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS, headless=True)
        page = browser.new_page(viewport={"width": width, "height": height})
        page.set_default_timeout(TIMEOUT)
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        try:
            yield page, dialogs
        except BaseException:
            shot = Path("/tmp") / f"wb-{name}-failure-{int(time.time())}.png"
            try:
                page.screenshot(path=str(shot), full_page=True)
            except Exception:  # noqa: BLE001 - the test's own error matters more
                pass
            print(f"screenshot: {shot}\njupyter log tail:\n{lab.log_tail()}")
            raise
        finally:
            browser.close()


def run_notebook(page, lab, notebook: str) -> None:
    """Open `notebook` in JupyterLab, wait for its kernel to be idle, then run all cells."""
    page.goto(lab.url(f"lab/tree/{notebook}"))
    page.wait_for_function(
        "() => { const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;"
        " const k = w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;"
        " return k && k.status === 'idle'; }",
        timeout=120_000,
    )
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")


def no_news_toast(page) -> bool:
    """JupyterLab's "get notified about official Jupyter news?" toast is not showing."""
    return page.get_by_text("official Jupyter news").count() == 0
