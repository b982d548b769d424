"""`workbench draft` / `workbench digest` and draft_many: human edits survive, the digest has the reference layout."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest
from fake_openai import FakeOpenAI, Reply, brief_json

from workbench.brief import NOT_GENERATED, parse_brief, parse_verdict
from workbench.cli import main
from workbench.config import LLMSettings, WorkbenchError
from workbench.drafting.batch import draft_many, final_examples
from workbench.export import export_digest, export_pr
from workbench.records import PRRecord
from workbench.store import Store
from workbench.timespan import since_iso as parse_since

REPO = "example-org/tiny"


def _pr(n: int, title: str, body: str = "", *, merged: bool = True, files=None) -> PRRecord:
    files = files or [
        {
            "filename": f"pkg/mod{n}.py",
            "status": "modified",
            "additions": 5,
            "deletions": 1,
            "patch": f"@@ -1,2 +1,6 @@ def f{n}():\n a\n-b\n+c\n+d\n+e\n+f\n+g",
        },
    ]
    return PRRecord(
        repo=REPO,
        number=n,
        pr={
            "number": n,
            "title": title,
            "body": body,
            "user": {"login": "alice"},
            "state": "closed" if merged else "open",
            "merged_at": "2025-03-02T10:00:00Z" if merged else None,
            "created_at": "2025-03-01T10:00:00Z",
            "updated_at": f"2025-03-{n:02d}T10:00:00Z",
            "html_url": f"https://github.com/{REPO}/pull/{n}",
            "additions": sum(f["additions"] for f in files),
            "deletions": sum(f["deletions"] for f in files),
            "changed_files": len(files),
            "head": {"sha": f"sha{n}"},
        },
        files=files,
    )


@pytest.fixture
def store(tmp_path):
    s = Store(tmp_path / "cache")
    pk = s.upsert_repo(REPO)
    s.write_pr(
        pk,
        _pr(
            1,
            "[rollout] fix: ACK race in weight sync",
            "The race happens when the ACK is sent before cleanup.",
        ),
    )
    s.write_pr(
        pk,
        _pr(
            2,
            "docs: add NPU page",
            files=[
                {
                    "filename": "docs/npu.md",
                    "status": "added",
                    "additions": 40,
                    "deletions": 0,
                    "patch": "@@ -0,0 +1,2 @@\n+# NPU\n+text",
                }
            ],
        ),
    )
    s.write_pr(pk, _pr(3, "<script>alert(1)</script> feat: evil [title](javascript:alert(1))", merged=False))
    yield s
    s.close()


def test_parse_since():
    now = datetime(2025, 3, 10, tzinfo=UTC)
    assert parse_since("7d", now=now) == "2025-03-03T00:00:00Z"
    assert parse_since("2w", now=now) == "2025-02-24T00:00:00Z"
    assert parse_since("12h", now=now) == "2025-03-09T12:00:00Z"
    assert parse_since("2025-01-31") == "2025-01-31T00:00:00Z"
    assert parse_since(None) is None
    with pytest.raises(WorkbenchError, match="7d"):
        parse_since("last tuesday")


def test_draft_offline_saves_and_never_overwrites_a_human_edit(store):
    res = draft_many(store, REPO, lang="zh", progress=False).prs
    assert sorted(r.number for r in res) == [1, 2, 3] and all(r.action == "drafted (offline)" for r in res)
    v = store.latest_brief(REPO, 1)
    assert v.source == "offline" and v.lang == "zh" and "_草稿（离线生成）" in v.text
    # a person edits #1 and marks #2 final
    edited = v.text.replace("_草稿（离线生成），请审阅后发布。_", "") + "\n审阅者补充：与 #7366 一起读。\n"
    store.save_brief(REPO, 1, edited, source="human", base_version=v.version, lang="zh")
    v2 = store.latest_brief(REPO, 2)
    store.save_brief(REPO, 2, v2.text, source="offline", base_version=v2.version, lang="zh", is_final=True)
    res = {r.number: r for r in draft_many(store, REPO, lang="zh", force=True, progress=False).prs}
    assert res[1].action == "kept: edited by a person"
    assert res[2].action == "kept: final"
    assert res[3].action == "drafted (offline)"
    assert store.latest_brief(REPO, 1).text == edited
    # without --force an existing machine draft stays
    again = {r.number: r for r in draft_many(store, REPO, lang="zh", progress=False).prs}
    assert again[3].action.startswith("kept: a draft exists")


def test_llm_draft_replaces_offline_draft_and_keeps_it_on_failure(store):
    draft_many(store, REPO, numbers=[1, 2], lang="zh", progress=False)
    with FakeOpenAI([Reply(brief_json("zh"))]) as srv:
        settings = LLMSettings(model="m", base_url=srv.base_url, api_key="k", timeout=5, max_retries=0)
        res = draft_many(store, REPO, numbers=[1], llm=True, lang="zh", settings=settings, progress=False).prs
        assert res[0].action == "drafted (llm)"
        v = store.latest_brief(REPO, 1)
        assert v.source == "llm" and v.meta["model"] == "m" and v.meta["prompt_version"] and "usage" in v.meta
        srv.script(Reply(status=500))
        res = draft_many(store, REPO, numbers=[2], llm=True, lang="zh", settings=settings, progress=False).prs
        assert res[0].error and store.latest_brief(REPO, 2).source == "offline"
        # nothing drafted yet for #3: the failure saves the offline draft, with the reason
        res = draft_many(store, REPO, numbers=[3], llm=True, lang="zh", settings=settings, progress=False).prs
        v3 = store.latest_brief(REPO, 3)
        assert v3.source == "offline" and "500" in v3.meta["llm_error"]


def test_show_context_prints_messages_and_calls_no_model(store):
    res = draft_many(store, REPO, numbers=[1], show_context=True, budget=3000, progress=False).prs
    text = res[0].context
    assert "===== system =====" in text and "===== user =====" in text
    assert re.search(r"===== \d+ tokens \(o200k", text) and res[0].tokens <= 3000
    assert store.latest_brief(REPO, 1) is None


def test_cli_draft_and_digest(store, tmp_path, capsys):
    cache = str(store.path.parent)
    assert main(["draft", REPO, "--cache", cache, "--lang", "en", "--number", "1", "2"]) == 0
    out = tmp_path / "digest.md"
    assert main(["digest", REPO, "--cache", cache, "--lang", "en", "--all", "-o", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    assert text.startswith(f"# {REPO}\n")
    sections = re.split(r"(?m)^## ", text)[1:]
    assert len(sections) == 3
    # newest first; #3 has no brief yet
    assert "#3 " in sections[0] and NOT_GENERATED["en"] in sections[0]
    for sec in sections[1:]:
        assert NOT_GENERATED["en"] not in sec
        assert re.search(
            r"\[#\d+ .+\]\(https://github\.com/example-org/tiny/pull/\d+\) · @alice · merged · \+\d+/−\d+ · \d+ files?",
            sec,
        )
    # untrusted title neutralised: no live HTML, no script link
    assert "<script>" not in text and "&lt;script&gt;" in text and "javascript:" not in text
    assert main(["draft", REPO, "--cache", cache, "--since", "nonsense"]) == 2
    assert "not understood" in capsys.readouterr().err


def test_digest_keeps_reviewer_extra_text_and_order(store, tmp_path):
    draft_many(store, REPO, lang="zh", progress=False)
    v = store.latest_brief(REPO, 2)
    store.save_brief(
        REPO,
        2,
        v.text + "\n团队备注：这页文档需要同步到英文镜像。\n",
        source="human",
        base_version=v.version,
        lang="zh",
    )
    path = export_digest(store, REPO, numbers=[2, 1], lang="zh", output=tmp_path / "d.md")
    text = path.read_text(encoding="utf-8")
    assert text.index("#2 ") < text.index("#1 ")
    assert "团队备注：这页文档需要同步到英文镜像。" in text
    assert parse_brief(store.latest_brief(REPO, 2).text, repo=REPO, number=2, lang="zh").extra.startswith(
        "团队备注"
    )
    p = export_pr(store, REPO, 1, out_dir=tmp_path)
    assert p.name == "example-org-tiny-1.md"
    exported = p.read_text(encoding="utf-8")
    assert exported.startswith(f"# {REPO}\n\n## ") and exported.count("\n## ") == 1
    lead = re.search(r"(?m)^\*\*(.+?)\*\*", exported)
    assert lead and parse_verdict(lead.group(1)) is not None


def test_final_briefs_become_few_shot_examples_nearest_by_area(store):
    draft_many(store, REPO, numbers=[2, 3], lang="zh", progress=False)
    for n, areas in ((2, ["docs"]), (3, ["rollout"])):
        v = store.latest_brief(REPO, n)
        text = v.text.replace("_草稿（离线生成），请审阅后发布。_", "") + f"\n团队定稿 {n}\n"
        store.save_brief(
            REPO,
            n,
            text,
            source="human",
            base_version=v.version,
            lang="zh",
            is_final=True,
            meta={"areas": areas},
        )
    examples = final_examples(store, REPO)
    assert sorted(e.number for e in examples) == [2, 3]
    user = draft_many(store, REPO, numbers=[1], show_context=True, progress=False).prs[0].context
    assert "The team's final briefs" in user and "团队定稿 3" in user
    # PR #1 touches pkg/ (area from the heuristics); whichever is nearer comes first, both fit
    assert "团队定稿 2" in user


def test_unknown_number_is_a_clear_error(store):
    with pytest.raises(WorkbenchError, match="#99 not in the cache"):
        draft_many(store, REPO, numbers=[99], progress=False)
