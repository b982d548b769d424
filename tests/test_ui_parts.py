"""The plain functions behind the review app's panels, without widgets or a cache."""

from __future__ import annotations

import time
from types import SimpleNamespace

from workbench.ui.brief_editor import brief_state_text, is_human_text, pick_version
from workbench.ui.diff_pane import LazyFiles, files_info_html, pages_of
from workbench.ui.drafts import Throttle
from workbench.ui.export_panel import JupyterServer, export_link_html, jupyter_server


def test_a_machine_draft_replaces_only_machine_or_empty_text():
    drafted = {"loaded_text": "draft", "loaded_source": "offline", "pending": False}
    assert not is_human_text("draft", **drafted)  # untouched machine draft
    assert not is_human_text("  \n", **{**drafted, "pending": True})  # blank is never a person's words
    assert is_human_text("draft, edited", **drafted)
    assert is_human_text("draft", **{**drafted, "pending": True})  # typed, then typed back, not yet saved
    assert is_human_text("mine", loaded_text="mine", loaded_source="human", pending=False)


def test_pick_version_defaults_to_the_newest_machine_draft():
    vs = [SimpleNamespace(version=i, source=s) for i, s in enumerate(["offline", "human", "llm", "human"], 1)]
    assert pick_version(vs, None).version == 3 and pick_version(vs, "2").version == 2
    assert pick_version(vs, 9) is None and pick_version(vs[1:2], None) is None


def test_brief_state_text():
    assert brief_state_text(None, None, False).startswith("no brief yet")
    assert brief_state_text(3, "human", True) == "brief v3 (human, final)"
    assert brief_state_text(1, None, False) == "brief v1 (?)"


def test_files_info_pages_and_truncation():
    raw = [{"filename": f"f{i}", "additions": 2, "deletions": 1} for i in range(120)]
    assert pages_of(120, 50) == 3 and pages_of(0, 50) == 1
    info = files_info_html(raw, page=2, page_size=50, truncated=True)
    assert info.startswith("<b>120 files</b> +240 −120") and "files 101–120 (page 3 / 3)" in info
    assert "first 3,000 files" in info
    assert "page" not in files_info_html(raw[:5], page=0, page_size=50, truncated=False)
    assert "no files cached" in files_info_html([], page=0, page_size=50, truncated=False)


def test_lazy_files_parse_only_what_is_read():
    seen = []
    files = LazyFiles([{"n": i} for i in range(1000)], lambda f: seen.append(f["n"]) or f["n"] * 2)
    assert files[10:13] == [20, 22, 24] and files[-1] == 1998 and files[10] == 20
    assert seen == [10, 11, 12, 999]


def test_throttle_pushes_at_most_every_interval_and_restarts_on_retry():
    pushed = []
    t = Throttle(pushed.append, interval=0.2)
    t("a")
    t("b")  # within the interval: collected, not pushed
    time.sleep(0.25)
    t("c")
    t("")  # the drafter retried: the text starts over
    time.sleep(0.25)
    t("x")
    assert pushed == ["a", "abc", "x"]


def test_export_link_is_jupyterlabs_url_of_the_file_and_is_escaped(tmp_path):
    server = JupyterServer(tmp_path, "/prefix/")
    html = export_link_html(tmp_path / "out" / "d<1> x.md", "digest <of> 3", server)
    assert 'data-wb-open="out/d&lt;1&gt; x.md"' in html and "digest &lt;of&gt; 3: <code>" in html
    # JupyterLab's URL of the file, not a path relative to the notebook (that landed on a blank page)
    assert 'href="/prefix/lab/tree/out/d%3C1%3E%20x.md"' in html
    assert "<1>" not in html and "<of>" not in html


def test_export_link_outside_the_root_or_outside_jupyter_is_only_text(tmp_path):
    outside = export_link_html(tmp_path / "x.md", "PR", JupyterServer(tmp_path / "root", "/"))
    assert "<a " not in outside and "outside the Jupyter root" in outside
    assert "<a " not in export_link_html(tmp_path / "x.md", "PR", None)


def test_jupyter_server_from_its_runtime_file_or_the_session_name(tmp_path, monkeypatch):
    import json
    import os

    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path / "rt"))
    nb_dir = tmp_path / "notebooks" / "sub"
    nb_dir.mkdir(parents=True)
    # an older server: JPY_SESSION_NAME is the notebook's path under the root
    env = {"JPY_SESSION_NAME": "notebooks/sub/review.ipynb"}
    assert jupyter_server(env, cwd=str(nb_dir)) == JupyterServer(tmp_path.resolve(), "/")
    assert jupyter_server({"JPY_SESSION_NAME": "review.ipynb"}, cwd=str(nb_dir)).root == nb_dir.resolve()
    assert jupyter_server({}, cwd=str(nb_dir)) is None  # a plain Python process: no server
    assert jupyter_server({"JPY_SESSION_NAME": "/abs/review.ipynb"}, cwd=str(nb_dir)) is None
    # the server that started this process wrote jpserver-<its pid>.json (jupyter_server 2 does)
    (tmp_path / "rt").mkdir()
    info = {"root_dir": str(tmp_path / "served"), "base_url": "/base/", "token": "not read"}
    (tmp_path / "rt" / f"jpserver-{os.getppid()}.json").write_text(json.dumps(info))
    assert jupyter_server({}, cwd=str(nb_dir)) == JupyterServer(tmp_path / "served", "/base/")
