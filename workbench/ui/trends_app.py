"""Trends in a notebook: filters (repository, date range, area, kind, charts) over the trend figures.

All the work is in `workbench.trends`; this only holds widgets. Figures are plain `go.Figure`s
shown in `Output` widgets (a `FigureWidget` adds megabytes to the notebook per chart). State lives
on the object (`.data`, `.view()`, `.figures`) so tests drive it without a browser.
"""

from __future__ import annotations

import html
from typing import Any

import ipywidgets as widgets
from IPython import get_ipython
from IPython.display import display

from ..config import WorkbenchError
from ..trends import TrendData, load_trend_data, summary
from ..trends.figures import FIGURES

CHART_LABELS = {
    "merged_per_week": "Merged per week by area",
    "size_by_kind": "Size by kind",
    "size_buckets": "Size buckets",
    "time_to_merge": "Time to merge",
    "time_to_first_review": "Time to first review",
    "open_pr_age": "Open PR age",
    "churn_heatmap": "Churn heatmap",
    "reverts_breaking": "Reverts and breaking changes",
    "verdict_mix": "Verdicts and briefs",
    "reviewer_load": "Reviewer load",
    "path_treemap": "Most-changed paths",
}


class TrendsApp:
    """`TrendsApp(store, repo).widget` in a cell; change a filter and the charts redraw."""

    def __init__(
        self, store: Any, repo: str | None = None, *, charts: list[str] | None = None, verdicts: bool = True
    ):
        self.store = store
        self.verdicts = verdicts
        repos = list(store.repos()["full_name"])
        if not repos:
            raise WorkbenchError(
                f"the cache {store.path} holds no repository: run `workbench sample` or `workbench sync`"
            )
        if repo is not None and repo not in repos:
            raise WorkbenchError(f"repository {repo} is not in the cache (cached: {', '.join(repos)})")
        self.data: TrendData | None = None
        self.figures: dict[str, Any] = {}
        self._busy = False

        style = {"description_width": "80px"}
        self.repo = widgets.Dropdown(
            options=repos, value=repo or repos[0], description="Repository", style=style
        )
        self.start = widgets.DatePicker(description="From", style=style)
        self.end = widgets.DatePicker(description="To", style=style)
        self.areas = widgets.SelectMultiple(description="Areas", rows=6, style=style)
        self.kinds = widgets.SelectMultiple(description="Kinds", rows=6, style=style)
        self.charts = widgets.SelectMultiple(
            options=[(CHART_LABELS.get(n, n), n) for n in FIGURES],
            value=tuple(charts or FIGURES),
            description="Charts",
            rows=6,
            style=style,
        )
        self.reset = widgets.Button(description="Clear filters", icon="times")
        self.status = widgets.HTML()
        self.summary = widgets.HTML()
        self.outputs = {name: widgets.Output() for name in FIGURES}
        self.widget = widgets.VBox(
            [
                widgets.HBox([self.repo, self.start, self.end, self.reset]),
                widgets.HBox([self.areas, self.kinds, self.charts]),
                self.status,
                self.summary,
                *self.outputs.values(),
            ]
        )
        self.widget.add_class("wb-trends")  # a handle for browser tests and styling
        self.repo.observe(lambda _: self.load(), names="value")
        for w in (self.start, self.end, self.areas, self.kinds, self.charts):
            w.observe(lambda _: self.refresh(), names="value")
        self.reset.on_click(lambda _: self.clear_filters())
        self.load()

    # ---- state ------------------------------------------------------------------------------------
    def load(self) -> None:
        """Read the selected repository's frames from the cache and reset the filter choices."""
        try:
            self.data = load_trend_data(self.store, self.repo.value, verdicts=self.verdicts)
        except WorkbenchError as e:
            self._say(str(e), error=True)
            return
        self._busy = True  # one redraw for the whole reset, not one per widget
        try:
            self.areas.options = self.data.areas
            self.kinds.options = self.data.kinds
            self.areas.value = ()
            self.kinds.value = ()
            self.start.value = None
            self.end.value = None
        finally:
            self._busy = False
        self.refresh()

    def clear_filters(self) -> None:
        self._busy = True
        try:
            self.areas.value, self.kinds.value, self.start.value, self.end.value = (), (), None, None
        finally:
            self._busy = False
        self.refresh()

    def view(self) -> TrendData:
        """The loaded data narrowed by the filters."""
        if self.data is None:
            raise WorkbenchError("no data loaded: pick a repository that is in the cache")
        return self.data.filter(
            start=self.start.value,
            end=self.end.value,
            areas=self.areas.value or None,
            kinds=self.kinds.value or None,
        )

    # ---- drawing ----------------------------------------------------------------------------------
    def refresh(self) -> None:
        if self._busy or self.data is None:
            return
        try:
            view = self.view()
        except WorkbenchError as e:
            self._say(str(e), error=True)
            return
        self.figures = {name: FIGURES[name](view) for name in self.charts.value}
        self.summary.value = _summary_html(view)
        lacking = [n for n, f in self.figures.items() if (f.layout.meta or {}).get("lacks")]
        self._say(
            f"{len(view.prs):,} of {len(self.data.prs):,} PRs · {len(self.figures)} charts"
            + (f" · {len(lacking)} say what the data lacks" if lacking else "")
        )
        if get_ipython() is None:  # a plain script or test: state is enough, printing reprs is not
            return
        for name, out in self.outputs.items():
            # Set the widget's outputs directly rather than capturing a display(): no dependence on
            # which cell is executing (callbacks run outside any), and headless runners do not stall.
            out.outputs = (_figure_output(self.figures[name]),) if name in self.figures else ()

    def _say(self, text: str, *, error: bool = False) -> None:
        color = "#b00" if error else "#555"
        self.status.value = f'<span style="color:{color}">{html.escape(text)}</span>'

    def _ipython_display_(self) -> None:
        display(self.widget)


def _figure_output(fig: Any) -> dict:
    """A display_data output for an Output widget. `append_display_data(fig)` would not do: plotly's
    `_ipython_display_` makes IPython's formatter print the figure into the cell and return nothing."""
    bundle = dict(fig._repr_mimebundle_())  # the current plotly renderer's bundle
    title = fig.layout.title.text or "plotly figure"
    bundle.setdefault("text/plain", f"<{html.unescape(title)}>")
    return {"output_type": "display_data", "data": bundle, "metadata": {}}


def _summary_html(view: TrendData) -> str:
    s = summary(view)

    def hours(h: float | None) -> str:
        return "n/a" if h is None else (f"{h:.1f} h" if h < 48 else f"{h / 24:.1f} d")

    ratio = "n/a" if s.acceptance_ratio is None else f"{s.acceptance_ratio:.0%}"
    per_week = "n/a" if s.merged_per_week is None else f"{s.merged_per_week:.1f}"
    cells = [
        ("merged / week", per_week),
        ("acceptance", ratio),
        ("median time to merge", hours(s.median_change_request_duration_h)),
        ("median first response", hours(s.median_time_to_first_response_h)),
        ("open", f"{s.open:,}"),
        ("reverts / breaking", f"{s.reverts} / {s.breaking}"),
        ("briefs", f"{s.briefs:,}"),
    ]
    return " · ".join(f"<b>{html.escape(v)}</b> {html.escape(k)}" for k, v in cells)


def trends_app(store: Any = None, repo: str | None = None, **kw: Any) -> TrendsApp:
    """Notebook entry point: `trends_app()` opens the default cache."""
    if store is None:
        from ..store import open_cache

        store = open_cache()
    return TrendsApp(store, repo, **kw)
