"""Trend figures: one plotly `go.Figure` per question, drawn from `TrendData`.

Rules every figure follows: axis titles always (a treemap has no axes and says what its areas mean
in its title instead); `layout.meta["chart"]` names the chart; when the data lacks what a chart
needs, the figure carries a centred annotation saying so and `layout.meta["lacks"]` holds the same
sentence, instead of drawing zeros that look like facts. Text that came from GitHub (titles, paths,
logins) is HTML-escaped: plotly renders a subset of HTML (`<a href>`, `<br>`) in labels.
"""

from __future__ import annotations

import html
from collections.abc import Callable

import numpy as np
import pandas as pd
import plotly.colors as pc
import plotly.graph_objects as go

from . import frames as F
from .frames import SIZE_EDGES, SIZE_LABELS, TrendData

_AXIS = dict(
    gridcolor="#EBF0F8", linecolor="#EBF0F8", zerolinecolor="#EBF0F8", zerolinewidth=2, ticks="",
    automargin=True, title=dict(standoff=15),
)  # fmt: skip
# plotly_white's look in a few lines: the full template (defaults for every trace type) costs ~6 ms
# to validate per figure, a third of the time the whole chart set takes.
TEMPLATE = go.layout.Template(
    layout=dict(
        plot_bgcolor="white", paper_bgcolor="white", colorway=pc.qualitative.Plotly, font=dict(color="#2a3f5f"),
        xaxis=_AXIS, yaxis=_AXIS, hovermode="closest", title=dict(x=0.05),
    )
)  # fmt: skip
VERDICT_COLORS = {"deep": "#d62728", "skim": "#ff7f0e", "skip": "#2ca02c"}
STATE_COLORS = {
    "APPROVED": "#2ca02c",
    "CHANGES_REQUESTED": "#d62728",
    "COMMENTED": "#7f7f7f",
    "DISMISSED": "#bcbd22",
}


def esc(text: object) -> str:
    return html.escape(str(text), quote=False)


def _base(chart: str, title: str, x: str, y: str, **layout) -> go.Figure:
    fig = go.Figure()
    fig.update_layout(
        title=dict(text=esc(title)),
        template=TEMPLATE,
        xaxis_title=x,
        yaxis_title=y,
        meta={"chart": chart},
        margin=dict(l=70, r=30, t=70, b=60),
        legend=dict(traceorder="normal"),
        **layout,
    )
    return fig


def lacking(chart: str, title: str, x: str, y: str, message: str) -> go.Figure:
    """An empty chart that says why it is empty."""
    fig = _base(chart, title, x, y)
    fig.update_layout(meta={"chart": chart, "lacks": message})
    fig.add_annotation(
        text=_wrap(esc(message)),
        xref="paper",
        yref="paper",
        x=0.5,
        y=0.5,
        showarrow=False,
        font=dict(size=14, color="#555"),
        align="center",
    )
    fig.update_xaxes(showticklabels=False, showgrid=False, zeroline=False)
    fig.update_yaxes(showticklabels=False, showgrid=False, zeroline=False)
    return fig


def _wrap(text: str, width: int = 70) -> str:
    lines, line = [], ""
    for word in text.split():
        if line and len(line) + len(word) + 1 > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}".strip()
    lines.append(line)
    return "<br>".join(lines)


def _whole_counts(fig: go.Figure, peak: float, axis: str = "y") -> None:
    """Counts are whole numbers: no 0.5 ticks on a small chart."""
    update = fig.update_yaxes if axis == "y" else fig.update_xaxes
    update(rangemode="tozero", **({"dtick": 1} if peak <= 8 else {}))


WEEK_MS = 7 * 24 * 3600 * 1000
FEW_WEEKS = 12


def _week_ticks(fig: go.Figure, weeks: pd.Index) -> None:
    """A tick per week, labelled by its Monday, on a short selection: left alone, plotly zooms a date
    axis holding one or two weeks in to hours (`00:00:00 Aug 10, 2026`). Longer ones keep plotly's
    month ticks."""
    if 0 < len(weeks) <= FEW_WEEKS:
        fig.update_xaxes(tick0=weeks[0], dtick=WEEK_MS, tickformat="%b %d<br>%Y")


def _no_weeks(data: TrendData) -> str:
    return (
        f"No complete week between {_d(data.start)} and {_d(data.as_of)}: partial weeks are left out "
        "so that a half-observed week does not look like a slump."
    )


def _d(ts) -> str:
    return ts.strftime("%Y-%m-%d") if ts is not None and not pd.isna(ts) else "?"


# ---- the charts ---------------------------------------------------------------------------------------


def merged_per_week(data: TrendData, *, top: int = 8) -> go.Figure:
    chart, title = "merged_per_week", "Merged PRs per week by area"
    x, y = "Week (Monday, UTC; partial weeks excluded)", "Merged PRs"
    table = F.weekly_by(data, "area", top=top)
    if len(table.index) == 0:
        return lacking(chart, title, x, y, _no_weeks(data))
    if table.empty or table.to_numpy().sum() == 0:
        return lacking(chart, title, x, y, "No PR was merged in the complete weeks of this selection.")
    fig = _base(chart, title, x, y, barmode="stack")
    for area in table.columns:
        color = "#c7c7c7" if area == "other" else None  # the catch-all should not compete with real areas
        fig.add_bar(x=table.index, y=table[area], name=esc(area), marker_color=color)
    _whole_counts(fig, table.sum(axis=1).max())
    _week_ticks(fig, table.index)
    return fig


def size_by_kind(data: TrendData) -> go.Figure:
    chart, title = "size_by_kind", "PR size by kind (changed lines, log scale)"
    x, y = "Kind (from the title)", "Changed lines (added + deleted)"
    p = data.prs[data.prs["lines"].notna()]
    if p.empty:
        return lacking(chart, title, x, y, "The data has no line counts for these PRs.")
    fig = _base(chart, title, x, y)
    order = p["kind"].value_counts().index
    for kind in order:
        sub = p[p["kind"] == kind]
        fig.add_box(
            y=sub["lines"].clip(lower=1),  # a log axis cannot show 0: an empty PR is drawn at 1 line
            name=f"{esc(kind)} ({len(sub)})",
            boxpoints="outliers",
            text=[f"#{n}" for n in sub["number"]],
            hovertemplate="%{text}: %{y} lines<extra></extra>",
        )
    fig.update_yaxes(type="log")
    for label, edge in zip(SIZE_LABELS[1:], SIZE_EDGES, strict=True):
        fig.add_hline(y=edge, line=dict(dash="dot", width=1, color="#999"))
        fig.add_annotation(
            text=f"{label} ≥{edge}", xref="paper", x=1.0, y=np.log10(edge), yref="y",
            showarrow=False, xanchor="left", font=dict(size=10, color="#777"),
        )  # fmt: skip
    fig.update_layout(showlegend=False, margin=dict(r=80))
    return fig


def size_buckets(data: TrendData) -> go.Figure:
    """Counts per size bucket, stacked by kind (the bucket view of the same question)."""
    chart, title = "size_buckets", "PRs per size bucket by kind"
    x, y = "Size (XS <10, S <30, M <100, L <500, XL <1000, XXL ≥1000 changed lines)", "PRs"
    p = data.prs[data.prs["size"].notna()]
    if p.empty:
        return lacking(chart, title, x, y, "The data has no line counts for these PRs.")
    table = pd.crosstab(p["size"], F.top_values(p["kind"], 6)).reindex(list(SIZE_LABELS), fill_value=0)
    fig = _base(chart, title, x, y, barmode="stack")
    for kind in table.sum().sort_values(ascending=False).index:
        fig.add_bar(x=list(table.index), y=table[kind], name=esc(kind))
    _whole_counts(fig, table.sum(axis=1).max())
    return fig


def _ecdf(fig: go.Figure, values: pd.Series, name: str) -> None:
    v = np.sort(values.dropna().to_numpy(dtype=float))
    if len(v) == 0:
        return
    frac = np.arange(1, len(v) + 1) / len(v)
    fig.add_scatter(
        x=np.maximum(v, 0.01), y=frac, mode="lines", line_shape="hv", name=f"{esc(name)} (n={len(v)})",
        hovertemplate="%{x:.1f} h: %{y:.0%}<extra></extra>",
    )  # fmt: skip


def _duration_ecdf(
    data: TrendData, chart: str, title: str, column: str, needs: tuple[str, ...], top: int = 6
):
    x, y = "Hours (log scale)", "Share of PRs at or below (ECDF)"
    for need in needs:
        if data.lacks.get(need):
            return lacking(chart, title, x, y, data.lacks[need])
    p = data.prs[data.prs[column].notna()]
    if p.empty:
        what = (
            "merged PRs with a creation time"
            if column == "time_to_merge_h"
            else "PRs reviewed by someone other than the author"
        )
        return lacking(chart, title, x, y, f"No {what} in this selection.")
    fig = _base(chart, title, x, y)
    _ecdf(fig, p[column], "all areas")
    for area in p["area"].value_counts().head(top).index:
        _ecdf(fig, p.loc[p["area"] == area, column], area)
    fig.update_xaxes(type="log")
    fig.update_yaxes(tickformat=".0%", range=[0, 1.02])
    median = float(p[column].median())
    fig.add_vline(x=max(median, 0.01), line=dict(dash="dot", color="#555"))
    fig.add_annotation(text=f"median {median:.1f} h", x=np.log10(max(median, 0.01)), y=1.02, yref="y",
                       showarrow=False, yanchor="bottom", font=dict(size=10))  # fmt: skip
    return fig


def time_to_merge(data: TrendData) -> go.Figure:
    """CHAOSS Change Requests Duration: creation to merge, merged PRs only."""
    return _duration_ecdf(
        data, "time_to_merge", "Time to merge by area (creation → merge)", "time_to_merge_h", ("created",)
    )


def time_to_first_review(data: TrendData) -> go.Figure:
    """First review by someone other than the author, bots excluded."""
    return _duration_ecdf(
        data, "time_to_first_review", "Time to first review by area (not the author, no bots)",
        "time_to_first_review_h", ("reviews", "created"),
    )  # fmt: skip


def open_pr_age(data: TrendData, *, top: int = 30) -> go.Figure:
    chart, title = "open_pr_age", "Open PRs by age"
    x, y = f"Age in days at {_d(data.as_of)}", "Open PR"
    if data.lacks.get("created") and data.prs["state"].eq("open").any():
        return lacking(chart, title, x, y, data.lacks["created"])
    ages = F.open_age(data)
    if ages.empty:
        msg = data.lacks.get("open") or "No open PRs with a creation time in this selection."
        return lacking(chart, title, x, y, msg)
    ages = ages.head(top).iloc[::-1]
    fig = _base(chart, title, x, y, height=max(350, 22 * len(ages) + 120))
    fig.add_bar(
        x=ages["age_days"], y=[f"#{n}" for n in ages["number"]], orientation="h",
        text=[esc(a) for a in ages["area"]], textposition="auto",
        customdata=[esc(t) for t in ages["title"].fillna("")],
        hovertemplate="%{y}: %{x:.0f} days<br>%{customdata}<extra></extra>", name="open PRs",
    )  # fmt: skip
    fig.update_yaxes(type="category")
    return fig


MIN_MONTHS = 3  # fewer complete months than this: the heatmap's columns are weeks


def month_labels(index: pd.Index) -> list[str]:
    """Month starts as "Oct 2026": monthly charts use a category axis of these. A date axis, given one or
    two month-start timestamps, zooms in to sub-second ticks (`23:59:59.9996 Sep 30`) and draws the
    bars a millisecond wide."""
    return [ts.strftime("%b %Y") for ts in index]


def week_labels(index: pd.Index) -> list[str]:
    return [ts.strftime("%b %d, %Y") for ts in index]  # as the weekly bar charts label their ticks


def churn_heatmap(data: TrendData, *, top: int = 12) -> go.Figure:
    """Changed lines per area and month; per week when the selection holds fewer than MIN_MONTHS
    complete months (one column would show only a ranking of areas, not how churn moves)."""
    title = "Churn by area and month (changed lines in merged PRs)"
    chart, x, y = "churn_heatmap", "Month (UTC; partial months excluded)", "Area"
    table = F.churn_by_month(data, top=top)
    labels = month_labels(table.columns)
    if len(table.columns) < MIN_MONTHS:
        weekly = F.churn_by_week(data, top=top)
        if len(weekly.columns) > len(table.columns):
            table, labels = weekly, week_labels(weekly.columns)
            title = "Churn by area and week (changed lines in merged PRs)"
            x = "Week (Monday, UTC; partial weeks excluded)"
    if table.empty or len(table.columns) == 0:
        return lacking(chart, title, x, y, "No merged PRs in a complete week or month of this selection.")
    fig = _base(chart, title, x, y, height=max(350, 28 * len(table) + 150))
    z = table.to_numpy(dtype=float)
    fig.add_heatmap(
        z=np.log10(z + 1),  # one 70k-line vendoring PR would otherwise wash out every other cell
        x=labels, y=[esc(a) for a in table.index], customdata=z,
        colorscale="Viridis", colorbar=dict(title="lines", tickvals=[0, 1, 2, 3, 4, 5],
                                            ticktext=["0", "10", "100", "1k", "10k", "100k"]),
        hovertemplate="%{y} %{x}: %{customdata:,.0f} lines<extra></extra>", name="churn",
    )  # fmt: skip
    fig.update_yaxes(autorange="reversed")
    fig.update_xaxes(type="category")  # labels, not dates: see month_labels
    return fig


def reverts_breaking(data: TrendData) -> go.Figure:
    chart, title = "reverts_breaking", "Reverts and breaking changes per month"
    x, y = "Month (UTC; partial months excluded)", "Merged PRs"
    table = F.monthly_flags(data)
    if table.empty:
        return lacking(chart, title, x, y, "No complete month in this selection.")
    fig = _base(chart, title, x, y, barmode="group")
    months = month_labels(table.index)
    fig.add_bar(x=months, y=table["reverts"], name="reverts", marker_color="#9467bd")
    fig.add_bar(x=months, y=table["breaking"], name="breaking changes", marker_color="#d62728")
    share = (table["reverts"] + table["breaking"]) / table["merged"].where(table["merged"] > 0)
    fig.add_scatter(x=months, y=share, name="share of merged PRs", mode="lines+markers", yaxis="y2",
                    line=dict(color="#555", dash="dot"), hovertemplate="%{y:.1%}<extra></extra>")  # fmt: skip
    fig.update_layout(yaxis2=dict(title="Share of merged PRs", overlaying="y", side="right", tickformat=".0%",
                                  rangemode="tozero", showgrid=False))  # fmt: skip
    fig.update_xaxes(type="category")  # see month_labels
    _whole_counts(fig, table[["reverts", "breaking"]].to_numpy().max())
    return fig


def verdict_mix(data: TrendData) -> go.Figure:
    chart, title = "verdict_mix", "Reading verdicts per week, and briefs written"
    x, y = "Week (Monday, UTC; partial weeks excluded)", "PRs"
    weeks = F.complete_weeks(data.start, data.as_of)
    if len(weeks) == 0:
        return lacking(chart, title, x, y, _no_weeks(data))
    table = F.verdict_weekly(data)
    briefs = F.weekly(data)["briefs"]
    if briefs.sum() == 0 and (table.empty or table.to_numpy().sum() == 0):
        return lacking(
            chart, title, x, y, data.lacks.get("verdicts") or "No verdicts or briefs in this selection."
        )
    fig = _base(chart, title, x, y, barmode="stack")
    for verdict in [v for v in ("deep", "skim", "skip") if v in table] + [
        v for v in table if v not in VERDICT_COLORS
    ]:
        fig.add_bar(
            x=table.index, y=table[verdict], name=esc(verdict), marker_color=VERDICT_COLORS.get(verdict)
        )
    fig.add_scatter(
        x=briefs.index, y=briefs, name="briefs written", mode="lines+markers", line=dict(color="#1f77b4")
    )
    _whole_counts(fig, max(table.sum(axis=1).max() if not table.empty else 0, briefs.max()))
    _week_ticks(fig, weeks)
    if data.lacks.get("verdicts"):
        fig.add_annotation(text=_wrap(esc(data.lacks["verdicts"])), xref="paper", yref="paper", x=0.5, y=1.0,
                           showarrow=False, yanchor="bottom", font=dict(size=11, color="#555"))  # fmt: skip
    return fig


def reviewer_load(data: TrendData, *, top: int = 15) -> go.Figure:
    chart, title = "reviewer_load", "Reviewer load (reviews by state; not the author, no bots)"
    x, y = "Reviews submitted", "Reviewer"
    if data.lacks.get("reviews"):
        return lacking(chart, title, x, y, data.lacks["reviews"])
    table = F.reviewer_load(data, top=top)
    if table.empty:
        return lacking(chart, title, x, y, "No reviews by anyone other than the author in this selection.")
    table = table.iloc[::-1]
    fig = _base(chart, title, x, y, barmode="stack", height=max(350, 26 * len(table) + 120))
    names = [esc(a) for a in table.index]
    for state in [c for c in table.columns if c != "prs"]:
        fig.add_bar(y=names, x=table[state], name=esc(state.lower().replace("_", " ")), orientation="h",
                    marker_color=STATE_COLORS.get(state), customdata=table["prs"],
                    hovertemplate="%{y}: %{x} reviews on %{customdata} PRs<extra></extra>")  # fmt: skip
    fig.update_yaxes(type="category")
    _whole_counts(fig, table.drop(columns="prs").sum(axis=1).max(), axis="x")
    return fig


def path_treemap(data: TrendData, *, top: int = 40) -> go.Figure:
    chart, title = "path_treemap", "Most-changed paths (area = changed lines, top files)"
    x, y = "", ""
    if data.lacks.get("files"):
        return lacking(chart, title, "Path", "Changed lines", data.lacks["files"])
    paths = F.path_churn(data, top=top)
    if paths.empty or paths["lines"].sum() == 0:
        return lacking(
            chart, title, "Path", "Changed lines", "No changed lines in the files of this selection."
        )
    ids, parents, values, labels = _tree(paths)
    skipped = paths.attrs.get("skipped_files", 0)
    if skipped:
        title += f"; {skipped} generated or binary files left out"
    fig = _base(chart, title, x, y)
    fig.add_treemap(ids=ids, parents=parents, values=values, labels=labels, branchvalues="total",
                    hovertemplate="%{id}: %{value:,} lines<extra></extra>", name="paths")  # fmt: skip
    fig.update_layout(xaxis_title="Path", yaxis_title="Changed lines")
    return fig


def _tree(paths: pd.DataFrame) -> tuple[list[str], list[str], list[float], list[str]]:
    """Directory hierarchy for a treemap; each directory's value is the sum of its children."""
    totals: dict[str, float] = {}
    parent: dict[str, str] = {}
    for filename, lines in zip(paths["filename"], paths["lines"], strict=True):
        parts = filename.split("/")
        for i in range(1, len(parts) + 1):
            node = "/".join(parts[:i])
            totals[node] = totals.get(node, 0.0) + float(lines)
            parent.setdefault(node, "/".join(parts[: i - 1]))
    ids = list(totals)
    return (
        [esc(i) for i in ids],
        [esc(parent[i]) for i in ids],
        [totals[i] for i in ids],
        [esc(i.rsplit("/", 1)[-1]) for i in ids],
    )


FIGURES: dict[str, Callable[[TrendData], go.Figure]] = {
    "merged_per_week": merged_per_week,
    "size_by_kind": size_by_kind,
    "size_buckets": size_buckets,
    "time_to_merge": time_to_merge,
    "time_to_first_review": time_to_first_review,
    "open_pr_age": open_pr_age,
    "churn_heatmap": churn_heatmap,
    "reverts_breaking": reverts_breaking,
    "verdict_mix": verdict_mix,
    "reviewer_load": reviewer_load,
    "path_treemap": path_treemap,
}


def all_figures(data: TrendData) -> dict[str, go.Figure]:
    return {name: build(data) for name, build in FIGURES.items()}
