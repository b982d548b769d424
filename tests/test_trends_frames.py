"""Trend frames on hand-made histories with known answers (see tests/trends_data.py)."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st
from trends_data import AS_OF, FACTS_REPO, REPO, make_store

from workbench.config import WorkbenchError
from workbench.trends import frames as F
from workbench.trends import load_trend_data


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    s = make_store(tmp_path_factory.mktemp("trends"))
    yield s
    s.close()


@pytest.fixture(scope="module")
def data(store):
    return load_trend_data(store, REPO, as_of=AS_OF, verdicts=False)


@pytest.fixture(scope="module")
def facts(store):
    return load_trend_data(store, FACTS_REPO, verdicts=False)


def row(data, number):
    return data.prs.set_index("number").loc[number]


@pytest.mark.parametrize(
    "lines, bucket",
    [(0, "XS"), (9, "XS"), (10, "S"), (29, "S"), (30, "M"), (99, "M"), (100, "L"), (499, "L"),
     (500, "XL"), (999, "XL"), (1000, "XXL"), (76690, "XXL"), (None, None), (float("nan"), None)],
)  # fmt: skip
def test_size_buckets_at_their_edges(lines, bucket):
    assert F.size_bucket(lines) == bucket


@given(st.integers(min_value=0, max_value=10**6), st.integers(min_value=0, max_value=10**6))
def test_size_bucket_never_shrinks_with_more_lines(a, b):
    lo, hi = sorted((a, b))
    order = F.SIZE_LABELS
    assert order.index(F.size_bucket(lo)) <= order.index(F.size_bucket(hi))


def test_pr_frame_sizes_areas_and_kinds(data):
    assert row(data, 2)["size"] == "XS" and row(data, 4)["size"] == "M" and row(data, 5)["size"] == "XXL"
    assert row(data, 1)["area"] == "trainer"  # [trainer] tag
    assert row(data, 3)["area"] == "trainer"  # conventional-commit scope fix(trainer)
    assert row(data, 4)["area"] == "doc"  # no tag: the path docs/index.md
    assert row(data, 6)["area"] == "trainer"  # a revert title has no tag: the path decides
    assert row(data, 6)["kind"] == "revert" and bool(row(data, 6)["revert"])
    assert bool(row(data, 5)["breaking"]) and not bool(row(data, 2)["breaking"])
    assert row(data, 4)["doc_files"] == 1 and row(data, 1)["doc_files"] == 0


def test_median_time_to_merge_is_the_known_24_hours(data):
    assert row(data, 3)["time_to_merge_h"] == pytest.approx(168)
    assert math.isnan(row(data, 4)["time_to_merge_h"])  # declined: no change request duration
    assert F.summary(data).median_change_request_duration_h == pytest.approx(24)


def test_first_review_excludes_the_author_and_bots(data):
    # #1: alice reviewed her own PR at +1 h and dependabot[bot] at +2 h; bob's review at +6 h is the first.
    assert row(data, 1)["time_to_first_review_h"] == pytest.approx(6)
    # #2: bob's own comment at +0.5 h does not count, dave's comment at +1 h is the first response.
    assert row(data, 2)["time_to_first_review_h"] == pytest.approx(2)
    assert row(data, 2)["time_to_first_response_h"] == pytest.approx(1)
    # #5: only a bot reviewed it.
    assert math.isnan(row(data, 5)["time_to_first_review_h"]) and row(data, 5)["reviewers"] == 0
    assert set(data.reviews["author"]) == {"bob", "carol"}


def test_review_rounds_count_reviewed_revisions(data):
    assert row(data, 2)["review_rounds"] == 2 and row(data, 2)["changes_requested"] == 1
    assert row(data, 1)["review_rounds"] == 1 and row(data, 3)["review_rounds"] == 0


def test_review_rounds_without_commit_ids_count_days():
    prs = pd.DataFrame(
        {"number": [1], "author": ["a"], "created_at": pd.to_datetime(["2024-01-01"], utc=True)}
    )
    reviews = pd.DataFrame({
        "number": [1, 1, 1], "author": ["b", "b", "c"], "state": ["COMMENTED"] * 3, "commit_id": [None] * 3,
        "submitted_at": ["2024-01-02T01:00:00Z", "2024-01-02T09:00:00Z", "2024-01-04T00:00:00Z"],
    })  # fmt: skip
    stats = F.review_stats(prs, reviews)
    assert stats.loc[0, "review_rounds"] == 2 and stats.loc[0, "reviewers"] == 2
    assert stats.loc[0, "time_to_first_review_h"] == pytest.approx(25)


def test_complete_weeks_drop_partial_first_and_last():
    weeks = F.complete_weeks(pd.Timestamp("2024-01-03T10:00Z"), pd.Timestamp("2024-01-31T12:00Z"))
    assert [w.strftime("%m-%d") for w in weeks] == ["01-08", "01-15", "01-22"]
    # Data starting exactly on a Monday midnight and ending exactly at the next Monday keeps that week.
    weeks = F.complete_weeks(pd.Timestamp("2024-01-08T00:00Z"), pd.Timestamp("2024-01-15T00:00Z"))
    assert [w.strftime("%m-%d") for w in weeks] == ["01-08"]
    assert len(F.complete_weeks(pd.Timestamp("2024-01-09T00:00Z"), pd.Timestamp("2024-01-14T00:00Z"))) == 0


def test_weekly_aggregates_exclude_partial_weeks(data):
    wk = F.weekly(data)
    assert [w.strftime("%m-%d") for w in wk.index] == ["01-08", "01-15", "01-22"]
    assert wk["merged"].tolist() == [1, 1, 1]  # #1 (week of Jan 1) and #7 (week of Jan 29) are partial
    assert wk["declined"].tolist() == [0, 1, 0]
    assert wk["acceptance_ratio"].tolist() == [1.0, 0.5, 1.0]
    assert wk["opened"].tolist() == [2, 3, 0]
    assert wk["reverts"].tolist() == [0, 0, 1]
    by_area = F.weekly_by(data, "area")
    assert by_area.loc["2024-01-08", "rollout"] == 1 and by_area["trainer"].tolist() == [0, 1, 1]


def test_summary_follows_chaoss_definitions(data):
    s = F.summary(data)
    assert (s.accepted, s.declined, s.open) == (5, 1, 1)
    assert s.acceptance_ratio == pytest.approx(5 / 6)
    assert s.complete_weeks == 3 and s.merged_per_week == pytest.approx(1.0)


def test_open_age_and_reviewer_load(data):
    ages = F.open_age(data)
    assert ages["number"].tolist() == [5]
    assert ages.loc[0, "age_days"] == pytest.approx(11.5)
    load = F.reviewer_load(data)
    assert load.loc["carol", "prs"] == 3 and load.loc["carol", "CHANGES_REQUESTED"] == 1
    assert "alice" not in load.index and "dependabot[bot]" not in load.index


def test_churn_and_paths(data):
    paths = F.path_churn(data)
    assert paths.iloc[0]["filename"] == "widgets/rollout/api.py" and paths.iloc[0]["lines"] == 1000
    loop = paths.set_index("filename").loc["widgets/trainer/loop.py"]
    assert loop["lines"] == 240 and loop["prs"] == 2
    assert "uv.lock" not in set(paths["filename"]) and paths.attrs["skipped_files"] == 1
    assert F.churn_by_month(data).empty  # January 2024 is not a complete month of this data


def test_since_and_filters_narrow_the_selection(store, data):
    later = load_trend_data(store, REPO, as_of=AS_OF, since="2024-01-15", verdicts=False)
    # #3, #4, #6, #7 were active since; the open #5 always counts.
    assert sorted(later.prs["number"]) == [3, 4, 5, 6, 7]
    assert [w.strftime("%m-%d") for w in F.weekly(later).index] == ["01-15", "01-22"]
    rollout = data.filter(areas=["rollout"])
    assert sorted(rollout.prs["number"]) == [2, 5, 7]
    assert set(rollout.reviews["number"]) <= {2, 5, 7}
    window = data.filter(start="2024-01-08", end="2024-01-16", kinds=["fix"])
    assert sorted(window.prs["number"]) == [2, 3]
    assert [w.strftime("%m-%d") for w in F.weekly(window).index] == ["01-08"]


def test_bad_since_is_a_workbench_error(store):
    with pytest.raises(WorkbenchError, match="not understood"):
        load_trend_data(store, REPO, since="last tuesday", verdicts=False)


def test_facts_only_rows_use_extra_json_and_say_what_they_lack(facts):
    assert row(facts, 1)["area"] == "rollout" and row(facts, 1)["tags"] == "rollout;vllm"
    assert row(facts, 2)["area"] == "doc"  # untagged, but every changed file is a doc
    assert row(facts, 4)["size"] == "XXL" and bool(row(facts, 4)["breaking"])
    assert bool(row(facts, 5)["revert"]) and row(facts, 5)["kind"] == "revert"
    assert row(facts, 2)["kind"] == "untyped"
    assert {"created", "reviews", "files", "declined", "verdicts"} <= set(facts.lacks)
    s = F.summary(facts)
    assert s.acceptance_ratio is None and s.median_change_request_duration_h is None
    wk = F.weekly(facts)
    assert wk["merged"].tolist() == [2, 1, 1] and wk["declined"].isna().all() and wk["opened"].isna().all()
    assert F.monthly_flags(facts).empty  # 2024-01 is not complete in this data


def test_verdict_columns_are_optional_and_merge_when_given(store):
    from workbench.trends import build_trend_data

    prs = store.prs(REPO)
    plain = build_trend_data(REPO, prs, as_of=AS_OF)
    assert plain.prs["verdict"].isna().all() and "verdicts" in plain.lacks
    v = pd.DataFrame({"number": [1, 2, 3], "verdict": ["deep", "skim", "skip"]})
    withv = build_trend_data(REPO, prs, verdicts=v, as_of=AS_OF)
    assert withv.prs.set_index("number").loc[2, "verdict"] == "skim" and "verdicts" not in withv.lacks
    assert F.verdict_weekly(withv).loc["2024-01-08", "skim"] == 1


def test_briefs_are_counted_per_week(tmp_path):
    s = make_store(tmp_path, facts=False)
    s.save_brief(REPO, 2, "brief", source="offline", base_version=None)
    data = load_trend_data(s, REPO, as_of="2099-01-01", verdicts=False)
    assert bool(data.prs.set_index("number").loc[2, "has_brief"]) and F.summary(data).briefs == 1
    assert F.weekly(data)["briefs"].sum() == 1  # written now, inside the (long) window


def test_bots_are_recognised_by_suffix_and_by_name():
    logins = pd.Series(["dependabot[bot]", "ci-bot", "Renovate", "alice", None, "robotics"])
    assert F.bot_mask(logins).tolist() == [True, True, True, False, False, False]
    assert F.bot_mask(logins, bots=["alice"]).tolist() == [True, True, False, True, False, False]
    assert F.is_bot("Mergify") and not F.is_bot(None) and not F.is_bot("bottleneck")
