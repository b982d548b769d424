"""Machine drafts for the brief editor as plain functions, no widgets: the offline draft, one LLM draft
streamed on a background thread (throttled, cancellable), and Brief <-> Markdown for saving.

A script or test can call `offline_draft(record, analysis, "en")` and get the same text the button saves.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..config import WorkbenchError
from .status import StatusLine, optional

MACHINE_SOURCES = ("offline", "llm")


@dataclass
class Draft:
    text: str  # the Markdown that goes into the editor / history
    source: str  # offline | llm
    brief: dict | None = None  # Brief.to_dict(), stored beside the text
    meta: dict = field(default_factory=dict)


def render_brief(brief) -> str:
    brief_mod, why = optional("workbench.brief")
    if brief_mod is None or not hasattr(brief_mod, "render_brief"):
        raise WorkbenchError(f"brief rendering unavailable: {why or 'render_brief missing'}")
    return brief_mod.render_brief(brief)


def parse_brief_dict(text: str, *, repo: str, number: int, lang: str) -> dict | None:
    """The structured brief behind a text, or None for free-form text (allowed: the Markdown is what is kept)."""
    parse = getattr(optional("workbench.brief")[0], "parse_brief", None)
    if parse is None:
        return None
    try:
        return parse(text, repo=repo, number=number, lang=lang).to_dict()
    except Exception:  # noqa: BLE001 - free-form text is allowed
        return None


def offline_draft(record, analysis, lang: str) -> Draft:
    """The offline drafter's brief; without heuristics (analysis None) it uses the PR text alone."""
    drafting, why = optional("workbench.drafting.offline")
    fn = getattr(drafting, "draft_offline", None) or getattr(
        optional("workbench.drafting")[0], "draft_offline", None
    )
    if fn is None:
        raise WorkbenchError(f"offline drafter unavailable: {why}")
    brief = fn(record, analysis, lang)
    return Draft(render_brief(brief), "offline", brief.to_dict(), {"drafter": "offline"})


def llm_drafter(settings):
    """An LLMDrafter for `settings`, or a WorkbenchError saying why there is none."""
    if not settings.configured:
        raise WorkbenchError(f"LLM drafting is off: {settings.why_not()}")
    llm_mod, why = optional("workbench.drafting.llm")
    drafter_cls = getattr(llm_mod, "LLMDrafter", None)
    if drafter_cls is None:
        raise WorkbenchError(f"LLM drafter unavailable: {why}")
    return drafter_cls(settings)


def llm_result_draft(result) -> Draft:
    """The Draft saved from a successful DraftResult (its meta: model, tokens, what was left out...)."""
    return Draft(render_brief(result.brief), "llm", result.brief.to_dict(), dict(result.meta or {}))


class Throttle:
    """Collects streamed text and passes the text so far to `push` at most every `interval` seconds
    (one widget update per 200 ms, not one per token). An empty delta means the drafter retried: start over."""

    def __init__(self, push: Callable[[str], None], interval: float = 0.2):
        self.push = push
        self.interval = interval
        self.parts: list[str] = []
        self._last = 0.0

    def __call__(self, delta: str) -> None:
        if delta == "":
            self.parts.clear()
        self.parts.append(delta)
        now = time.monotonic()
        if now - self._last > self.interval:
            self._last = now
            self.push("".join(self.parts))


class LLMDraftJob:
    """One LLM draft on a daemon thread. `finish(result)` gets the DraftResult (a Brief, or an error) on that
    thread; `end()` runs last whatever happened; errors go to `status`. `cancel()` stops the stream."""

    def __init__(
        self,
        drafter,
        record,
        analysis,
        lang: str,
        *,
        status: StatusLine,
        on_text: Callable[[str], None],
        finish: Callable[[Any], None],
        end: Callable[[], None],
    ):
        self.cancel_event = threading.Event()
        self._args = (drafter, record, analysis, lang, Throttle(on_text))
        self.status, self._finish, self._end = status, finish, end
        self.thread = threading.Thread(target=self._run, name="workbench-llm-draft", daemon=True)

    @property
    def cancelled(self) -> bool:
        return self.cancel_event.is_set()

    def start(self, wait: bool = False) -> None:
        self.thread.start()
        if wait:
            self.thread.join()

    def alive(self) -> bool:
        return self.thread.is_alive()

    def cancel(self) -> None:
        self.cancel_event.set()

    def _run(self) -> None:
        drafter, record, analysis, lang, throttle = self._args
        try:
            self._finish(
                drafter.draft(record, analysis, lang=lang, on_text=throttle, cancel=self.cancel_event)
            )
        except WorkbenchError as err:
            self.status.error(str(err))
        except Exception as err:  # noqa: BLE001 - a thread's exception would otherwise vanish
            self.status.crash(err, "LLM draft failed: ")
        finally:
            self._end()
