"""The JupyterLab servers the workbench starts do not ask about Jupyter news (an offline tool has no use
for the toast, and it covers the app), while a plain server still would."""

from __future__ import annotations

import json
import os
import urllib.request

import pytest
from jupyter_server_helper import start_lab

from workbench.ui.lab_env import CONFIG_DIR, lab_env

NOTIFICATION = "@jupyterlab/apputils-extension:notification"


def test_lab_env_puts_the_config_dir_first_and_keeps_the_rest():
    env = lab_env({"JUPYTER_CONFIG_PATH": os.pathsep.join(["/a", "/b"]), "X": "1"})
    assert env["JUPYTER_CONFIG_PATH"].split(os.pathsep) == [str(CONFIG_DIR), "/a", "/b"] and env["X"] == "1"
    assert lab_env({})["JUPYTER_CONFIG_PATH"] == str(CONFIG_DIR)
    overrides = json.loads((CONFIG_DIR / "labconfig" / "default_setting_overrides.json").read_text())
    assert overrides[NOTIFICATION]["fetchNews"] == "false"


@pytest.mark.browser  # starts a real jupyter lab (no browser, but as slow as one to start)
def test_started_lab_defaults_fetch_news_to_false(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    lab = start_lab(root, {"JUPYTER_CONFIG_DIR": str(tmp_path / "jcfg")}, tmp_path / "lab.log")
    try:
        with urllib.request.urlopen(lab.url(f"lab/api/settings/{NOTIFICATION}"), timeout=30) as r:
            setting = json.load(r)
    finally:
        lab.stop()
    # The overrides become the schema's defaults (the user's own settings, empty here, would win).
    # JupyterLab's own default is "none", which makes its announcements plugin ask; "false": never ask.
    defaults = {k: v.get("default") for k, v in setting["schema"]["properties"].items()}
    assert setting["settings"] == {} and defaults["fetchNews"] == "false", defaults
    assert defaults["checkForUpdates"] is False
