"""The trends report: one HTML file, plotly.js once, escaped text, the CLI, PNGs, and a real browser."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from trends_data import AS_OF, FACTS_REPO, REPO, make_store

from workbench import report
from workbench.cli import main
from workbench.config import WorkbenchError
from workbench.trends import load_trend_data
from workbench.trends.figures import FIGURES, all_figures

CHROMIUM = "/usr/bin/chromium"


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    path = tmp_path_factory.mktemp("report-cache")
    make_store(path).close()
    return path


@pytest.fixture(scope="module")
def report_file(cache, tmp_path_factory):
    out = tmp_path_factory.mktemp("report") / "widgets.html"
    assert main(["--cache", str(cache), "report", REPO, "-o", str(out)]) == 0
    return out


def test_report_embeds_plotly_once_and_every_chart(report_file):
    text = report_file.read_text(encoding="utf-8")
    assert len(re.findall(r'Plotly\.newPlot\(\s*"chart-', text)) == len(FIGURES)
    for name in FIGURES:
        assert f'id="chart-{name}"' in text
    # The library (its licence banner) is inlined exactly once; no <script src=...> to fetch.
    assert len(re.findall(r"plotly\.js v\d", text)) == 1
    assert not re.search(r"<script[^>]+src=", text)


def test_report_escapes_untrusted_titles(report_file):
    text = report_file.read_text(encoding="utf-8")
    assert "<script>alert(1)" not in text
    assert "alert(1)" in text  # it is there, escaped


def test_report_summary_names_chaoss_metrics(report_file):
    text = report_file.read_text(encoding="utf-8")
    for metric in ("Change Requests Duration", "Time to First Response", "Change Request Acceptance Ratio"):
        assert metric in text
    assert "83%" in text  # 5 accepted of 6 closed


def test_facts_report_lists_what_the_data_cannot_show(cache, tmp_path):
    out = tmp_path / "facts.html"
    assert main(["--cache", str(cache), "report", FACTS_REPO, "-o", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    assert "What this data cannot show" in text and "no PR creation times" in text


def test_cli_errors_are_one_line(cache, tmp_path, capsys):
    assert main(["--cache", str(cache), "report", "nobody/nothing", "-o", str(tmp_path / "x.html")]) == 2
    assert "not in the cache" in capsys.readouterr().err
    assert (
        main(["--cache", str(cache), "report", REPO, "--since", "someday", "-o", str(tmp_path / "x.html")])
        == 2
    )
    assert "not understood" in capsys.readouterr().err
    assert not (tmp_path / "x.html").exists()


def test_since_narrows_the_report(cache, tmp_path):
    from workbench.store import Store

    s = Store(cache)
    try:
        out = report.write_report(s, REPO, tmp_path / "since.html", since="2024-01-22", verdicts=False)
    finally:
        s.close()
    assert "· 3 PRs ·" in out.read_text(encoding="utf-8")  # #6 and #7 merged since, #5 still open


def test_png_without_kaleido_names_what_is_missing(monkeypatch, tmp_path, cache):
    from workbench.store import Store

    s = Store(cache)
    data = load_trend_data(s, REPO, as_of=AS_OF, verdicts=False)
    s.close()
    monkeypatch.setitem(sys.modules, "kaleido", None)
    with pytest.raises(WorkbenchError, match="kaleido"):
        report.write_png({"merged_per_week": all_figures(data)["merged_per_week"]}, tmp_path / "png")


@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="needs Debian's chromium for kaleido")
def test_png_images_are_written(cache, tmp_path):
    from workbench.store import Store

    s = Store(cache)
    data = load_trend_data(s, REPO, as_of=AS_OF, verdicts=False)
    s.close()
    figs = all_figures(data)
    paths = report.write_png({k: figs[k] for k in ("merged_per_week", "open_pr_age")}, tmp_path / "png")
    for p in paths:
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and p.stat().st_size > 5000


@pytest.mark.browser
def test_report_renders_offline_in_headless_chromium(report_file):
    if not Path(CHROMIUM).exists():
        pytest.skip("no /usr/bin/chromium")
    sync_api = pytest.importorskip("playwright.sync_api")
    requests, errors = [], []
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=CHROMIUM,
            args=["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--no-first-run"],
        )  # fmt: skip
        try:
            page = browser.new_page()
            page.on("request", lambda r: requests.append(r.url))
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.on("dialog", lambda d: (errors.append(f"dialog: {d.message}"), d.dismiss()))
            page.goto(report_file.as_uri())
            page.wait_for_function(
                f"document.querySelectorAll('.js-plotly-plot .main-svg').length >= {len(FIGURES)}",
                timeout=30000,
            )
            drawn = page.evaluate("document.querySelectorAll('.js-plotly-plot').length")
            bars = page.evaluate("document.querySelectorAll('#chart-merged_per_week .bars path').length")
            notes = page.inner_text("#chart-path_treemap")
        finally:
            browser.close()
    assert drawn == len(FIGURES)
    assert bars > 0
    assert "api.py" in notes  # the treemap drew the most-changed file
    assert requests and [u for u in requests if not u.startswith("file://")] == []
    assert errors == []


def test_a_repository_without_prs_gets_a_report_that_says_so(tmp_path):
    from workbench.store import Store

    s = Store(tmp_path / "cache")
    s.upsert_repo("acme/empty")
    try:
        out = report.write_report(s, "acme/empty", tmp_path / "empty.html", verdicts=False)
    finally:
        s.close()
    text = out.read_text(encoding="utf-8")
    notes = re.search(r'<ul class="notes">(.*?)</ul>', text).group(1)
    assert notes == "<li>No pull requests in this selection.</li>"
    assert len(re.findall(r'Plotly\.newPlot\(\s*"chart-', text)) == len(FIGURES)


def test_a_window_reads_and_judges_only_its_prs(cache, monkeypatch):
    """Verdicts and the flat reads cover the PRs the window shows (#5 open, #6 and #7 active since
    01-22), and give those PRs what a whole-history load gives them."""
    import pandas as pd

    from workbench.store import Store

    s = Store(cache)
    try:
        whole = load_trend_data(s, REPO)
        asked: dict[str, list] = {}
        for name in ("pr_stamps", "files_frame", "reviews_frame", "comments_frame"):
            real = getattr(s, name)

            def spy(repo, numbers=None, _real=real, _name=name):
                asked[_name] = None if numbers is None else sorted(numbers)
                return _real(repo, numbers)

            monkeypatch.setattr(s, name, spy)
        window = load_trend_data(s, REPO, since="2024-01-22")
    finally:
        s.close()
    assert asked == {k: [5, 6, 7] for k in ("pr_stamps", "files_frame", "reviews_frame", "comments_frame")}
    assert sorted(window.prs["number"]) == [5, 6, 7]
    cols = ["number", "verdict", "audience", "minutes", "area", "test_files", "first_review_at"]
    cols = [c for c in cols if c in window.prs]

    def rows(df):  # missing is missing, whether None or NaN (an all-missing column's type varies)
        df = df.sort_values("number")[cols].reset_index(drop=True).astype(object)
        return df.where(df.notna(), None)

    pd.testing.assert_frame_equal(rows(window.prs), rows(whole.prs[whole.prs["number"].isin([5, 6, 7])]))
    assert window.prs["verdict"].notna().all()
