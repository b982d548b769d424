"""The trends widgets app (driven through its widgets) and notebooks/trends.ipynb executed headless."""

from __future__ import annotations

import datetime as dt
import importlib
import re
from pathlib import Path

import pytest
from trends_data import FACTS_REPO, REPO, make_store

from workbench.config import WorkbenchError
from workbench.store import Store
from workbench.ui.trends_app import TrendsApp

NOTEBOOK = Path(__file__).resolve().parents[1] / "notebooks" / "trends.ipynb"


@pytest.fixture()
def store(tmp_path):
    s = make_store(tmp_path)
    yield s
    s.close()


def test_filters_narrow_the_charts(store):
    app = TrendsApp(store, REPO, verdicts=False)
    assert set(app.figures) == set(app.charts.value) and len(app.figures) == 11
    assert set(app.areas.options) == {"rollout", "trainer", "doc"}
    app.areas.value = ("rollout",)
    assert sorted(app.view().prs["number"]) == [2, 5, 7]
    assert "3 of 7 PRs" in app.status.value
    bars = {t.name: list(t.y) for t in app.figures["merged_per_week"].data}
    assert set(bars) == {"rollout"}
    app.kinds.value = ("fix",)
    app.start.value, app.end.value = dt.date(2024, 1, 8), dt.date(2024, 1, 8)
    assert sorted(app.view().prs["number"]) == [2]
    app.reset.click()
    assert len(app.view().prs) == 7 and app.areas.value == () and app.start.value is None


def test_chart_choice_and_repository_switch(store):
    app = TrendsApp(store, REPO, charts=["size_by_kind"], verdicts=False)
    assert list(app.figures) == ["size_by_kind"]
    app.charts.value = ("reviewer_load", "time_to_merge")
    assert set(app.figures) == {"reviewer_load", "time_to_merge"}
    app.repo.value = FACTS_REPO
    assert "6 of 6 PRs" in app.status.value
    assert "no reviews" in app.figures["reviewer_load"].layout.meta["lacks"]
    assert "rollout" in app.areas.options


def test_summary_escapes_and_unknown_repo_is_refused(store):
    app = TrendsApp(store, REPO, verdicts=False)
    assert "83%" in app.summary.value and "24.0 h" in app.summary.value
    with pytest.raises(WorkbenchError, match="not in the cache"):
        TrendsApp(store, "nobody/none")


def test_empty_cache_is_refused(tmp_path):
    with pytest.raises(WorkbenchError, match="no repository"):
        TrendsApp(Store(tmp_path))


def _load_sample(cache: Path) -> str:
    """The bundled sample when its loader exists, else the hand-made history."""
    store = Store(cache)
    try:
        try:
            sample = importlib.import_module("workbench.sources.sample")
        except ImportError:
            sample = None
        if sample is not None and hasattr(sample, "load_sample"):
            sample.load_sample(store, include_verl=False)
            return "example-org/minirl"
        store.close()
        make_store(cache, facts=False).close()
        return REPO
    finally:
        store.close()


@pytest.mark.slow
def test_notebook_executes_headless(tmp_path, monkeypatch):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    cache = tmp_path / "cache"
    repo = _load_sample(cache)
    monkeypatch.setenv("WORKBENCH_CACHE", str(cache))
    nb = nbformat.read(NOTEBOOK, as_version=4)
    assert not any(c.get("outputs") for c in nb.cells if c.cell_type == "code")  # committed clean
    idx = next(i for i, c in enumerate(nb.cells) if "parameters" in c.metadata.get("tags", []))
    nb.cells.insert(idx + 1, nbformat.v4.new_code_cell(f"repo = {repo!r}"))  # as papermill would
    client = nbclient.NotebookClient(
        nb, kernel_name="python3", timeout=180, resources={"metadata": {"path": str(NOTEBOOK.parent)}}
    )
    client.execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    errors = [o for o in outputs if o.get("output_type") == "error"]
    assert not errors, errors[0].get("evalue")
    assert any("application/vnd.jupyter.widget-view+json" in o.get("data", {}) for o in outputs)
    texts = "\n".join(o.get("data", {}).get("text/plain", "") for o in outputs)
    assert re.search(r"^prs +\d+$", texts, re.M) and "Name: summary" in texts and repo in texts
    # The charts live in the Output widgets' state, as plotly bundles (no figure leaked into the cell).
    state = nb.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    charts = [
        o
        for m in state.values()
        if m.get("model_name") == "OutputModel"
        for o in m["state"].get("outputs", [])
    ]
    assert len(charts) == 11
    assert all("application/vnd.plotly.v1+json" in o["data"] for o in charts)
    assert not any("application/vnd.plotly.v1+json" in o.get("data", {}) for o in outputs)
