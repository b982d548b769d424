"""The debouncer behind autosave: one save per burst of edits, at once on flush, never after cancel."""

from __future__ import annotations

import threading
import time

from workbench.ui.autosave import Autosaver


def test_burst_of_touches_saves_once_after_the_delay():
    saved = threading.Event()
    calls = []
    a = Autosaver(lambda: (calls.append(time.monotonic()), saved.set()), delay=0.15)
    start = time.monotonic()
    for _ in range(5):
        a.touch()
        time.sleep(0.03)
    assert saved.wait(3)
    time.sleep(0.3)
    assert len(calls) == 1 and calls[0] - start >= 0.15 + 4 * 0.03 - 0.02  # counted from the last touch


def test_flush_saves_now_and_only_when_pending():
    calls = []
    a = Autosaver(lambda: calls.append(1), delay=30)
    assert a.flush() is False
    a.touch()
    assert a.pending and a.flush() is True and calls == [1] and not a.pending
    assert a.flush() is False


def test_cancel_drops_the_pending_save():
    calls = []
    a = Autosaver(lambda: calls.append(1), delay=0.05)
    a.touch()
    a.cancel()
    time.sleep(0.2)
    assert calls == [] and not a.pending


def test_zero_delay_saves_synchronously():
    calls = []
    a = Autosaver(lambda: calls.append(1), delay=0)
    a.touch()
    assert calls == [1]
