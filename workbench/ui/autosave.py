"""Debounced saving: a save runs `delay` seconds after the last keystroke, or at once on `flush()`.

A `threading.Timer` rather than asyncio: the kernel's event loop is not running under plain pytest or
when the app is driven from a script, and a timer works in all three (notebook, Voila, tests).
`flush()` is called on navigation and before export, so leaving a PR never leaves words unsaved.
"""

from __future__ import annotations

import threading
from collections.abc import Callable


class Autosaver:
    def __init__(self, save: Callable[[], None], delay: float = 1.0):
        self._save = save
        self.delay = delay
        self._lock = threading.RLock()  # serialises saves: a timer firing during flush() waits
        self._timer: threading.Timer | None = None
        self._pending = False
        self.saves = 0

    @property
    def pending(self) -> bool:
        return self._pending

    def touch(self) -> None:
        """Something changed: (re)start the countdown."""
        with self._lock:
            self._pending = True
            if self._timer is not None:
                self._timer.cancel()
            if self.delay <= 0:
                self._timer = None
            else:
                self._timer = threading.Timer(self.delay, self._fire)
                self._timer.daemon = True
                self._timer.start()
        if self.delay <= 0:
            self.flush()

    def _fire(self) -> None:
        self.flush()

    def flush(self) -> bool:
        """Save now if anything is pending; True when a save ran."""
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            if not self._pending:
                return False
            self._pending = False
            self.saves += 1
            self._save()  # the callback reports its own errors; a failure here must not kill the timer thread
            return True

    def cancel(self) -> None:
        """Drop what is pending (used after the text was saved another way)."""
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            self._pending = False
