"""Every notebook in notebooks/ runs headless in a real kernel (nbclient) on a temp cache holding the sample.

The cache is handed over the way a user would: WORKBENCH_CACHE in the kernel's environment. A fake GitHub
token is set too, and must appear in no output.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
SECRET = "ghp_notebooktestsecret0123456789"

nbclient = pytest.importorskip("nbclient")


@pytest.fixture(scope="module")
def sample_cache(tmp_path_factory):
    from workbench.sources.sample import load_sample
    from workbench.store import Store

    path = tmp_path_factory.mktemp("nbcache") / "cache"
    store = Store(path)
    load_sample(store)
    store.close()
    return path


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_runs_on_the_sample(path, sample_cache, tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_CACHE", str(sample_cache))
    monkeypatch.setenv("WORKBENCH_EXPORTS", str(tmp_path / "exports"))
    monkeypatch.setenv("GITHUB_TOKEN", SECRET)
    monkeypatch.delenv("WORKBENCH_MODEL", raising=False)
    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        nb,
        timeout=180,
        startup_timeout=120,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
    )
    client.execute(env=dict(os.environ))
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    errors = [o for o in outputs if o.get("output_type") == "error"]
    assert not errors, errors[0].get("traceback") if errors else ""
    dumped = json.dumps(outputs)
    assert SECRET not in dumped
    if path.name == "review.ipynb":
        views = [o for o in outputs if "application/vnd.jupyter.widget-view+json" in o.get("data", {})]
        assert views, "the review notebook showed no app"
        state = (
            nb.metadata.get("widgets", {})
            .get("application/vnd.jupyter.widget-state+json", {})
            .get("state", {})
        )
        values = " ".join(str(m.get("state", {}).get("value", "")) for m in state.values())
        if state:  # nbclient stores the widget state: the app loaded the sample's first PR
            assert "example-org/minirl" in values and " / " in values
