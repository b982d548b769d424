"""Properties on the real verl history (2,883 merged PRs: titles, descriptions, file stats, no patches),
and a sanity check of verdicts on the bundled sample repository when it is there."""

from __future__ import annotations

import csv
import gzip
import json
from collections import Counter
from pathlib import Path

import pytest

from workbench.analysis.conventions import load_conventions
from workbench.analysis.pipeline import analysis_frame, analyze
from workbench.records import PRRecord
from workbench.sources.sample import sample_records

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
SAMPLE = Path(__file__).resolve().parents[1] / "workbench" / "sample" / "example-org-minirl.jsonl"


def corpus_record(d: dict) -> PRRecord:
    pr = {"number": d["number"], "title": d["title"], "body": d.get("body"), "merged_at": d.get("merged_at")}
    return PRRecord(
        repo="verl-project/verl", number=d["number"], pr=pr, files=d.get("files") or [], source="facts"
    )


@pytest.fixture(scope="module")
def verl():
    meta = CORPUS / "verl_prs_meta.jsonl.gz"
    if not meta.exists():
        pytest.skip("../shared/corpus is absent")
    with gzip.open(meta, "rt", encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh]
    records = [corpus_record(d) for d in rows]
    known = {r.number: (r.title, "merged") for r in records}
    conv = load_conventions("verl-project/verl")
    analyses = {r.number: analyze(r, conventions=conv, known_prs=known) for r in records}
    with open(CORPUS / "verl_pr_facts.csv", encoding="utf-8") as fh:
        facts = {int(r["number"]): r for r in csv.DictReader(fh)}
    return records, analyses, facts


def test_every_pr_analysed_sanely(verl):
    records, analyses, _ = verl
    assert len(analyses) == len(records) == 2883
    for a in analyses.values():
        assert a.verdict in ("deep", "skim", "skip") and 1 <= a.effort <= 5 and a.minutes >= 1
        assert a.deciding, a.number
        assert any("no patch text" in t for t in a.truncated) or not a.roles


def test_docs_only_prs_are_never_deep(verl):
    _, analyses, facts = verl
    ours = [a for a in analyses.values() if a.signal("docs_only")]
    theirs = [
        analyses[n]
        for n, f in facts.items()
        if f["changed_files"] != "0" and f["doc_files"] == f["changed_files"]
    ]
    assert len(ours) > 200 and len(theirs) > 200  # the property is exercised, not vacuous
    for a in ours + theirs:
        assert a.verdict != "deep", (a.number, a.deciding)
    assert all(a.audience == "docs maintainers" for a in ours)


def test_ci_only_prs_get_the_ci_audience(verl):
    _, analyses, _ = verl
    ci = [a for a in analyses.values() if a.signal("ci_only")]
    assert len(ci) > 50
    assert all(a.audience == "CI maintainers" and a.audience_key == "ci" for a in ci)


def test_reverts_are_flagged(verl):
    _, analyses, facts = verl
    reverts = [n for n, f in facts.items() if f["revert"] == "True"]
    assert len(reverts) >= 20
    missed = [n for n in reverts if not analyses[n].signal("revert")]
    assert not missed, missed
    flagged = [a.number for a in analyses.values() if a.signal("revert")]
    assert len(flagged) <= len(reverts) * 2  # not flagging half the history either


def test_verdict_distribution_is_recorded(verl, capsys):
    _, analyses, _ = verl
    df = analysis_frame(analyses.values())
    dist = Counter(zip(df["verdict"], df["audience"].fillna("-"), strict=True))
    with capsys.disabled():
        print("\nverl verdict distribution (verdict, audience): count")
        for (verdict, audience), n in sorted(dist.items(), key=lambda kv: -kv[1]):
            print(f"  {verdict:5} {audience:20} {n}")
        print("  totals:", dict(Counter(df["verdict"])))
    share = Counter(df["verdict"])
    # a useful triage says some PRs deserve a close read and most do not
    assert 0.05 < share["deep"] / len(df) < 0.5
    assert share["skim"] > share["deep"]


@pytest.fixture(scope="module")
def sample():
    if not SAMPLE.exists():
        pytest.skip("the sample repository is absent")
    recs = sample_records(SAMPLE)
    known = {r.number: (r.title, r.state) for r in recs}
    return {r.number: (r, analyze(r, known_prs=known)) for r in recs}


def _find(sample, words):
    return [a for r, a in sample.values() if all(w in r.title.lower() for w in words)]


def test_sample_verdicts(sample):
    leak = _find(sample, ["free weight buckets", "memory"])
    assert leak and leak[0].verdict == "deep"
    docs = [a for r, a in sample.values() if a.signal("docs_only")]
    assert docs and all(a.verdict in ("skim", "skip") and a.audience == "docs maintainers" for a in docs)
    assert all(
        a.verdict == "skip" for a in docs if sum(a.roles.values()) <= 10
    )  # a typo fix: the title says it
    ci = [a for r, a in sample.values() if a.signal("ci_only")]
    assert ci and all(a.audience == "CI maintainers" for a in ci)
    bump = _find(sample, ["bump vllm"])
    assert bump and bump[0].verdict in ("skip", "skim") and bump[0].audience == "build maintainers"
    revert = _find(sample, ['revert "'])
    assert (
        revert
        and revert[0].signal("revert")
        and any(x.relation == "reverts" for x in revert[0].cross_refs)
        or revert[0].signal("revert")
    )


def test_every_signal_carries_evidence(verl, sample):
    _, analyses, _ = verl
    everything = list(analyses.values()) + [a for _r, a in sample.values()]
    for a in everything:
        for s in a.signals:
            assert s.evidence, (a.repo, a.number, s.name)
            assert all(e.text for e in s.evidence), (a.number, s.name)
