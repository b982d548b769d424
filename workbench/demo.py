"""The main job on the bundled sample, from a fresh checkout or install, as one library call.

Load the sample into the cache, draft offline briefs (never touching a brief a person edited), and
write the digest and the trends report under exports/. `workbench demo` (workbench/cli/demo.py) then
serves the review notebook; this module neither prints nor starts servers.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .config import exports_dir

SAMPLE_REPO = "example-org/minirl"


@dataclass(frozen=True)
class DemoResult:
    cache: Path  # the SQLite file the sample went into
    repos: list[str]  # the repositories the sample provides
    digest: Path
    report: Path


def run_demo(
    cache: str | None = None,
    output: str | Path | None = None,
    *,
    exports: str | Path | None = None,
    progress: bool = True,
) -> DemoResult:
    """Load the sample, draft its briefs offline, write the digest (all the sample's PRs: it is a demo of
    the whole layout, not of a week's window) and the trends report."""
    from .drafting.batch import draft_many
    from .export import export_digest
    from .report import write_report
    from .sources.sample import load_sample
    from .store import Store

    out_dir = exports_dir(exports)
    store = Store(cache)
    try:
        repos = load_sample(store, include_verl=True)
        draft_many(store, SAMPLE_REPO, progress=progress)
        digest = export_digest(
            store, SAMPLE_REPO, output=Path(output) if output else out_dir / "sample-digest.md"
        )
        report = write_report(store, SAMPLE_REPO, output=out_dir / "sample-report.html")
        return DemoResult(cache=store.path, repos=repos, digest=digest, report=report)
    finally:
        store.close()
