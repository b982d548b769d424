"""The j/k key listener: a tiny anywidget whose ESM ships inside the package (no CDN: works offline)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import anywidget

_ESM = (Path(__file__).with_name("keys.js")).read_text(encoding="utf-8")


class KeyListener(anywidget.AnyWidget):
    _esm = _ESM

    def __init__(self, on_key: Callable[[str], None], **kwargs):
        super().__init__(**kwargs)
        self._on_key = on_key
        self.on_msg(self._handle)

    def _handle(self, _widget, content, _buffers) -> None:
        key = content.get("key") if isinstance(content, dict) else None
        if key in ("j", "k"):
            self._on_key(key)
