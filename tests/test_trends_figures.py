"""Trend figures: the expected traces, axis titles, and a clear note when the data lacks something."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
import pytest
from trends_data import AS_OF, FACTS_REPO, REPO, make_store

from workbench.trends import build_trend_data, load_trend_data
from workbench.trends import figures as G


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    s = make_store(tmp_path_factory.mktemp("figs"))
    yield s
    s.close()


@pytest.fixture(scope="module")
def data(store):
    prs = store.prs(REPO)
    verdicts = pd.DataFrame({"number": [2, 3, 6], "verdict": ["deep", "skim", "skip"]})
    return build_trend_data(
        REPO, prs, reviews=store.reviews_frame(REPO), comments=store.comments_frame(REPO),
        files=store.files_frame(REPO), briefs=store.briefs(REPO), verdicts=verdicts, as_of=AS_OF,
    )  # fmt: skip


@pytest.fixture(scope="module")
def figs(data):
    return G.all_figures(data)


@pytest.fixture(scope="module")
def facts_figs(store):
    return G.all_figures(load_trend_data(store, FACTS_REPO, verdicts=False))


def lacks(fig: go.Figure) -> str | None:
    return (fig.layout.meta or {}).get("lacks")


def test_every_figure_is_a_plain_figure_with_axis_titles(figs, facts_figs):
    for name, fig in [*figs.items(), *facts_figs.items()]:
        assert type(fig) is go.Figure, name  # not a FigureWidget: ~5 MB per figure in a notebook
        assert fig.layout.meta["chart"] == name
        assert fig.layout.title.text, name
        assert fig.layout.xaxis.title.text and fig.layout.yaxis.title.text, name


def test_rich_data_draws_every_chart_but_the_monthly_one(figs):
    # Four weeks of data hold no complete calendar month: the monthly chart says so (drawn below on a
    # longer history); the churn heatmap falls back to weeks.
    missing = {n: lacks(f) for n, f in figs.items() if lacks(f)}
    assert set(missing) == {"reverts_breaking"}
    assert "complete month" in missing["reverts_breaking"]


def test_churn_heatmap_of_a_short_selection_has_a_column_per_week(figs):
    heat = figs["churn_heatmap"]
    # complete ISO weeks of the data: Jan 8, 15 and 22 (see trends_data)
    assert list(heat.data[0].x) == ["Jan 08, 2024", "Jan 15, 2024", "Jan 22, 2024"]
    assert "week" in heat.layout.title.text and heat.layout.xaxis.type == "category"
    assert "Week" in heat.layout.xaxis.title.text and len(heat.data[0].y) > 1


def test_merged_per_week_is_stacked_by_area(figs):
    fig = figs["merged_per_week"]
    assert fig.layout.barmode == "stack"
    assert {t.type for t in fig.data} == {"bar"}
    bars = {t.name: list(t.y) for t in fig.data}
    assert bars["trainer"] == [0, 1, 1] and bars["rollout"] == [1, 0, 0]
    assert len(fig.data[0].x) == 3  # three complete weeks, the partial ones left out


def test_size_by_kind_is_log_scaled_boxes(figs):
    fig = figs["size_by_kind"]
    assert fig.layout.yaxis.type == "log"
    assert all(t.type == "box" for t in fig.data)
    names = [t.name for t in fig.data]
    assert names[0] == "fix (3)" and "feat (2)" in names
    assert len(fig.layout.shapes) == 5  # the XS/S/M/L/XL/XXL edges


def test_size_buckets_cover_all_six_buckets(figs):
    fig = figs["size_buckets"]
    assert list(fig.data[0].x) == ["XS", "S", "M", "L", "XL", "XXL"]
    total = sum(sum(t.y) for t in fig.data)
    assert total == 7


def test_duration_ecdfs(figs):
    ttm = figs["time_to_merge"]
    assert ttm.layout.xaxis.type == "log"
    assert ttm.data[0].name == "all areas (n=5)" and list(ttm.data[0].y)[-1] == 1.0
    assert any(t.name.startswith("trainer") for t in ttm.data)
    ttr = figs["time_to_first_review"]
    assert ttr.data[0].name == "all areas (n=4)"  # #1, #2, #6, #7: the bot-only and unreviewed PRs have none
    assert sorted(ttr.data[0].x) == pytest.approx([1, 2, 6, 24])


def test_open_age_escapes_titles(figs):
    fig = figs["open_pr_age"]
    assert list(fig.data[0].y) == ["#5"]
    hover = fig.data[0].customdata[0]
    assert "<script>" not in hover and "&lt;script&gt;" in hover


def test_verdicts_reviewers_treemap(figs):
    vm = figs["verdict_mix"]
    assert [t.name for t in vm.data] == ["deep", "skim", "skip", "briefs written"]
    assert list(vm.data[0].y) == [1, 0, 0]  # #2 (deep) merged in the week of Jan 8
    rl = figs["reviewer_load"]
    assert set(rl.data[0].y) == {"bob", "carol"} and rl.layout.barmode == "stack"
    tm = figs["path_treemap"]
    assert tm.data[0].type == "treemap"
    ids = list(tm.data[0].ids)
    assert "widgets/rollout/api.py" in ids and "widgets" in ids
    assert "uv.lock" not in ids and "1 generated or binary files left out" in tm.layout.title.text
    values = dict(zip(ids, tm.data[0].values, strict=True))
    assert values["widgets"] == sum(values[i] for i in ids if i.count("/") == 1 and i.startswith("widgets/"))


def test_monthly_charts_draw_on_a_long_history(tmp_path):
    from trends_data import facts_records

    from workbench.store import Store

    s = Store(tmp_path)
    recs = facts_records()
    for i, r in enumerate(recs):  # spread the six PRs over four months
        r.pr["merged_at"] = f"2024-0{1 + i // 2}-1{i % 2}T00:00:00Z"
    s.write_prs(s.upsert_repo(FACTS_REPO), recs)
    d = load_trend_data(s, FACTS_REPO, as_of="2024-05-01", verdicts=False)
    heat = G.churn_heatmap(d)
    assert heat.data[0].type == "heatmap" and list(heat.data[0].x) == ["Feb 2024", "Mar 2024", "Apr 2024"]
    rb = G.reverts_breaking(d)
    assert [t.type for t in rb.data] == ["bar", "bar", "scatter"]
    assert sum(rb.data[0].y) == 1 and sum(rb.data[1].y) == 1
    # month ticks: a category axis of "Mon YYYY" labels, not a date axis that zooms to milliseconds
    assert rb.layout.xaxis.type == "category" and all(list(t.x) == list(heat.data[0].x) for t in rb.data)
    assert rb.layout.yaxis.dtick == 1  # counts of one or two: no 0.2 ticks
    weekly = G.merged_per_week(d)  # 17 complete weeks: plotly's own (month) ticks
    assert not lacks(weekly) and weekly.layout.xaxis.dtick is None


def test_a_single_month_keeps_month_ticks_and_the_heatmap_uses_weeks(tmp_path):
    from trends_data import facts_records

    from workbench.store import Store

    s = Store(tmp_path)
    recs = facts_records()
    days = ["02-27", "03-04", "03-11", "03-18", "03-25", "04-02"]  # one complete month: March
    for r, day in zip(recs, days, strict=True):
        r.pr["merged_at"] = f"2024-{day}T12:00:00Z"
    s.write_prs(s.upsert_repo(FACTS_REPO), recs)
    d = load_trend_data(s, FACTS_REPO, as_of="2024-04-10", verdicts=False)
    rb = G.reverts_breaking(d)
    assert rb.layout.xaxis.type == "category" and list(rb.data[0].x) == ["Mar 2024"]
    heat = G.churn_heatmap(d)
    assert len(heat.data[0].x) >= 4 and all(label.endswith("2024") for label in heat.data[0].x)


def test_facts_only_data_says_what_it_lacks(facts_figs):
    says = {n: lacks(f) for n, f in facts_figs.items()}
    assert "no PR creation times" in says["time_to_merge"]
    assert "no reviews" in says["time_to_first_review"] and "no reviews" in says["reviewer_load"]
    assert "no per-file changes" in says["path_treemap"]
    assert "merged PRs only" in says["open_pr_age"]
    assert "No reading verdicts" in says["verdict_mix"]
    for name in ("merged_per_week", "size_by_kind", "size_buckets"):
        assert says[name] is None, name  # throughput, kinds and sizes are meaningful in facts
    for name, fig in facts_figs.items():
        if says[name]:
            assert not fig.data, name  # nothing drawn that could be read as data
            assert says[name].split()[0] in fig.layout.annotations[0].text


def test_empty_selection_says_so(data):
    empty = data.filter(areas=["nowhere"])
    for name, fig in G.all_figures(empty).items():
        assert lacks(fig), name


def test_clone_backfill_lacks_creation_times_and_reviews_but_has_paths(tmp_path):
    from workbench.records import PRRecord
    from workbench.store import Store

    s = Store(tmp_path)
    pk = s.upsert_repo("acme/cloned")
    for n in range(
        1, 5
    ):  # what a squash-merge clone gives: merge time, author, files; no creation, no reviews
        pr = {"number": n, "title": f"[trainer] fix: thing {n} (#{n})", "state": "closed", "user": {"login": "a"},
              "merged_at": f"2024-02-0{n}T00:00:00Z", "closed_at": f"2024-02-0{n}T00:00:00Z",
              "merge_commit_sha": f"{n:040d}"}  # fmt: skip
        files = [
            {"filename": f"cloned/trainer/m{n}.py", "additions": 10 * n, "deletions": 1, "status": "modified"}
        ]
        s.write_pr(pk, PRRecord(repo="acme/cloned", number=n, pr=pr, files=files, source="git"))
    figs = G.all_figures(load_trend_data(s, "acme/cloned", verdicts=False))
    assert "no PR creation times" in lacks(figs["time_to_merge"])
    assert "no reviews" in lacks(figs["time_to_first_review"])
    assert lacks(figs["path_treemap"]) is None and "cloned/trainer/m4.py" in figs["path_treemap"].data[0].ids


def test_weekly_charts_of_a_few_weeks_tick_once_a_week_by_date(figs):
    for name in ("merged_per_week", "verdict_mix"):
        ax = figs[name].layout.xaxis  # three complete weeks
        assert ax.dtick == 7 * 24 * 3600 * 1000 and ax.tickformat == "%b %d<br>%Y", name
        assert str(ax.tick0).startswith("2024-01-08"), ax.tick0
