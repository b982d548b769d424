"""The brief tab: the editor and its preview, machine drafts (offline, LLM streaming + cancel), the version
history (restore, compare), mark final, and stale-save conflicts.

Never losing an edit is the design's centre:
- the editor autosaves (debounced) into the cache and is flushed on navigation and export;
- each save names the version it was edited from, so a stale save (another notebook or Voila tab saved
  since) is refused by the store, which keeps the text as a 'conflict' version, and the editor says so;
- a new machine draft never replaces text a person wrote: it goes into the history and the editor keeps
  the person's text (they can compare, or restore the draft explicitly).
"""

from __future__ import annotations

import traceback

import ipywidgets as w

from ..config import WorkbenchError, llm_settings
from ..store import StaleEditError, Store
from . import panels
from .autosave import Autosaver
from .drafts import (
    MACHINE_SOURCES,
    Draft,
    LLMDraftJob,
    llm_drafter,
    llm_result_draft,
    offline_draft,
    parse_brief_dict,
)
from .status import StatusLine, guarded


def is_human_text(text: str, *, loaded_text: str, loaded_source: str | None, pending: bool) -> bool:
    """Does the editor hold words a person wrote? Then a machine draft must not replace them."""
    if not text.strip():
        return False
    return pending or text != loaded_text or loaded_source not in MACHINE_SOURCES


def pick_version(versions: list, version: int | None):
    """The version numbered `version`, or with None the newest machine draft (what Compare diffs against
    by default); None when there is no such version."""
    if version is None:
        machine = [v for v in versions if v.source in MACHINE_SOURCES]
        return machine[-1] if machine else None
    return next((v for v in versions if v.version == int(version)), None)


def brief_state_text(version: int | None, source: str | None, is_final: bool) -> str:
    if version is None:
        return "no brief yet: press Draft (offline) or start writing"
    return f"brief v{version} ({source or '?'}{', final' if is_final else ''})"


class BriefEditor:
    """Edits the brief of one PR at a time; `load(repo, record, analysis, lang)` switches PR."""

    def __init__(self, store: Store, status: StatusLine, *, autosave_delay: float = 1.0):
        self.store, self.status = store, status
        self.repo: str | None = None
        self.record = None
        self.analysis = None
        self.lang = "zh"
        self.conflict = False
        self._loaded_version: int | None = None
        self._loaded_text = ""
        self._loaded_source: str | None = None
        self._versions: dict[int, object] = {}
        self._programmatic = False  # set while code (not a person) changes a widget
        self.llm_job: LLMDraftJob | None = None
        self.autosaver = Autosaver(self._autosave, delay=autosave_delay)
        lay = w.Layout
        self.b_draft = w.Button(description="Draft (offline)", icon="magic")
        self.b_llm = w.Button(description="Draft with LLM", icon="bolt")
        self.b_cancel = w.Button(description="Cancel", icon="stop", disabled=True)
        self.w_llm_reason = w.HTML()
        self.w_editor = w.Textarea(
            placeholder="Write the brief here (Markdown). It saves itself.",
            layout=lay(width="100%", height="320px"),
        )
        self.w_preview = w.HTML()
        self.w_preview.add_class("wb-panel")
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
        self.b_draft.on_click(lambda _: self.draft_offline())
        self.b_llm.on_click(lambda _: self.draft_llm())
        self.b_cancel.on_click(lambda _: self.cancel_llm())
        self.w_editor.observe(self._on_edit, names="value")
        self.b_restore.on_click(lambda _: self.restore(self.w_versions.value))
        self.b_compare.on_click(lambda _: self.compare(self.w_versions.value))
        self.b_final.on_click(lambda _: self.mark_final())
        self.b_theirs.on_click(lambda _: self.resolve_conflict(keep_mine=False))
        self.b_mine.on_click(lambda _: self.resolve_conflict(keep_mine=True))
        self.update_llm_button()

    # ---- load and show -------------------------------------------------------------------------------
    def load(self, repo: str | None, record, analysis, lang: str) -> None:
        """Switch to `record` (None: nothing selected); the caller has flushed the previous PR's edit."""
        self.repo, self.record, self.analysis, self.lang = repo, record, analysis, lang
        self.w_textdiff.value = ""
        self._load_brief()

    def _load_brief(self) -> None:
        """Show the latest saved text; the newest version (conflict copies included) is the base for the next save."""
        self.autosaver.cancel()
        self._show_conflict(False)
        number = self.record.number if self.record is not None else None
        v = self.store.latest_brief(self.repo, number) if number is not None else None
        latest = self.store.latest_version(self.repo, number) if number is not None else 0
        self._loaded_version = latest or None
        self._loaded_text = v.text if v else ""
        self._loaded_source = v.source if v else None
        self.set_text(self._loaded_text)
        self._refresh_versions()
        self.w_editor.disabled = self.record is None

    def set_text(self, text: str) -> None:
        """Put text in the editor as the program (no autosave: it came from the cache or a draft)."""
        self._programmatic = True
        try:
            self.w_editor.value = text
        finally:
            self._programmatic = False
        self.w_preview.value = panels.markdown_html(text)

    def _show_conflict(self, on: bool) -> None:
        self.conflict = on
        self.w_conflict.layout.display = "flex" if on else "none"

    def state_text(self) -> str:
        v = self._versions.get(self._loaded_version) if self._loaded_version else None
        return brief_state_text(self._loaded_version, self._loaded_source, bool(v and v.is_final))

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

    # ---- typing and saving ---------------------------------------------------------------------------
    def _on_edit(self, change) -> None:
        if self._programmatic:
            return
        try:
            self.w_preview.value = panels.markdown_html(change["new"])
            if self.conflict:
                self.status.show(
                    "not saved: resolve the conflict above first (your text is safe in the history)", "warn"
                )
                return
            self.status.show("editing… (saves automatically)", "warn")
            self.autosaver.touch()
        except Exception as err:  # noqa: BLE001
            self.status.crash(err)

    def _autosave(self) -> None:
        try:
            self.save(self.w_editor.value, source="human")
        except Exception as err:  # noqa: BLE001 - runs on the timer thread: report, never raise
            self.autosaver._pending = (
                True  # still unsaved: the next flush retries, and navigation waits for it
            )
            self.status.error(
                f"autosave failed: {type(err).__name__}: {err} (your text is still in the editor)",
                traceback.format_exc(),
            )

    def ensure_saved(self) -> None:
        """Flush the pending edit; refuse to leave the PR if it could not be saved."""
        self.autosaver.flush()
        if self.autosaver.pending:
            raise WorkbenchError(
                f"your edit could not be saved ({self.status.last_error}); staying on this PR so nothing is "
                "lost — copy the text somewhere safe or try again"
            )

    def save(
        self, text: str, *, source: str, is_final=False, meta=None, brief=None, force=False
    ) -> int | None:
        """Append a version based on the loaded one. Returns the version, or None when refused/unchanged.
        Serialised with the autosave timer and the LLM thread: one writer at a time on the shared connection."""
        with self.autosaver._lock:
            if self.record is None or self.conflict:
                return None
            if text == self._loaded_text and not is_final and not force:
                self.status.show(
                    f"saved (v{self._loaded_version})" if self._loaded_version else "nothing to save"
                )
                return self._loaded_version
            if brief is None:
                brief = parse_brief_dict(text, repo=self.repo, number=self.record.number, lang=self.lang)
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
                    brief=brief,
                )
            except StaleEditError as err:
                self._show_conflict(True)
                self._refresh_versions()
                self.status.show(str(err), "err")
                return None
            self._loaded_version, self._loaded_text, self._loaded_source = v, text, source
            self._refresh_versions()
            self.status.show(f"saved v{v} ({source}{', final' if is_final else ''})")
            return v

    @property
    def saved_version(self) -> int | None:
        return self._loaded_version

    def holds_human_text(self) -> bool:
        return is_human_text(
            self.w_editor.value,
            loaded_text=self._loaded_text,
            loaded_source=self._loaded_source,
            pending=self.autosaver.pending,
        )

    # ---- final, conflicts, history --------------------------------------------------------------------
    @guarded
    def mark_final(self) -> int | None:
        self.autosaver.cancel()  # the pending edit goes into the final version itself, not a version before it
        source = "human" if self._loaded_source not in MACHINE_SOURCES else self._loaded_source
        return self.save(self.w_editor.value, source=source, is_final=True)

    @guarded
    def resolve_conflict(self, keep_mine: bool) -> int | None:
        if not self.conflict or self.record is None:
            return None
        mine = self.w_editor.value
        self._show_conflict(False)
        if not keep_mine:
            self._load_brief()
            self.status.show("loaded the latest saved text; yours is in the history as a conflict copy")
            return self._loaded_version
        latest = self.store.latest_brief(self.repo, self.record.number)
        self._loaded_version = self.store.latest_version(self.repo, self.record.number)
        self._loaded_text = latest.text if latest else ""
        return self.save(mine, source="human", meta={"resolved_conflict": True})

    @guarded
    def restore(self, version: int | None) -> int | None:
        """Put an older version back in the editor, saved as a new version (the history keeps everything)."""
        if version is None or self.record is None:
            return None
        self.autosaver.flush()
        v = self._versions.get(int(version)) or pick_version(
            self.store.brief_versions(self.repo, self.record.number), int(version)
        )
        if v is None:
            raise WorkbenchError(f"version {version} of #{self.record.number} not found")
        source = v.source if v.source in MACHINE_SOURCES else "human"
        new = self.save(v.text, source=source, meta={"restored_from": v.version}, brief=v.brief, force=True)
        if new is not None:
            self.set_text(v.text)
        return new

    @guarded
    def compare(self, version: int | None = None) -> str:
        """Diff a version (default: the newest machine draft) against the editor's text."""
        if self.record is None:
            return ""
        base = pick_version(self.store.brief_versions(self.repo, self.record.number), version)
        if base is None:
            self.w_textdiff.value = '<div class="wb-note">no draft to compare with</div>'
        else:
            self.w_textdiff.value = panels.text_diff_html(
                base.text,
                self.w_editor.value,
                old_label=f"v{base.version} ({base.source})",
                new_label="editor",
            )
        return self.w_textdiff.value

    # ---- machine drafts ---------------------------------------------------------------------------------
    def update_llm_button(self) -> None:
        s = llm_settings()
        self.b_llm.disabled = not s.configured
        self.b_llm.tooltip = s.why_not() or "stream a draft from the configured model"
        self.w_llm_reason.value = (
            "" if s.configured else f'<span class="wb-dim">LLM off: {panels.e(s.why_not())}</span>'
        )

    def take_draft(self, draft: Draft) -> int | None:
        """A machine draft arrives. Into the editor if the editor holds no human text; otherwise into the
        history only, with the human text saved again on top so it stays the latest."""
        with self.autosaver._lock:  # may run on the LLM thread while the reader types
            self.autosaver.flush()
            if self.conflict:
                raise WorkbenchError("resolve the conflict first: the draft was not saved")
            kw = {"source": draft.source, "brief": draft.brief, "meta": draft.meta, "force": True}
            if not self.holds_human_text():
                v = self.save(draft.text, **kw)
                if v is not None:
                    self.set_text(draft.text)
                    self.status.show(f"{draft.source} draft saved as v{v}")
                return v
            mine = self.w_editor.value
            dv = self.save(draft.text, **kw)
            if dv is None:
                return None
            self.save(mine, source="human", meta={"kept_over_draft": dv}, force=True)
            self.set_text(mine)
            self.compare(dv)
            self.status.show(
                f"a new {draft.source} draft is in the history as v{dv}; your edited text was kept in the editor. "
                f"Compare below, or restore v{dv} to use it.",
                "warn",
            )
            return dv

    @guarded
    def draft_offline(self) -> int | None:
        if self.record is None:
            return None
        return self.take_draft(offline_draft(self.record, self.analysis, self.lang))

    @guarded
    def draft_llm(self, *, wait: bool = False) -> None:
        """Stream a draft from the model in a background thread; `cancel_llm()` stops it."""
        drafter = llm_drafter(llm_settings())
        if self.llm_job is not None and self.llm_job.alive():
            raise WorkbenchError("a draft is already streaming: cancel it first")
        if self.record is None:
            raise WorkbenchError("nothing to draft: no PR selected")
        self.autosaver.flush()
        number = self.record.number
        into_editor = not self.holds_human_text()

        def show_stream(text: str) -> None:
            if into_editor:
                self.set_text(text)
            else:
                self.w_textdiff.value = "<b>incoming draft</b><pre>" + panels.e(text[-4000:]) + "</pre>"

        def finish(result) -> None:
            if self.record is None or self.record.number != number:
                raise WorkbenchError(
                    f"the draft for #{number} finished after you moved on; run it again there"
                )
            if into_editor:
                self.set_text(self._loaded_text)  # the stream was a preview: only a saved draft replaces it
            if job.cancelled:
                self.status.show("LLM draft cancelled; nothing was saved", "warn")
            elif result.brief is None:
                self.status.show(
                    f"LLM draft failed: {result.error}; the editor is unchanged "
                    "(Draft (offline) gives the offline draft)",
                    "err",
                )
            else:
                self.take_draft(llm_result_draft(result))

        def end() -> None:
            self.w_editor.disabled = self.record is None
            self.b_cancel.disabled, self.b_draft.disabled = True, False
            self.update_llm_button()

        job = LLMDraftJob(
            drafter,
            self.record,
            self.analysis,
            self.lang,
            status=self.status,
            on_text=show_stream,
            finish=finish,
            end=end,
        )
        self.llm_job = job
        self.b_cancel.disabled, self.b_llm.disabled, self.b_draft.disabled = False, True, True
        if into_editor:
            self.w_editor.disabled = True  # the stream owns the editor until it ends
        self.status.show("drafting with the LLM… (Cancel stops it)", "warn")
        job.start(wait=wait)

    def cancel_llm(self) -> None:
        if self.llm_job is not None:
            self.llm_job.cancel()
        self.status.show("cancelling the LLM draft…", "warn")
