"""Export buttons: this PR's brief, or a digest of the whole queue, written under exports/ by workbench.export.

The app flushes the editor before calling these, so an export never misses the last words typed."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import ipywidgets as w

from ..config import WorkbenchError
from ..store import Store
from .panels import e
from .status import StatusLine, guarded, optional


@dataclass
class JupyterServer:
    root: Path  # the directory it serves
    base_url: str  # "/" unless the server runs under a prefix


def jupyter_server(env: Mapping[str, str] | None = None, cwd: str | None = None) -> JupyterServer | None:
    """The Jupyter server this kernel belongs to; None outside one (a plain Python process, Voila).

    A server writes `jpserver-<pid>.json` (root_dir, base_url, ...) in the Jupyter runtime directory and
    starts its kernels as child processes, so the kernel's parent names its file (only root_dir and
    base_url are read from it). Else, older servers set JPY_SESSION_NAME to the notebook's path under the
    root, in whose directory the kernel starts."""
    env = os.environ if env is None else env
    try:
        from jupyter_core.paths import jupyter_runtime_dir

        info = Path(jupyter_runtime_dir()) / f"jpserver-{os.getppid()}.json"
        if info.is_file():
            d = json.loads(info.read_text())
            return JupyterServer(Path(d["root_dir"]).expanduser(), d.get("base_url") or "/")
    except (ImportError, OSError, ValueError, KeyError):
        pass
    session = env.get("JPY_SESSION_NAME")
    if not session or os.path.isabs(session):
        return None
    here = Path(cwd or os.getcwd()).resolve()
    depth = len(Path(session).parent.parts)
    if depth > len(here.parents):
        return None
    return JupyterServer(here.parents[depth - 1] if depth else here, "/")


def export_link_html(path: Path, label: str, server: JupyterServer | None = None) -> str:
    """What was written, and an "open" link when the file is under the Jupyter server's root.

    The link is JupyterLab's URL of the file (<base>/lab/tree/<path under the root>), and carries that
    path in `data-wb-open` so keys.js can open it beside the notebook instead. A path relative to the
    kernel's directory, as before, resolved against the page's URL (/lab/tree/...) to a blank page.
    Outside the root JupyterLab cannot open the file, so no link is offered."""
    shown = f"{e(label)}: <code>{e(str(path))}</code>"
    if server is None:
        return shown
    try:
        rel = Path(path).resolve().relative_to(server.root.resolve()).as_posix()
    except ValueError:  # outside the root
        return shown + ' <span class="wb-dim">(outside the Jupyter root: open it from a terminal)</span>'
    href = server.base_url.rstrip("/") + "/lab/tree/" + quote(rel)
    return (
        f'{shown} · <a href="{e(href)}" data-wb-open="{e(rel)}" target="_blank" '
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
        self.w_export.value = export_link_html(path, label, jupyter_server())
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
