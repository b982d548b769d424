"""Work proportional to the window, on a long real history (issue 14 item 5), measured in one run.

Needs a cache holding astral-sh/ruff (~15,600 PRs backfilled from a clone), named by
WORKBENCH_BENCH_RUFF_CACHE; without it the benchmark says so and skips:

    python -m workbench.cli sync astral-sh/ruff --from-git PATH/TO/ruff --cache /tmp/ruff-cache
    WORKBENCH_BENCH_RUFF_CACHE=/tmp/ruff-cache python benchmarks/run.py scale

The cache file is only read (and given its PR-frame snapshot). Each side gets its own directory whose
workbench.db is a symlink to the given one, so each keeps its own analysis memo and files snapshot
(the two sides' memo formats differ: sharing one would make every run of each side a cold one).

(a) warm whole-history `workbench analyze --format json` (a process each, output discarded): ours vs
    the same command of the code before this work (BASELINE_COMMIT, unpacked with `git archive`),
    taking turns; each side's memo is warmed by one untimed run first. Goal: ours <= 0.5.
(b) `write_report` for a 30-day window vs the whole history, in this process after one warm-up call
    each. The window ends at the newest cached PR's activity (a clone mirror's newest PR may be months
    old, when a window back from today would select nothing). Goal: <= 0.5.
(c) Opening the trends app (`TrendsApp(store, repo)`: frames, verdicts from the memo, 11 figures) on
    the whole history, warm memo and imports, in a process of its own: ours vs today's code (one
    timed opening each, after an untimed one). Goal: <= 2 s.
(a) and (b) are medians of REPEATS. The load average is printed: the goals were set on a quiet machine.

Run: WORKBENCH_BENCH_RUFF_CACHE=DIR python benchmarks/bench_scale.py
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

REPO = "astral-sh/ruff"
ENV = "WORKBENCH_BENCH_RUFF_CACHE"
# The code before issue 14 item 5 ("today's" analyze): per-PR record reads, every patch re-hashed for
# the memo fingerprint, indented JSON.
BASELINE_COMMIT = "b512fd5ddb577b36e1aa41f8e8c5bdf2d6e1248f"
REPEATS = 3
WINDOW_DAYS = 30


def _side(tmp: Path, name: str, db: Path) -> Path:
    d = tmp / name
    d.mkdir()
    (d / "workbench.db").symlink_to(db)
    return d


def _baseline_source(tmp: Path) -> Path | None:
    """Today's package, unpacked from git; None when this checkout lacks the commit."""
    out = tmp / "baseline-src"
    out.mkdir()
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", BASELINE_COMMIT, "workbench"], capture_output=True
    )
    if archive.returncode != 0:
        return None
    subprocess.run(["tar", "-x", "-C", str(out)], input=archive.stdout, check=True)
    return out


def _analyze_seconds(src: Path, cache: Path) -> float:
    env = {**os.environ, "PYTHONPATH": str(src)}
    cmd = [sys.executable, "-m", "workbench.cli", "--cache", str(cache), "analyze", REPO, "--format", "json"]
    t0 = time.perf_counter()
    subprocess.run(cmd, env=env, cwd=src, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - t0


_APP_SCRIPT = """
import sys, time
from workbench.store import Store
from workbench.ui.trends_app import TrendsApp
store = Store(sys.argv[1], create=False)
TrendsApp(store, sys.argv[2])  # untimed: fills this side's memo and snapshots, warms imports
t0 = time.perf_counter()
TrendsApp(store, sys.argv[2])
print(time.perf_counter() - t0)
"""


def _app_open_seconds(src: Path, cache: Path) -> float:
    env = {**os.environ, "PYTHONPATH": str(src)}
    done = subprocess.run(
        [sys.executable, "-c", _APP_SCRIPT, str(cache), REPO],
        env=env, cwd=src, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return float(done.stdout.strip().splitlines()[-1])


def bench_app(sides: dict[str, tuple[Path, Path]]) -> dict:
    m = {name: _app_open_seconds(src, cache) for name, (src, cache) in sides.items()}
    out = {"ours_s": round(m["ours"], 2), "goal_s": 2.0}
    line = f"trends app open, whole history: ours {m['ours']:.2f} s"
    if "today" in m:
        line += f" vs baseline today's code {m['today']:.2f} s -> ratio {m['ours'] / m['today']:.2f}"
        out.update(baseline_s=round(m["today"], 2), ratio=round(m["ours"] / m["today"], 3))
    print(line + " (goal: ours <= 2 s)")
    return out


def _sides(tmp: Path, db: Path) -> dict[str, tuple[Path, Path]]:
    """name -> (source to run, cache directory): ours, and today's code when the commit is at hand."""
    sides = {"ours": (ROOT, _side(tmp, "ours", db))}
    base = _baseline_source(tmp)
    if base is not None:
        sides["today"] = (base, _side(tmp, "today", db))
    return sides


def bench_analyze(sides: dict[str, tuple[Path, Path]]) -> dict:
    for src, cache in sides.values():
        _analyze_seconds(src, cache)  # cold: fills this side's memo
    times: dict[str, list[float]] = {k: [] for k in sides}
    for _ in range(REPEATS):
        for name, (src, cache) in sides.items():
            times[name].append(_analyze_seconds(src, cache))
    m = {k: statistics.median(v) for k, v in times.items()}
    out = {"ours_s": round(m["ours"], 2)}
    if "today" in m:
        ratio = m["ours"] / m["today"]
        print(f"warm whole-history analyze --format json: ours {m['ours']:.1f} s vs baseline today's code "
              f"{m['today']:.1f} s -> ratio {ratio:.2f} (goal <= 0.5)")  # fmt: skip
        out.update(baseline_s=round(m["today"], 2), ratio=round(ratio, 3), goal=0.5)
    else:
        print(f"warm whole-history analyze: ours {m['ours']:.1f} s (baseline commit not in this checkout)")
    return out


def bench_report(tmp: Path, cache: Path) -> dict:
    import pandas as pd

    from workbench.report import write_report
    from workbench.store import Store
    from workbench.trends import load_trend_data

    store = Store(cache, create=False)  # ours, its memo warmed by the analyze runs
    prs = store.prs(REPO)
    newest = pd.concat([prs["merged_at"], prs["closed_at"], prs["created_at"]]).max()
    since = (newest - pd.Timedelta(days=WINDOW_DAYS)).strftime("%Y-%m-%d")

    def whole() -> None:
        write_report(store, REPO, tmp / "whole.html")

    def window() -> None:
        write_report(store, REPO, tmp / "window.html", since=since)

    fns = {"whole": whole, "window": window}
    for fn in fns.values():
        fn()  # warm: this side's memo and snapshots, imports, plotly validators
    times: dict[str, list[float]] = {k: [] for k in fns}
    for _ in range(REPEATS):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
    m = {k: statistics.median(v) for k, v in times.items()}
    in_window = load_trend_data(store, REPO, since=since, verdicts=False).prs
    store.close()
    ratio = m["window"] / m["whole"]
    print(f"report --since {since} ({WINDOW_DAYS} days to the newest PR, {len(in_window):,} PRs): "
          f"ours {m['window']:.2f} s vs baseline the whole-history report ({len(prs):,} PRs) "
          f"{m['whole']:.2f} s -> ratio {ratio:.2f} (goal <= 0.5)")  # fmt: skip
    return {
        "window_s": round(m["window"], 2),
        "whole_s": round(m["whole"], 2),
        "ratio": round(ratio, 3),
        "goal": 0.5,
        "since": since,
    }


def main() -> dict:
    given = os.environ.get(ENV)
    db = Path(given).expanduser() / "workbench.db" if given else None
    if db is None or not db.is_file():
        msg = f"skipped: set {ENV} to a cache directory holding {REPO} (see this file's docstring)"
        print(msg)
        return {"skipped": msg}
    load = os.getloadavg()
    print(f"(load average {load[0]:.1f} on {os.cpu_count()} cores; medians of {REPEATS})")
    with tempfile.TemporaryDirectory(prefix="bench-scale-") as d:
        tmp = Path(d)
        sides = _sides(tmp, db)
        out = {
            "analyze": bench_analyze(sides),
            "report": bench_report(tmp, sides["ours"][1]),
            "app": bench_app(sides),
        }
    out["load_average"] = round(load[0], 1)
    return out


if __name__ == "__main__":
    main()
