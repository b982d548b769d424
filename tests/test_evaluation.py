"""`workbench eval`: labels in, agreement and misses out, on a small labelled cache built here."""

from __future__ import annotations

import pytest
from heuristics_helpers import file, hunk, record

from workbench.cli import main
from workbench.config import WorkbenchError
from workbench.evaluation import evaluate, parse_labels_csv
from workbench.store import Store

REPO = "example-org/minirl"
LABELS = """pr,verdict,audience,key_files,key_symbols,risks,reverts_pr,lines_changed
1,skip,docs,docs/guide.md,,none,,2
2,deep,rollout;everyone,pkg/sync.py,send;Sender._ack,concurrency;memory,,40
3,skip,tests,pkg/other.py,,none,1,3
4,deep,ci,.github/workflows/ci.yml,jobs.build.timeout-minutes;timeout=9,security;memory,,2
"""


@pytest.fixture()
def labelled(tmp_path):
    store = Store(tmp_path / "cache")
    pk = store.upsert_repo(REPO, 1)
    store.write_prs(
        pk,
        [
            record([file("docs/guide.md", hunk(1, ["-teh", "+the"]))], title="[doc] docs: typo", number=1),
            record(
                [
                    file(
                        "pkg/sync.py",
                        hunk(
                            10,
                            ["+    with self._lock:", "+        torch.cuda.ipc_collect()"]
                            + [f"+    y{i} = {i}" for i in range(30)],
                            section="def send(self):",
                        ),
                    )
                ],
                title="[rollout] fix: race in send",
                body="Root cause: the ACK raced the cleanup.",
                number=2,
            ),
            record(
                [file("pkg/other.py", hunk(1, ["-    x = 1", "+    x = 2"]))],
                title='Revert "[doc] docs: typo"',
                body="Reverts example-org/minirl#1",
                number=3,
            ),
            record(
                [
                    file(
                        ".github/workflows/ci.yml",
                        hunk(1, ["-  timeout-minutes: 5", "+  timeout-minutes: 9"]),
                    )
                ],
                title="[ci] fix: timeout",
                number=4,
            ),
        ],
    )
    store.close()
    labels = tmp_path / "labels.csv"
    labels.write_text(LABELS)
    return tmp_path / "cache", labels


def test_eval_prints_agreement_and_misses(labelled, capsys):
    cache, labels = labelled
    assert main(["--cache", str(cache), "eval", str(labels)]) == 0
    out = capsys.readouterr().out
    assert "labelled PRs: 4, analysed: 4" in out
    # PR 4 is a tiny CI edit (ours skip) that the label calls deep: one disagreement of four
    assert "verdict agreement: 3/4 = 75%" in out and "small: 3/4" in out
    assert "audience named: 4/4 = 100%" in out
    assert "reverts linked: 1/1 = 100%" in out
    assert "#4 verdict: ours skip, theirs deep" in out
    # one PR's misses in one order, whatever the hash seed
    assert "#4 risk: missed memory\n  #4 risk: missed security" in out
    assert "#3 key_file: theirs first pkg/other.py" not in out  # the only file is our first
    assert "  concurrency" in out and "  memory" in out
    # `send` (the hunk's function) is ours and `_ack` is not; `jobs.build.timeout-minutes` is the CI
    # key `timeout-minutes`, ours too; `timeout=9` names none
    assert "their key symbols among ours: 2/3 = 67% (PRs with one at least: 2/2 = 100%)" in out


def test_evaluate_counts_risks_per_kind(labelled):
    cache, labels = labelled
    from workbench.analysis.pipeline import analyze

    store = Store(cache, create=False)
    analyses = {r.number: analyze(r) for r in store.records(REPO)}
    store.close()
    ev = evaluate(parse_labels_csv(labels.read_text()), analyses)
    assert ev.risks["concurrency"].tp == 1 and ev.risks["memory"].tp == 1
    assert ev.risks["security"].fn == 1
    assert ev.verdict.hit == 3 and ev.key_file_top3.hit == 4


def test_bad_labels_get_a_clear_error(tmp_path):
    with pytest.raises(WorkbenchError, match="missing column"):
        parse_labels_csv("number,verdict\n1,deep\n")
    with pytest.raises(WorkbenchError, match="line 2: verdict must be deep, skim or skip"):
        parse_labels_csv("pr,verdict\n1,maybe\n")
    with pytest.raises(WorkbenchError, match="unknown risk kind"):
        parse_labels_csv("pr,verdict,risks\n1,deep,spooky\n")


def test_eval_from_final_without_briefs_says_what_to_do(labelled, capsys):
    cache, _labels = labelled
    assert main(["--cache", str(cache), "eval", "--from-final", REPO]) == 2
    assert "no final briefs" in capsys.readouterr().err


def test_eval_from_final_briefs(labelled, capsys):
    cache, _labels = labelled
    store = Store(cache)
    # the team's final word on two PRs, with readers named as Chinese briefs name them: #1 a skip for
    # docs maintainers, #2 a skim (ours says deep) for the maintainers of pkg/ (ours: rollout, pkg)
    for number, verdict, audience in ((1, "skip", "文档维护者"), (2, "skim", "pkg 维护者")):
        brief = {"verdict": verdict, "audience": audience, "headline": "x"}
        store.save_brief(REPO, number, "text", source="human", base_version=None, brief=brief, is_final=True)
    store.save_brief(REPO, 4, "draft", source="offline", base_version=None, brief={"verdict": "deep"})
    store.close()
    assert main(["--cache", str(cache), "eval", "--from-final", REPO]) == 0
    out = capsys.readouterr().out
    assert "labelled PRs: 2, analysed: 2" in out  # the draft of #4 is not a label
    assert "verdict agreement: 1/2 = 50%" in out and "#2 verdict: ours deep, theirs skim" in out
    assert "audience matching (our first is one of theirs): 1/2 = 50%" in out
    assert "audience overlapping (any of ours is one of theirs): 2/2 = 100%" in out
    assert "key file" not in out.split("misses")[-1]  # briefs name no key files: nothing measured


def test_a_special_method_is_found_at_its_class():
    from workbench.analysis.pipeline import analyze

    change = file("pkg/group.py", hunk(20, ["+        self.port = port"], section="class RayWorkerGroup:"))
    a = analyze(record([change], title="[trainer] fix: keep the port", number=7))
    assert a.key_symbols == ["RayWorkerGroup"]
    rows = "pr,verdict,key_symbols\n7,skim,RayWorkerGroup.__init__;__post_init__\n"
    ev = evaluate(parse_labels_csv(rows), {7: a})
    # `RayWorkerGroup.__init__` is read at the class we name; a bare `__post_init__` names no class
    assert (ev.key_symbols_found.hit, ev.key_symbols_found.total) == (1, 2)
