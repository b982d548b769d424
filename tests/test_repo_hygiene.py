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


def _committed_text(path: Path) -> str:
    """What git holds for `path` (the index: what the next commit records, after the strip filter);
    a notebook just run in JupyterLab has outputs on disk, and that is fine while the filter cleans them."""
    try:
        rel = path.relative_to(ROOT).as_posix()
        return subprocess.run(
            ["git", "show", f":{rel}"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return path.read_text(encoding="utf-8")


def _dirt(nb: dict) -> list[str]:
    found = [
        f"cell {i}: outputs or execution count"
        for i, c in enumerate(nb["cells"])
        if c["cell_type"] == "code" and (c.get("outputs") or c.get("execution_count"))
    ]
    if "widgets" in nb.get("metadata", {}):
        found.append("notebook metadata: widget state")
    return found


@pytest.mark.parametrize("path", _tracked_notebooks(), ids=lambda p: p.name)
def test_notebook_committed_without_outputs(path: Path):
    dirty = _dirt(json.loads(_committed_text(path)))
    assert not dirty, (
        f"{path.name}: {'; '.join(dirty)}; strip them (nbstripout {path.relative_to(ROOT)}) and configure "
        f"the filter once per clone: nbstripout --install"
    )


def test_gitattributes_route_notebooks_through_the_strip_filter():
    lines = (ROOT / ".gitattributes").read_text(encoding="utf-8").splitlines()
    assert "*.ipynb filter=nbstripout" in lines


@pytest.mark.skipif(shutil.which("nbstripout") is None, reason="needs nbstripout (pip install -e '.[test]')")
@pytest.mark.parametrize("path", _tracked_notebooks(), ids=lambda p: p.name)
def test_the_filter_turns_a_used_notebook_back_into_the_committed_one(path: Path, tmp_path: Path):
    """Run-like dirt (outputs, counts, widget state) in, the committed notebook out: the filter the README
    documents keeps the committed notebooks clean after use."""
    committed = json.loads(_committed_text(path))
    used = json.loads(json.dumps(committed))
    for i, cell in enumerate(c for c in used["cells"] if c["cell_type"] == "code"):
        cell["execution_count"] = i + 1
        cell["outputs"] = [{"output_type": "stream", "name": "stdout", "text": ["ran\n"]}]
    used["metadata"]["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": {}}}
    copy = tmp_path / path.name
    copy.write_text(json.dumps(used, indent=1), encoding="utf-8")
    r = subprocess.run(["nbstripout", str(copy)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    stripped = json.loads(copy.read_text(encoding="utf-8"))
    assert not _dirt(stripped)
    assert _cells(stripped) == _cells(committed)


def _cells(nb: dict) -> list[tuple]:
    """What a reader sees of each cell (sources may be stored as one string or a list of lines)."""
    text = lambda s: s if isinstance(s, str) else "".join(s)  # noqa: E731
    return [(c["cell_type"], text(c["source"]), c.get("metadata", {})) for c in nb["cells"]]


def test_notebooks_have_parameters_cell():
    for path in _tracked_notebooks():
        nb = json.loads(_committed_text(path))
        tags = [t for c in nb["cells"] for t in c.get("metadata", {}).get("tags", [])]
        assert "parameters" in tags, f"{path.name} has no cell tagged 'parameters'"
