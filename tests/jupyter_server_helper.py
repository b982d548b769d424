"""Start a real `jupyter lab` on 127.0.0.1 for browser tests, and stop it (only the process we started).

Logs go to a file, not a pipe: a full pipe would block the server mid-test.
"""

from __future__ import annotations

import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from workbench.ui.lab_env import lab_env


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class JupyterLab:
    proc: subprocess.Popen
    port: int
    token: str
    root: Path
    log: Path

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def url(self, path: str) -> str:
        return f"{self.base}/{path.lstrip('/')}?token={self.token}"

    def log_tail(self, n: int = 4000) -> str:
        try:
            return self.log.read_text(errors="replace")[-n:]
        except OSError:
            return ""

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(
                signal.SIGINT
            )  # jupyter asks for confirmation on the first SIGINT; send two
            time.sleep(0.3)
            if self.proc.poll() is None:
                self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=5)


def start_lab(root: Path, env: dict[str, str], log: Path, *, timeout: float = 90.0) -> JupyterLab:
    """`jupyter lab` serving `root` with a random token; waits until /api/status answers."""
    port, token = free_port(), secrets.token_hex(16)
    cmd = [
        sys.executable,
        "-m",
        "jupyter",
        "lab",
        "--no-browser",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}",
        "--LabApp.news_url=None",
        "--LabApp.expose_app_in_browser=True",
        "--ServerApp.port_retries=0",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
    ]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-root")
    full_env = lab_env({**os.environ, **env})  # no "Jupyter news?" toast over the app
    fh = open(log, "wb")  # noqa: SIM115 - the server owns it for its lifetime
    proc = subprocess.Popen(cmd, cwd=root, env=full_env, stdout=fh, stderr=subprocess.STDOUT)
    lab = JupyterLab(proc, port, token, root, log)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"jupyter lab exited with {proc.returncode}:\n{lab.log_tail()}")
        try:
            with urllib.request.urlopen(lab.url("api/status"), timeout=2) as r:
                if r.status == 200:
                    return lab
        except OSError:
            time.sleep(0.5)
    lab.stop()
    raise RuntimeError(f"jupyter lab did not answer on port {port} within {timeout}s:\n{lab.log_tail()}")
