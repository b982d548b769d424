"""Start-up of the `workbench` command, measured side by side with Python's own start in one run.

Three commands, each a fresh process, run interleaved (so the shared machine's load hits all alike),
medians of repetitions:
  baseline   python -c pass
  help       python -m workbench.cli --help                       goal: within 0.25 s of the baseline
  analyze    python -m workbench.cli analyze OWNER/REPO -n N      goal: within 1 s in all (one cached PR)
The analyze runs on a temporary cache holding the bundled sample, against its largest PR, twice over:
with the analysis memo warm (a PR analysed before: the everyday case) and cold (memo deleted first).

Bytecode is allowed for these processes (PYTHONDONTWRITEBYTECODE is dropped, one warm-up run writes
the .pyc files), as it is in any installed environment: compiling the sources on every start would
measure the compiler, not the command.

Run: python benchmarks/bench_startup.py
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

REPS = 15
REPO = "example-org/minirl"
NUMBER = "190"  # the sample's largest PR (1,600+ changed lines)
HELP_GOAL = 0.25  # seconds over `python -c pass`
ANALYZE_GOAL = 1.0  # seconds, all in


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
    return env


def _time(cmd: list[str], env: dict[str, str]) -> float:
    t0 = time.perf_counter()
    r = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    elapsed = time.perf_counter() - t0
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed: {r.stderr.strip()[-500:]}")
    return elapsed


def main() -> dict:
    from workbench.sources.sample import load_sample
    from workbench.store import Store

    env = _env()
    py = sys.executable
    with tempfile.TemporaryDirectory(prefix="cli-bench-startup-") as tmp:
        cache = Path(tmp) / "cache"
        store = Store(cache)
        load_sample(store, include_verl=False)
        store.close()
        memo = cache / "analysis-memo"
        commands = {
            "baseline": [py, "-c", "pass"],
            "help": [py, "-m", "workbench.cli", "--help"],
            "analyze_warm": [py, "-m", "workbench.cli", "--cache", str(cache), "analyze", REPO, "-n", NUMBER],
            "analyze_cold": [py, "-m", "workbench.cli", "--cache", str(cache), "analyze", REPO, "-n", NUMBER],
        }
        for cmd in commands.values():  # warm-up: .pyc files written, the memo filled
            _time(cmd, env)
        times: dict[str, list[float]] = {k: [] for k in commands}
        for _ in range(REPS):
            for name, cmd in commands.items():
                if name == "analyze_cold":
                    shutil.rmtree(memo, ignore_errors=True)
                times[name].append(_time(cmd, env))
    med = {k: statistics.median(v) for k, v in times.items()}
    help_over = med["help"] - med["baseline"]
    print(f"python -c pass:                 {med['baseline'] * 1000:7.0f} ms (median of {REPS})")
    print(
        f"workbench --help:               {med['help'] * 1000:7.0f} ms: {help_over * 1000:+.0f} ms over Python's "
        f"start (goal <= +{HELP_GOAL * 1000:.0f} ms: {'met' if help_over <= HELP_GOAL else 'NOT met'})"
    )
    for name, label in (("analyze_warm", "memo warm"), ("analyze_cold", "memo cold")):
        over = med[name] - med["baseline"]
        print(
            f"workbench analyze, 1 PR ({label}): {med[name] * 1000:5.0f} ms ({over * 1000:+.0f} ms over Python's "
            f"start; goal <= {ANALYZE_GOAL * 1000:.0f} ms: {'met' if med[name] <= ANALYZE_GOAL else 'NOT met'})"
        )
    return {
        "median_s": med,
        "help_over_python_s": help_over,
        "help_goal_met": help_over <= HELP_GOAL,
        "analyze_warm_goal_met": med["analyze_warm"] <= ANALYZE_GOAL,
        "analyze_cold_goal_met": med["analyze_cold"] <= ANALYZE_GOAL,
    }


if __name__ == "__main__":
    main()
