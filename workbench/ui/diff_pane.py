"""The diff column: the PR's files as an accordion, one page of `page_size` files at a time, each file
rendered only when opened (HTML comes from diffview). A 3,000-file PR costs one page per step."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import SimpleNamespace
from typing import Any

import ipywidgets as w

from . import diffview
from .panels import e
from .status import StatusLine, guarded

PAGE_SIZE = 50  # files per page of the diff list: a 3,000-file PR stays usable


def raw_file(f: dict) -> SimpleNamespace:
    """A stand-in FileDiff when the diff model is unavailable: the raw patch is shown as text."""
    return SimpleNamespace(
        filename=f.get("filename", "?"),
        old_filename=f.get("previous_filename"),
        status=f.get("status"),
        role="?",
        additions=int(f.get("additions") or 0),
        deletions=int(f.get("deletions") or 0),
        binary=False,
        patch_missing=not f.get("patch"),
        hunks=[],
        raw_patch=f.get("patch"),
    )


class LazyFiles(Sequence):
    """The PR's files in display order, parsed into FileDiffs only when a page shows them."""

    def __init__(self, raw: list[dict], parse: Callable[[dict], Any]):
        self.raw = raw
        self._parse = parse
        self._parsed: dict[int, Any] = {}

    def __len__(self) -> int:
        return len(self.raw)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self.raw)))]
        if i < 0:
            i += len(self.raw)
        if i not in self._parsed:
            self._parsed[i] = self._parse(self.raw[i])
        return self._parsed[i]


def pages_of(count: int, page_size: int) -> int:
    return max(1, -(-count // page_size))


def files_info_html(raw: list[dict], *, page: int, page_size: int, truncated: bool) -> str:
    """The line above the files: how many, how big, which page; says when GitHub cut the list."""
    if not raw:
        return '<div class="wb-note">no files cached for this PR</div>'
    start = page * page_size
    shown = len(raw[start : start + page_size])
    adds = sum(int(f.get("additions") or 0) for f in raw)
    dels = sum(int(f.get("deletions") or 0) for f in raw)
    pages = pages_of(len(raw), page_size)
    where = (
        f" · files {start + 1}–{start + shown} (page {page + 1} / {pages})" if len(raw) > page_size else ""
    )
    trunc = " · GitHub listed only the first 3,000 files" if truncated else ""
    return f"<b>{len(raw)} files</b> +{adds} −{dels}{where}{e(trunc)}"


class DiffPane:
    def __init__(self, status: StatusLine, *, page_size: int = PAGE_SIZE, auto_open: bool = True):
        self.status = status
        self.page_size = page_size
        self.auto_open = auto_open
        self.files = LazyFiles([], raw_file)
        self.page = 0
        self.truncated = False
        self._key_set: set[str] = set()
        self._rendered: dict[int, int | None] = {}  # pool slot -> limit it was rendered with
        lay = w.Layout
        self.w_files_info = w.HTML()
        self.b_page_prev = w.Button(description="◀ files", layout=lay(width="80px"))
        self.b_page_next = w.Button(description="files ▶", layout=lay(width="80px"))
        self.w_pager = w.HBox([self.b_page_prev, self.b_page_next])
        self.pool = [w.HTML() for _ in range(page_size)]  # reused across PRs: no widget churn per step
        self.w_files = w.Accordion(children=[])
        self.b_show_all = w.Button(description="Show all lines", layout=lay(display="none"))
        self.widget = w.VBox(
            [self.w_files_info, self.w_pager, self.w_files, self.b_show_all],
            layout=lay(width="58%", padding="0 8px 0 0"),
        )
        self.b_page_prev.on_click(lambda _: self.show_page(self.page - 1))
        self.b_page_next.on_click(lambda _: self.show_page(self.page + 1))
        self.w_files.observe(self._on_open_file, names="selected_index")
        self.b_show_all.on_click(lambda _: self.show_all())

    def load(self, raw: list[dict], parse: Callable[[dict], Any], key_files: list[str], *, truncated=False):
        """Show a PR's files, the heuristics' key files first (then GitHub's order), from page one."""
        self._key_set = set(key_files)
        ordered = diffview.order_files(raw, key_files, name=lambda f: f.get("filename"))
        self.files = LazyFiles(ordered, parse)
        self.truncated = truncated
        self.set_page(0)

    @property
    def pages(self) -> int:
        return pages_of(len(self.files), self.page_size)

    @guarded
    def show_page(self, page: int) -> None:
        self.set_page(max(0, min(page, self.pages - 1)))

    def set_page(self, page: int) -> None:
        self.page = page
        start = page * self.page_size
        chunk = self.files[start : start + self.page_size]
        for slot in self.pool[: len(chunk)]:
            if slot.value:
                slot.value = ""  # cheap placeholder until opened
        self._rendered = {}
        self.w_files.selected_index = None
        self.w_files.children = tuple(self.pool[: len(chunk)])
        self.w_files.titles = tuple(diffview.file_title(f, key=f.filename in self._key_set) for f in chunk)
        self.w_files_info.value = files_info_html(
            self.files.raw, page=page, page_size=self.page_size, truncated=self.truncated
        )
        paged = len(self.files) > self.page_size
        self.w_pager.layout.display = "flex" if paged else "none"
        self.b_page_prev.disabled = page == 0
        self.b_page_next.disabled = page >= self.pages - 1
        self.b_show_all.layout.display = "none"
        if chunk and self.auto_open:
            self.w_files.selected_index = 0

    def _on_open_file(self, change) -> None:
        if change["new"] is None:
            self.b_show_all.layout.display = "none"
            return
        self.render_file(change["new"])

    @guarded
    def render_file(self, slot: int, limit: int | None = diffview.LIMIT) -> diffview.RenderedFile:
        fd = self.files[self.page * self.page_size + slot]
        if hasattr(fd, "raw_patch"):
            out = diffview.render_raw_patch(fd.filename, fd.raw_patch)
        else:
            out = diffview.render_file(fd, limit=limit)
        if self._rendered.get(slot, "none") != limit or not self.pool[slot].value:
            self.pool[slot].value = out.html
            self._rendered[slot] = limit
        self.b_show_all.description = f"Show all {out.total} lines"
        self.b_show_all.layout.display = "" if out.cut and limit is not None else "none"
        return out

    @guarded
    def show_all(self) -> None:
        idx = self.w_files.selected_index
        if idx is not None:
            self.render_file(idx, limit=None)
