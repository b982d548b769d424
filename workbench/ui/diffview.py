"""One file's unified diff as HTML: pygments-highlighted, escaped, with old/new line numbers.

Speed matters because this runs on every step through the queue (DESIGN.md §7): highlighting line by line
costs ~4x more than one `highlight()` call per side, so each side's visible lines are highlighted in one call
and the formatter's output (nowrap=True: one output line per input line) is interleaved back. Files are cut
at `LIMIT` lines until the reader asks for all of them. Everything from the PR is escaped: pygments escapes
token text, and every other string goes through `html.escape`.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import PurePosixPath
from typing import Any

from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import TextLexer, get_lexer_for_filename
from pygments.token import STANDARD_TYPES
from pygments.util import ClassNotFound

LIMIT = 400  # lines shown before "show all"
MAX_ALL = 5000  # "show all" stops here: beyond it a browser tab struggles; GitHub has the rest
MAX_LINE = 1000  # characters per line: a minified bundle must not freeze the browser
ROLE_COLORS = {
    "code": "#0b6e4f",
    "test": "#6a4c93",
    "docs": "#1d70b8",
    "ci": "#b35c00",
    "build": "#8a6d00",
    "config": "#5f6b7a",
    "generated": "#888",
    "binary": "#888",
    "notebook": "#c2185b",
    "data": "#795548",
}

_FORMATTER = HtmlFormatter(nowrap=True)
# Spans for token classes the style does not colour (names, punctuation) carry nothing but bytes: most
# tokens in code are names, so dropping them makes each step's HTML roughly half as big.
_PLAIN_CLASSES = "|".join(
    re.escape(c) for c in sorted(set(STANDARD_TYPES.values()) - set(_FORMATTER.class2style)) if c
)
_UNSTYLED = re.compile(rf'<span class="(?:{_PLAIN_CLASSES})">([^<]*)</span>')

DIFF_CSS = (
    _FORMATTER.get_style_defs(".wb-diff .wb-code")
    + """
.wb-diff { border-collapse: collapse; font-family: var(--jp-code-font-family, monospace); font-size: 12px;
  width: 100%; table-layout: auto; }
.wb-diff td { padding: 0 6px; vertical-align: top; line-height: 1.45; }
.wb-diff td:nth-child(1), .wb-diff td:nth-child(2) { color: #999; text-align: right; user-select: none; width: 1%;
  white-space: nowrap; }
.wb-diff td:nth-child(3) { user-select: none; width: 1%; color: #777; }
.wb-diff td.wb-code, .wb-diff td:nth-child(4) { white-space: pre-wrap; word-break: break-all; }
.wb-diff tr.a, .wb-diff tr.wb-add { background: #e6ffec; } .wb-diff tr.d, .wb-diff tr.wb-del { background: #ffebe9; }
.wb-diff tr.h td, .wb-diff tr.wb-hunk td { background: #ddf4ff; color: #57606a; }
.wb-note { color: #57606a; font-style: italic; padding: 4px 0; }
.wb-badge { display: inline-block; padding: 0 6px; border-radius: 8px; color: #fff; font-size: 11px; margin-right: 4px; }
"""
)


@lru_cache(maxsize=512)
def _lexer_for(name: str):
    # Cached by base name: get_lexer_for_filename scans every lexer's patterns (slow on the first call).
    try:
        return get_lexer_for_filename(name, stripnl=False, ensurenl=False)
    except ClassNotFound:
        return TextLexer(stripnl=False, ensurenl=False)
    except Exception:  # a lexer plugin that fails to load must not break the diff
        return TextLexer(stripnl=False, ensurenl=False)


def lexer_for(filename: str):
    return _lexer_for(PurePosixPath(filename or "x.txt").name.lower())


def _clean(text: str) -> str:
    text = text.replace("\r", "").replace("\n", " ")
    return text if len(text) <= MAX_LINE else text[:MAX_LINE] + " …"


def highlight_lines(lines: list[str], filename: str) -> list[str]:
    """HTML for each line, highlighted in one pygments call; escaped plain text if that goes wrong."""
    if not lines:
        return []
    try:
        out = highlight("\n".join(lines) + "\n", lexer_for(filename), _FORMATTER)
        parts = _UNSTYLED.sub(r"\1", out).split("\n")
        if parts and parts[-1] == "":
            parts.pop()
        if len(parts) == len(lines):
            return parts
    except Exception:
        pass
    return [html.escape(x) for x in lines]


@dataclass
class RenderedFile:
    html: str
    shown: int  # diff lines rendered
    total: int  # diff lines in the file

    @property
    def cut(self) -> bool:
        return self.shown < self.total


def badge(role: str) -> str:
    color = ROLE_COLORS.get(role, "#555")
    return f'<span class="wb-badge" style="background:{color}">{html.escape(role or "?")}</span>'


def status_notes(fd: Any) -> list[str]:
    """Plain-text notes for files whose content is not a normal text diff."""
    notes = []
    status = getattr(fd, "status", "") or ""
    old = getattr(fd, "old_filename", None)
    if status == "renamed" or (old and old != fd.filename):
        notes.append(f"renamed from {old}")
    if status == "removed":
        notes.append("file removed")
    if status == "added":
        notes.append("new file")
    if getattr(fd, "binary", False):
        notes.append("binary file: no text diff")
    elif getattr(fd, "patch_missing", False):
        notes.append("patch omitted by GitHub (too large) or not cached: open the PR on GitHub to see it")
    return notes


def count_lines(fd: Any) -> int:
    return sum(len(h.lines) + 1 for h in getattr(fd, "hunks", []) or [])


def render_file(fd: Any, *, limit: int | None = LIMIT) -> RenderedFile:
    """The HTML for one `workbench.analysis.diff.FileDiff`. `limit=None` renders every line, up to MAX_ALL."""
    notes = "".join(f'<div class="wb-note">{html.escape(n)}</div>' for n in status_notes(fd))
    hunks = list(getattr(fd, "hunks", []) or [])
    total = count_lines(fd)
    if not hunks:
        if not notes:
            notes = '<div class="wb-note">no textual changes (mode change or empty file)</div>'
        return RenderedFile(notes, 0, total)
    # Pick the visible rows first (hunk headers count as rows), then highlight only those.
    rows: list[tuple[str, Any]] = []
    budget = min(total, MAX_ALL) if limit is None else limit
    for h in hunks:
        if len(rows) >= budget:
            break
        rows.append(("hunk", h))
        for line in h.lines:
            if len(rows) >= budget:
                break
            rows.append(("line", line))
    old_src = [_clean(x.text) for k, x in rows if k == "line" and x.kind != "+"]
    new_src = [_clean(x.text) for k, x in rows if k == "line" and x.kind != "-"]
    old_html = iter(highlight_lines(old_src, fd.filename))
    new_html = iter(highlight_lines(new_src, fd.filename))
    out = [notes, '<table class="wb-diff">']
    for kind, x in rows:
        if kind == "hunk":
            head = f"@@ -{x.old_start},{x.old_len} +{x.new_start},{x.new_len} @@ {x.section or ''}".rstrip()
            out.append(f"<tr class=h><td><td><td><td>{html.escape(head)}")
            continue
        if x.kind == "+":
            code, cls = next(new_html), "a"
        elif x.kind == "-":
            code, cls = next(old_html), "d"
        else:
            next(old_html)
            code, cls = next(new_html), "c"
        old_no = "" if x.old_no is None else x.old_no
        new_no = "" if x.new_no is None else x.new_no
        # Closing </td> and </tr> are optional in HTML: leaving them out keeps a 400-line step much smaller.
        sign = x.kind if x.kind in ("+", "-") else " "
        out.append(f"<tr class={cls}><td>{old_no}<td>{new_no}<td>{sign}<td>{code}")
    out.append("</table>")
    shown = len(rows)
    if shown < total:
        hint = 'press "Show all lines" below' if shown < min(total, MAX_ALL) else "the rest is on GitHub"
        out.append(f'<div class="wb-note">showing {shown} of {total} lines: {html.escape(hint)}</div>')
    return RenderedFile("".join(out), shown, total)


def render_raw_patch(filename: str, patch: str | None, *, limit: int = LIMIT) -> RenderedFile:
    """Fallback when the diff model is unavailable: the patch as escaped text."""
    if not patch:
        return RenderedFile('<div class="wb-note">no patch cached for this file</div>', 0, 0)
    lines = patch.splitlines()
    shown = lines[:limit]
    body = html.escape("\n".join(_clean(x) for x in shown))
    more = (
        f'<div class="wb-note">showing {len(shown)} of {len(lines)} lines</div>'
        if len(shown) < len(lines)
        else ""
    )
    return RenderedFile(
        f'<div class="wb-note">diff model unavailable: raw patch</div><pre class="wb-diff">{body}</pre>{more}',
        len(shown),
        len(lines),
    )


def file_title(fd: Any, *, key: bool = False) -> str:
    """Accordion titles are plain text (not HTML) in ipywidgets 8, so no escaping is needed here."""
    mark = "★ " if key else ""
    role = getattr(fd, "role", "") or "?"
    extra = []
    if getattr(fd, "binary", False):
        extra.append("binary")
    elif getattr(fd, "patch_missing", False):
        extra.append("patch omitted")
    status = getattr(fd, "status", "")
    if status in ("removed", "renamed", "added"):
        extra.append(status)
    tail = f" ({', '.join(extra)})" if extra else ""
    return f"{mark}[{role}] {fd.filename}  +{fd.additions} −{fd.deletions}{tail}"


def order_files(files: list[Any], key_files: list[str], *, name=lambda f: f.filename) -> list[Any]:
    """Key files first, in the heuristics' order; then the rest as GitHub listed them (sorted is stable).
    `name` reads a file's name: FileDiffs by default, raw GitHub file dicts with `lambda f: f["filename"]`."""
    rank = {n: i for i, n in enumerate(key_files)}
    return sorted(files, key=lambda f: rank.get(name(f), len(rank)))
