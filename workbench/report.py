"""The trends report: every trend chart in one HTML file that opens offline.

plotly.js is embedded once (with the first chart); the other charts are bare divs that reuse it.
Everything from GitHub in the page (titles, names, paths) is HTML-escaped. `--png DIR` also writes
static images through kaleido, which drives a local Chrome/Chromium.
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

import plotly.graph_objects as go

from .config import WorkbenchError, exports_dir
from .trends import TrendData, load_trend_data, summary
from .trends.figures import all_figures

PLOTLY_CONFIG = {"displaylogo": False, "responsive": True}

_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2rem auto; max-width: 1100px;
       color: #222; padding: 0 1rem; }
h1 { font-size: 1.6rem; margin-bottom: .2rem; } .sub { color: #666; margin-top: 0; }
table.summary { border-collapse: collapse; margin: 1rem 0 2rem; }
table.summary td, table.summary th { padding: .25rem .8rem; border-bottom: 1px solid #eee; text-align: left; }
table.summary td.num { text-align: right; font-variant-numeric: tabular-nums; }
table.summary th, table.summary td.num { white-space: nowrap; }  /* "46.0 h" on one line; definitions wrap */
section.chart { margin: 2rem 0; } p.lacks { color: #8a6d3b; }
ul.notes { color: #555; font-size: .9rem; }
"""


def _fmt_hours(h: float | None) -> str:
    if h is None:
        return "n/a"
    return f"{h:.1f} h" if h < 48 else f"{h / 24:.1f} days"


def summary_rows(data: TrendData) -> list[tuple[str, str, str]]:
    """(metric, value, definition) rows for the report's summary table."""
    s = summary(data)
    ratio = s.acceptance_ratio
    per_week = s.merged_per_week
    return [
        ("PRs in selection", f"{s.prs:,}", f"{_d(s.start)} to {_d(s.as_of)}"),
        ("Change requests accepted", f"{s.accepted:,}", "merged (CHAOSS Change Requests Accepted)"),
        ("Change requests declined", "n/a" if "declined" in data.lacks else f"{s.declined:,}",
         "closed without merging (CHAOSS Change Requests Declined)"),
        ("Acceptance ratio", "n/a" if ratio is None else f"{ratio:.0%}",
         "accepted / (accepted + declined) (CHAOSS Change Request Acceptance Ratio)"),
        ("Merged per complete week", "n/a" if per_week is None else f"{per_week:.1f}",
         f"mean over {s.complete_weeks} complete ISO weeks; partial weeks excluded"),
        ("Median time to merge", _fmt_hours(s.median_change_request_duration_h),
         "creation to merge, merged PRs (CHAOSS Change Requests Duration)"),
        ("Median time to first response", _fmt_hours(s.median_time_to_first_response_h),
         "first review or comment by a human other than the author (CHAOSS Time to First Response)"),
        ("Median time to first review", _fmt_hours(s.median_time_to_first_review_h),
         "first submitted review by someone other than the author, bots excluded"),
        ("Open PRs", "n/a" if "declined" in data.lacks else f"{s.open:,}", "still open at the end of the data"),
        ("Reverts / breaking changes", f"{s.reverts} / {s.breaking}", "merged PRs marked so in the title"),
        ("Briefs written", f"{s.briefs:,}", "PRs with a reading brief in the cache"),
    ]  # fmt: skip


def _d(ts: Any) -> str:
    return ts.strftime("%Y-%m-%d") if ts is not None and ts == ts else "?"


def render_html(data: TrendData, figures: dict[str, go.Figure] | None = None) -> str:
    """The whole page as one string; plotly.js inline once, so it opens with no network."""
    figures = figures if figures is not None else all_figures(data)
    repo = html.escape(data.repo)
    rows = "\n".join(
        f"<tr><th>{html.escape(m)}</th><td class=num>{html.escape(v)}</td><td>{html.escape(d)}</td></tr>"
        for m, v, d in summary_rows(data)
    )
    notes = "".join(f"<li>{html.escape(msg)}</li>" for msg in dict.fromkeys(data.lacks.values()))
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>PR trends: {repo}</title><style>{_CSS}</style></head><body>",
        f"<h1>PR trends: {repo}</h1>",
        f'<p class="sub">{html.escape(_d(data.start))} to {html.escape(_d(data.as_of))} · '
        f"{len(data.prs):,} PRs · written by PR Workbench</p>",
        f'<table class="summary"><tbody>{rows}</tbody></table>',
    ]
    if notes:
        parts.append(f'<p>What this data cannot show:</p><ul class="notes">{notes}</ul>')
    for i, (name, fig) in enumerate(figures.items()):
        div = fig.to_html(
            full_html=False,
            include_plotlyjs=(i == 0),  # the ~4.8 MB library once; later divs reuse window.Plotly
            include_mathjax=False,
            config=PLOTLY_CONFIG,
            div_id=f"chart-{name}",
        )
        parts.append(f'<section class="chart" id="{html.escape(name)}">{div}</section>')
    parts.append("</body></html>")
    return "\n".join(parts)


def write_png(
    figures: dict[str, go.Figure], out_dir: str | Path, *, width: int = 1100, height: int = 550
) -> list[Path]:
    """Static PNGs through kaleido (it starts a local Chrome/Chromium; Debian's is found on PATH)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / f"{name}.png" for name in figures]
    try:
        import kaleido  # noqa: F401  -- imported only to tell a missing package from a missing browser
    except ImportError:
        raise WorkbenchError(
            "--png needs the kaleido package: pip install 'kaleido>=1' (or pip install 'pr-workbench[report]')"
        ) from None
    import plotly.io as pio

    try:
        pio.write_images(
            list(figures.values()), [str(p) for p in paths], format="png",
            width=[width] * len(paths), height=[max(height, int(f.layout.height or 0)) for f in figures.values()],
        )  # fmt: skip
    except Exception as e:
        text = f"{type(e).__name__}: {e}"
        if "chrome" in text.lower() or "browser" in text.lower():
            raise WorkbenchError(
                f"--png: kaleido could not start Chrome/Chromium ({text.splitlines()[0]}); install chromium "
                "(apt-get install chromium) or set BROWSER_PATH to a Chrome binary"
            ) from None
        raise WorkbenchError(f"--png: kaleido failed to write images ({text.splitlines()[0]})") from None
    return paths


def write_report(
    store: Any,
    repo: str,
    output: str | Path | None = None,
    *,
    since: Any = None,
    png_dir: str | Path | None = None,
    verdicts: bool = True,
    workers: int = 1,
) -> Path:
    """Build the frames and figures for `repo` from `store` and write the HTML (and PNGs). `workers`:
    processes that may share the PRs whose verdicts the analysis memo lacks (analysis/stored.py)."""
    data = load_trend_data(store, repo, since=since, verdicts=verdicts, workers=workers)
    figures = all_figures(data)
    out = Path(output) if output else exports_dir() / f"{repo.replace('/', '-')}-report.html"
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text(render_html(data, figures), encoding="utf-8")
    tmp.replace(out)  # a reader never sees half a report
    if png_dir:
        write_png(figures, png_dir)
    return out
