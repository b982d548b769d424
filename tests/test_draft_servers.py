"""The LLM path against the servers people run: loopback OpenAI-compatible server, real openai client.

Batch (issue 12, item 4): a dead server costs K PRs, not all; a hung stream is cut by the timeout; the
summary and exit code say when PRs fell back. Compatibility (item 5): refused temperature, 422 for a
response_format, replies cut at the length limit or malformed, templates that need alternating roles.
And the order the prompt and the schema ask things in.
"""

from __future__ import annotations

import json
import socket
import time

import openai
import pytest
from fake_openai import FakeOpenAI, Reply, brief_json
from test_draft_batch import REPO, _pr
from test_draft_llm import analysis, drafter, record

from workbench.cli import main
from workbench.config import LLMSettings
from workbench.drafting.batch import draft_many
from workbench.drafting.context import build_context
from workbench.drafting.llm import MAX_OUTPUT_TOKENS
from workbench.drafting.prompts import response_schema
from workbench.store import Store


@pytest.fixture
def server():
    with FakeOpenAI() as s:
        yield s


@pytest.fixture
def store(tmp_path):
    s = Store(tmp_path / "cache")
    pk = s.upsert_repo(REPO)
    for n in range(1, 7):
        s.write_pr(
            pk, _pr(n, f"[rollout] fix: race number {n} in weight sync", "The ACK is sent before cleanup.")
        )
    yield s
    s.close()


def _settings(url: str, **kw) -> LLMSettings:
    base = {"model": "m", "base_url": url, "api_key": "k", "timeout": 5.0, "max_retries": 0}
    base.update(kw)
    return LLMSettings(**base)


def _dead_url() -> str:
    """A loopback port nobody listens on: connections are refused at once."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


# ---- batch -----------------------------------------------------------------------------------------
def test_a_failing_server_is_called_for_k_prs_then_the_rest_fall_back_offline(store, server):
    server.script(Reply(status=500, error="overloaded"))
    s = _settings(server.base_url, breaker=2, concurrency=1)
    summary = draft_many(store, REPO, llm=True, lang="zh", settings=s, progress=False)
    assert len(server.requests) == 2  # K = 2 PRs tried, then the server is left alone
    assert summary.breaker_open and summary.fell_back == 6 and summary.count("model") == 0
    assert sum("not sent" in (p.error or "") for p in summary.prs) == 4
    assert all(store.latest_brief(REPO, n).source == "offline" for n in range(1, 7))
    assert "6 fell back offline" in summary.line() and "not sent" in summary.line()


def test_a_dead_server_costs_k_connection_errors_not_one_per_pr(store):
    s = _settings(_dead_url(), breaker=3, concurrency=2, max_retries=1)
    t0 = time.monotonic()
    summary = draft_many(store, REPO, llm=True, lang="zh", settings=s, progress=False)
    assert time.monotonic() - t0 < 30
    reached = [p for p in summary.prs if "cannot reach the server" in (p.error or "")]
    # two threads may both be mid-call when the third failure opens the breaker
    assert 3 <= len(reached) <= 4 and summary.fell_back == 6 and summary.breaker_open


def test_success_resets_the_breaker_and_the_summary_counts_each_outcome(store, server):
    # fail, succeed, fail, succeed...: never K=2 in a row, so every PR is sent
    server.script(*[Reply(status=500) if i % 2 == 0 else Reply(brief_json("zh")) for i in range(6)])
    s = _settings(server.base_url, breaker=2, concurrency=1)
    store.save_brief(REPO, 6, "### 人写的\n", source="human", base_version=None, lang="zh")
    summary = draft_many(store, REPO, llm=True, lang="zh", settings=s, progress=False)
    assert not summary.breaker_open and len(server.requests) == 5
    assert (summary.count("model"), summary.fell_back, summary.count("kept")) == (2, 3, 1)
    assert summary.line() == "2 by the model, 3 fell back offline, 1 kept"


def test_prs_go_to_the_model_concurrently(store, server):
    server.script(Reply(brief_json("zh"), delay=0.6))
    s = _settings(server.base_url, concurrency=3)
    t0 = time.monotonic()
    summary = draft_many(store, REPO, llm=True, lang="zh", settings=s, progress=False)
    took = time.monotonic() - t0
    assert summary.count("model") == 6
    assert took < 6 * 0.6  # one at a time would take at least 3.6 s
    assert [p.number for p in summary.prs] == [6, 5, 4, 3, 2, 1]  # in selection order (newest first)


def test_hung_stream_is_cut_by_the_timeout_and_the_cli_exits_non_zero(store, server, monkeypatch, capsys):
    server.script(Reply(brief_json("zh"), stall_after=30, chunk_size=8))
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    monkeypatch.setenv("WORKBENCH_MODEL", "m")
    monkeypatch.setenv("WORKBENCH_LLM_TIMEOUT", "0.5")
    monkeypatch.setenv("WORKBENCH_LLM_RETRIES", "0")
    monkeypatch.setenv("WORKBENCH_LLM_BREAKER", "1")
    t0 = time.monotonic()
    code = main(["draft", REPO, "--cache", str(store.path.parent), "--llm", "--number", "1", "2"])
    out = capsys.readouterr()
    assert code == 1 and time.monotonic() - t0 < 10
    assert "2 fell back offline" in out.out
    assert "no reply within 0.5 s" in out.err and "WORKBENCH_LLM_TIMEOUT" in out.err


def test_cli_exits_zero_when_the_model_drafted_every_pr(store, server, monkeypatch, capsys):
    server.script(Reply(brief_json("zh")))
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    monkeypatch.setenv("WORKBENCH_MODEL", "m")
    assert main(["draft", REPO, "--cache", str(store.path.parent), "--llm", "--number", "1"]) == 0
    assert "1 by the model" in capsys.readouterr().out


# ---- server compatibility -----------------------------------------------------------------------------
def test_refused_temperature_is_dropped_and_remembered_for_the_run(server):
    server.script(Reply(brief_json("zh"), refuse_params=("temperature",)))
    d = drafter(server)
    first = d.draft(record(), analysis(), lang="zh")
    second = d.draft(record(), analysis(), lang="zh")
    assert first.error is None and second.error is None
    sent = [r["body"] for r in server.requests]
    assert "temperature" in sent[0] and all("temperature" not in b for b in sent[1:]) and len(sent) == 3


def test_max_completion_tokens_is_sent_and_max_tokens_used_where_refused(server):
    server.script(Reply(brief_json("zh")))
    assert drafter(server).draft(record(), analysis(), lang="zh").error is None
    assert server.requests[0]["body"]["max_completion_tokens"] == MAX_OUTPUT_TOKENS
    server.script(Reply(brief_json("zh"), refuse_params=("max_completion_tokens",)))
    assert drafter(server).draft(record(), analysis(), lang="zh").error is None
    assert server.requests[1]["body"]["max_tokens"] == MAX_OUTPUT_TOKENS
    assert "max_completion_tokens" not in server.requests[1]["body"]


@pytest.mark.parametrize("status", [400, 422])
def test_a_rejected_response_format_steps_the_fallback(server, status):
    server.script(Reply(brief_json("zh"), reject_response_format="json_schema", reject_status=status))
    res = drafter(server).draft(record(), analysis(), lang="zh")
    assert res.error is None and res.meta["response_format"] == "json_object"
    kinds = [r["body"].get("response_format", {}).get("type") for r in server.requests]
    assert kinds == ["json_schema", "json_object"]


def test_a_422_with_no_format_left_to_drop_is_a_clear_failure(server):
    server.script(Reply(status=422, error="Input validation error: inputs too long"))
    res = drafter(server).draft(record(), analysis(), lang="zh")
    assert res.brief is None and "422" in res.error and res.offline is not None
    assert len(server.requests) == 3  # json_schema, json_object, text: then there is nothing left to drop


def test_a_reply_cut_at_the_length_limit_is_asked_for_once_more_with_more_room(server):
    cut = brief_json("zh")[:120]
    server.script(Reply(cut, finish_reason="length"), Reply(brief_json("zh")))
    res = drafter(server).draft(record(), analysis(), lang="zh")
    assert res.error is None and res.meta["truncated"] and len(server.requests) == 2
    limits = [r["body"]["max_completion_tokens"] for r in server.requests]
    assert limits == [MAX_OUTPUT_TOKENS, 2 * MAX_OUTPUT_TOKENS]


def test_a_reply_cut_twice_fails_clearly(server):
    server.script(Reply(brief_json("zh")[:80], finish_reason="length"))
    res = drafter(server).draft(record(), analysis(), lang="zh")
    assert res.brief is None and "length limit" in res.error and len(server.requests) == 2


def test_a_malformed_reply_is_retried_once(server):
    server.script(Reply("Sure! Here is the brief: {oops"), Reply(brief_json("zh")))
    res = drafter(server).draft(record(), analysis(), lang="zh")
    assert res.error is None and "no JSON object" in res.meta["reply_retry"] and len(server.requests) == 2
    server.script(Reply("no json at all"))
    res = drafter(server).draft(record(), analysis(), lang="zh")
    assert res.brief is None and len(server.requests) == 2


def test_the_language_correction_passes_a_template_that_needs_alternating_roles(server):
    server.script(
        Reply(brief_json("en"), alternating_roles=True), Reply(brief_json("zh"), alternating_roles=True)
    )
    res = drafter(server).draft(record(), analysis(), lang="zh")
    assert res.error is None and res.meta["wrong_language"] == 1
    roles = [m["role"] for m in server.requests[1]["body"]["messages"]]
    assert roles == ["system", "user", "assistant", "user"]


def test_the_fake_server_really_rejects_two_user_turns(server):
    # the check above means something only if the fake refuses what the old client sent
    server.script(Reply(brief_json("zh"), alternating_roles=True))
    client = openai.OpenAI(base_url=server.base_url, api_key="k", max_retries=0)
    msgs = [
        {"role": "system", "content": "s"},
        {"role": "user", "content": "a"},
        {"role": "user", "content": "b"},
    ]
    with pytest.raises(openai.BadRequestError, match="alternate"):
        client.chat.completions.create(model="m", messages=msgs)


# ---- what the prompt and the schema ask, in which order ------------------------------------------------
SUPPORTED = {"type", "enum", "description", "properties", "required", "additionalProperties", "items"}
SUPPORTED |= {"minItems", "maxItems"}


def _strict_ok(node: dict) -> None:
    """OpenAI strict mode (and vLLM / Ollama / llama.cpp grammars): closed objects, every key required,
    only the keywords all of them support."""
    assert set(node) <= SUPPORTED, set(node) - SUPPORTED
    if node.get("type") == "object":
        assert node["additionalProperties"] is False
        assert node["required"] == list(node["properties"])
        for child in node["properties"].values():
            _strict_ok(child)
    if "items" in node:
        _strict_ok(node["items"])


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_schema_asks_for_evidence_before_verdict_and_headline(lang):
    payload = response_schema(lang)
    assert payload["strict"] is True and payload["name"]
    schema = payload["schema"]
    _strict_ok(schema)
    keys = list(schema["properties"])
    for evidence in ("summary", "focus", "open_items"):
        assert keys.index(evidence) < keys.index("verdict") < keys.index("headline")
    assert keys[-1] == "headline"
    focus = schema["properties"]["focus"]
    assert (focus["minItems"], focus["maxItems"]) == (2, 4)
    descriptions = " ".join(p["description"] for p in schema["properties"].values())
    cjk = sum("\u4e00" <= ch <= "\u9fff" for ch in descriptions)
    assert (cjk > 50) if lang == "zh" else (cjk == 0)


def test_request_carries_the_briefs_language_schema(server):
    server.script(Reply(brief_json("zh")))
    drafter(server).draft(record(), analysis(), lang="zh")
    sent = server.requests[0]["body"]["response_format"]["json_schema"]
    assert sent == response_schema("zh")


def test_prompt_order_follows_what_the_brief_needs():
    rec = record("Root cause: the ACK is sent before `_cleanup`.")
    rec.review_comments = [
        {
            "id": 11,
            "user": {"login": "carol"},
            "body": "What if `_cleanup` raises here?",
            "path": "pkg/sync.py",
            "line": 12,
            "diff_hunk": "@@ -10,4 +10,6 @@ def _cleanup(self):\n ctx\n+    self._cleanup()\n+    ack()",
            "thread_resolved": False,
            "created_at": "2025-01-03",
        },
        {
            "id": 12,
            "in_reply_to_id": 11,
            "user": {"login": "alice"},
            "body": "Good point, will add a try.",
            "created_at": "2025-01-04",
        },
    ]
    rec.commits = [
        {"commit": {"message": "Move the ACK after cleanup\n\nThe receiver frees the buffer first."}}
    ]
    a = analysis()
    a.open_items = ["changed code without tests: 2 lines of code changed, no test changed"]
    user = build_context(rec, a, lang="en", seed=1).messages[1]["content"]
    order = [
        "## Title",
        "## Description",
        "## Heuristics",
        "## Key files' diff",
        "## Discussion",
        "## Commit messages",
        "## Example brief",
    ]
    at = [user.index(h) for h in order]
    assert at == sorted(at)
    heur = user[user.index("## Heuristics") : user.index("## Key files' diff")]
    assert heur.index("open: changed code without tests") < heur.index("verdict hint:")
    disc = user[user.index("## Discussion") : user.index("## Commit messages")]
    assert "pkg/sync.py:12 [thread UNRESOLVED]" in disc and "    | +    ack()" in disc
    assert "reply @alice: Good point" in disc
    assert "The receiver frees the buffer first." in user
    assert json.dumps(response_schema("en"))  # loads
