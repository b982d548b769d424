"""The bundled sample end to end: offline drafts for every PR, and a digest in the reference layout."""

from __future__ import annotations

import json
import re

import pytest

from workbench.brief import NOT_GENERATED, parse_brief, parse_verdict
from workbench.config import sample_dir
from workbench.drafting.batch import draft_many
from workbench.export import export_digest
from workbench.records import PRRecord
from workbench.store import Store

REPO = "example-org/minirl"
JSONL = sample_dir() / "example-org-minirl.jsonl"


def load(store: Store) -> None:
    try:
        from workbench.sources.sample import load_sample
    except ImportError:  # the loader lands separately; the JSON lines are the same records
        pk = store.upsert_repo(REPO)
        for line in JSONL.read_text(encoding="utf-8").splitlines():
            d = json.loads(line)
            store.write_pr(pk, PRRecord(repo=REPO, number=d["pr"]["number"], **d, source="sample"))
        return
    load_sample(store, include_verl=False)


@pytest.fixture(scope="module")
def sample_store(tmp_path_factory):
    if not JSONL.exists():
        pytest.skip("workbench/sample/example-org-minirl.jsonl not built")
    store = Store(tmp_path_factory.mktemp("sample") / "cache")
    load(store)
    yield store
    store.close()


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_sample_digest_has_the_reference_layout(sample_store, tmp_path, lang):
    numbers = [int(n) for n in sample_store.prs(REPO)["number"]]
    assert len(numbers) >= 10
    drafted, skipped = numbers[1:], numbers[0]
    if lang == "zh":
        res = draft_many(sample_store, REPO, drafted, lang=lang, progress=False)
        assert all(r.action == "drafted (offline)" for r in res.prs)
    text = export_digest(sample_store, REPO, lang=lang, output=tmp_path / "d.md").read_text(encoding="utf-8")
    assert text.startswith(f"# {REPO}\n\n## ")
    sections = re.split(r"(?m)^## ", text)[1:]
    assert len(sections) == len(numbers)
    for sec in sections:
        head, _, body = sec.partition("\n\n")
        link, _, rest = body.partition("\n")
        assert re.match(rf"\[#\d+ .+\]\(https://github\.com/{REPO}/pull/\d+\) · ", link), link
        if f"#{skipped} " in head:
            assert rest.strip() == NOT_GENERATED[lang]
            continue
        lead = re.match(r"\n?\*\*(.+?)\*\*", rest)
        assert lead and parse_verdict(lead.group(1)), rest[:200]
        assert "`" in rest  # focus points name files and symbols
        b = parse_brief("### " + head + "\n" + rest, repo=REPO, number=0, lang="zh")
        assert b.headline and b.summary and 1 <= len(b.focus) <= 4 and b.draft
        # an empty section says nothing: no boilerplate stands in for it
        assert "启发式未发现遗留项" not in rest and "无需后续动作" not in rest
