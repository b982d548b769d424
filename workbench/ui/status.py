"""How the review app tells the reader what happened: one status line, an error log, handlers that never raise.

Every handler a button calls is wrapped in `guarded`: an exception lands in the status line (its traceback in
the log) instead of JupyterLab's log console, where nobody would see it. Modules built by other parts of the
team are imported through `optional`, so a missing one becomes a message instead of a dead app.
"""

from __future__ import annotations

import functools
import importlib
import time
import traceback

import ipywidgets as w

from ..config import WorkbenchError
from .panels import e


def optional(name: str):
    """Import a sibling module; (module, None), or (None, the reason) when it is absent."""
    try:
        return importlib.import_module(name), None
    except ImportError as err:
        return None, f"{name} unavailable ({err})"


class StatusLine:
    """The last thing that happened (text + kind: ok | warn | err), shown with a time stamp."""

    def __init__(self) -> None:
        self.text = ""
        self.kind = "ok"
        self.last_error: str | None = None
        self.widget = w.HTML()
        self.log = w.Output(layout=w.Layout(max_height="160px", overflow="auto"))

    def show(self, text: str, kind: str = "ok") -> None:
        self.text, self.kind = text, kind
        stamp = time.strftime("%H:%M:%S")
        self.widget.value = (
            f'<span class="wb-status-{kind}">{e(text)}</span> <span class="wb-dim">{stamp}</span>'
        )

    def error(self, message: str, tb: str | None = None) -> None:
        self.last_error = message
        self.show(message, "err")
        if tb:
            self.log.append_stderr(tb)  # thread-safe, unlike `with self.log:` from a timer thread

    def crash(self, err: BaseException, prefix: str = "") -> None:
        """Report an unexpected exception (a bug) with its traceback; the reader's text must survive it."""
        self.error(f"{prefix}{type(err).__name__}: {err}", traceback.format_exc())


def guarded(fn):
    """Wrap a method of an object with a `status: StatusLine`: errors go to the status line, never raise."""

    @functools.wraps(fn)
    def wrapper(self, *args, **kwargs):
        try:
            return fn(self, *args, **kwargs)
        except WorkbenchError as err:
            self.status.error(str(err))
        except Exception as err:  # noqa: BLE001 - anything else is a bug, but the reviewer's text must survive it
            self.status.crash(err)
        return None

    return wrapper
