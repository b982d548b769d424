"""Export buttons: this PR's brief, or a digest of the whole queue, written under exports/ by workbench.export.

The app flushes the editor before calling these, so an export never misses the last words typed."""

from __future__ import annotations

import os
from pathlib import Path

import ipywidgets as w

from ..config import WorkbenchError
from ..store import Store
from .panels import e
from .status import StatusLine, guarded, optional


def export_link_html(path: Path, label: str, cwd: str | None = None) -> str:
    """What was written, and a link to open it when it sits under the notebook's directory."""
    try:
        rel = os.path.relpath(path, cwd or os.getcwd())
    except ValueError:  # another drive on Windows
        rel = None
    link = f' · <a href="{e(rel)}" target="_blank">open</a>' if rel and not os.path.isabs(rel) else ""
    return f"{e(label)}: <code>{e(str(path))}</code>{link}"


def _export_module():
    export, why = optional("workbench.export")
    if export is None:
        raise WorkbenchError(f"export unavailable: {why}")
    return export


class ExportPanel:
    def __init__(self, store: Store, status: StatusLine, out_dir: Path):
        self.store, self.status, self.out_dir = store, status, out_dir
        self.last_export: Path | None = None
        self.b_export_pr = w.Button(description="Export PR", icon="download")
        self.b_export_digest = w.Button(description="Export digest of queue", icon="book")
        self.w_export = w.HTML()

    def clear(self) -> None:
        self.w_export.value = ""

    def _done(self, path: Path, label: str) -> Path:
        self.last_export = path
        self.w_export.value = export_link_html(path, label)
        self.status.show(f"exported {path.name}")
        return path

    @guarded
    def export_pr(self, repo: str, number: int | None, lang: str) -> Path | None:
        if number is None:
            raise WorkbenchError("no PR selected")
        path = _export_module().export_pr(self.store, repo, number, out_dir=self.out_dir, lang=lang)
        return self._done(Path(path), f"#{number} exported")

    @guarded
    def export_digest(self, repo: str, numbers: list[int], lang: str) -> Path | None:
        if not numbers:
            raise WorkbenchError("the queue is empty: nothing to export")
        path = _export_module().export_digest(
            self.store, repo, numbers=list(numbers), out_dir=self.out_dir, lang=lang
        )
        return self._done(Path(path), f"digest of {len(numbers)} PRs")
