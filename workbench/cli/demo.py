"""`workbench demo` (the main job on the sample, then JupyterLab at the review notebook) and
`workbench app` (the review notebook as a local Voila app)."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from .common import add_cache, cache_arg

NOTEBOOK = "review.ipynb"


def register(sub) -> None:
    p = sub.add_parser(
        "demo",
        help="the main job on the bundled sample: load it, draft briefs, write the digest, open JupyterLab",
        description="Load the sample, draft offline briefs, write the digest and the trends report under "
        "./exports, then serve JupyterLab at the review notebook (or stop there with --headless). "
        "Ctrl-C or SIGTERM stops the server it started.",
    )
    add_cache(p)
    p.add_argument(
        "--headless", action="store_true", help="write the digest and report, do not start JupyterLab"
    )
    p.add_argument("-o", "--output", metavar="FILE", help="digest file (default: ./exports/sample-digest.md)")
    _add_server_options(p)
    p.set_defaults(run=run_demo)

    p = sub.add_parser(
        "app",
        help="serve the review notebook as a local app (Voila, on 127.0.0.1 with a generated token)",
        description="Serve notebooks/review.ipynb through Voila on 127.0.0.1 with a generated token and "
        "print the full URL. Needs the app extra: pip install 'pr-workbench[app]' (from a checkout: "
        "pip install -e '.[app]').",
    )
    add_cache(p)
    _add_server_options(p)
    p.set_defaults(run=run_app)


def _add_server_options(p) -> None:
    p.add_argument("--port", type=int, help="port on 127.0.0.1 (default: 8888 when free, else any free port)")
    p.add_argument("--no-browser", action="store_true", help="print the URL, do not open a browser")


def _tool(name: str) -> str | None:
    """A script of this environment (beside its python, so an unactivated venv finds its own), else PATH's."""
    sibling = Path(sys.executable).with_name(name)
    return str(sibling) if sibling.is_file() and os.access(sibling, os.X_OK) else shutil.which(name)


def _notebook() -> Path:
    from ..config import WorkbenchError, notebooks_dir

    path = notebooks_dir() / NOTEBOOK
    if not path.is_file():
        raise WorkbenchError(
            f"{path} is missing: reinstall pr-workbench (the notebooks ship with it), or run from a checkout"
        )
    return path


def _env(cache: str | None) -> dict[str, str]:
    """The server's (and so its kernels') environment: the same cache and exports as this command."""
    from ..config import cache_dir, exports_dir
    from ..ui.lab_env import lab_env

    return lab_env(
        dict(
            os.environ,
            WORKBENCH_CACHE=str(cache_dir(cache).resolve()),
            WORKBENCH_EXPORTS=str(exports_dir().resolve()),
        )
    )


def _root_flag() -> list[str]:
    return ["--allow-root"] if hasattr(os, "geteuid") and os.geteuid() == 0 else []


def run_demo(args) -> int:
    from ..config import WorkbenchError
    from ..demo import run_demo as demo
    from .serve import new_token, pick_port, serve

    result = demo(cache_arg(args), args.output, progress=sys.stderr.isatty())
    print(f"sample loaded into {result.cache}: {', '.join(result.repos)}")
    print(f"digest: {result.digest}")
    print(f"trends report: {result.report}")
    if args.headless:
        return 0
    jupyter = _tool("jupyter")
    if not jupyter:
        raise WorkbenchError(
            "jupyter is not on PATH: install pr-workbench into this environment (pip install .)"
        )
    notebook = _notebook()
    token = new_token()
    port = pick_port(args.port)
    base = f"http://127.0.0.1:{port}"
    cmd = [
        jupyter,
        "lab",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",  # another port would make the printed URL wrong
        f"--ServerApp.root_dir={notebook.parent}",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.default_url=/lab/tree/{notebook.name}",  # a bare base URL lands in the notebook too
        "--LabApp.news_url=None",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        *(["--no-browser"] if args.no_browser else []),
        *_root_flag(),
    ]
    return serve(
        cmd,
        env=_env(cache_arg(args)),
        cwd=str(notebook.parent),
        ready_url=f"{base}/api/status?token={token}",
        url=f"{base}/lab/tree/{notebook.name}?token={token}",
        what="JupyterLab",
    )


def run_app(args) -> int:
    from ..config import WorkbenchError
    from .serve import new_token, pick_port, serve

    voila = _tool("voila")
    if not voila:
        raise WorkbenchError(
            "voila is not installed: pip install 'pr-workbench[app]' (from a checkout: pip install -e '.[app]')"
        )
    notebook = _notebook()
    token = new_token()
    port = pick_port(args.port)
    base = f"http://127.0.0.1:{port}"
    cmd = [
        voila,
        str(notebook),
        "--Voila.ip=127.0.0.1",
        f"--port={port}",
        "--Voila.port_retries=0",
        f"--token={token}",
        *(["--no-browser"] if args.no_browser else []),
    ]
    return serve(
        cmd,
        env=_env(cache_arg(args)),
        cwd=str(notebook.parent),
        ready_url=f"{base}/voila/static/?token={token}",  # any answer will do; "/" would start a kernel
        url=f"{base}/?token={token}",
        what="Voila",
    )
