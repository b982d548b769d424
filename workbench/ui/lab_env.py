"""The environment for JupyterLab servers the workbench starts (`workbench demo`, the browser tests).

JupyterLab's announcements plugin asks "Would you like to get notified about official Jupyter news?" in a
toast whenever the notification setting `fetchNews` is "none" (its default), even with
`--LabApp.news_url=None`. The workbench is offline by design, so its servers default `fetchNews` to
"false" (and update checks off) through jupyter_config/labconfig/default_setting_overrides.json, put first
on JUPYTER_CONFIG_PATH. A default, not a lock: the user's own settings still win, and nothing is written
to their configuration.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

CONFIG_DIR = Path(__file__).with_name("jupyter_config")


def lab_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """`env` (default: os.environ) with the workbench's Jupyter config directory on JUPYTER_CONFIG_PATH."""
    env = dict(os.environ if env is None else env)
    rest = [p for p in env.get("JUPYTER_CONFIG_PATH", "").split(os.pathsep) if p]
    env["JUPYTER_CONFIG_PATH"] = os.pathsep.join([str(CONFIG_DIR), *rest])
    return env
