"""Trend frames: plain pandas tables built from the cache, one job each, no plotting.

Metric definitions (CHAOSS names where one exists; a "change request" is a pull request):

- **Change Requests Duration** (CHAOSS, Code Development Efficiency): for an *accepted* (merged)
  PR, the time from its creation to its merge, `time_to_merge_h`. Only merged PRs with a known
  creation time have one; comments after the merge do not count. Aggregated as the median.
- **Time to First Response** (CHAOSS, Common): time from a PR's creation to the first review or
  comment by a human other than its author, `time_to_first_response_h`. Bots (logins ending in
  ``[bot]`` and the configured ones) are not humans here.
- **Time to first review**: the same, counting submitted reviews only, `time_to_first_review_h`
  (the narrower question: how long until someone looked at the code, not just said hello).
- **Change Requests Declined** (CHAOSS): PRs closed without being merged, counted in the period
  they were closed. **Change Requests Accepted**: PRs merged, counted in the period of the merge.
- **Change Request Acceptance Ratio** (CHAOSS): accepted / (accepted + declined) in a period.
- **Review rounds**: how many distinct revisions (head commits) received a review from someone other
  than the author; a review without a commit id counts as its own round per day.
- **Open PR age**: for PRs still open, the time from creation to the data's end (`as_of`).

Weekly aggregates use ISO weeks (Monday 00:00 UTC). A week that the data does not cover entirely —
the first week when the data starts mid-week, the last one when it stops mid-week — is left out:
a half-observed week looks like a slump.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

import numpy as np
import pandas as pd

from ..analysis.titles import KINDS
from ..timespan import parse_since

SIZE_LABELS = ("XS", "S", "M", "L", "XL", "XXL")
# Upper bounds (exclusive) of changed lines: XS <10, S <30, M <100, L <500, XL <1000, XXL >= 1000.
SIZE_EDGES = (10, 30, 100, 500, 1000)

# Review bots seen upstream; any login ending in "[bot]" or "-bot" is a bot as well (as in conventions).
DEFAULT_BOTS = frozenset(
    {
        "dependabot", "renovate", "github-actions", "codecov", "pre-commit-ci", "mergify",
        "copilot-pull-request-reviewer", "gemini-code-assist", "coderabbitai", "sourcery-ai",
    }
)  # fmt: skip

# Title tags that name the same area differently (verl uses both `doc` and `docs`, `ci` and `CI`).
TAG_SYNONYMS = {"docs": "doc", "documentation": "doc", "tests": "test", "cfg": "config"}
# Tags that say something about the PR but not where in the tree it lands.
NON_AREA_TAGS = frozenset({"breaking", "revert", "wip", "draft", "rfc", "hotfix", "bugfix", "feat", "fix"})
_KINDS = {("doc" if k == "docs" else k) for k in KINDS}

PR_TIME_COLUMNS = ("created_at", "merged_at", "closed_at", "updated_at")
VERDICT_COLUMNS = ("verdict", "audience", "minutes")


# ---- small pure helpers -----------------------------------------------------------------------------


def is_bot(login: Any, bots: Iterable[str] = DEFAULT_BOTS) -> bool:
    if not isinstance(login, str) or not login:
        return False
    name = login.lower()
    return name.endswith(("[bot]", "-bot")) or name in {b.lower() for b in bots}


def bot_mask(logins: pd.Series, bots: Iterable[str] = DEFAULT_BOTS) -> pd.Series:
    """True where the login is a bot; decided once per distinct login."""
    names = {b.lower() for b in bots}
    unique = logins.dropna().unique()
    verdict = {
        u: isinstance(u, str) and (u.lower().endswith(("[bot]", "-bot")) or u.lower() in names)
        for u in unique
    }
    return logins.map(verdict).fillna(False).astype(bool)


def size_bucket(lines: Any) -> str | None:
    """XS <10, S <30, M <100, L <500, XL <1000, XXL >=1000 changed lines (additions + deletions)."""
    if lines is None or (isinstance(lines, float) and math.isnan(lines)):
        return None
    for label, edge in zip(SIZE_LABELS, SIZE_EDGES, strict=False):
        if lines < edge:
            return label
    return SIZE_LABELS[-1]


def normalize_tag(tag: str, aliases: dict[str, str] | None = None) -> str:
    t = tag.strip().lower()
    t = (aliases or {}).get(t, t)
    return TAG_SYNONYMS.get(t, t)


def normalize_kind(kind: Any) -> str:
    """A conventional-commit kind, `untyped` when the title had none, `other` for the unusual ones."""
    if not isinstance(kind, str) or not kind.strip():
        return "untyped"
    k = kind.strip().lower()
    k = "doc" if k == "docs" else k
    return k if k in _KINDS else "other"


def path_area(filename: str, package: str | None = None) -> str:
    """The area a path falls in, from its directory: `verl/trainer/x.py` -> trainer, `docs/a.md` -> doc."""
    parts = [p for p in filename.split("/") if p]
    if len(parts) <= 1:
        return "root"
    head = parts[0].lower()
    if head in (".github", ".circleci", ".buildkite", "ci"):
        return "ci"
    if head in ("docs", "doc"):
        return "doc"
    if head in ("tests", "test"):
        return "test"
    if head in ("src", "lib") or (package and head == package.lower()):
        return parts[1].lower() if len(parts) > 2 else head
    return head


def as_timestamp(value: Any) -> pd.Timestamp | None:
    """A window bound as a UTC Timestamp: any form workbench.timespan accepts (2026-10-01, 7d, 3m)."""
    when = parse_since(value)
    return None if when is None else pd.Timestamp(when)


_SIZE_BINS = [-np.inf, *SIZE_EDGES, np.inf]


def _extras_frame(raw: pd.Series | None, index: pd.Index) -> pd.DataFrame:
    """`extra_json` as columns. One json.loads for all rows: per-row decoding was a third of the frame time."""
    if raw is None:
        return pd.DataFrame(index=index)
    mask = raw.notna() & raw.astype(str).str.startswith("{")
    if not mask.any():
        return pd.DataFrame(index=index)
    try:
        parsed = json.loads("[" + ",".join(raw[mask]) + "]")
    except ValueError:  # one bad row must not cost the others
        parsed = [_extra(x) for x in raw[mask]]
    return pd.DataFrame.from_records(parsed, index=raw.index[mask]).reindex(index)


def _extra(raw: Any) -> dict:
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str) and raw:
        try:
            v = json.loads(raw)
        except ValueError:
            return {}
        return v if isinstance(v, dict) else {}
    return {}


def _tags(title_tags: Any, extra_tags: Any, aliases: dict[str, str] | None = None) -> list[str]:
    """Tags from the title, else the ones a facts row carries (a `;`-joined string or a list)."""
    raw = title_tags if isinstance(title_tags, str) and title_tags else extra_tags
    if not isinstance(raw, str | list | tuple):
        return []
    if isinstance(raw, str):
        raw = re.split(r"[;,]", raw)
    out: list[str] = []
    for t in raw or []:
        if isinstance(t, str) and t.strip():
            n = normalize_tag(t, aliases)
            if n not in out:
                out.append(n)
    return out


def _bool(v: Any) -> bool:
    if isinstance(v, str):
        return v.strip().lower() in ("1", "true", "yes")
    return bool(v) if v is not None and not (isinstance(v, float) and math.isnan(v)) else False


def _truthy(values: pd.Series) -> pd.Series:
    """`_bool` of each value: a boolean column as it is, anything else decided once per distinct value."""
    if pd.api.types.is_bool_dtype(values):
        return values.fillna(False).astype(bool)
    return per_distinct(values, _bool).fillna(False).astype(bool)


def _hours(delta: pd.Series) -> pd.Series:
    return delta.dt.total_seconds() / 3600.0


def _lookup_time(keys: pd.Series, mapping: pd.Series) -> pd.Series:
    """keys.map(mapping) as UTC times; pandas cannot map through an empty datetime Series."""
    if mapping is None or mapping.empty:
        return pd.Series(pd.NaT, index=keys.index, dtype="datetime64[ns, UTC]")
    return _utc(keys.map(mapping))


def _utc(s: pd.Series) -> pd.Series:
    return pd.to_datetime(s, utc=True, format="ISO8601").astype("datetime64[ns, UTC]")


# ---- the per-PR frame ---------------------------------------------------------------------------------


def pr_frame(
    prs: pd.DataFrame,
    files: pd.DataFrame | None = None,
    *,
    package: str | None = None,
    area_of: Callable[[str], str] | None = None,
    tag_aliases: dict[str, str] | None = None,
) -> pd.DataFrame:
    """One row per PR with the facts charts need: tags, area, kind, size bucket, breaking, revert,
    test/doc/CI file counts (from `extra_json` for facts-only rows, from the file list otherwise),
    `activity_at` (merge time, else close time, else creation) and `time_to_merge_h`.

    Area: the first title tag that names a place (`[rollout, vllm]` -> rollout); without tags, the
    area holding most changed lines; without files, `doc`/`ci`/`test` when every changed file is one,
    else `untagged`. `area_of` (the repository's conventions) maps a path to its area; `tag_aliases`
    renames title tags.
    """
    df = prs.copy()
    for col in PR_TIME_COLUMNS:
        if col in df:
            df[col] = _utc(df[col])
        else:
            df[col] = pd.Series(pd.NaT, index=df.index, dtype="datetime64[ns, UTC]")
    extras = _extras_frame(df["extra_json"] if "extra_json" in df else None, df.index)

    def extra(col: str) -> pd.Series:
        return extras[col] if col in extras else pd.Series(None, index=df.index, dtype=object)

    for col in ("additions", "deletions", "changed_files"):
        vals = pd.to_numeric(df[col], errors="coerce") if col in df else pd.Series(np.nan, index=df.index)
        df[col] = vals.astype("float64").fillna(pd.to_numeric(extra(col), errors="coerce"))
    df["lines"] = df["additions"] + df["deletions"]
    df["size"] = pd.cut(df["lines"], bins=_SIZE_BINS, right=False, labels=list(SIZE_LABELS))

    extra_tags = extra("tags").where(extra("tags").notna(), extra("title_tags"))
    title_tags = df["title_tags"] if "title_tags" in df else pd.Series(None, index=df.index, dtype=object)
    # Plain object arrays: iterating an Arrow-backed column makes a Python scalar per row the slow way.
    tags = [
        _tags(t, e, tag_aliases)
        for t, e in zip(title_tags.to_numpy(dtype=object), extra_tags.to_numpy(dtype=object), strict=True)
    ]
    df["tags"] = [";".join(t) for t in tags]
    kinds = df["kind"].where(df["kind"].fillna("").astype(str).str.len() > 0, extra("kind")).fillna("")
    df["kind"] = kinds.map({k: normalize_kind(k) for k in kinds.unique()})
    for flag in ("breaking", "revert"):
        df[flag] = _truthy(df[flag]) | _truthy(extra(flag))
    df.loc[df["revert"] & (df["kind"] == "untyped"), "kind"] = "revert"

    role_counts = _role_counts(files, package)
    for role in ("test", "doc", "ci"):
        col = f"{role}_files"
        from_extra = pd.to_numeric(extra(col), errors="coerce").astype("float64")
        from_files = df["number"].map(role_counts.get(role, {})) if role_counts else np.nan
        df[col] = from_extra.fillna(from_files if isinstance(from_files, pd.Series) else np.nan)

    path_areas = _dominant_path_area(files, area_of or (lambda f: path_area(f, package)))
    df["area"] = [
        _area(t, path_areas.get(int(n)), row_counts)
        for t, n, row_counts in zip(
            tags,
            df["number"],
            df[["changed_files", "test_files", "doc_files", "ci_files"]].itertuples(index=False),
            strict=True,
        )
    ]
    df["activity_at"] = activity_at(df)
    merged = df["state"].eq("merged") if "state" in df else df["merged_at"].notna()
    df["time_to_merge_h"] = _hours(df["merged_at"] - df["created_at"]).where(merged)
    return df.drop(columns=[c for c in ("extra_json", "labels") if c in df])


def activity_at(prs: pd.DataFrame) -> pd.Series:
    """When a PR was last decided: its merge, else its close, else its creation."""
    return prs["merged_at"].fillna(prs["closed_at"]).fillna(prs["created_at"])


def in_window(prs: pd.DataFrame, since: pd.Timestamp) -> pd.Series:
    """Which PRs a window starting at `since` shows: active since then, or still open."""
    return (activity_at(prs) >= since) | prs["state"].eq("open")


def _area(tags: list[str], from_paths: str | None, counts: tuple) -> str:
    for t in tags:
        if t not in NON_AREA_TAGS:
            return t
    if from_paths:
        return from_paths
    changed, test, doc, ci = (
        None if (x is None or (isinstance(x, float) and math.isnan(x))) else x for x in counts
    )
    if changed:
        for name, n in (("doc", doc), ("ci", ci), ("test", test)):
            if n is not None and n >= changed:
                return name
    return "untagged"


def file_roles(filenames: pd.Series) -> pd.Series:
    """Each path's role (code, test, docs, ci, generated, ...) by the diff model's rule, one call per
    distinct path; a plain directory rule when the diff model is unavailable."""
    try:
        from ..analysis.diff import file_role
    except ImportError:  # the trends must not depend on the analysis package being importable

        def file_role(name: str) -> str:
            area = path_area(name)
            return {"doc": "docs", "test": "test", "ci": "ci"}.get(area, "code")

    return per_distinct(filenames, file_role)


def per_distinct(values: pd.Series, fn: Callable[[Any], Any]) -> pd.Series:
    """`values.map(fn)` calling fn once per distinct value: paths repeat across PRs, and mapping an
    Arrow-backed string column element by element goes through Python for every row."""
    codes, uniques = pd.factorize(values, use_na_sentinel=True)
    distinct = np.asarray(uniques, dtype=object)  # one conversion, not an Arrow scalar per value
    results = np.array([fn(u) for u in distinct] + [None], dtype=object)  # the last: for missing values
    return pd.Series(results[codes], index=values.index, dtype=object)


def _role_counts(files: pd.DataFrame | None, package: str | None) -> dict[str, dict[int, int]]:
    if files is None or files.empty:
        return {}
    roles = files["role"] if "role" in files else file_roles(files["filename"])
    out = {}
    for name, role in (("test", "test"), ("doc", "docs"), ("ci", "ci")):
        out[name] = files[roles.eq(role)].groupby("number").size().to_dict()
    all_numbers = files["number"].unique()
    for role in out:  # a PR with files but none of this role has zero, not unknown
        out[role] = {int(n): int(out[role].get(n, 0)) for n in all_numbers}
    return out


def _dominant_path_area(files: pd.DataFrame | None, area_of: Callable[[str], str]) -> dict[int, str]:
    if files is None or files.empty:
        return {}
    f = files.assign(
        area=per_distinct(files["filename"], lambda x: normalize_tag(area_of(x))),
        lines=pd.to_numeric(files["additions"], errors="coerce").fillna(0)
        + pd.to_numeric(files["deletions"], errors="coerce").fillna(0)
        + 1,  # a rename with no lines still points at an area
    )
    sums = f.groupby(["number", "area"], sort=False)["lines"].sum().reset_index()
    top = sums.sort_values(["number", "lines"], ascending=[True, False]).drop_duplicates("number")
    return {int(n): a for n, a in zip(top["number"], top["area"], strict=True)}


# ---- review events ------------------------------------------------------------------------------------


def human_reviews(
    reviews: pd.DataFrame, prs: pd.DataFrame, bots: Iterable[str] = DEFAULT_BOTS
) -> pd.DataFrame:
    """Reviews by someone other than the PR's author and not a bot; pending (unsubmitted) ones dropped."""
    if reviews is None or reviews.empty:
        return pd.DataFrame(columns=["number", "author", "state", "submitted_at", "commit_id"])
    bots = frozenset(bots)
    authors = prs.set_index("number")["author"]
    r = reviews.copy()
    r["submitted_at"] = _utc(r["submitted_at"])
    pr_author = r["number"].map(authors)
    keep = (
        r["author"].notna()
        & (r["author"] != pr_author)
        & ~bot_mask(r["author"], bots)
        & (r["state"].fillna("").str.upper() != "PENDING")
        & r["submitted_at"].notna()
    )
    return r[keep].reset_index(drop=True)


def review_stats(
    prs: pd.DataFrame,
    reviews: pd.DataFrame | None,
    comments: pd.DataFrame | None = None,
    bots: Iterable[str] = DEFAULT_BOTS,
) -> pd.DataFrame:
    """Per PR: first_review_at, time_to_first_review_h, first_response_at, time_to_first_response_h,
    review_rounds, reviewers, changes_requested. Reviews and comments by the author or by bots do
    not count (see the module docstring for the definitions)."""
    bots = frozenset(bots)
    out = pd.DataFrame({"number": prs["number"].to_numpy()})
    hr = human_reviews(reviews, prs, bots) if reviews is not None else human_reviews(pd.DataFrame(), prs)
    created = prs.set_index("number")["created_at"]
    if not hr.empty:
        g = hr.groupby("number")
        first = g["submitted_at"].min()
        commit = hr["commit_id"] if "commit_id" in hr else pd.Series(None, index=hr.index)
        round_key = commit.where(commit.notna(), "day:" + hr["submitted_at"].dt.strftime("%Y-%m-%d"))
        rounds = hr.assign(_round=round_key).groupby("number")["_round"].nunique()
        reviewers = g["author"].nunique()
        changes = hr[hr["state"].str.upper() == "CHANGES_REQUESTED"].groupby("number").size()
    else:
        first = rounds = reviewers = changes = pd.Series(dtype="float64")
    out["first_review_at"] = _lookup_time(out["number"], first)
    responses = [first]
    if comments is not None and not comments.empty:
        c = comments.copy()
        c["created_at"] = _utc(c["created_at"])
        pr_author = c["number"].map(prs.set_index("number")["author"])
        c = c[c["author"].notna() & (c["author"] != pr_author) & ~bot_mask(c["author"], bots)]
        responses.append(c.groupby("number")["created_at"].min())
    response = pd.concat(responses, axis=1).min(axis=1) if len(responses) > 1 else first
    out["first_response_at"] = _lookup_time(out["number"], response)
    pr_created = _lookup_time(out["number"], created)
    # A response stamped before creation (clock skew, imported history) counts as immediate.
    out["time_to_first_review_h"] = _hours(out["first_review_at"] - pr_created).clip(lower=0)
    out["time_to_first_response_h"] = _hours(out["first_response_at"] - pr_created).clip(lower=0)
    out["review_rounds"] = out["number"].map(rounds).fillna(0).astype(int)
    out["reviewers"] = out["number"].map(reviewers).fillna(0).astype(int)
    out["changes_requested"] = out["number"].map(changes).fillna(0).astype(int)
    return out


# ---- weeks and months -----------------------------------------------------------------------------------


def week_start(ts: pd.Series) -> pd.Series:
    """Monday 00:00 UTC of each timestamp's ISO week."""
    day = ts.dt.floor("D")
    return day - pd.to_timedelta(day.dt.weekday, unit="D")


def complete_weeks(start: pd.Timestamp | None, end: pd.Timestamp | None) -> pd.DatetimeIndex:
    """The ISO weeks lying wholly inside [start, end]: partial first and last weeks excluded."""
    if start is None or end is None or pd.isna(start) or pd.isna(end):
        return pd.DatetimeIndex([], tz="UTC")
    first = start.floor("D") - pd.Timedelta(days=start.weekday())
    if first < start:
        first += pd.Timedelta(days=7)
    last_end = end.floor("D") - pd.Timedelta(
        days=end.weekday()
    )  # Monday of end's week: weeks before it end by `end`
    if first >= last_end:
        return pd.DatetimeIndex([], tz="UTC")
    return pd.date_range(first, last_end - pd.Timedelta(days=7), freq="7D", tz="UTC")


def complete_months(start: pd.Timestamp | None, end: pd.Timestamp | None) -> pd.DatetimeIndex:
    """Calendar months lying wholly inside [start, end]."""
    if start is None or end is None or pd.isna(start) or pd.isna(end):
        return pd.DatetimeIndex([], tz="UTC")
    first = start.tz_convert("UTC").tz_localize(None).to_period("M").to_timestamp().tz_localize("UTC")
    if first < start:
        first = (first + pd.offsets.MonthBegin(1)).tz_convert("UTC")
    last = end.tz_convert("UTC").tz_localize(None).to_period("M").to_timestamp().tz_localize("UTC")
    if first >= last:
        return pd.DatetimeIndex([], tz="UTC")
    return pd.date_range(first, last, freq="MS", tz="UTC", inclusive="left")


def month_start(ts: pd.Series) -> pd.Series:
    return (
        ts.dt.tz_convert("UTC").dt.tz_localize(None).dt.to_period("M").dt.to_timestamp().dt.tz_localize("UTC")
    )


# ---- the bundle the figures read ------------------------------------------------------------------------


@dataclass
class TrendData:
    """Everything the charts need for one repository, already filtered.

    `lacks` maps a kind of data to a sentence saying why it is missing (shown on the chart instead
    of drawing nonsense): created (creation times), reviews, files, verdicts, open (open PRs).
    """

    repo: str
    prs: pd.DataFrame
    reviews: pd.DataFrame  # human reviews only (not the author, not bots)
    files: pd.DataFrame
    briefs: pd.DataFrame  # latest brief per PR: number, version, created_at, is_final, human_edited
    start: pd.Timestamp | None
    as_of: pd.Timestamp | None
    lacks: dict[str, str] = field(default_factory=dict)
    reviews_known: bool = True  # False when the source cannot know reviews (facts, clone backfill)

    @property
    def areas(self) -> list[str]:
        return self.prs["area"].value_counts().index.tolist()

    @property
    def kinds(self) -> list[str]:
        return self.prs["kind"].value_counts().index.tolist()

    def filter(
        self,
        *,
        start: Any = None,
        end: Any = None,
        areas: Iterable[str] | None = None,
        kinds: Iterable[str] | None = None,
    ) -> TrendData:
        """A narrower view: PRs active in [start, end] (open PRs always count as active) in these areas
        and kinds. The weekly window shrinks with the dates so partial weeks stay excluded."""
        p = self.prs
        start_ts, end_ts = as_timestamp(start), as_timestamp(end)
        if end_ts is not None and end_ts == end_ts.normalize() and not isinstance(end, datetime):
            end_ts = end_ts + pd.Timedelta(days=1)  # a date as the end means the whole day
        mask = pd.Series(True, index=p.index)
        is_open = p["state"].eq("open")
        if start_ts is not None:
            mask &= (p["activity_at"] >= start_ts) | is_open
        if end_ts is not None:
            mask &= (p["activity_at"] < end_ts) | (
                is_open & (p["created_at"].isna() | (p["created_at"] < end_ts))
            )
        if areas:
            mask &= p["area"].isin(list(areas))
        if kinds:
            mask &= p["kind"].isin(list(kinds))
        prs = p[mask]
        keep = set(prs["number"])
        new_start = (
            max(x for x in (self.start, start_ts) if x is not None) if (self.start or start_ts) else None
        )
        new_end = min(x for x in (self.as_of, end_ts) if x is not None) if (self.as_of or end_ts) else None
        narrowed = replace(
            self,
            prs=prs,
            reviews=self.reviews[self.reviews["number"].isin(keep)],
            files=self.files[self.files["number"].isin(keep)],
            briefs=self.briefs[self.briefs["number"].isin(keep)],
            start=new_start,
            as_of=new_end,
        )
        extra = {k: v for k, v in self.lacks.items() if k == "verdict_errors"}
        narrowed.lacks = {**what_lacks(narrowed, reviews_known=self.reviews_known), **extra}
        return narrowed


def build_trend_data(
    repo: str,
    prs: pd.DataFrame,
    *,
    reviews: pd.DataFrame | None = None,
    comments: pd.DataFrame | None = None,
    files: pd.DataFrame | None = None,
    briefs: pd.DataFrame | None = None,
    verdicts: pd.DataFrame | None = None,
    since: Any = None,
    as_of: Any = None,
    bots: Iterable[str] = DEFAULT_BOTS,
    area_of: Callable[[str], str] | None = None,
    tag_aliases: dict[str, str] | None = None,
) -> TrendData:
    """Pure: store-shaped tables in, a `TrendData` out. `verdicts` (optional) has number, verdict and
    optionally audience, minutes; without it the verdict columns are empty and the chart says so."""
    files = (
        files if files is not None else pd.DataFrame(columns=["number", "filename", "additions", "deletions"])
    )
    since_ts = as_timestamp(since)
    # The data's span is read from every PR; then a window keeps only its own PRs, so the rows below
    # are built for the window, not for the whole history.
    every = pd.DataFrame(
        {
            c: _utc(prs[c]) if c in prs else pd.Series(pd.NaT, index=prs.index, dtype="datetime64[ns, UTC]")
            for c in PR_TIME_COLUMNS
        }
    )
    times = pd.concat([every[c] for c in ("created_at", "merged_at", "closed_at")]).dropna()
    all_prs = prs
    if since_ts is not None:
        every["state"] = prs["state"] if "state" in prs else None
        prs = prs[in_window(every, since_ts).to_numpy()]
        files = files[files["number"].isin(set(prs["number"]))]
    if "role" not in files:  # once here, not once per chart that needs it
        files = files.assign(role=file_roles(files["filename"]))
    package = repo.split("/")[-1]
    df = pr_frame(prs, files, package=package, area_of=area_of, tag_aliases=tag_aliases)
    stats = review_stats(df, reviews, comments, bots)
    df = df.merge(stats, on="number", how="left")
    for col in VERDICT_COLUMNS:
        df[col] = None
    if verdicts is not None and not verdicts.empty:
        v = verdicts.drop_duplicates("number").set_index("number")
        for col in VERDICT_COLUMNS:
            if col in v:
                df[col] = df["number"].map(v[col])
    b = briefs if briefs is not None else pd.DataFrame(columns=["number", "version", "created_at"])
    b = b.copy()
    b["created_at"] = _utc(b["created_at"])
    df["brief_at"] = _lookup_time(df["number"], b.drop_duplicates("number").set_index("number")["created_at"])
    df["has_brief"] = df["brief_at"].notna()

    start = since_ts if since_ts is not None else (times.min() if len(times) else None)
    if as_of is not None:
        end = as_timestamp(as_of)
    else:
        ends = pd.concat([times, every["updated_at"].dropna(), df["first_response_at"].dropna()])
        end = ends.max() if len(ends) else None
    keep = set(df["number"])
    hr = human_reviews(reviews, df, bots) if reviews is not None else human_reviews(pd.DataFrame(), df)
    data = TrendData(
        repo=repo,
        prs=df.reset_index(drop=True),
        reviews=hr[hr["number"].isin(keep)],
        files=files[files["number"].isin(keep)],
        briefs=b[b["number"].isin(keep)] if len(b) else b,
        start=start,
        as_of=end,
        reviews_known=_reviews_known(all_prs),
    )
    data.lacks = what_lacks(data, reviews_known=data.reviews_known)
    return data


def _reviews_known(prs: pd.DataFrame) -> bool:
    """The store leaves `reviews` NULL when the source cannot know them (facts, clone backfill)."""
    return "reviews" in prs and pd.to_numeric(prs["reviews"], errors="coerce").notna().any()


def what_lacks(data: TrendData, *, reviews_known: bool = True) -> dict[str, str]:
    p = data.prs
    lacks: dict[str, str] = {}
    sources = ", ".join(sorted(set(p["source"]))) if "source" in p and len(p) else "none"
    if p.empty:  # nothing else to say: every other note would be about data that is not there
        return {"prs": "No pull requests in this selection."}
    if p["created_at"].notna().sum() == 0:
        lacks["created"] = (
            f"The data has no PR creation times (source: {sources}): a clone backfill or facts-only "
            "history records only merges. Sync from the GitHub API to see durations and open PR age."
        )
    if not reviews_known:
        lacks["reviews"] = (
            f"The data has no reviews (source: {sources}): facts-only and clone-backfilled PRs carry "
            "no review events. Sync from the GitHub API to see review times and reviewer load."
        )
    if data.files.empty:
        lacks["files"] = (
            f"The data has no per-file changes (source: {sources}): facts-only PRs keep totals only. "
            "Sync from the GitHub API or backfill from a clone to see which paths change most."
        )
    if p["verdict"].isna().all():
        lacks["verdicts"] = (
            "No reading verdicts: run `workbench analyze` on PRs with diffs (facts-only PRs have no diff to analyse)."
        )
    if len(p) and not p["source"].fillna("").str.contains("api|sample").any():
        lacks["declined"] = (
            f"The data lists merged PRs only (source: {sources}): PRs closed without merging are unknown, "
            "so the acceptance ratio cannot be computed."
        )
    if not p["state"].eq("open").any():
        lacks["open"] = (
            f"The data lists merged PRs only (source: {sources}): open PRs are unknown."
            if "declined" in lacks
            else "No open PRs in this selection."
        )
    return lacks


# ---- aggregates the figures plot ------------------------------------------------------------------------


def top_values(values: pd.Series, n: int = 8, other: str = "other") -> pd.Series:
    """Keep the n most frequent values; the rest become `other` (a stacked chart of 60 areas reads as noise)."""
    keep = set(values.value_counts().head(n).index)
    return values.where(values.isin(keep), other)


def weekly(data: TrendData) -> pd.DataFrame:
    """One row per complete ISO week: opened, merged (CHAOSS accepted), declined, acceptance_ratio,
    median_time_to_merge_h, median_time_to_first_response_h, reverts, breaking, briefs (PRs whose
    latest brief version was saved that week)."""
    weeks = complete_weeks(data.start, data.as_of)
    out = pd.DataFrame(index=weeks)
    out.index.name = "week"
    p = data.prs
    merged = p[p["state"].eq("merged") & p["merged_at"].notna()]
    declined = p[p["state"].eq("closed") & p["closed_at"].notna()]
    mw = week_start(merged["merged_at"])
    out["opened"] = week_start(p["created_at"].dropna()).value_counts().reindex(weeks, fill_value=0)
    out["merged"] = mw.value_counts().reindex(weeks, fill_value=0)
    out["declined"] = week_start(declined["closed_at"]).value_counts().reindex(weeks, fill_value=0)
    closed = out["merged"] + out["declined"]
    out["acceptance_ratio"] = (out["merged"] / closed).where(closed > 0)
    out["median_time_to_merge_h"] = merged.groupby(mw)["time_to_merge_h"].median().reindex(weeks)
    fr = p[p["first_response_at"].notna()]
    out["median_time_to_first_response_h"] = (
        fr.groupby(week_start(fr["first_response_at"]))["time_to_first_response_h"].median().reindex(weeks)
    )
    out["reverts"] = mw[merged["revert"]].value_counts().reindex(weeks, fill_value=0)
    out["breaking"] = mw[merged["breaking"]].value_counts().reindex(weeks, fill_value=0)
    out["briefs"] = week_start(p["brief_at"].dropna()).value_counts().reindex(weeks, fill_value=0)
    if data.lacks.get("created"):
        out["opened"] = np.nan  # unknown, not zero
    if data.lacks.get("declined"):
        out["declined"] = np.nan
        out["acceptance_ratio"] = np.nan
    return out


def weekly_by(
    data: TrendData, column: str = "area", *, top: int = 8, when: str = "merged_at"
) -> pd.DataFrame:
    """Merged PRs per complete week and `column` value (top values, the rest as `other`): a wide table
    indexed by week, one column per value."""
    weeks = complete_weeks(data.start, data.as_of)
    p = data.prs
    if when == "merged_at":
        p = p[p["state"].eq("merged")]
    p = p[p[when].notna()]
    if p.empty:
        return pd.DataFrame(index=weeks)
    key = top_values(p[column].fillna("unknown"), top) if top else p[column].fillna("unknown")
    table = pd.crosstab(week_start(p[when]), key)
    table = table.reindex(weeks, fill_value=0)
    table.index.name = "week"
    order = [c for c in table.sum().sort_values(ascending=False).index if c != "other"]
    return table[order + (["other"] if "other" in table else [])]  # the catch-all last, on top of the stack


def verdict_weekly(data: TrendData) -> pd.DataFrame:
    """Per complete week of activity (merge, else close, else creation): PRs by verdict."""
    p = data.prs[data.prs["verdict"].notna()]
    weeks = complete_weeks(data.start, data.as_of)
    if p.empty:
        return pd.DataFrame(index=weeks)
    table = pd.crosstab(week_start(p["activity_at"]), p["verdict"]).reindex(weeks, fill_value=0)
    table.index.name = "week"
    return table


def churn_by_month(data: TrendData, *, top: int = 12) -> pd.DataFrame:
    """Changed lines of merged PRs per area (rows, top areas by lines) and complete month (columns)."""
    return _churn(data, complete_months(data.start, data.as_of), month_start, top)


def churn_by_week(data: TrendData, *, top: int = 12) -> pd.DataFrame:
    """As churn_by_month, per complete ISO week: for selections too short to hold several months."""
    return _churn(data, complete_weeks(data.start, data.as_of), week_start, top)


def _churn(data: TrendData, periods: pd.Index, period_of: Callable, top: int) -> pd.DataFrame:
    p = data.prs[data.prs["state"].eq("merged") & data.prs["merged_at"].notna()]
    if p.empty or len(periods) == 0:
        return pd.DataFrame(columns=periods)
    table = p.pivot_table(
        index="area", columns=period_of(p["merged_at"]), values="lines", aggfunc="sum", fill_value=0
    )
    table = table.reindex(columns=periods, fill_value=0)
    return table.loc[table.sum(axis=1).sort_values(ascending=False).index[:top]]


def monthly_flags(data: TrendData) -> pd.DataFrame:
    """Per complete month: merged PRs, reverts, breaking changes (title `[BREAKING]` or `!`)."""
    months = complete_months(data.start, data.as_of)
    p = data.prs[data.prs["state"].eq("merged") & data.prs["merged_at"].notna()]
    m = month_start(p["merged_at"])
    out = pd.DataFrame(index=months)
    out.index.name = "month"
    out["merged"] = m.value_counts().reindex(months, fill_value=0)
    out["reverts"] = m[p["revert"]].value_counts().reindex(months, fill_value=0)
    out["breaking"] = m[p["breaking"]].value_counts().reindex(months, fill_value=0)
    return out


def open_age(data: TrendData) -> pd.DataFrame:
    """Open PRs with a creation time: number, title, area, age_days at `as_of`."""
    p = data.prs[data.prs["state"].eq("open") & data.prs["created_at"].notna()]
    as_of = data.as_of if data.as_of is not None else pd.Timestamp.now(tz="UTC")
    out = p[["number", "title", "area", "kind", "created_at"]].copy()
    out["age_days"] = (as_of - out["created_at"]).dt.total_seconds() / 86400.0
    return out.sort_values("age_days", ascending=False).reset_index(drop=True)


def reviewer_load(data: TrendData, *, top: int = 15) -> pd.DataFrame:
    """Per reviewer (humans, not the author): PRs reviewed, and reviews by state. Top reviewers by PRs."""
    r = data.reviews
    if r.empty:
        return pd.DataFrame(columns=["prs", "APPROVED", "CHANGES_REQUESTED", "COMMENTED"])
    states = pd.crosstab(r["author"], r["state"].str.upper())
    states["prs"] = r.groupby("author")["number"].nunique()
    return states.sort_values("prs", ascending=False).head(top)


def path_churn(
    data: TrendData, *, top: int = 40, skip_roles: tuple[str, ...] = ("generated", "binary")
) -> pd.DataFrame:
    """Most-changed paths: filename, lines, prs — the top `top` files by changed lines. Generated
    files (lockfiles, vendored, minified) and binaries are left out: one `uv.lock` refresh would
    otherwise fill the chart. `attrs["skipped_files"]` says how many distinct paths were left out."""
    f = data.files
    if f.empty:
        return pd.DataFrame(columns=["filename", "lines", "prs"])
    roles = f["role"] if "role" in f else file_roles(f["filename"])
    skipped = f.loc[roles.isin(skip_roles), "filename"].nunique()
    f = f[~roles.isin(skip_roles)]
    f = f.assign(
        lines=pd.to_numeric(f["additions"], errors="coerce").fillna(0)
        + pd.to_numeric(f["deletions"], errors="coerce").fillna(0)
    )
    g = f.groupby("filename").agg(lines=("lines", "sum"), prs=("number", "nunique")).reset_index()
    out = g.sort_values(["lines", "prs"], ascending=False).head(top).reset_index(drop=True)
    out.attrs["skipped_files"] = int(skipped)
    return out


@dataclass(frozen=True)
class TrendSummary:
    """Headline numbers of a selection (CHAOSS names; see the module docstring). A median or ratio the
    data cannot give (no merge times, no closed PRs) is None, never a made-up zero."""

    prs: int
    open: int
    accepted: int
    declined: int
    acceptance_ratio: float | None
    median_change_request_duration_h: float | None
    median_time_to_first_response_h: float | None
    median_time_to_first_review_h: float | None
    merged_per_week: float | None
    complete_weeks: int
    reverts: int
    breaking: int
    briefs: int
    start: pd.Timestamp | None
    as_of: pd.Timestamp | None


def summary(data: TrendData) -> TrendSummary:
    p = data.prs
    merged = p[p["state"].eq("merged")]
    declined = int(p["state"].eq("closed").sum())
    accepted = len(merged)
    weeks = complete_weeks(data.start, data.as_of)
    wk = weekly(data) if len(weeks) else None
    return TrendSummary(
        prs=len(p),
        open=int(p["state"].eq("open").sum()),
        accepted=accepted,
        declined=declined,
        acceptance_ratio=(
            accepted / (accepted + declined) if accepted + declined and "declined" not in data.lacks else None
        ),
        median_change_request_duration_h=_median(merged["time_to_merge_h"]),
        median_time_to_first_response_h=_median(p["time_to_first_response_h"]),
        median_time_to_first_review_h=_median(p["time_to_first_review_h"]),
        merged_per_week=float(wk["merged"].mean()) if wk is not None and len(wk) else None,
        complete_weeks=len(weeks),
        reverts=int(merged["revert"].sum()),
        breaking=int(merged["breaking"].sum()),
        briefs=int(p["has_brief"].sum()),
        start=data.start,
        as_of=data.as_of,
    )


def _median(s: pd.Series) -> float | None:
    s = s.dropna()
    return float(s.median()) if len(s) else None
