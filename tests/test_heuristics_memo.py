"""The analysis memo: a fingerprint of every analysis input, hits equal to fresh analyses, a file that
survives a process and is dropped when foreign, and the `workbench analyze` CLI reusing it."""

from __future__ import annotations

import copy
import json
import pickle

import pytest
from heuristics_helpers import file, hunk, record, user

from workbench.analysis import memo as analysis_memo
from workbench.analysis.conventions import load_conventions
from workbench.analysis.memo import (
    AnalysisMemo,
    VerdictSummary,
    analysis_fingerprint,
    memo_path,
)
from workbench.analysis.pipeline import analyze
from workbench.analysis.stored import stored_analyses, stored_verdicts
from workbench.cli import main
from workbench.store import Store

REPO = "example-org/minirl"


def rich_record(number: int = 7):
    return record(
        [
            file(
                "pkg/sync.py",
                hunk(
                    10,
                    ["+    with self._lock:", "+        del buf", "+    # TODO: retry"],
                    section="def send(self):",
                ),
            ),
            file("tests/test_sync.py", hunk(1, ["+def test_send():", "+    assert True"])),
            {"filename": "docs/big.md", "additions": 40, "deletions": 2, "patch": None},
        ],
        title="[rollout] fix: race in send",
        body="Root cause: the ack comes late. Fixes #2, follow-up to #3, see "
        f"https://github.com/{REPO}/pull/4 and https://github.com/other/repo/pull/5",
        number=number,
        reviews=[{"id": 21, "user": user("bob"), "state": "CHANGES_REQUESTED", "body": "please add a test"}],
        review_comments=[
            {"id": 1, "user": user("bob"), "path": "pkg/sync.py", "line": 11, "body": "why del?"},
        ],
        issue_comments=[{"id": 31, "user": user("alice"), "body": "I will add the retry in a follow-up PR"}],
    )


# ---- the fingerprint ------------------------------------------------------------------------------------


def _changed(mutate) -> bool:
    conv = load_conventions(REPO)
    a, b = rich_record(), rich_record()
    mutate(b)
    return analysis_fingerprint(a, conv) != analysis_fingerprint(b, conv)


@pytest.mark.parametrize(
    "what, mutate",
    [
        ("title", lambda r: r.pr.__setitem__("title", "[rollout] fix: race in recv")),
        ("body", lambda r: r.pr.__setitem__("body", r.pr["body"] + " More.")),
        ("author", lambda r: r.pr.__setitem__("user", user("carol"))),
        ("updated_at", lambda r: r.pr.__setitem__("updated_at", "2026-02-01T00:00:00Z")),
        ("head sha", lambda r: r.pr.__setitem__("head", {"sha": "abc"})),
        (
            "a patch, same length",
            lambda r: r.files[0].__setitem__("patch", r.files[0]["patch"].replace("buf", "bug")),
        ),
        ("a file's counts", lambda r: r.files[2].__setitem__("additions", 41)),
        ("a file's status", lambda r: r.files[0].__setitem__("status", "renamed")),
        ("a file added", lambda r: r.files.append({"filename": "x.py", "additions": 1})),
        ("a review state", lambda r: r.reviews[0].__setitem__("state", "APPROVED")),
        ("a thread resolved", lambda r: r.review_comments[0].__setitem__("thread_resolved", False)),
        ("a comment", lambda r: r.issue_comments.append({"user": user("dan"), "body": "see #9"})),
        ("truncation", lambda r: setattr(r, "files_truncated", True)),
    ],
)
def test_fingerprint_changes_with_every_input(what, mutate):
    assert _changed(mutate), what


def test_fingerprint_is_stable_and_ignores_what_analysis_does_not_read():
    conv = load_conventions(REPO)
    a = rich_record()
    fp = analysis_fingerprint(a, conv)
    assert fp == analysis_fingerprint(copy.deepcopy(a), load_conventions(REPO))  # a fresh conventions object
    assert len(fp) == 32 and int(fp, 16) >= 0
    b = copy.deepcopy(a)
    b.commits.append({"sha": "x"})  # analysis reads no commit list
    b.field_sources["body"] = "git"
    assert analysis_fingerprint(b, conv) == fp


def test_fingerprint_follows_conventions_and_heuristics_version(tmp_path, monkeypatch):
    rec = rich_record()
    p = tmp_path / "strict.toml"
    p.write_text("[thresholds]\ndeep_score = 0.5\n")
    assert analysis_fingerprint(rec, load_conventions(REPO)) != analysis_fingerprint(
        rec, load_conventions(None, p)
    )
    before = analysis_fingerprint(rec, load_conventions(REPO))
    monkeypatch.setattr(analysis_memo, "_version", "another-heuristics-version")
    assert analysis_fingerprint(rec, load_conventions(REPO)) != before


def test_every_conventions_field_a_rule_reads_changes_the_fingerprint(tmp_path):
    # registries, satellite and sample areas decide verdicts and risks as thresholds do: a memo made
    # without them is stale
    rec = rich_record()
    for toml in (
        'registries = ["register_loss"]\n',
        'satellite_areas = ["recipes"]\n',
        'sample_areas = ["recipes"]\n',
    ):
        p = tmp_path / "own.toml"
        p.write_text(toml)
        assert analysis_fingerprint(rec, load_conventions(None, p)) != analysis_fingerprint(
            rec, load_conventions(None)
        ), toml


def test_heuristics_version_covers_the_analysis_sources():
    v = analysis_memo.heuristics_version()
    assert len(v) == 24 and v == analysis_memo.heuristics_version()
    names = {p.name for p in analysis_memo.analysis_sources()}
    assert {"records.py", "signals.py", "pipeline.py", "verdicts.py", "risks.py"} <= names


# ---- the memo ----------------------------------------------------------------------------------------------


def test_hit_equals_fresh_analysis_and_refreshes_cross_refs(tmp_path):
    conv = load_conventions(REPO)
    rec = rich_record()
    memo = AnalysisMemo(tmp_path / "m.pickle", conv)
    first = memo.analyze(rec, known_prs={})  # remembered while no referenced PR was known
    assert (memo.hits, memo.misses) == (0, 1)
    assert all(r.title is None for r in first.cross_refs)
    known = {
        2: ("the bug", "merged"),
        3: ("first part", "open"),
        4: ("by URL", "closed"),
        5: ("other repo", "open"),
    }
    hit = memo.analyze(rec, known_prs=known)
    assert (memo.hits, memo.misses) == (1, 1)
    assert hit.to_dict() == analyze(rec, conventions=conv, known_prs=known).to_dict()
    titles = {r.number: r.title for r in hit.cross_refs}
    assert titles[2] == "the bug" and titles[4] == "by URL" and titles[5] is None  # another repo's #5
    hit.verdict = "mutated"  # each hit is a fresh copy: callers cannot spoil the memo
    assert memo.analyze(rec, known_prs=known).verdict != "mutated"


def test_changed_record_is_analysed_again(tmp_path):
    conv = load_conventions(REPO)
    memo = AnalysisMemo(tmp_path / "m.pickle", conv)
    rec = rich_record()
    memo.analyze(rec)
    rec.files[:] = [file("docs/guide.md", hunk(1, ["+# Guide", "+Read me."]))]
    again = memo.analyze(rec)
    assert (memo.hits, memo.misses) == (0, 2)
    assert again.to_dict() == analyze(rec, conventions=conv).to_dict() and again.verdict == "skip"
    assert len(memo.entries) == 1  # one entry per PR number: a stale version is replaced, not kept


def test_file_round_trip_and_bad_files(tmp_path, monkeypatch):
    conv = load_conventions(REPO)
    path = tmp_path / "sub" / "m.pickle"
    with AnalysisMemo(path, conv) as memo:
        memo.analyze(rich_record(7))
        memo.analyze(rich_record(8))
    assert path.is_file() and not list(path.parent.glob(".memo-*"))  # no temp file left behind
    again = AnalysisMemo(path, conv)
    a = again.analyze(rich_record(8))
    assert (again.hits, again.misses) == (1, 0) and a.number == 8
    mtime = path.stat().st_mtime_ns
    again.save()  # nothing changed: nothing written
    assert path.stat().st_mtime_ns == mtime

    path.write_bytes(b"not a pickle")
    assert AnalysisMemo(path, conv).entries == {}
    path.write_bytes(pickle.dumps(("someone-else", analysis_memo.heuristics_version(), {7: ("x", b"")})))
    assert AnalysisMemo(path, conv).entries == {}
    with AnalysisMemo(path, conv) as memo:
        memo.analyze(rich_record(7))
    monkeypatch.setattr(analysis_memo, "_version", "newer-heuristics")
    stale = AnalysisMemo(path, conv)
    assert stale.entries == {}  # written by other heuristics: dropped whole
    stale.analyze(rich_record(7))
    assert stale.misses == 1


# ---- the CLI ----------------------------------------------------------------------------------------------


def test_cli_analyze_reuses_the_memo(tmp_path, capsys):
    store = Store(tmp_path)
    pk = store.upsert_repo(REPO, 1)
    rec = rich_record(3)
    rec.pr["updated_at"] = "2026-01-03T00:00:00Z"
    store.write_pr(pk, rec)
    store.close()

    def run():
        assert main(["--cache", str(tmp_path), "analyze", REPO, "--format", "json"]) == 0
        out = capsys.readouterr().out
        assert out.count("\n") == 1 and '", "' not in out  # compact: one line, no padding
        return json.loads(out)

    first = run()
    path = memo_path(REPO, tmp_path)
    assert path.is_file()
    with open(path, "rb") as fh:
        _magic, _version, entries = pickle.load(fh)
    assert set(entries) == {3}
    second = run()
    assert second == first and second[0]["verdict"] in ("deep", "skim", "skip")
    # a changed PR in the cache is analysed again, not served stale
    store = Store(tmp_path)
    rec.files = [file("docs/guide.md", hunk(1, ["+# Guide", "+Read me."]))]
    rec.pr["updated_at"] = "2026-01-04T00:00:00Z"
    store.write_pr(store.repo_pk(REPO), rec)
    cached = store.pr(REPO, 3)
    store.close()
    third = run()
    fresh = analyze(
        cached, conventions=load_conventions(REPO, cache=tmp_path), known_prs={3: (rec.title, "open")}
    )
    assert "docs/guide.md" in third[0]["key_files"] and third != first
    assert third[0]["key_files"] == [k.filename for k in fresh.key_files]
    assert third[0]["verdict"] == fresh.verdict and third[0]["deciding"] == fresh.deciding


class _Boom:
    """Unpickling this would call os.getpid: the memo must refuse to import it."""

    def __reduce__(self):
        import os

        return (os.getpid, ())


class _Touch:
    """Unpickling this would create `marker`: a visible side effect."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (self.marker.touch, ())


def test_a_planted_pickle_cannot_run_code(tmp_path):
    conv = load_conventions(REPO)
    path, marker = tmp_path / "m.pickle", tmp_path / "ran"
    version = analysis_memo.heuristics_version()
    path.write_bytes(pickle.dumps((analysis_memo._MAGIC, version, {7: _Touch(marker)})))
    assert AnalysisMemo(path, conv).entries == {}
    assert not marker.exists()
    rec = rich_record(7)
    fp = analysis_fingerprint(rec, conv)
    memo = AnalysisMemo(path, conv)
    memo.entries = {7: (fp, pickle.dumps(_Boom()))}  # one entry, with a matching fingerprint
    assert memo.get(rec) is None
    a = memo.analyze(rec)  # refused entry: analysed afresh and replaced
    assert (memo.hits, memo.misses) == (0, 1) and a.to_dict() == analyze(rec, conventions=conv).to_dict()


def test_hits_equal_fresh_analyses_on_the_verl_history(tmp_path):
    import gzip
    from pathlib import Path

    from workbench.records import PRRecord

    meta = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "verl_prs_meta.jsonl.gz"
    if not meta.exists():
        pytest.skip("../shared/corpus is absent")
    with gzip.open(meta, "rt", encoding="utf-8") as fh:
        rows = [json.loads(line) for _, line in zip(range(400), fh, strict=False)]
    records = [
        PRRecord(
            repo="verl-project/verl",
            number=d["number"],
            pr={"number": d["number"], "title": d["title"], "body": d.get("body")},
            files=d.get("files") or [],
            source="facts",
        )
        for d in rows
    ]
    known = {r.number: (r.title, "merged") for r in records}
    conv = load_conventions("verl-project/verl")
    with AnalysisMemo(tmp_path / "verl.pickle", conv) as memo:
        for r in records:
            memo.analyze(r)  # remembered without known PRs
    memo = AnalysisMemo(tmp_path / "verl.pickle", conv)
    for r in records:
        assert (
            memo.analyze(r, known_prs=known).to_dict()
            == analyze(r, conventions=conv, known_prs=known).to_dict()
        )
    assert (memo.hits, memo.misses) == (len(records), 0)


# ---- PRs in the cache: found by the store's stamp, read in bulk ---------------------------------------------


def _cached(tmp_path, n: int = 6) -> Store:
    store = Store(tmp_path)
    pk = store.upsert_repo(REPO, 1)
    for i in range(1, n + 1):
        rec = rich_record(i)
        rec.pr["updated_at"] = f"2026-01-0{i}T00:00:00Z"
        rec.pr["head"] = {"sha": f"{i:040x}"}
        store.write_pr(pk, rec)
    return store


def test_stored_analyses_read_only_what_changed(tmp_path, monkeypatch):
    store = _cached(tmp_path)
    conv = load_conventions(REPO)
    known = store.known_prs(REPO)
    numbers = [6, 2, 4, 1, 3, 5]
    memo = AnalysisMemo(tmp_path / "m.pickle", conv)
    first = [a.to_dict() for a in stored_analyses(store, REPO, numbers, memo, known_prs=known)]
    assert memo.misses == 6 and [a["number"] for a in first] == numbers
    assert first == [
        analyze(r, conventions=conv, known_prs=known).to_dict() for r in store.records(REPO, numbers)
    ]
    memo.save()

    read: list[list[int]] = []
    real = store.prs_records
    monkeypatch.setattr(store, "prs_records", lambda repo, ns: read.append(list(ns)) or real(repo, ns))
    monkeypatch.setattr(analysis_memo, "analysis_fingerprint", lambda *a: pytest.fail("re-hashed"))
    memo = AnalysisMemo(tmp_path / "m.pickle", conv)
    again = [a.to_dict() for a in stored_analyses(store, REPO, numbers, memo, known_prs=known)]
    assert again == first and read == [] and (memo.hits, memo.misses) == (6, 0)
    monkeypatch.undo()

    # One PR rewritten by a sync: only it is read and analysed again.
    monkeypatch.setattr(store, "prs_records", lambda repo, ns: read.append(list(ns)) or real(repo, ns))
    changed = rich_record(4)
    changed.files = [file("docs/guide.md", hunk(1, ["+# Guide", "+Read me."]))]
    changed.pr["updated_at"] = "2026-02-01T00:00:00Z"
    store.write_pr(store.repo_pk(REPO), changed)
    memo = AnalysisMemo(tmp_path / "m.pickle", conv)
    third = {a.number: a for a in stored_analyses(store, REPO, numbers, memo, known_prs=known)}
    assert read == [[4]] and (memo.hits, memo.misses) == (5, 1)
    assert third[4].to_dict() == analyze(store.pr(REPO, 4), conventions=conv, known_prs=known).to_dict()
    store.close()


def test_stored_verdicts_come_from_the_memo_without_unpickling(tmp_path, monkeypatch):
    store = _cached(tmp_path)
    conv = load_conventions(REPO)
    memo = AnalysisMemo(tmp_path / "m.pickle", conv)
    for r in store.records(REPO):
        memo.analyze(r)  # remembered by fingerprint only (as the review app does): no stamp yet
    summaries, problems = stored_verdicts(store, REPO, [1, 2, 3], memo)
    assert problems == [] and memo.misses == 6  # found by fingerprint: nothing analysed again
    expected = {r.number: analyze(r, conventions=conv) for r in store.records(REPO, [1, 2, 3])}
    assert summaries == [
        VerdictSummary(n, expected[n].verdict, expected[n].audience, expected[n].minutes) for n in (1, 2, 3)
    ]
    monkeypatch.setattr(analysis_memo, "_loads", lambda blob: pytest.fail("unpickled"))
    monkeypatch.setattr(store, "prs_records", lambda *a: pytest.fail("read a record"))
    assert stored_verdicts(store, REPO, [1, 2, 3], memo) == (summaries, [])
    store.close()


def test_stored_verdicts_name_a_failing_pr_and_keep_the_others(tmp_path, monkeypatch):
    store = _cached(tmp_path, 3)
    memo = AnalysisMemo(tmp_path / "m.pickle", load_conventions(REPO))
    real = analysis_memo.analyze

    def fails_on_2(record, **kw):
        if record.number == 2:
            raise ValueError("odd patch")
        return real(record, **kw)

    monkeypatch.setattr(analysis_memo, "analyze", fails_on_2)
    summaries, problems = stored_verdicts(store, REPO, [1, 2, 3], memo)
    assert [s.number for s in summaries] == [1, 3] and problems == ["#2: ValueError: odd patch"]
    store.close()


def test_a_conventions_change_is_not_served_from_stamps(tmp_path):
    store = _cached(tmp_path, 2)
    memo = AnalysisMemo(tmp_path / "m.pickle", load_conventions(REPO))
    list(stored_analyses(store, REPO, [1, 2], memo))
    p = tmp_path / "strict.toml"
    p.write_text("[thresholds]\ndeep_score = 0.01\n")
    strict = AnalysisMemo(tmp_path / "m.pickle", load_conventions(None, p))
    strict.entries = memo.entries
    list(stored_analyses(store, REPO, [1, 2], strict))
    assert strict.misses == 2
    store.close()


def test_the_memo_imports_the_pipeline_at_top_level():
    import subprocess
    import sys

    code = (
        "import workbench.analysis.memo as m, workbench.analysis.pipeline as p; assert m.analyze is p.analyze"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_a_revert_found_by_its_quoted_title_is_linked_on_every_hit(tmp_path):
    """`Revert "title"` with no number names its PR only through the cache's titles. An entry computed
    without them (the trends ask verdicts alone) must still link it once they are known, and the link
    must follow the cache as it changes."""
    reverted = record([file("pkg/a.py", hunk(1, ["+x = 1"]))], number=5, title="feat: faster sync")
    revert = record(
        [file("pkg/a.py", hunk(1, ["-x = 1"]))],
        number=9,
        title='Revert "feat: faster sync"',
        body="This reverts commit 0123abc.",
    )
    conv = load_conventions(REPO)
    memo = AnalysisMemo(tmp_path / "m.pickle", conv)
    assert memo.analyze(revert).reverts is None  # no titles known: nothing to link yet
    known = {5: (reverted.title, "merged")}
    hit = memo.analyze(revert, known_prs=known)
    assert memo.hits == 1 and hit.reverts == 5
    assert hit.to_dict() == analyze(revert, conventions=conv, known_prs=known).to_dict()
    # a later PR of the same title, before the revert, is what it reverts now; then the re-landing
    later = {**known, 7: (reverted.title, "merged"), 12: ("Reland: feat: faster sync", "open")}
    hit = memo.analyze(revert, known_prs=later)
    assert hit.to_dict() == analyze(revert, conventions=conv, known_prs=later).to_dict() and hit.reverts == 7
    assert [(r.number, r.relation) for r in hit.cross_refs] == [(7, "reverts"), (12, "relanded-in")]


def test_a_pr_reverted_later_is_told_on_every_hit(tmp_path):
    """A revert lands after the PR was analysed: the memo's entry is unchanged, and its hit must name
    the revert once the cache holds it (and drop it when the cache no longer does)."""
    pr = record([file("pkg/a.py", hunk(1, ["+x = 1"]))], number=5, title="feat: faster sync")
    conv = load_conventions(REPO)
    memo = AnalysisMemo(tmp_path / "m.pickle", conv)
    before = {5: (pr.title, "merged")}
    assert memo.analyze(pr, known_prs=before).cross_refs == []
    after = {**before, 9: ('Revert "feat: faster sync"', "merged")}
    hit = memo.analyze(pr, known_prs=after)
    assert memo.hits == 1 and [(r.number, r.relation) for r in hit.cross_refs] == [(9, "reverted-by")]
    assert hit.to_dict() == analyze(pr, conventions=conv, known_prs=after).to_dict()
    assert memo.analyze(pr, known_prs=before).cross_refs == []


def test_a_revert_named_by_its_commit_is_linked_on_every_hit(tmp_path):
    from workbench.records import KnownPRs

    revert = record(
        [file("pkg/a.py", hunk(1, ["-x = 1"]))],
        number=9,
        title="[core] fix: undo the faster sync",
        body="This reverts commit " + "ab" * 20 + ".",
    )
    conv = load_conventions(REPO)
    memo = AnalysisMemo(tmp_path / "m.pickle", conv)
    assert memo.analyze(revert).reverts is None  # no merge commits known yet
    known = KnownPRs({5: ("feat: faster sync", "merged")}, {"ab" * 20: 5})
    hit = memo.analyze(revert, known_prs=known)
    assert memo.hits == 1 and hit.reverts == 5
    assert hit.to_dict() == analyze(revert, conventions=conv, known_prs=known).to_dict()
