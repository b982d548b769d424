"""The review app: step through a queue of PRs, read the diff and the heuristics, write the brief.

State and orchestration only: HTML comes from diffview/panels, the queue from queue.py, saving from the
store. Every method a button calls is also a plain method (`next()`, `go(n)`, `draft_offline()`,
`export_pr()`, ...) so tests and benchmarks drive the same code without a browser.

Never losing an edit is the design's centre:
- the editor autosaves (debounced) into the cache and flushes on navigation and export;
- each save names the version it was edited from, so a stale save (another notebook or Voila tab saved
  since) is refused by the store, which keeps the text as a 'conflict' version, and the app says so;
- a new machine draft never replaces text a person wrote: it goes into the history and the editor keeps
  the person's text (they can compare, or restore the draft explicitly);
- callbacks never raise into the void: errors land in the status line and the app's log.
"""

from __future__ import annotations

import functools
import importlib
import os
import threading
import time
import traceback
from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import ipywidgets as w

from ..config import WorkbenchError, exports_dir, llm_settings
from ..store import StaleEditError, Store, open_cache
from . import diffview, panels
from .autosave import Autosaver
from .queue import BRIEFED, DATE_FIELDS, STATES, VERDICTS, Queue, QueueFilters, filter_numbers

PAGE_SIZE = 50  # files per page of the diff list: a 3,000-file PR stays usable
MACHINE_SOURCES = ("offline", "llm")


def _optional(name: str):
    """Import a sibling module built by another part of the team; None (and the reason) when absent."""
    try:
        return importlib.import_module(name), None
    except ImportError as err:
        return None, f"{name} unavailable ({err})"


def guarded(fn):
    """Run a handler; show any error in the app instead of losing it in JupyterLab's log console."""

    @functools.wraps(fn)
    def wrapper(self, *args, **kwargs):
        try:
            return fn(self, *args, **kwargs)
        except WorkbenchError as err:
            self._report_error(str(err))
        except Exception as err:  # noqa: BLE001 - anything else is a bug, but the reviewer's text must survive it
            self._report_error(f"{type(err).__name__}: {err}", traceback.format_exc())
        return None

    return wrapper


def _raw_file(f: dict) -> SimpleNamespace:
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
    """The PR's files in display order, parsed into FileDiffs only when a page shows them:
    a 3,000-file PR costs one page of parsing per step, not 3,000 files."""

    def __init__(self, raw: list[dict], parse):
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


class ReviewApp:
    """`ReviewApp.open(cache, repo)` in a notebook; display the object to show the app."""

    def __init__(
        self,
        store: Store,
        *,
        repo: str | None = None,
        filters: QueueFilters | None = None,
        lang: str | None = None,
        autosave_delay: float = 1.0,
        page_size: int = PAGE_SIZE,
        exports: str | os.PathLike | None = None,
        auto_open: bool = True,
        number: int | None = None,
    ):
        self.store = store
        self.lang_param = lang
        self.page_size = page_size
        self.auto_open = auto_open
        self.exports = Path(exports) if exports else exports_dir()
        self.filters = filters or QueueFilters()
        self.queue = Queue()
        self.record = None
        self.analysis = None
        self.analysis_note: str | None = None
        self.files = LazyFiles([], _raw_file)
        self.page = 0
        self.status_text = ""
        self.status_kind = "ok"
        self.last_error: str | None = None
        self.last_export: Path | None = None
        self.conflict = False
        self._loaded_version: int | None = None
        self._loaded_text = ""
        self._loaded_source: str | None = None
        self._programmatic = False
        self._rendered: dict[int, int | None] = {}  # pool slot -> limit it was rendered with
        self._analyses: dict[tuple[str, int], Any] = {}
        self._known: dict[int, tuple[str, str]] = {}
        self._conventions = None
        self._llm_thread: threading.Thread | None = None
        self._llm_cancel = threading.Event()
        self.autosaver = Autosaver(self._autosave, delay=autosave_delay)
        self._build()
        repos = self._repo_names()
        self.repo = repo if repo else (repos[0] if repos else None)
        if self.repo and self.repo not in repos:
            self._report_error(
                f"repository {self.repo} is not in the cache (cached: {', '.join(repos) or 'none'})"
            )
            self.repo = repos[0] if repos else None
        self._syncing_widgets = True
        try:
            self.w_repo.options = repos
            self.w_repo.value = self.repo
            self.w_state.value = self.filters.state
            self.w_since.value = self.filters.since or ""
            self.w_date_field.value = self.filters.date_field
            self.w_verdict.value = self.filters.verdict
            self.w_briefed.value = self.filters.briefed
        finally:
            self._syncing_widgets = False
        self._open_repo(number)

    # ---- construction ------------------------------------------------------------------------------
    @classmethod
    def open(
        cls,
        cache: str | os.PathLike | None = None,
        repo: str | None = None,
        *,
        state: str = "all",
        since: str | None = None,
        date_field: str = "updated",
        verdict: str = "any",
        briefed: str = "any",
        lang: str | None = None,
        number: int | None = None,
        **kwargs,
    ) -> ReviewApp:
        """Open the cache (default: $WORKBENCH_CACHE or cache/) and show `repo`'s queue."""
        store = open_cache(cache)
        filters = QueueFilters(
            repo=repo, state=state, since=since, date_field=date_field, verdict=verdict, briefed=briefed
        )
        filters.check()
        return cls(store, repo=repo, filters=filters, lang=lang, number=number, **kwargs)

    def _build(self) -> None:
        lay = w.Layout
        self.w_style = w.HTML(f"<style>{diffview.DIFF_CSS}{panels.APP_CSS}</style>")  # injected once
        self.w_repo = w.Dropdown(description="Repo", layout=lay(width="260px"))
        self.w_state = w.Dropdown(options=STATES, description="State", layout=lay(width="170px"))
        self.w_date_field = w.Dropdown(options=DATE_FIELDS, description="Since", layout=lay(width="170px"))
        self.w_since = w.Text(placeholder="2026-01-31 or 7d", layout=lay(width="130px"))
        self.w_verdict = w.Dropdown(options=VERDICTS, description="Verdict", layout=lay(width="170px"))
        self.w_briefed = w.Dropdown(options=BRIEFED, description="Brief", layout=lay(width="190px"))
        self.b_apply = w.Button(
            description="Apply filters",
            icon="filter",
            tooltip="rebuild the queue (also picks up a sync's new PRs)",
        )
        self.b_prev = w.Button(description="Prev", icon="arrow-left", tooltip="previous PR (k)")
        self.b_next = w.Button(description="Next", icon="arrow-right", tooltip="next PR (j)")
        self.w_pos = w.Label("0 / 0", layout=lay(min_width="70px"))
        self.w_jump = w.IntText(description="PR #", layout=lay(width="150px"))
        self.b_jump = w.Button(description="Go", layout=lay(width="50px"))
        keys_mod, keys_err = _optional("workbench.ui.keys")
        self.w_keys = (
            keys_mod.KeyListener(self._on_key) if keys_mod else w.HTML(f"<i>{panels.e(keys_err)}</i>")
        )
        self.w_header = w.HTML()
        self.w_status = w.HTML()
        # diff column
        self.w_files_info = w.HTML()
        self.b_page_prev = w.Button(description="◀ files", layout=lay(width="80px"))
        self.b_page_next = w.Button(description="files ▶", layout=lay(width="80px"))
        self.w_pager = w.HBox([self.b_page_prev, self.b_page_next])
        self._pool = [w.HTML() for _ in range(self.page_size)]
        self.w_files = w.Accordion(children=[])
        self.b_show_all = w.Button(description="Show all lines", layout=lay(display="none"))
        # side column
        self.w_heur = w.HTML()
        self.b_draft = w.Button(description="Draft (offline)", icon="magic")
        self.b_llm = w.Button(description="Draft with LLM", icon="bolt")
        self.b_cancel = w.Button(description="Cancel", icon="stop", disabled=True)
        self.w_llm_reason = w.HTML()
        self.w_editor = w.Textarea(
            placeholder="Write the brief here (Markdown). It saves itself.",
            layout=lay(width="100%", height="320px"),
        )
        self.w_preview = w.HTML()
        self.w_versions = w.Dropdown(description="Version", layout=lay(width="100%"))
        self.b_restore = w.Button(description="Restore")
        self.b_compare = w.Button(description="Compare with editor")
        self.b_final = w.Button(description="Mark final", icon="check")
        self.w_textdiff = w.HTML()
        self.b_theirs = w.Button(description="Load the latest saved text", button_style="warning")
        self.b_mine = w.Button(description="Keep mine (save over it)", button_style="danger")
        self.w_conflict = w.VBox(
            [
                w.HTML(
                    "<b>Another session saved this brief since you opened it.</b> "
                    "Your text is kept in the history as a conflict copy."
                ),
                w.HBox([self.b_theirs, self.b_mine]),
            ],
            layout=lay(display="none"),
        )
        self.b_export_pr = w.Button(description="Export PR", icon="download")
        self.b_export_digest = w.Button(description="Export digest of queue", icon="book")
        self.w_export = w.HTML()
        self.log = w.Output(layout=lay(max_height="160px", overflow="auto"))

        queue_bar = w.VBox(
            [
                w.HBox(
                    [
                        self.w_repo,
                        self.w_state,
                        self.w_date_field,
                        self.w_since,
                        self.w_verdict,
                        self.w_briefed,
                        self.b_apply,
                    ],
                    layout=lay(flex_flow="row wrap"),
                ),
                w.HBox(
                    [self.b_prev, self.w_pos, self.b_next, self.w_jump, self.b_jump, self.w_keys],
                    layout=lay(flex_flow="row wrap", align_items="center"),
                ),
            ]
        )
        diff_col = w.VBox(
            [self.w_files_info, self.w_pager, self.w_files, self.b_show_all],
            layout=lay(width="58%", padding="0 8px 0 0"),
        )
        brief_box = w.VBox(
            [
                w.HBox([self.b_draft, self.b_llm, self.b_cancel]),
                self.w_llm_reason,
                self.w_conflict,
                self.w_editor,
                w.HBox([self.b_final, self.b_export_pr, self.b_export_digest]),
                self.w_export,
                w.HTML("<b>Preview</b>"),
                self.w_preview,
                self.w_versions,
                w.HBox([self.b_restore, self.b_compare]),
                self.w_textdiff,
            ]
        )
        side = w.Tab(children=[brief_box, self.w_heur], layout=lay(width="42%"))
        side.titles = ("Brief", "Heuristics")
        self.w_side = side
        self.widget = w.VBox(
            [self.w_style, queue_bar, self.w_header, self.w_status, w.HBox([diff_col, side]), self.log]
        )
        self.widget.add_class("wb-app")
        for cls_ in (self.w_heur, self.w_preview):
            cls_.add_class("wb-panel")

        self.b_apply.on_click(lambda _: self.apply_filters())
        self.w_repo.observe(self._on_repo, names="value")
        self.b_prev.on_click(lambda _: self.prev())
        self.b_next.on_click(lambda _: self.next())
        self.b_jump.on_click(lambda _: self.go(self.w_jump.value))
        self.b_page_prev.on_click(lambda _: self.show_page(self.page - 1))
        self.b_page_next.on_click(lambda _: self.show_page(self.page + 1))
        self.w_files.observe(self._on_open_file, names="selected_index")
        self.b_show_all.on_click(lambda _: self.show_all())
        self.b_draft.on_click(lambda _: self.draft_offline())
        self.b_llm.on_click(lambda _: self.draft_llm())
        self.b_cancel.on_click(lambda _: self.cancel_llm())
        self.w_editor.observe(self._on_edit, names="value")
        self.b_restore.on_click(lambda _: self.restore(self.w_versions.value))
        self.b_compare.on_click(lambda _: self.compare(self.w_versions.value))
        self.b_final.on_click(lambda _: self.mark_final())
        self.b_theirs.on_click(lambda _: self.resolve_conflict(keep_mine=False))
        self.b_mine.on_click(lambda _: self.resolve_conflict(keep_mine=True))
        self.b_export_pr.on_click(lambda _: self.export_pr())
        self.b_export_digest.on_click(lambda _: self.export_digest())
        self._update_llm_button()

    def _repr_mimebundle_(self, **kwargs):
        return self.widget._repr_mimebundle_(**kwargs)

    # ---- status and errors -----------------------------------------------------------------------
    def _status(self, text: str, kind: str = "ok") -> None:
        self.status_text, self.status_kind = text, kind
        stamp = time.strftime("%H:%M:%S")
        self.w_status.value = (
            f'<span class="wb-status-{kind}">{panels.e(text)}</span> <span class="wb-dim">{stamp}</span>'
        )

    def _report_error(self, message: str, tb: str | None = None) -> None:
        self.last_error = message
        self._status(message, "err")
        if tb:
            self.log.append_stderr(tb)  # thread-safe, unlike `with self.log:` from a timer thread

    # ---- queue -------------------------------------------------------------------------------------
    def _repo_names(self) -> list[str]:
        df = self.store.repos()
        return [str(r) for r, n in zip(df["full_name"], df["prs"], strict=False) if n]

    @guarded
    def _on_repo(self, change) -> None:
        if self._syncing_widgets or not change["new"] or change["new"] == self.repo:
            return
        self._ensure_saved()
        self.repo = change["new"]
        self._open_repo(None)

    def _open_repo(self, number: int | None) -> None:
        self._known = self.store.known_prs(self.repo) if self.repo else {}
        self._conventions = None
        conv, _ = _optional("workbench.conventions")
        if conv is not None and self.repo:
            try:
                self._conventions = conv.load_conventions(self.repo, cache=self.store.path.parent)
            except Exception as err:  # noqa: BLE001 - a bad conventions file degrades to defaults, loudly
                self._report_error(f"conventions for {self.repo} not loaded: {err}")
        self.apply_filters(number=number)

    @property
    def lang(self) -> str:
        return self.lang_param or getattr(self._conventions, "lang", None) or "zh"

    def _verdicts(self, numbers: list[int]) -> dict[int, str]:
        out = {}
        for n in numbers:
            a = self._analyze_number(n)
            if a is None:
                raise WorkbenchError(f"cannot filter on the verdict: {self.analysis_note}")
            out[n] = a.verdict
        return out

    @guarded
    def apply_filters(self, number: int | None = None, **changes) -> list[int]:
        """Re-read the filter widgets (or keyword overrides: state=, since=, verdict=, briefed=...) and rebuild the queue."""
        self._ensure_saved()
        for name, value in changes.items():
            getattr(self, f"w_{name}").value = value if value is not None else ""
        f = QueueFilters(
            repo=self.repo,
            state=self.w_state.value,
            since=self.w_since.value.strip() or None,
            date_field=self.w_date_field.value,
            verdict=self.w_verdict.value,
            briefed=self.w_briefed.value,
        )
        f.check()
        self.filters = f
        if not self.repo:
            self.queue = Queue()
            self._show_empty("the cache has no PRs: run `workbench sample` or `workbench sync OWNER/REPO`")
            return []
        self._analyses.clear()  # Apply also refreshes after a sync: PRs may have changed
        self._known = self.store.known_prs(self.repo)
        prs = self.store.prs(self.repo)
        briefs = self.store.briefs(self.repo) if f.briefed != "any" else None
        verdicts = self._verdicts([int(n) for n in prs["number"]]) if f.needs_verdicts else None
        numbers = filter_numbers(prs, f, briefs=briefs, verdicts=verdicts)
        current = number if number is not None else self.queue.current
        self.queue = Queue.of(numbers, current)
        if not numbers:
            self._show_empty("no PR matches these filters")
            return numbers
        self._show(self.queue.current)
        return numbers

    @guarded
    def next(self) -> int | None:
        self._ensure_saved()
        before = self.queue.current
        n = self.queue.next()
        if n is not None and n != before:
            self._show(n)
        elif n is not None:
            self._status("end of the queue")
        return n

    @guarded
    def prev(self) -> int | None:
        self._ensure_saved()
        before = self.queue.current
        n = self.queue.prev()
        if n is not None and n != before:
            self._show(n)
        elif n is not None:
            self._status("start of the queue")
        return n

    @guarded
    def go(self, number: int) -> int | None:
        self._ensure_saved()
        number = int(number)
        if number not in self.queue.numbers and self.repo:
            self.store.pr(self.repo, number)  # raises a clear "not in the cache" error
            # In the cache but filtered out: widen to show it rather than refuse.
            self.queue = Queue.of(
                sorted(set(self.queue.numbers) | {number}, reverse=not self.filters.oldest_first)
            )
        self.queue.jump(number)
        self._show(number)
        return number

    def _on_key(self, key: str) -> None:
        self.next() if key == "j" else self.prev()

    def _update_nav(self) -> None:
        self.w_pos.value = self.queue.label()
        self.b_prev.disabled = self.queue.at_start
        self.b_next.disabled = self.queue.at_end

    def _show_empty(self, message: str) -> None:
        self.record = None
        self.analysis = None
        self._update_nav()
        self.w_header.value = f'<div class="wb-note">{panels.e(message)}</div>'
        self.w_heur.value = ""
        self.files = LazyFiles([], _raw_file)
        self._set_page(0)
        self._load_brief()
        self._status(message, "warn")

    # ---- one PR --------------------------------------------------------------------------------------
    def _analyze_number(self, number: int):
        key = (self.repo, number)
        if key not in self._analyses:
            self._analyses[key] = self._analyze(self.store.pr(self.repo, number))
        return self._analyses[key]

    def _analyze(self, record):
        heur, why = _optional("workbench.heuristics")
        if heur is None:
            self.analysis_note = f"heuristics unavailable: {why}"
            return None
        try:
            return heur.analyze(record, conventions=self._conventions, known_prs=self._known)
        except Exception as err:  # noqa: BLE001 - a heuristics bug must not hide the diff and the editor
            self.analysis_note = f"heuristics failed on #{record.number}: {type(err).__name__}: {err}"
            self.log.append_stderr(traceback.format_exc())
            return None

    def _show(self, number: int) -> None:
        with self.autosaver._lock:  # no autosave may land between leaving one PR and loading the next
            self.autosaver.flush()
            record = self.store.pr(self.repo, number)
            self.record = record
            key = (self.repo, number)
            self.analysis_note = None
            if key not in self._analyses or self._analyses[key] is None:
                self._analyses[key] = self._analyze(record)
            self.analysis = self._analyses[key]
            self._update_nav()
            self.w_jump.value = number
            self.w_header.value = panels.header_html(record) + panels.verdict_line(self.analysis)
            self.w_heur.value = panels.heuristics_html(self.analysis, unavailable=self.analysis_note)
            self.files = self._file_diffs(record)
            self._set_page(0)
            self._load_brief()
            self.w_textdiff.value = ""
            self.w_export.value = ""
        if self.analysis_note:
            self._status(self.analysis_note, "warn")
        else:
            self._status(f"#{number} · {self._brief_state()}")

    def _file_diffs(self, record) -> LazyFiles:
        diff, why = _optional("workbench.diff")
        key_files = [k.filename for k in self.analysis.key_files] if self.analysis else []
        self._key_set = set(key_files)
        rank = {name: i for i, name in enumerate(key_files)}
        raw = sorted(
            record.files, key=lambda f: rank.get(f.get("filename"), len(rank))
        )  # stable: GitHub's order after
        if diff is None:
            self.analysis_note = self.analysis_note or f"diff model unavailable: {why}"
            return LazyFiles(raw, _raw_file)
        return LazyFiles(raw, diff.parse_file)

    # ---- diff pane -------------------------------------------------------------------------------------
    @property
    def pages(self) -> int:
        return max(1, -(-len(self.files) // self.page_size))

    @guarded
    def show_page(self, page: int) -> None:
        self._set_page(max(0, min(page, self.pages - 1)))

    def _set_page(self, page: int) -> None:
        self.page = page
        start = page * self.page_size
        chunk = self.files[start : start + self.page_size]
        for slot in self._pool[: len(chunk)]:
            if slot.value:
                slot.value = ""  # cheap placeholder until opened
        self._rendered = {}
        self.w_files.selected_index = None
        self.w_files.children = tuple(self._pool[: len(chunk)])
        self.w_files.titles = tuple(diffview.file_title(f, key=f.filename in self._key_set) for f in chunk)
        total_add = sum(int(f.get("additions") or 0) for f in self.files.raw)
        total_del = sum(int(f.get("deletions") or 0) for f in self.files.raw)
        paged = len(self.files) > self.page_size
        where = f" · files {start + 1}–{start + len(chunk)} (page {page + 1} / {self.pages})" if paged else ""
        trunc = (
            " · GitHub listed only the first 3,000 files"
            if self.record is not None and self.record.files_truncated
            else ""
        )
        self.w_files_info.value = (
            f"<b>{len(self.files)} files</b> +{total_add} −{total_del}{where}{panels.e(trunc)}"
            if self.files
            else '<div class="wb-note">no files cached for this PR</div>'
        )
        self.w_pager.layout.display = "flex" if paged else "none"
        self.b_page_prev.disabled = page == 0
        self.b_page_next.disabled = page >= self.pages - 1
        self.b_show_all.layout.display = "none"
        if chunk and self.auto_open:
            self.w_files.selected_index = 0

    def _on_open_file(self, change) -> None:
        idx = change["new"]
        if idx is None:
            self.b_show_all.layout.display = "none"
            return
        self.render_file(idx)

    @guarded
    def render_file(self, slot: int, limit: int | None = diffview.LIMIT) -> diffview.RenderedFile:
        fd = self.files[self.page * self.page_size + slot]
        if hasattr(fd, "raw_patch"):
            out = diffview.render_raw_patch(fd.filename, fd.raw_patch)
        else:
            out = diffview.render_file(fd, limit=limit)
        if self._rendered.get(slot, "none") != limit or not self._pool[slot].value:
            self._pool[slot].value = out.html
            self._rendered[slot] = limit
        self.b_show_all.description = f"Show all {out.total} lines"
        self.b_show_all.layout.display = "" if out.cut and limit is not None else "none"
        return out

    @guarded
    def show_all(self) -> None:
        idx = self.w_files.selected_index
        if idx is not None:
            self.render_file(idx, limit=None)

    def html_widgets(self) -> list[w.HTML]:
        """Every HTML widget whose value changes on a step (the benchmark sums what they send)."""
        return [
            self.w_header,
            self.w_heur,
            self.w_files_info,
            self.w_preview,
            self.w_textdiff,
            self.w_status,
            self.w_export,
            self.w_llm_reason,
            *self._pool,
        ]

    # ---- brief: load, edit, autosave ----------------------------------------------------------------
    def _set_editor(self, text: str) -> None:
        self._programmatic = True
        try:
            self.w_editor.value = text
        finally:
            self._programmatic = False
        self.w_preview.value = panels.markdown_html(text)

    def _load_brief(self) -> None:
        """Show the latest saved text and make the newest version (conflict copies included) the base for the next save."""
        self.autosaver.cancel()
        self.conflict = False
        self.w_conflict.layout.display = "none"
        v = self.store.latest_brief(self.repo, self.record.number) if self.record is not None else None
        latest = self.store.latest_version(self.repo, self.record.number) if self.record is not None else 0
        self._loaded_version = latest or None
        self._loaded_text = v.text if v else ""
        self._loaded_source = v.source if v else None
        self._set_editor(self._loaded_text)
        self._refresh_versions()
        self.w_editor.disabled = self.record is None

    def _brief_state(self) -> str:
        if self._loaded_version is None:
            return "no brief yet: press Draft (offline) or start writing"
        final = (
            ", final"
            if self._versions.get(self._loaded_version) and self._versions[self._loaded_version].is_final
            else ""
        )
        return f"brief v{self._loaded_version} ({self._loaded_source or '?'}{final})"

    def _refresh_versions(self) -> None:
        versions = self.store.brief_versions(self.repo, self.record.number) if self.record is not None else []
        self._versions = {v.version: v for v in versions}
        opts = [(panels.version_label(v), v.version) for v in reversed(versions)]
        self._programmatic = True
        try:
            self.w_versions.options = opts
            self.w_versions.value = opts[0][1] if opts else None
        finally:
            self._programmatic = False
        for b in (self.b_restore, self.b_compare):
            b.disabled = not opts

    def _on_edit(self, change) -> None:
        if self._programmatic:
            return
        try:
            self.w_preview.value = panels.markdown_html(change["new"])
            if self.conflict:
                self._status(
                    "not saved: resolve the conflict above first (your text is safe in the history)", "warn"
                )
                return
            self._status("editing… (saves automatically)", "warn")
            self.autosaver.touch()
        except Exception as err:  # noqa: BLE001
            self._report_error(f"{type(err).__name__}: {err}", traceback.format_exc())

    def _autosave(self) -> None:
        try:
            self._save(self.w_editor.value, source="human")
        except Exception as err:  # noqa: BLE001 - runs on the timer thread: report, never raise
            self.autosaver._pending = (
                True  # still unsaved: the next flush retries, and navigation waits for it
            )
            self._report_error(
                f"autosave failed: {type(err).__name__}: {err} (your text is still in the editor)",
                traceback.format_exc(),
            )

    def _ensure_saved(self) -> None:
        """Flush the pending edit; refuse to leave the PR if it could not be saved."""
        self.autosaver.flush()
        if self.autosaver.pending:
            raise WorkbenchError(
                f"your edit could not be saved ({self.last_error}); staying on this PR so nothing is lost — "
                "copy the text somewhere safe or try again"
            )

    def _brief_dict(self, text: str) -> dict | None:
        brief_mod, _ = _optional("workbench.brief")
        parse = getattr(brief_mod, "parse_brief", None)
        if parse is None:
            return None
        try:
            return parse(text, repo=self.repo, number=self.record.number, lang=self.lang).to_dict()
        except Exception:  # noqa: BLE001 - free-form text is allowed; the Markdown is what is kept
            return None

    def _save(
        self,
        text: str,
        *,
        source: str,
        is_final: bool = False,
        meta: dict | None = None,
        brief: dict | None = None,
        force: bool = False,
    ) -> int | None:
        """Append a version based on the loaded one. Returns the version, or None when refused/unchanged.
        Serialised with the autosave timer and the LLM thread: one writer at a time on the shared connection."""
        with self.autosaver._lock:
            return self._save_locked(
                text, source=source, is_final=is_final, meta=meta, brief=brief, force=force
            )

    def _save_locked(
        self, text: str, *, source: str, is_final: bool, meta: dict | None, brief: dict | None, force: bool
    ) -> int | None:
        if self.record is None or self.conflict:
            return None
        if text == self._loaded_text and not is_final and not force:
            self._status(f"saved (v{self._loaded_version})" if self._loaded_version else "nothing to save")
            return self._loaded_version
        try:
            v = self.store.save_brief(
                self.repo,
                self.record.number,
                text,
                source=source,
                base_version=self._loaded_version,
                lang=self.lang,
                is_final=is_final,
                meta=meta,
                brief=brief if brief is not None else self._brief_dict(text),
            )
        except StaleEditError as err:
            self.conflict = True
            self.w_conflict.layout.display = "flex"
            self._refresh_versions()
            self._status(str(err), "err")
            return None
        self._loaded_version, self._loaded_text, self._loaded_source = v, text, source
        self._refresh_versions()
        self._status(f"saved v{v} ({source}{', final' if is_final else ''})")
        return v

    def flush(self) -> None:
        """Save any pending edit now (the app calls this on navigation and export)."""
        self.autosaver.flush()

    @property
    def text(self) -> str:
        return self.w_editor.value

    @text.setter
    def text(self, value: str) -> None:
        """Type into the editor, as a person would (autosave follows)."""
        self.w_editor.value = value

    @property
    def saved_version(self) -> int | None:
        return self._loaded_version

    def _editor_is_human(self) -> bool:
        text = self.w_editor.value
        if not text.strip():
            return False
        return (
            self.autosaver.pending or text != self._loaded_text or self._loaded_source not in MACHINE_SOURCES
        )

    @guarded
    def mark_final(self) -> int | None:
        self.autosaver.cancel()  # the pending edit goes into the final version itself, not a version before it
        source = "human" if self._loaded_source not in MACHINE_SOURCES else self._loaded_source
        v = self._save(self.w_editor.value, source=source, is_final=True)
        return v

    @guarded
    def resolve_conflict(self, keep_mine: bool) -> int | None:
        if not self.conflict or self.record is None:
            return None
        mine = self.w_editor.value
        self.conflict = False
        self.w_conflict.layout.display = "none"
        latest = self.store.latest_brief(self.repo, self.record.number)
        if not keep_mine:
            self._load_brief()
            self._status("loaded the latest saved text; yours is in the history as a conflict copy")
            return self._loaded_version
        self._loaded_version = self.store.latest_version(self.repo, self.record.number)
        self._loaded_text = latest.text if latest else ""
        return self._save(mine, source="human", meta={"resolved_conflict": True})

    @guarded
    def restore(self, version: int | None) -> int | None:
        """Put an older version back in the editor, saved as a new version (the history keeps everything)."""
        if version is None or self.record is None:
            return None
        self.autosaver.flush()
        v = self._versions.get(int(version)) or next(
            (
                x
                for x in self.store.brief_versions(self.repo, self.record.number)
                if x.version == int(version)
            ),
            None,
        )
        if v is None:
            raise WorkbenchError(f"version {version} of #{self.record.number} not found")
        source = v.source if v.source in MACHINE_SOURCES else "human"
        new = self._save(v.text, source=source, meta={"restored_from": v.version}, brief=v.brief, force=True)
        if new is not None:
            self._set_editor(v.text)
        return new

    @guarded
    def compare(self, version: int | None = None) -> str:
        """Diff a version (default: the newest machine draft) against the editor's text."""
        if self.record is None:
            return ""
        versions = self.store.brief_versions(self.repo, self.record.number)
        if version is None:
            machine = [v for v in versions if v.source in MACHINE_SOURCES]
            base = machine[-1] if machine else None
        else:
            base = next((v for v in versions if v.version == int(version)), None)
        if base is None:
            self.w_textdiff.value = '<div class="wb-note">no draft to compare with</div>'
            return self.w_textdiff.value
        self.w_textdiff.value = panels.text_diff_html(
            base.text, self.w_editor.value, old_label=f"v{base.version} ({base.source})", new_label="editor"
        )
        return self.w_textdiff.value

    # ---- drafting -----------------------------------------------------------------------------------
    def _update_llm_button(self) -> None:
        s = llm_settings()
        self.b_llm.disabled = not s.configured
        self.b_llm.tooltip = s.why_not() or "stream a draft from the configured model"
        self.w_llm_reason.value = (
            "" if s.configured else f'<span class="wb-dim">LLM off: {panels.e(s.why_not())}</span>'
        )

    def _render_brief(self, brief) -> str:
        brief_mod, why = _optional("workbench.brief")
        if brief_mod is None or not hasattr(brief_mod, "render_brief"):
            raise WorkbenchError(f"brief rendering unavailable: {why or 'render_brief missing'}")
        return brief_mod.render_brief(brief)

    def _take_draft(self, text: str, source: str, brief: dict | None, meta: dict | None) -> int | None:
        """A machine draft arrives. Into the editor if the editor holds no human text; otherwise into the
        history only, with the human text saved again on top so it stays the latest."""
        with self.autosaver._lock:  # may run on the LLM thread while the reader types
            return self._take_draft_locked(text, source, brief, meta)

    def _take_draft_locked(self, text: str, source: str, brief: dict | None, meta: dict | None) -> int | None:
        self.autosaver.flush()
        if self.conflict:
            raise WorkbenchError("resolve the conflict first: the draft was not saved")
        if not self._editor_is_human():
            v = self._save(text, source=source, brief=brief, meta=meta, force=True)
            if v is not None:
                self._set_editor(text)
                self._status(f"{source} draft saved as v{v}")
            return v
        mine = self.w_editor.value
        dv = self._save(text, source=source, brief=brief, meta=meta, force=True)
        if dv is None:
            return None
        self._save(mine, source="human", meta={"kept_over_draft": dv}, force=True)
        self._set_editor(mine)
        self.compare(dv)
        self._status(
            f"a new {source} draft is in the history as v{dv}; your edited text was kept in the editor. "
            f"Compare below, or restore v{dv} to use it.",
            "warn",
        )
        return dv

    @guarded
    def draft_offline(self) -> int | None:
        if self.record is None:
            return None
        drafting, why = _optional("workbench.drafting.offline")
        fn = getattr(drafting, "draft_offline", None) or getattr(
            _optional("workbench.drafting")[0], "draft_offline", None
        )
        if fn is None:
            raise WorkbenchError(f"offline drafter unavailable: {why}")
        brief = fn(
            self.record, self.analysis, self.lang
        )  # without heuristics the drafter uses the PR text alone
        return self._take_draft(self._render_brief(brief), "offline", brief.to_dict(), {"drafter": "offline"})

    @guarded
    def draft_llm(self, *, wait: bool = False) -> None:
        """Stream a draft from the model in a background thread; `cancel_llm()` stops it."""
        settings = llm_settings()
        if not settings.configured:
            raise WorkbenchError(f"LLM drafting is off: {settings.why_not()}")
        if self._llm_thread is not None and self._llm_thread.is_alive():
            raise WorkbenchError("a draft is already streaming: cancel it first")
        if self.record is None:
            raise WorkbenchError("nothing to draft: no PR selected")
        llm_mod, why = _optional("workbench.drafting.llm")
        drafter_cls = getattr(llm_mod, "LLMDrafter", None)
        if drafter_cls is None:
            raise WorkbenchError(f"LLM drafter unavailable: {why}")
        self.autosaver.flush()
        record, analysis, number = self.record, self.analysis, self.record.number
        into_editor = not self._editor_is_human()
        self._llm_cancel = threading.Event()
        cancel = self._llm_cancel
        self.b_cancel.disabled, self.b_llm.disabled, self.b_draft.disabled = False, True, True
        if into_editor:
            self.w_editor.disabled = True  # the stream owns the editor until it ends
        self._status("drafting with the LLM… (Cancel stops it)", "warn")
        streamed: list[str] = []
        last_push = [0.0]

        def on_text(delta: str) -> None:
            if delta == "":  # the drafter retried: its text starts over
                streamed.clear()
            streamed.append(delta)
            now = time.monotonic()
            if now - last_push[0] > 0.2:  # throttle: one widget update per 200 ms
                last_push[0] = now
                text = "".join(streamed)
                if into_editor:
                    self._set_editor(text)
                else:
                    self.w_textdiff.value = "<b>incoming draft</b><pre>" + panels.e(text[-4000:]) + "</pre>"

        def run() -> None:
            try:
                result = drafter_cls(settings).draft(
                    record, analysis, lang=self.lang, on_text=on_text, cancel=cancel
                )
                if self.record is None or self.record.number != number:
                    raise WorkbenchError(
                        f"the draft for #{number} finished after you moved on; run it again there"
                    )
                if cancel.is_set():
                    self._set_editor(self._loaded_text) if into_editor else None
                    self._status("LLM draft cancelled; nothing was saved", "warn")
                elif result.brief is None:
                    self._set_editor(self._loaded_text) if into_editor else None
                    self._status(
                        f"LLM draft failed: {result.error}; the editor is unchanged "
                        "(Draft (offline) gives the offline draft)",
                        "err",
                    )
                else:
                    self._set_editor(self._loaded_text) if into_editor else None
                    self._take_draft(
                        self._render_brief(result.brief),
                        "llm",
                        result.brief.to_dict(),
                        dict(result.meta or {}),
                    )
            except WorkbenchError as err:
                self._report_error(str(err))
            except Exception as err:  # noqa: BLE001
                self._report_error(f"LLM draft failed: {type(err).__name__}: {err}", traceback.format_exc())
            finally:
                self.w_editor.disabled = self.record is None
                self.b_cancel.disabled, self.b_draft.disabled = True, False
                self._update_llm_button()

        self._llm_thread = threading.Thread(target=run, name="workbench-llm-draft", daemon=True)
        self._llm_thread.start()
        if wait:
            self._llm_thread.join()

    def cancel_llm(self) -> None:
        self._llm_cancel.set()
        self._status("cancelling the LLM draft…", "warn")

    # ---- export -------------------------------------------------------------------------------------
    def _link(self, path: Path, label: str) -> str:
        try:
            rel = os.path.relpath(path, os.getcwd())
        except ValueError:
            rel = None
        link = (
            f' · <a href="{panels.e(rel)}" target="_blank">open</a>' if rel and not os.path.isabs(rel) else ""
        )
        return f"{panels.e(label)}: <code>{panels.e(str(path))}</code>{link}"

    @guarded
    def export_pr(self) -> Path | None:
        if self.record is None:
            raise WorkbenchError("no PR selected")
        self._ensure_saved()
        export, why = _optional("workbench.export")
        if export is None:
            raise WorkbenchError(f"export unavailable: {why}")
        path = Path(
            export.export_pr(self.store, self.repo, self.record.number, out_dir=self.exports, lang=self.lang)
        )
        self.last_export = path
        self.w_export.value = self._link(path, f"#{self.record.number} exported")
        self._status(f"exported {path.name}")
        return path

    @guarded
    def export_digest(self) -> Path | None:
        if not self.queue.numbers:
            raise WorkbenchError("the queue is empty: nothing to export")
        self._ensure_saved()
        export, why = _optional("workbench.export")
        if export is None:
            raise WorkbenchError(f"export unavailable: {why}")
        path = Path(
            export.export_digest(
                self.store, self.repo, numbers=list(self.queue.numbers), out_dir=self.exports, lang=self.lang
            )
        )
        self.last_export = path
        self.w_export.value = self._link(path, f"digest of {len(self.queue.numbers)} PRs")
        self._status(f"exported {path.name}")
        return path

    def close(self) -> None:
        self.autosaver.flush()
        self._llm_cancel.set()
