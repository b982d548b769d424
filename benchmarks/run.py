"""Run every benchmark (benchmarks/bench_*.py) in one process and print a summary of ratios.

    python benchmarks/run.py            # all of them
    python benchmarks/run.py sync ui    # only bench_sync.py and bench_ui.py

Each benchmark measures ours and its baseline side by side in the same run, because this machine
is shared and noisy: absolute times move, ratios hold. Results are also written as JSON to
benchmarks/results/latest.json (git-ignored).
"""

from __future__ import annotations

import importlib.util
import json
import sys
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _load(path: Path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(argv: list[str]) -> int:
    sys.path.insert(0, str(HERE.parent))
    wanted = set(argv)
    paths = sorted(
        p for p in HERE.glob("bench_*.py") if not wanted or p.stem.removeprefix("bench_") in wanted
    )
    results, failed = {}, []
    for path in paths:
        print(f"\n=== {path.stem} ===", flush=True)
        t0 = time.perf_counter()
        try:
            results[path.stem] = _load(path).main()
        except Exception:
            traceback.print_exc()
            failed.append(path.stem)
        print(f"({path.stem} took {time.perf_counter() - t0:.1f} s)", flush=True)
    out = HERE / "results"
    out.mkdir(exist_ok=True)
    (out / "latest.json").write_text(json.dumps(results, indent=2, default=str))
    print(f"\nresults: {out / 'latest.json'}" + (f"; failed: {', '.join(failed)}" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
