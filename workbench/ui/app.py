"""The review app: step through a queue of PRs; each step shows one PR in the panels.

This module is the layout and the wiring of panels to the queue. Where each decision lives:
- which PRs, in which order: queue.py (filters, `Queue`); the filter and navigation rows: queue_bar.py;
- what the heuristics say (cached per queue build, conventions, cross-refs): analyses.py;
- the header and heuristics HTML: panels.py; the diff column (pages, lazy files): diff_pane.py + diffview.py;
- the brief (autosave, drafts, history, conflicts, mark final): brief_editor.py + drafts.py + autosave.py;
- the Conversation tab (description, comments, reviews, threads; rendered while open): conversation.py +
  conversation_pane.py, Markdown through markdown.py;
- exports: export_panel.py; the status line and error handling: status.py; j/k keys: keys.py.
Every method a button calls is also a plain method (`next()`, `go(n)`, `draft_offline()`, `export_pr()`,
...) so tests and benchmarks drive the same code without a browser; handlers never raise into the void.
"""

from __future__ import annotations

import os
from pathlib import Path

import ipywidgets as w

from ..config import WorkbenchError, exports_dir
from ..store import Store, open_cache
from . import diffview, panels
from .analyses import Analyses
from .brief_editor import BriefEditor
from .conversation import CONVERSATION_CSS
from .conversation_pane import ConversationPane
from .diff_pane import PAGE_SIZE, DiffPane, raw_file
from .export_panel import ExportPanel
from .queue import Queue, QueueFilters, filter_numbers
from .queue_bar import QueueBar
from .status import StatusLine, guarded
from .status import optional as _optional  # one name here: a test takes the heuristics or diff model away

# Widgets the panels own that notebooks and tests reach as `app.<name>`.
_BAR_WIDGETS = (
    "w_repo", "w_state", "w_date_field", "w_since", "w_verdict", "w_briefed", "b_apply",
    "b_prev", "b_next", "w_pos", "w_jump", "b_jump", "w_keys",
)  # fmt: skip
_DIFF_WIDGETS = ("w_files_info", "b_page_prev", "b_page_next", "w_pager", "w_files", "b_show_all")
_EDITOR_WIDGETS = (
    "b_draft", "b_llm", "b_cancel", "w_llm_reason", "w_editor", "w_preview", "w_versions", "b_restore",
    "b_compare", "b_final", "w_textdiff", "b_theirs", "b_mine", "w_conflict",
)  # fmt: skip
_EXPORT_WIDGETS = ("b_export_pr", "b_export_digest", "w_export")
_CONVERSATION_WIDGETS = ("w_conv", "b_more")
SIDE_TABS = ("Brief", "Conversation", "Heuristics")


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
        self.filters = filters or QueueFilters()
        self.queue = Queue()
        self.record = None
        self.analysis = None
        self.analysis_note: str | None = None  # why the PR on show has no analysis or no parsed diff
        self.status = StatusLine()
        self.w_status, self.log = self.status.widget, self.status.log
        self.analyses = Analyses(store, *_optional("workbench.analysis.pipeline"), log=self.log.append_stderr)
        self._analyses = self.analyses.cache  # (repo, number) -> Analysis | None; benchmarks clear it
        self.bar = QueueBar(self._on_key, on_jump=self.go)
        self.diff = DiffPane(self.status, page_size=page_size, auto_open=auto_open)
        self.editor = BriefEditor(store, self.status, autosave_delay=autosave_delay)
        self.conversation = ConversationPane(self.status)
        self.exporter = ExportPanel(store, self.status, Path(exports) if exports else exports_dir())
        self.autosaver = self.editor.autosaver
        for panel, names in (
            (self.bar, _BAR_WIDGETS),
            (self.diff, _DIFF_WIDGETS),
            (self.editor, _EDITOR_WIDGETS),
            (self.exporter, _EXPORT_WIDGETS),
            (self.conversation, _CONVERSATION_WIDGETS),
        ):
            for name in names:
                setattr(self, name, getattr(panel, name))
        self._pool = self.diff.pool
        self._build()
        repos = self._repo_names()
        self.repo = repo if repo else (repos[0] if repos else None)
        if self.repo and self.repo not in repos:
            self.status.error(
                f"repository {self.repo} is not in the cache (cached: {', '.join(repos) or 'none'})"
            )
            self.repo = repos[0] if repos else None
        self._syncing_widgets = True  # setting the widgets must not fire their handlers
        try:
            self.bar.show_filters(repos, self.repo, self.filters)
        finally:
            self._syncing_widgets = False
        self._open_repo(number)

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

    # ---- layout and wiring ---------------------------------------------------------------------------
    def _build(self) -> None:
        style = w.HTML(
            f"<style>{diffview.DIFF_CSS}{panels.APP_CSS}{CONVERSATION_CSS}</style>"
        )  # injected once
        self.w_header = w.HTML()
        self.w_heur = w.HTML()
        self.w_heur.add_class("wb-panel")
        ed, ex = self.editor, self.exporter
        brief_box = w.VBox(
            [
                w.HBox([ed.b_draft, ed.b_llm, ed.b_cancel]),
                ed.w_llm_reason,
                ed.w_conflict,
                ed.w_editor,
                w.HBox([ed.b_final, ex.b_export_pr, ex.b_export_digest]),
                ex.w_export,
                w.HTML("<b>Preview</b>"),
                ed.w_preview,
                ed.w_versions,
                w.HBox([ed.b_restore, ed.b_compare]),
                ed.w_textdiff,
            ]
        )
        self.w_side = w.Tab(
            children=[brief_box, self.conversation.widget, self.w_heur], layout=w.Layout(width="42%")
        )
        self.w_side.titles = SIDE_TABS
        # The conversation renders only while its tab is open (a PR may have hundreds of comments).
        self.w_side.observe(
            lambda ch: self.conversation.set_visible(ch["new"] == SIDE_TABS.index("Conversation")),
            names="selected_index",
        )
        columns = w.HBox([self.diff.widget, self.w_side])
        self.widget = w.VBox([style, self.bar.widget, self.w_header, self.w_status, columns, self.log])
        self.widget.add_class("wb-app")

        self.b_apply.on_click(lambda _: self.apply_filters())
        self.w_repo.observe(self._on_repo, names="value")
        self.b_prev.on_click(lambda _: self.prev())
        self.b_next.on_click(lambda _: self.next())
        self.b_jump.on_click(lambda _: self.go(self.w_jump.value))
        self.b_export_pr.on_click(lambda _: self.export_pr())
        self.b_export_digest.on_click(lambda _: self.export_digest())

    def _repr_mimebundle_(self, **kwargs):
        return self.widget._repr_mimebundle_(**kwargs)

    # ---- what tests and notebooks read ---------------------------------------------------------------
    status_text = property(lambda self: self.status.text)
    status_kind = property(lambda self: self.status.kind)
    last_error = property(lambda self: self.status.last_error)
    files = property(lambda self: self.diff.files)
    page = property(lambda self: self.diff.page)
    pages = property(lambda self: self.diff.pages)
    conflict = property(lambda self: self.editor.conflict)
    saved_version = property(lambda self: self.editor.saved_version)
    last_export = property(lambda self: self.exporter.last_export)
    _llm_thread = property(lambda self: self.editor.llm_job.thread if self.editor.llm_job else None)

    @property
    def text(self) -> str:
        return self.w_editor.value

    @text.setter
    def text(self, value: str) -> None:
        """Type into the editor, as a person would (autosave follows)."""
        self.w_editor.value = value

    @property
    def lang(self) -> str:
        return self.lang_param or getattr(self.analyses.conventions, "lang", None) or "zh"

    def html_widgets(self) -> list[w.HTML]:
        """Every HTML widget whose value changes on a step (the benchmark sums what they send)."""
        ed = self.editor
        return [self.w_header, self.w_heur, self.w_files_info, ed.w_preview, ed.w_textdiff, self.w_status,
                self.w_export, ed.w_llm_reason, self.w_conv, *self.diff.pool]  # fmt: skip

    # ---- the queue ---------------------------------------------------------------------------------------
    def _repo_names(self) -> list[str]:
        df = self.store.repos()
        return [str(r) for r, n in zip(df["full_name"], df["prs"], strict=False) if n]

    @guarded
    def _on_repo(self, change) -> None:
        if self._syncing_widgets or not change["new"] or change["new"] == self.repo:
            return
        self.editor.ensure_saved()
        self.repo = change["new"]
        self._open_repo(None)

    def _open_repo(self, number: int | None) -> None:
        error = self.analyses.open_repo(self.repo)
        if error:
            self.status.error(error)
        self.apply_filters(number=number)

    @guarded
    def apply_filters(self, number: int | None = None, **changes) -> list[int]:
        """Re-read the filter widgets (or keyword overrides: state=, since=, verdict=, briefed=...) and rebuild the queue."""
        self.editor.ensure_saved()
        self.bar.set(**changes)
        f = self.filters = self.bar.read_filters(self.repo)
        if not self.repo:
            self.queue = Queue()
            self._show_empty("the cache has no PRs: run `workbench sample` or `workbench sync OWNER/REPO`")
            return []
        self.analyses.refresh(self.repo)  # Apply also refreshes after a sync: PRs may have changed
        prs = self.store.prs(self.repo)
        briefs = self.store.briefs(self.repo) if f.briefed != "any" else None
        numbers = [int(n) for n in prs["number"]]
        verdicts = self.analyses.verdicts(self.repo, numbers) if f.needs_verdicts else None
        numbers = filter_numbers(prs, f, briefs=briefs, verdicts=verdicts)
        self.queue = Queue.of(numbers, number if number is not None else self.queue.current)
        if not numbers:
            self._show_empty("no PR matches these filters")
            return numbers
        self._show(self.queue.current)
        return numbers

    def _step(self, move, edge: str) -> int | None:
        self.editor.ensure_saved()
        before = self.queue.current
        n = move()
        if n is not None and n != before:
            self._show(n)
        elif n is not None:
            self.status.show(edge)
        return n

    @guarded
    def next(self) -> int | None:
        return self._step(self.queue.next, "end of the queue")

    @guarded
    def prev(self) -> int | None:
        return self._step(self.queue.prev, "start of the queue")

    @guarded
    def go(self, number: int) -> int | None:
        self.editor.ensure_saved()
        number = int(number)
        if number not in self.queue.numbers and self.repo:
            self.store.pr(self.repo, number)  # raises a clear "not in the cache" error
            # In the cache but filtered out: widen to show it rather than refuse.
            widened = sorted(set(self.queue.numbers) | {number}, reverse=not self.filters.oldest_first)
            self.queue = Queue.of(widened)
        self.queue.jump(number)
        self._show(number)
        return number

    def _on_key(self, key: str) -> None:
        self.next() if key == "j" else self.prev()

    # ---- one PR into the panels ------------------------------------------------------------------------
    def _show_empty(self, message: str) -> None:
        self.record = None
        self.analysis = None
        self.bar.show_position(self.queue)
        self.w_header.value = f'<div class="wb-note">{panels.e(message)}</div>'
        self.w_heur.value = ""
        self.conversation.load(None, None)
        self.diff.load([], raw_file, [])
        self.editor.load(self.repo, None, None, self.lang)
        self.status.show(message, "warn")

    def _show(self, number: int) -> None:
        with self.autosaver._lock:  # no autosave may land between leaving one PR and loading the next
            self.autosaver.flush()
            record = self.record = self.store.pr(self.repo, number)
            self.analysis = self.analyses.of_record(self.repo, record)
            note = self.analyses.note
            self.bar.show_position(self.queue, number)
            self.w_header.value = panels.header_html(record) + panels.verdict_line(self.analysis)
            self.w_heur.value = panels.heuristics_html(self.analysis, unavailable=note)
            diff_mod, why = _optional("workbench.analysis.diff")
            note = self.analysis_note = note or (None if diff_mod else f"diff model unavailable: {why}")
            key_files = [k.filename for k in self.analysis.key_files] if self.analysis else []
            parse = diff_mod.parse_file if diff_mod else raw_file
            self.diff.load(record.files, parse, key_files, truncated=bool(record.files_truncated))
            self.editor.load(self.repo, record, self.analysis, self.lang)
            self.conversation.load(record, self.analyses.conventions)
            self.exporter.clear()
        if note:
            self.status.show(note, "warn")
        else:
            self.status.show(f"#{number} · {self.editor.state_text()}")

    # ---- the panels' actions, scriptable from the notebook ----------------------------------------------
    def show_page(self, page: int) -> None:
        self.diff.show_page(page)

    def render_file(self, slot: int, limit: int | None = diffview.LIMIT):
        return self.diff.render_file(slot, limit)

    def show_all(self) -> None:
        self.diff.show_all()

    def flush(self) -> None:
        """Save any pending edit now (the app does this on navigation and export)."""
        self.autosaver.flush()

    def draft_offline(self) -> int | None:
        return self.editor.draft_offline()

    def draft_llm(self, *, wait: bool = False) -> None:
        self.editor.draft_llm(wait=wait)

    def cancel_llm(self) -> None:
        self.editor.cancel_llm()

    def mark_final(self) -> int | None:
        return self.editor.mark_final()

    def restore(self, version: int | None) -> int | None:
        return self.editor.restore(version)

    def compare(self, version: int | None = None) -> str:
        return self.editor.compare(version)

    def resolve_conflict(self, keep_mine: bool) -> int | None:
        return self.editor.resolve_conflict(keep_mine)

    @guarded
    def export_pr(self) -> Path | None:
        if self.record is None:
            raise WorkbenchError("no PR selected")
        self.editor.ensure_saved()
        return self.exporter.export_pr(self.repo, self.record.number, self.lang)

    @guarded
    def export_digest(self) -> Path | None:
        if not self.queue.numbers:
            raise WorkbenchError("the queue is empty: nothing to export")
        self.editor.ensure_saved()
        return self.exporter.export_digest(self.repo, list(self.queue.numbers), self.lang)

    def close(self) -> None:
        self.autosaver.flush()
        if self.editor.llm_job is not None:
            self.editor.llm_job.cancel()
