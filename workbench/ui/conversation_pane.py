"""The Conversation tab: the PR's description and discussion (HTML from conversation.py), rendered lazily.

A step costs nothing here while the tab is hidden: the PR is only noted, and rendered when the tab is
opened. Open, it renders the description and the first `page` entries of the discussion; "Show more"
adds the next page. A PR with hundreds of comments therefore costs one page of Markdown per step."""

from __future__ import annotations

from typing import Any

import ipywidgets as w

from . import conversation as C
from .status import StatusLine, guarded

PAGE = 30  # discussion entries rendered per step / per "Show more"
_PLACEHOLDER = '<div class="wb-dim">…</div>'


class ConversationPane:
    def __init__(self, status: StatusLine, *, page: int = PAGE):
        self.status = status
        self.page = page
        self.visible = False
        self.record: Any = None
        self.conventions: Any = None
        self.entries: list[C.Entry] = []
        self.shown = 0  # entries rendered so far
        self._parts: list[str] = []  # their HTML, so "Show more" renders only the new ones
        self._head = ""
        self._stale = True
        self.w_conv = w.HTML()
        self.w_conv.add_class("wb-conv")
        self.b_more = w.Button(description="Show more", icon="angle-down", layout=w.Layout(display="none"))
        self.widget = w.VBox([self.w_conv, self.b_more])
        self.b_more.on_click(lambda _: self.more())

    def load(self, record: Any, conventions: Any) -> None:
        """A new PR (or none): render it now if the tab is open, else when it is opened."""
        self.record, self.conventions = record, conventions
        self._stale = True
        if self.visible:
            self.render()
        elif self.w_conv.value != _PLACEHOLDER:
            self.w_conv.value = _PLACEHOLDER
            self.b_more.layout.display = "none"

    def set_visible(self, visible: bool) -> None:
        self.visible = visible
        if visible and self._stale:
            self.render()

    @guarded
    def render(self) -> None:
        self._stale = False
        r = self.record
        if r is None:
            self.entries, self._parts, self.shown = [], [], 0
            self._head = '<div class="wb-dim">No PR selected.</div>'
            return self._update()
        self.entries = C.timeline(r)
        self._head = (
            C.counts_html(C.counts(self.entries))
            + f'<div class="wb-conv-desc"><div class="wb-conv-head"><b>{C.e(r.author or "(deleted user)")}</b> '
            f"wrote</div>{C.description_html(r.body, self.conventions)}</div>"
        )
        self._parts, self.shown = [], 0
        self._extend()

    @guarded
    def more(self) -> None:
        self._extend()

    def _extend(self) -> None:
        new = self.entries[self.shown : self.shown + self.page]
        self._parts.extend(C.entry_html(x) for x in new)
        self.shown += len(new)
        self._update()

    def _update(self) -> None:
        self.w_conv.value = self._head + "".join(self._parts)
        left = len(self.entries) - self.shown
        self.b_more.description = f"Show {min(left, self.page)} more ({left} not shown)"
        self.b_more.layout.display = "" if left > 0 else "none"
