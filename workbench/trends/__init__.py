"""Trends: where a repository is moving. Frames (pure pandas), figures (plotly), and a loader
that reads the cache. The notebook, the HTML report and the widgets app all go through here."""

from .frames import (
    DEFAULT_BOTS,
    SIZE_LABELS,
    TrendData,
    TrendSummary,
    build_trend_data,
    complete_weeks,
    size_bucket,
    summary,
)
from .load import load_trend_data

__all__ = [
    "DEFAULT_BOTS",
    "SIZE_LABELS",
    "TrendData",
    "TrendSummary",
    "build_trend_data",
    "complete_weeks",
    "load_trend_data",
    "size_bucket",
    "summary",
]
