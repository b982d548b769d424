"""The review notebook in real JupyterLab, driven by headless Debian Chromium through Playwright.

Runs all cells, steps with Next and with the `j` key (without moving JupyterLab's active cell), also
after clicking Next and after typing, jumps with Enter in the "PR #" box, types a Chinese brief (drawn with
a real CJK font, not boxes), waits for the autosave, exports, reads the exported file and opens it through
the export pane's link; the first PR in the queue carries script/onerror/javascript: payloads in its
title, description, comment, review, review thread, label, file name and patch, shown in every tab
(the Conversation tab renders the description and discussion as Markdown), and nothing of it may run.
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
    exports = root / "exports"  # under the server's root: the export pane links to what JupyterLab can open
    server = start_lab(
        root,
        {
            "WORKBENCH_CACHE": str(cache),
            "WORKBENCH_EXPORTS": str(exports),
            "JUPYTER_CONFIG_DIR": str(tmp_path / "jcfg"),
            "WORKBENCH_MODEL": "",
        },
        tmp_path / "lab.log",
    )
    server.exports = exports
    yield server
    server.stop()


def test_review_notebook_in_jupyterlab(lab, tmp_path):
    with browser_page(lab, width=1600, height=1000, name="review") as (page, dialogs):
        _drive(page, lab, dialogs)


def _status(page) -> str:
    return page.locator(
        ".wb-app .wb-status-ok, .wb-app .wb-status-warn, .wb-app .wb-status-err"
    ).first.inner_text()


def _pos_is(pos, text: str) -> None:
    sync_api.expect(pos).to_have_text(text, timeout=TIMEOUT)


def _active_cell(page) -> int:
    return page.evaluate("() => window.jupyterapp.shell.currentWidget.content.activeCellIndex")


# Is a string drawn with real glyphs? Missing glyphs are all drawn as the same box (.notdef), so two
# different characters rendering to identical pixels means boxes. Drawn on a canvas in the textarea's
# own computed font, so it checks what the reader sees in the editor.
_GLYPHS_DIFFER = """(el) => {
  const font = getComputedStyle(el).font;
  const draw = (ch) => {
    const c = document.createElement("canvas"); c.width = 40; c.height = 40;
    const g = c.getContext("2d"); g.font = font.replace(/\\d+(\\.\\d+)?px/, "28px"); g.fillText(ch, 4, 32);
    return Array.from(g.getImageData(0, 0, 40, 40).data).join(",");
  };
  const a = draw("中"), b = draw("文"), blank = draw(" ");
  return {font, differ: a !== b, inked: a !== blank && b !== blank};
}"""


def _drive(page, lab, dialogs):
    run_notebook(page, lab, "review.ipynb")
    app = page.locator(".wb-app")
    app.wait_for(state="visible", timeout=120_000)
    pos = app.locator(".widget-label", has_text=" / ").first
    _pos_is(pos, "1 / 4")

    # 1. The first PR (#7) is the hostile one: everything shows as text, nothing runs.
    header = app.locator(".wb-header")
    sync_api.expect(header).to_contain_text("<script>window.__xss=1", timeout=TIMEOUT)
    sync_api.expect(app.locator(".wb-diff").first).to_be_visible(timeout=TIMEOUT)  # first file auto-opened
    # Render the hostile text everywhere it can show: a draft in the editor and preview, the second file,
    # the Conversation tab (description, comment, review, thread as Markdown), the heuristics tab.
    app.get_by_role("button", name="Draft (offline)").click()
    sync_api.expect(app.locator(".wb-preview")).to_contain_text("<script>", timeout=TIMEOUT)
    app.locator(".lm-AccordionPanel-title, .jupyter-widget-Collapse-header, .p-Collapse-header").nth(
        1
    ).click()
    app.get_by_role("tab", name="Conversation").click()
    conv = app.locator(".wb-conv")
    sync_api.expect(conv).to_contain_text("review thread on", timeout=TIMEOUT)
    sync_api.expect(conv).to_contain_text("<iframe", timeout=TIMEOUT)  # raw HTML shown as text
    sync_api.expect(conv.locator(".wb-conv-hunk")).to_contain_text("<script>window.__xss=12")
    assert conv.locator("details.wb-template").count() == 1  # the template comment, folded
    assert conv.locator("a[href='https://example.org/ok']").count() == 2  # description and comment
    app.get_by_role("tab", name="Heuristics").click()
    sync_api.expect(app.locator(".wb-verdict")).to_be_visible(timeout=TIMEOUT)
    page.wait_for_timeout(500)
    app.get_by_role("tab", name="Brief").click()
    assert page.evaluate("() => window.__xss === undefined"), "an injected script or handler ran"
    for live in ("img", "script", "iframe", "svg[onload]", "a[href^='javascript']", "a[href^='data']"):
        assert page.locator(f".wb-app {live}").count() == 0, live
    assert not dialogs, f"a dialog fired: {dialogs}"
    assert no_news_toast(page), "JupyterLab asks about Jupyter news over the app"

    # 2. j moves the queue, not JupyterLab's active cell.
    header.click()  # JupyterLab makes the app's cell active; the app takes the keyboard focus
    active_before = _active_cell(page)
    page.keyboard.press("j")
    _pos_is(pos, "2 / 4")
    assert _active_cell(page) == active_before

    # 3. j and k still work after clicking Next / Prev (the button kept the focus, or lost it to <body>).
    app.get_by_role("button", name="Next").click()
    _pos_is(pos, "3 / 4")
    page.keyboard.press("k")
    _pos_is(pos, "2 / 4")
    app.get_by_role("button", name="Prev").click()  # the first PR: Prev is now disabled
    _pos_is(pos, "1 / 4")
    page.keyboard.press("j")
    _pos_is(pos, "2 / 4")
    assert _active_cell(page) == active_before

    # 4. Enter in the "PR #" box jumps.
    jump = app.locator(".widget-inline-hbox", has_text="PR #").locator("input")
    jump.fill("2")
    jump.press("Enter")
    _pos_is(pos, "3 / 4")
    sync_api.expect(header).to_contain_text("#2", timeout=TIMEOUT)

    # 5. Type a brief, in Chinese too: it autosaves, and is drawn with a real CJK font, not boxes.
    editor = app.locator(".widget-textarea textarea").first
    editor.click()
    editor.press_sequentially("# Bump the CI runner\n\nSkim: only `ci.yml` changes. 中文简报。", delay=10)
    sync_api.expect(app.locator(".wb-status-ok").first).to_contain_text("saved v1", timeout=TIMEOUT)
    glyphs = editor.evaluate(_GLYPHS_DIFFER)
    assert glyphs["inked"] and glyphs["differ"], f"Chinese shows as boxes in {glyphs['font']!r}: no CJK font"
    # ... and after typing, Escape hands the keyboard back to the app: j/k move the queue again.
    editor.press("Escape")
    page.keyboard.press("j")
    _pos_is(pos, "4 / 4")
    page.keyboard.press("k")
    _pos_is(pos, "3 / 4")
    sync_api.expect(header).to_contain_text("#2", timeout=TIMEOUT)

    # 6. Export this PR and read the file.
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
    assert "Bump the CI runner" in text and "`ci.yml`" in text and "中文简报" in text
    rel = files[0].relative_to(lab.root).as_posix()

    # 7. The export pane's "open" link opens the file in JupyterLab, beside the notebook ...
    link = app.get_by_role("link", name="open", exact=True)
    link.click()
    page.wait_for_function(
        "(p) => { const w = window.jupyterapp.shell.currentWidget; return w && w.context && w.context.path === p; }",
        arg=rel,
        timeout=TIMEOUT,
    )
    sync_api.expect(page.locator(".jp-MainAreaWidget:visible .cm-content").first).to_contain_text(
        "Bump the CI runner", timeout=TIMEOUT
    )
    # ... or, where the page does not expose the app, in a new JupyterLab tab on the file (not a blank page).
    page.evaluate("() => { window.__app = window.jupyterapp; window.jupyterapp = undefined; }")
    page.evaluate(
        "() => { const nb = [...window.__app.shell.widgets('main')].find(w => w.context && w.context.path.endsWith('.ipynb'));"
        " window.__app.shell.activateById(nb.id); }"
    )
    with page.expect_popup() as popup_info:
        app.get_by_role("link", name="open", exact=True).click()
    popup = popup_info.value
    assert popup.url.split("?")[0].endswith(f"/lab/tree/{rel}"), popup.url
    sync_api.expect(popup.locator(".cm-content").first).to_contain_text("Bump the CI runner", timeout=120_000)
    popup.close()
    assert not dialogs and page.evaluate("() => window.__xss === undefined")
