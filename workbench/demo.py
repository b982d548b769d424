"""`workbench demo`: the main job, on the bundled sample, from a fresh checkout.

Load the sample into the cache, draft offline briefs (never touching a brief a person edited),
write the digest and the trends report under exports/, then open JupyterLab at the review notebook.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from .config import PROJECT_DIR, cache_dir, exports_dir
from .store import Store
from .ui.lab_env import lab_env

SAMPLE_REPO = "example-org/minirl"


def run_demo(
    cache: str | None = None, output: str | None = None, *, progress: bool = True
) -> dict[str, Path]:
    from .drafting.batch import draft_many
    from .export import export_digest
    from .report import write_report
    from .sources.sample import load_sample

    store = Store(cache)
    repos = load_sample(store, include_verl=True)
    print(f"sample loaded into {store.path}: {', '.join(repos)}")
    draft_many(store, SAMPLE_REPO, progress=progress)
    digest = export_digest(
        store, SAMPLE_REPO, output=Path(output) if output else exports_dir() / "sample-digest.md"
    )
    print(f"digest: {digest}")
    report = write_report(store, SAMPLE_REPO, output=exports_dir() / "sample-report.html")
    print(f"trends report: {report}")
    return {"digest": digest, "report": report}


def run_cli(args) -> int:
    run_demo(args.cache, args.output)
    if args.headless:
        return 0
    jupyter = shutil.which("jupyter")
    if not jupyter:
        print("jupyter is not on PATH: install with `pip install -e .`", file=sys.stderr)
        return 2
    # The labconfig in lab_env() turns JupyterLab's "fetch news?" toast off for this server only.
    env = lab_env(dict(os.environ, WORKBENCH_CACHE=str(cache_dir(args.cache))))
    cmd = [
        jupyter,
        "lab",
        "notebooks/review.ipynb",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={args.port}",
        "--LabApp.news_url=None",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
    ]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-root")
    print("opening JupyterLab at notebooks/review.ipynb (Ctrl-C to stop)")
    return subprocess.call(cmd, cwd=PROJECT_DIR, env=env)
