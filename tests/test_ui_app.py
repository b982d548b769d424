"""The review app at the widget layer: set values, click, and check the cache and the files written.

`Button.click()` swallows handler exceptions, so every test asserts on state (store, status, files)."""

from __future__ import annotations

import time
from contextlib import contextmanager

import pytest
from ui_helpers import REPO, big_diff_pr, live_markup, make_cache, many_files_pr, pr, untrusted_pr

from workbench.store import Store
from workbench.ui.app import ReviewApp


@pytest.fixture
def cache(tmp_path):
    make_cache(tmp_path / "c", extra=[big_diff_pr(), many_files_pr()]).close()
    return tmp_path / "c"


def open_app(cache, tmp_path, **kw) -> ReviewApp:
    kw.setdefault("autosave_delay", 0.05)
    return ReviewApp(Store(cache), exports=tmp_path / "exports", **kw)


def test_opens_on_the_queue_and_steps(cache, tmp_path, monkeypatch):
    monkeypatch.delenv("WORKBENCH_MODEL", raising=False)
    app = open_app(cache, tmp_path)
    assert app.queue.numbers == [30, 20, 7, 3, 2, 1] and app.w_pos.value == "1 / 6"
    assert app.b_prev.disabled and not app.b_next.disabled
    app.b_next.click()
    assert app.record.number == 20 and app.w_pos.value == "2 / 6" and "#20" in app.w_header.value
    app.b_prev.click()
    assert app.record.number == 30
    app._on_key("j")
    assert app.record.number == 20
    app.w_keys._handle(app.w_keys, {"key": "k"}, [])  # what the browser sends
    assert app.record.number == 30
    app.w_jump.value = 3
    app.b_jump.click()
    assert app.record.number == 3 and app.w_pos.value == "4 / 6"
    # the LLM button says why it is off
    assert app.b_llm.disabled and "WORKBENCH_MODEL" in app.w_llm_reason.value


def test_a_number_entered_in_the_pr_box_jumps_without_go(cache, tmp_path):
    app = open_app(cache, tmp_path)
    shows = []
    real_show = app._show
    app._show = lambda n: (shows.append(n), real_show(n))
    app.w_jump.value = 3  # what the browser sends on Enter (IntText syncs on Enter, not per key)
    assert app.record.number == 3 and app.w_pos.value == "4 / 6" and shows == [3]
    app.next()  # the app showing the new number in the box is no jump of its own
    assert app.record.number == 2 and app.w_jump.value == 2 and shows == [3, 2]


def test_files_render_only_when_opened_in_key_order(cache, tmp_path):
    app = open_app(cache, tmp_path, number=20)
    key = [k.filename for k in app.analysis.key_files]
    assert [f.filename for f in app.files][: len(key)] == key
    assert app.w_files.titles[0].startswith("★")
    # first file auto-opened and cut at 400 lines; the others are empty placeholders
    assert app.w_files.selected_index == 0 and 'class="wb-diff"' in app._pool[0].value
    assert all(app._pool[i].value == "" for i in range(1, len(app.files)))
    assert app.b_show_all.layout.display != "none" and "showing 400 of" in app._pool[0].value
    app.b_show_all.click()
    assert app._pool[0].value.count("<tr class=a>") == 1900 and app.b_show_all.layout.display == "none"
    app.w_files.selected_index = 1
    assert app._pool[1].value and 'class="wb-diff"' in app._pool[1].value


def test_three_thousand_files_are_paged(cache, tmp_path):
    app = open_app(cache, tmp_path, number=30)
    assert len(app.files) == 3000 and app.pages == 60
    assert len(app.w_files.children) == 50 and "page 1 / 60" in app.w_files_info.value
    assert app.w_pager.layout.display == "flex"
    app.b_page_next.click()
    assert app.page == 1 and "files 51–100" in app.w_files_info.value
    assert app.w_files.titles[0].endswith(app.files[50].filename + "  +3 −0")
    app.show_page(99)
    assert app.page == 59 and app.b_page_next.disabled
    app.next()  # a small PR: the pager hides
    assert app.w_pager.layout.display == "none" and len(app.w_files.children) == len(app.files)


def test_special_files_show_as_such(cache, tmp_path):
    app = open_app(cache, tmp_path, number=3)
    by_name = {f.filename: i for i, f in enumerate(app.files)}
    for name, note in [
        ("assets/logo.png", "binary"),
        ("pkg/new_name.py", "renamed from pkg/old_name.py"),
        ("pkg/gone.py", "file removed"),
        ("pkg/huge.json", "patch omitted"),
    ]:
        app.w_files.selected_index = by_name[name]
        assert note in app._pool[by_name[name]].value, name


def test_autosave_debounces_and_flushes_on_navigation(cache, tmp_path):
    app = open_app(cache, tmp_path, number=2, autosave_delay=30)  # the timer will not fire during the test
    app.text = "# Runner bump\n\nSkim it."
    assert app.store.latest_brief(REPO, 2) is None and app.autosaver.pending
    assert "editing" in app.status_text and "<h1>Runner bump</h1>" in app.w_preview.value
    app.b_next.click()  # leaving the PR saves it
    v = app.store.latest_brief(REPO, 2)
    assert v.text == "# Runner bump\n\nSkim it." and v.source == "human" and v.version == 1
    assert app.record.number == 1 and app.text == ""


def test_autosave_timer_fires_on_its_own(cache, tmp_path):
    app = open_app(cache, tmp_path, number=2, autosave_delay=0.1)
    app.text = "typed"
    deadline = time.monotonic() + 5
    while not app.status_text.startswith("saved") and time.monotonic() < deadline:
        time.sleep(0.02)
    assert app.store.latest_brief(REPO, 2).text == "typed"
    assert app.status_text.startswith("saved v1")
    app.text = "typed more"
    app.text = "typed more, and more"
    time.sleep(0.5)
    assert [v.text for v in app.store.brief_versions(REPO, 2)] == ["typed", "typed more, and more"]


def test_kernel_restart_keeps_the_text(cache, tmp_path):
    app = open_app(cache, tmp_path, number=1)
    app.text = "my careful words"
    app.flush()
    again = open_app(cache, tmp_path, number=1)  # a new kernel: a new app on the same cache
    assert again.text == "my careful words" and again.saved_version == 1


def test_two_apps_stale_save_is_refused_and_both_texts_kept(cache, tmp_path):
    a = open_app(cache, tmp_path, number=1, autosave_delay=30)
    b = open_app(cache, tmp_path, number=1, autosave_delay=30)
    b.text = "B's brief"
    b.flush()
    a.text = "A's brief"
    a.flush()
    assert a.conflict and a.status_kind == "err" and "version" in a.status_text
    assert a.w_conflict.layout.display == "flex"
    texts = {(v.source, v.text) for v in a.store.brief_versions(REPO, 1)}
    assert texts == {("human", "B's brief"), ("conflict", "A's brief")}
    assert a.text == "A's brief"  # the editor keeps A's words
    a.text = "A's brief, still typing"
    a.flush()
    assert len(a.store.brief_versions(REPO, 1)) == 2  # no more saves until resolved
    a.b_mine.click()
    latest = a.store.latest_brief(REPO, 1)
    assert latest.text == "A's brief, still typing" and not a.conflict
    # B is now stale in turn and may take A's text
    b.text = "B again"
    b.flush()
    assert b.conflict
    b.b_theirs.click()
    assert b.text == "A's brief, still typing" and not b.conflict


def test_draft_fills_an_empty_editor_but_never_replaces_human_text(cache, tmp_path):
    app = open_app(cache, tmp_path, number=1, autosave_delay=30, lang="en")
    app.b_draft.click()
    first = app.store.latest_brief(REPO, 1)
    assert first.source == "offline" and app.text == first.text and first.text.strip()
    app.text = first.text + "\nMy own note."
    app.b_draft.click()  # redraft after a human edit
    latest = app.store.latest_brief(REPO, 1)
    assert latest.source == "human" and latest.text.endswith("My own note.") and app.text == latest.text
    sources = [v.source for v in app.store.brief_versions(REPO, 1)]
    assert sources == ["offline", "human", "offline", "human"]
    assert (
        "wb-add" in app.w_textdiff.value and "My own note." in app.w_textdiff.value
    )  # compared for the reader
    # restore the draft explicitly
    app.restore(3)
    assert app.text == first.text and app.store.latest_brief(REPO, 1).meta.get("restored_from") == 3


def test_mark_final_and_versions_list(cache, tmp_path):
    app = open_app(cache, tmp_path, number=2, autosave_delay=30)
    app.text = "final words"
    app.b_final.click()
    latest = app.store.latest_brief(REPO, 2)
    assert latest.is_final and latest.text == "final words"
    labels = [label for label, _ in app.w_versions.options]
    assert len(labels) == 1 and labels[0].startswith("v1") and "final" in labels[0] and "human" in labels[0]
    app.compare(1)
    assert "no differences" in app.w_textdiff.value


def test_exports_write_the_brief_and_the_queue_digest(cache, tmp_path):
    app = open_app(cache, tmp_path, number=2, autosave_delay=30, lang="en")
    app.text = "### Runner bump\n\nTyped just before export."
    app.b_export_pr.click()  # flushes first
    path = app.last_export
    assert path.parent == tmp_path / "exports" and "Typed just before export." in path.read_text()
    assert str(path) in app.w_export.value
    app.apply_filters(state="merged")
    assert app.queue.numbers == [30, 20, 7, 3, 1]
    app.b_export_digest.click()
    digest = app.last_export.read_text()
    assert digest.startswith(f"# {REPO}")
    for n in (30, 20, 7, 3, 1):
        assert f"#{n}" in digest
    assert "#2 " not in digest and "<script" not in digest


def test_sync_while_editing_does_not_disturb_the_editor(cache, tmp_path):
    app = open_app(cache, tmp_path, number=1, autosave_delay=30)
    app.text = "half a sentence"
    writer = Store(cache)  # another process syncing
    rec = pr(1, "[rollout] fix: race in ACK (retitled)", [], body="new body")
    writer.write_pr(writer.repo_pk(REPO), rec)
    assert app.text == "half a sentence"
    app.text = "half a sentence, finished."
    app.flush()
    assert app.store.latest_brief(REPO, 1).text == "half a sentence, finished."
    app.prev()
    app.next()
    assert "(retitled)" in app.w_header.value and app.text == "half a sentence, finished."


def test_errors_in_handlers_show_in_the_app(cache, tmp_path):
    app = open_app(cache, tmp_path)
    app.w_jump.value = 9999
    app.b_jump.click()
    assert app.status_kind == "err" and "#9999 is not in the cache" in app.status_text
    assert "#9999" in app.w_status.value
    app.w_since.value = "someday"
    app.b_apply.click()
    assert app.status_kind == "err" and "7d" in app.status_text
    assert app.record.number == 30  # still usable


def test_jump_to_a_filtered_out_pr_widens_the_queue(cache, tmp_path):
    app = open_app(cache, tmp_path)
    app.apply_filters(state="open")
    assert app.queue.numbers == [2]
    app.go(7)
    assert app.record.number == 7 and 7 in app.queue.numbers


def test_filters_on_verdict_and_brief(cache, tmp_path):
    app = open_app(cache, tmp_path, number=1)
    app.text = "x"
    app.flush()
    app.apply_filters(briefed="briefed")
    assert app.queue.numbers == [1]
    app.apply_filters(briefed="any", verdict="skip")
    assert app.queue.numbers and all(app._analyses[(REPO, n)].verdict == "skip" for n in app.queue.numbers)
    app.apply_filters(verdict="deep", state="open")
    assert app.queue.numbers == [] or all(
        app._analyses[(REPO, n)].verdict == "deep" for n in app.queue.numbers
    )


def test_untrusted_pr_is_inert_in_every_pane(cache, tmp_path):
    app = open_app(cache, tmp_path, number=7, lang="en")
    for i in range(len(app.files)):
        app.w_files.selected_index = i
    app.b_draft.click()
    app.compare()
    for tab in range(len(app.w_side.children)):  # Conversation and Heuristics render when opened
        app.w_side.selected_index = tab
    assert "review thread on" in app.w_conv.value and "mallory" in app.w_conv.value
    for widget in app.html_widgets():
        assert not live_markup(widget.value), (widget, widget.value[:300])
    assert "&lt;script&gt;" in app.w_header.value
    joined = " ".join(wd.value for wd in app.html_widgets())
    assert "javascript:alert(5)" in joined  # the patch line, as text
    assert (
        "open on GitHub" in app.w_header.value and "<a " not in app.w_header.value
    )  # javascript: URL not linked
    assert 'href="javascript' not in joined


@contextmanager
def fake_llm(monkeypatch, **reply):
    """A local fake OpenAI server streaming one English brief, configured as the app's model."""
    from tests.fake_openai import FakeOpenAI, Reply, brief_json

    with FakeOpenAI([Reply(brief_json("en"), **reply)]) as server:
        monkeypatch.setenv("WORKBENCH_MODEL", "fake-model")
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        yield server


def test_llm_draft_streams_and_keeps_human_text(cache, tmp_path, monkeypatch):
    with fake_llm(monkeypatch, chunk_size=20, chunk_delay=0.01):
        app = open_app(cache, tmp_path, number=1, autosave_delay=30, lang="en")
        assert not app.b_llm.disabled
        app.draft_llm(wait=True)
        latest = app.store.latest_brief(REPO, 1)
        assert latest.source == "llm" and "Fix the ACK race in weight sync" in app.text, app.status_text
        app.text = "mine now"
        app.draft_llm(wait=True)
        assert app.text == "mine now" and app.store.latest_brief(REPO, 1).text == "mine now"
        assert [v.source for v in app.store.brief_versions(REPO, 1)] == ["llm", "human", "llm", "human"]


def test_llm_draft_cancel_leaves_editor_alone(cache, tmp_path, monkeypatch):
    with fake_llm(monkeypatch, chunk_size=5, chunk_delay=0.05):
        app = open_app(cache, tmp_path, number=1, autosave_delay=30, lang="en")
        app.draft_llm()
        time.sleep(0.3)
        app.b_cancel.click()
        app._llm_thread.join(20)
        assert app.store.latest_brief(REPO, 1) is None and app.text == ""
        assert "cancel" in app.status_text.lower() and not app.w_editor.disabled


def test_hostile_untrusted_pr_helper_is_hostile():
    rec = untrusted_pr()
    assert "<script>" in rec.title and rec.url.startswith("javascript:")


def test_status_says_what_brief_is_loaded(cache, tmp_path):
    app = open_app(cache, tmp_path, number=2, autosave_delay=30)
    assert "no brief yet" in app.status_text
    app.text = "words"
    app.b_final.click()
    app.next()
    app.prev()
    assert app.status_text == "#2 · brief v1 (human, final)"


def test_keys_widget_is_offline_and_suppresses_jupyterlab_shortcuts():
    from workbench.ui.keys import _ESM

    assert "data-lm-suppress-shortcuts" in _ESM and "stopPropagation" in _ESM
    assert "http://" not in _ESM and "https://" not in _ESM and "import " not in _ESM  # no CDN, no imports


def test_unknown_repo_is_reported_and_the_app_still_opens(cache, tmp_path):
    app = ReviewApp.open(cache, "nobody/nothing", exports=tmp_path / "exports")
    assert app.repo == REPO and app.record is not None
    assert "nobody/nothing is not in the cache" in (app.last_error or "")


def test_missing_analysis_and_diff_modules_degrade_clearly(cache, tmp_path, monkeypatch):
    import workbench.ui.app as app_mod

    real = app_mod._optional

    def without(name):
        if name in ("workbench.analysis.pipeline", "workbench.analysis.diff"):
            return None, f"{name} unavailable (not installed)"
        return real(name)

    monkeypatch.setattr(app_mod, "_optional", without)
    app = open_app(cache, tmp_path, number=7)
    assert "heuristics unavailable" in app.status_text and "heuristics unavailable" in app.w_heur.value
    assert "raw patch" in app._pool[0].value and "&lt;script&gt;" in app._pool[0].value
    assert not live_markup(app._pool[0].value)
    app.text = "still writable"
    app.flush()
    assert app.store.latest_brief(REPO, 7).text == "still writable"


def test_failed_save_keeps_the_reader_on_the_pr(cache, tmp_path, monkeypatch):
    app = open_app(cache, tmp_path, number=2, autosave_delay=30)
    real = app.store.save_brief

    def broken(*a, **kw):
        raise OSError("disk full")

    monkeypatch.setattr(app.store, "save_brief", broken)
    app.text = "precious"
    app.b_next.click()
    assert app.record.number == 2 and app.text == "precious"
    assert app.status_kind == "err" and "disk full" in app.status_text
    monkeypatch.setattr(app.store, "save_brief", real)
    app.b_next.click()  # the retry succeeds, then we move on
    assert app.record.number == 1 and app.store.latest_brief(REPO, 2).text == "precious"


def test_verdicts_come_from_the_analysis_memo_beside_the_cache(cache, tmp_path):
    from workbench.analysis.memo import memo_path

    first = open_app(cache, tmp_path)
    numbers = list(first.queue.numbers)
    verdicts = first.analyses.verdicts(REPO, numbers)
    assert memo_path(REPO, cache).is_file() and first.analyses.memo.misses == len(numbers)
    second = open_app(cache, tmp_path)  # a new session: nothing analysed in the app yet
    assert second.analyses.verdicts(REPO, numbers) == verdicts
    assert second.analyses.memo.hits == len(numbers) and second.analyses.memo.misses == 0
