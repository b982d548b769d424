"""The test command also lints: ruff (lint and format) and notebooks committed without outputs."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _ruff(*args: str) -> subprocess.CompletedProcess:
    exe = shutil.which("ruff")
    cmd = [exe] if exe else [sys.executable, "-m", "ruff"]
    return subprocess.run([*cmd, *args], cwd=ROOT, capture_output=True, text=True)


def test_ruff_lint_is_clean():
    r = _ruff("check", ".")
    assert r.returncode == 0, r.stdout + r.stderr


def test_ruff_format_is_clean():
    r = _ruff("format", "--check", ".")
    assert r.returncode == 0, r.stdout + r.stderr


def _tracked_notebooks() -> list[Path]:
    try:
        out = subprocess.run(
            ["git", "ls-files", "*.ipynb"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout
        return [ROOT / line for line in out.splitlines() if line]
    except (OSError, subprocess.CalledProcessError):  # not a git checkout: check what is on disk
        return sorted((ROOT / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("path", _tracked_notebooks(), ids=lambda p: p.name)
def test_notebook_committed_without_outputs(path: Path):
    nb = json.loads(path.read_text())
    dirty = [
        i
        for i, c in enumerate(nb["cells"])
        if c["cell_type"] == "code" and (c.get("outputs") or c.get("execution_count"))
    ]
    assert not dirty, (
        f"{path.name}: cells {dirty} have outputs or execution counts; strip them (nbstripout {path})"
    )


def test_notebooks_have_parameters_cell():
    for path in _tracked_notebooks():
        nb = json.loads(path.read_text())
        tags = [t for c in nb["cells"] for t in c.get("metadata", {}).get("tags", [])]
        assert "parameters" in tags, f"{path.name} has no cell tagged 'parameters'"
