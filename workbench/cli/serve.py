"""Run a local Jupyter server (JupyterLab for `demo`, Voila for `app`) for as long as the command runs.

The server is our child in its own session, so the terminal's Ctrl-C reaches only us; on Ctrl-C or
SIGTERM we stop it with SIGTERM (Jupyter shuts its kernels down on that, without the "Shutdown this
Jupyter server (y/[n])?" question SIGINT brings), then SIGKILL if it has not gone in time. The URL is
printed once the server answers, with the generated token, so the printed link works when clicked.
"""

from __future__ import annotations

import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

from ..config import WorkbenchError

START_TIMEOUT = 120.0  # a first JupyterLab start on a busy 2-core machine takes tens of seconds
STOP_TIMEOUT = 15.0


def new_token() -> str:
    return secrets.token_hex(16)


def pick_port(requested: int | None, preferred: int = 8888) -> int:
    """The port asked for, else `preferred` when it is free, else one the OS picks. The server is told
    this one port with no retries, so the printed URL is where it really listens."""
    if requested:
        return requested
    for port in (preferred, 0):
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return s.getsockname()[1]
    raise WorkbenchError("no free port on 127.0.0.1: pass --port")


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2):  # noqa: S310 (loopback, our own server)
            return True
    except urllib.error.HTTPError:  # the server is up; it just did not like the path
        return True
    except (urllib.error.URLError, ConnectionError, OSError):
        return False


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)  # the server and anything it started in its group
    except ProcessLookupError:
        return
    try:
        proc.wait(timeout=STOP_TIMEOUT)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()


def serve(cmd: list[str], *, env: dict[str, str], cwd: str, ready_url: str, url: str, what: str) -> int:
    """Start `cmd`, print `url` once `ready_url` answers, and wait; stop the server on Ctrl-C or SIGTERM."""

    def on_term(signum, frame):  # SIGTERM ends us the way Ctrl-C does: through the finally below
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, on_term)
    proc = subprocess.Popen(cmd, env=env, cwd=cwd, start_new_session=True)
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while not _answers(ready_url):
            if proc.poll() is not None:
                raise WorkbenchError(
                    f"{what} stopped while starting (exit {proc.returncode}); see its output above"
                )
            if time.monotonic() > deadline:
                raise WorkbenchError(
                    f"{what} did not answer within {START_TIMEOUT:.0f} s; see its output above"
                )
            time.sleep(0.3)
        print(f"{what} is serving at\n    {url}\n(Ctrl-C to stop)", flush=True)
        return proc.wait()
    except KeyboardInterrupt:
        print(f"stopping {what}", file=sys.stderr, flush=True)
        return 0
    finally:
        _stop(proc)
        signal.signal(signal.SIGTERM, previous)
