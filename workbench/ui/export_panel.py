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


def jupyter_root(env: dict[str, str] | None = None, cwd: str | None = None) -> Path | None:
    """The directory the Jupyter server serves, seen from its kernel; None outside a Jupyter kernel.

    jupyter_server starts a notebook's kernel in the notebook's directory with JPY_SESSION_NAME set to the
    notebook's path under the server root, so the root is the kernel's directory minus that path's parent."""
    env = os.environ if env is None else env
    session = env.get("JPY_SESSION_NAME")
    if not session or session.startswith(("/", "\\")):
        return None
    here = Path(cwd or os.getcwd()).resolve()
    depth = len(Path(session).parent.parts)
    if depth > len(here.parents):
        return None
    return here.parents[depth - 1] if depth else here


def export_link_html(path: Path, label: str, root: Path | None = None) -> str:
    """What was written, and an "open" link when the file is under the Jupyter server's root.

    The link carries the path under the root (`data-wb-open`); keys.js opens it in JupyterLab when it is
    clicked (beside the notebook, or in a new JupyterLab tab). A plain relative href would resolve against
    the page's URL (/lab/tree/...) and land on a blank page. Outside the root JupyterLab cannot open the
    file, so no link is offered."""
    shown = f"{e(label)}: <code>{e(str(path))}</code>"
    if root is None:
        return shown
    try:
        rel = Path(path).resolve().relative_to(Path(root).resolve())
    except ValueError:  # outside the root
        return shown + ' <span class="wb-dim">(outside the Jupyter root: open it from a terminal)</span>'
    return (
        f'{shown} · <a href="#" data-wb-open="{e(rel.as_posix())}" target="_blank" '
        f'rel="noopener noreferrer">open</a>'
    )


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
        self.w_export.value = export_link_html(path, label, jupyter_root())
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
