"""The offline drafter: deterministic, every section filled from the analysis and the PR's own text."""

from __future__ import annotations

import re

from workbench.analysis.model import (
    Analysis,
    CrossRef,
    Description,
    Discussion,
    Evidence,
    KeyFile,
    Risk,
    Signal,
)
from workbench.brief import parse_brief, render_brief
from workbench.drafting.llm import language_share
from workbench.drafting.offline import draft_offline, headline
from workbench.records import PRRecord


def _record(title="[rollout, vllm] fix: remove full GC in weight sync", state="merged") -> PRRecord:
    pr = {
        "title": title,
        "body": "…",
        "user": {"login": "alice"},
        "state": "closed" if state != "open" else "open",
        "merged_at": "2025-01-01T00:00:00Z" if state == "merged" else None,
    }
    files = [
        {"filename": "verl/workers/rollout/bucketed_weight_transfer.py", "additions": 40, "deletions": 12},
        {"filename": "tests/utils/test_bucketed_weight_transfer.py", "additions": 30, "deletions": 0},
    ]
    return PRRecord(repo="verl-project/verl", number=7801, pr=pr, files=files)


def _analysis(**over) -> Analysis:
    d = dict(
        repo="verl-project/verl",
        number=7801,
        verdict="deep",
        audience=None,
        effort=4,
        minutes=25,
        deciding=["concurrency: locks / ACKs / races", "description explains the root cause"],
        signals=[
            Signal(
                "risk.concurrency",
                "concurrency",
                1.5,
                [Evidence("verl/x.py", 10, "self._ack_pending = True")],
            )
        ],
        key_files=[
            KeyFile(
                "verl/workers/rollout/bucketed_weight_transfer.py",
                "code",
                "ACK moved after cleanup",
                3.0,
                40,
                12,
                ["_cleanup", "_ack_pending"],
            ),
            KeyFile(
                "tests/utils/test_bucketed_weight_transfer.py",
                "test",
                "new regression test",
                1.0,
                30,
                0,
                ["test_ack"],
            ),
        ],
        key_symbols=["_cleanup", "_ack_pending"],
        open_items=[
            "changed code without tests: no test asserts the ACK order",
            "unresolved review thread: bob: what if _cleanup raises?",
            "author promised: I will add the timeout in a follow-up PR.",
        ],
        cross_refs=[CrossRef(7366, "mentions", "ACK timeout", "open")],
        areas=["rollout"],
        description=Description(
            text="…",
            root_cause=["The IPC block is freed only after the ACK, so full GC hid a race."],
            test_plan=["pytest tests/utils/test_bucketed_weight_transfer.py"],
            numbers=["GC took 1.2 s per step"],
            open_items=["The ACK timeout is left for #7366."],
        ),
        discussion=Discussion(
            changes_requested_outstanding=["bob"],
            unresolved=["bob: what if _cleanup raises?"],
            promises=["I will add the timeout in a follow-up PR."],
        ),
    )
    d.update(over)
    return Analysis(**d)


def test_every_section_is_filled_in_both_languages():
    for lang in ("zh", "en"):
        b = draft_offline(_record(), _analysis(), lang)
        assert b.draft and b.source == "offline" and b.lang == lang and b.verdict == "deep"
        assert b.headline and b.summary and 2 <= len(b.focus) <= 4 and b.open_items and b.next_steps
        assert (
            "`verl/workers/rollout/bucketed_weight_transfer.py`" in b.focus[0] and "`_cleanup`" in b.focus[0]
        )
        assert any("#7366" in s for s in b.next_steps)
        assert any("bob" in s for s in b.open_items)
        assert not any("follow-up PR" in s for s in b.open_items) and any(
            "follow-up PR" in s for s in b.next_steps
        )
        text = render_brief(b)
        assert parse_brief(text, repo=b.repo, number=b.number, lang=lang) == b
    zh = draft_offline(_record(), _analysis(), "zh")
    assert "根因" in zh.summary and "IPC block" in zh.summary
    # the headline leads with what the analysis found, the author's subject after it
    assert (
        zh.headline
        == "rollout：修复 `bucketed_weight_transfer.py`，涉及并发（remove full GC in weight sync）"
    )
    en = draft_offline(_record(), _analysis(), "en")
    assert (
        en.headline
        == "rollout: remove full GC in weight sync — fixes `bucketed_weight_transfer.py`, touching concurrency"
    )
    assert zh.open_items[:2] == [
        "改了代码但没有测试：no test asserts the ACK order",
        "未解决的评审讨论：bob: what if _cleanup raises?",
    ]


def test_open_items_from_the_text_when_the_analysis_has_none():
    b = draft_offline(_record(), _analysis(open_items=[]), "en")
    assert "@bob's requested changes are still outstanding." in b.open_items
    assert any("left for #7366" in x for x in b.open_items)
    assert language_share(render_brief(draft_offline(_record(), _analysis(), "en"))) < 0.1


def test_deterministic():
    a = render_brief(draft_offline(_record(), _analysis(), "zh"))
    b = render_brief(draft_offline(_record(), _analysis(), "zh"))
    assert a == b


def test_sparse_analysis_fills_what_it_can_and_leaves_the_rest_empty():
    sparse = Analysis(
        repo="o/r",
        number=1,
        verdict="skim",
        audience="CI maintainers",
        effort=1,
        minutes=4,
        deciding=[],
        description=Description(),
    )
    rec = PRRecord(
        repo="o/r",
        number=1,
        pr={"title": "update workflow", "state": "open"},
        files=[{"filename": ".github/workflows/ci.yml", "additions": 2, "deletions": 1}],
    )
    for lang in ("zh", "en"):
        b = draft_offline(rec, sparse, lang)
        assert b.summary and len(b.focus) >= 1 and b.next_steps
        # nothing is open in the data: the section says nothing instead of "check test coverage"
        assert b.open_items == []
        assert b.minutes == 4 and b.audience in ("CI 维护者", "CI maintainers")
    assert "建议 CI 维护者用 3-5 分钟浏览" in render_brief(draft_offline(rec, sparse, "zh"))


def test_headline_restates_kind_and_scope():
    assert headline(_record("[ci] chore: wait for logs"), "en") == "Chore: Wait for logs (ci)"
    assert headline(_record("feat(trainer)!: new loss"), "zh") == "新增：new loss（trainer）"
    assert headline(_record("Plain title"), "zh") == "Plain title"
    # a version or a name keeps its case where a plain word takes a capital
    assert headline(_record("Release: v1.9"), "en") == "v1.9 (Release)"
    assert headline(_record("Fix misleading name of a test"), "en") == "Fix misleading name of a test"
    assert (
        headline(_record("Test that a missing dataset raises"), "en") == "Test that a missing dataset raises"
    )
    assert headline(_record("[trainer] fix: fixture reuse"), "en") == "Fix: Fixture reuse (trainer)"
    # a tag keeps the author's case (tags are parsed lowercase)
    assert headline(_record("[DistillationTrainer refactor] Emit masks"), "en") == (
        "Add: Emit masks (DistillationTrainer refactor)"
    )
    assert headline(_record("[misc] chore: `uv` lock refresh"), "en") == "Chore: `uv` lock refresh (misc)"


def test_an_untagged_headline_is_scoped_by_its_readers_not_its_longest_file():
    from heuristics_helpers import guide_beside_config, record

    from workbench.analysis.conventions import load_conventions
    from workbench.analysis.pipeline import analyze

    rec = record(guide_beside_config(), title="Change the default vllm_mode", repo="someone/else")
    a = analyze(rec, conventions=load_conventions("someone/else"))
    assert a.areas[0] == "docs"  # the guide is the longest file ...
    assert headline(rec, "zh", a).startswith("trainer：")  # ... the trainer's default is what changes


def test_a_removal_is_headlined_as_one_and_a_manifest_reads_in_chinese():
    from heuristics_helpers import file, hunk, record

    from workbench.analysis.pipeline import analyze

    gone = [f"-    step_{i} = run({i})" for i in range(120)]
    rec = record(
        [
            file("pkg/engine/mindspeed/utils.py", hunk(1, [" import os", *gone, "+    pass"])),
            file("pkg/engine/__init__.py", hunk(3, ["-from .mindspeed import Engine", "+"])),
        ],
        title="[trainer] feat: remove the mindspeed backend",
    )
    a = analyze(rec)
    # `utils.py` alone says nothing: its directory names what goes
    assert headline(rec, "zh", a).startswith("trainer：移除 `mindspeed/utils.py`")
    assert "removes `mindspeed/utils.py`" in headline(rec, "en", a)
    crate = record(
        [
            file(
                "crates/ruff_db/src/lib.rs",
                hunk(9, ["-    let files = walk(root);", "+    let files = walk(root)?;"]),
            )
        ],
        title="[ty] fix: propagate walk errors",
    )
    assert "`ruff_db/src/lib.rs`" in headline(crate, "en", analyze(crate))  # the crate, not `src`
    bump = record(
        [file("requirements.txt", hunk(4, ["-transfer_queue==0.1.7", "+transfer_queue==0.1.8"]))],
        title="[data] chore: update TransferQueue to 0.1.8",
    )
    focus = draft_offline(bump, analyze(bump), "zh").focus
    assert focus and "默认值或依赖有变" in focus[0] and "a changed default" not in focus[0]


def test_a_missing_test_is_said_once_and_in_chinese():
    from heuristics_helpers import code_lines, file, hunk, record

    from workbench.analysis.pipeline import analyze

    rec = record([file("pkg/trainer.py", hunk(1, code_lines(30)))], title="[trainer] feat: pools")
    b = draft_offline(rec, analyze(rec), "zh")
    said = [x for x in b.focus + b.open_items if "没有改测试" in x or "no test" in x]
    assert said == ["改了代码但没有测试：改了 30 行代码，没有改测试"]


def test_risk_themes_of_a_focus_file_read_as_words():
    from heuristics_helpers import file, hunk, record

    from workbench.analysis.pipeline import analyze

    rec = record(
        [
            file(
                "pkg/engine.py",
                hunk(
                    5,
                    [
                        "     def step(self):",
                        "+        if self.n < 0:",
                        '+            raise ValueError("n < 0")',
                    ],
                ),
            )
        ],
        title="[engine] fix: refuse negative steps",
    )
    a = analyze(rec)
    assert "refusal" in a.key_files[0].reason
    assert "risk: new errors" in draft_offline(rec, a, "en").focus[0]
    assert "风险：新增报错" in draft_offline(rec, a, "zh").focus[0]


def test_with_the_real_heuristics():
    from workbench.analysis.pipeline import analyze

    rec = _record()
    rec.files[0]["patch"] = (
        "@@ -1,2 +1,4 @@ def _cleanup(self):\n a\n+        self._ack_pending = False\n+        lock.release()"
    )
    b = draft_offline(rec, analyze(rec), "zh")
    assert b.headline and b.focus and b.open_items
    assert b.next_steps == []  # a merged PR with no reference, promise or audience: nothing to do


def test_common_heuristic_labels_read_in_chinese():
    from workbench.drafting.offline import label_zh

    assert label_zh("tiny change: 9 changed lines in 2 files") == "小改动: 2 个文件共 9 行改动"
    assert label_zh("tiny change: 1 changed line in 1 file") == "小改动: 1 个文件共 1 行改动"
    assert label_zh("concurrency: locks, threads, asyncio, sockets, ACKs, races (12 added lines)") == (
        "并发：锁、线程、asyncio、socket、ACK、竞态（新增 12 行）"
    )
    assert label_zh("something new") == "something new"
    # every other label the heuristics write, as a zh digest shows them
    assert label_zh("title says fix") == "标题类型：修复"
    assert label_zh("marked as breaking") == "标记为破坏性变更"
    assert label_zh("public functions/classes removed or renamed (2)") == "删除或重命名了公开函数/类 (2)"
    assert label_zh("563 lines of code changed, no test changed") == "改了 563 行代码，没有改测试"
    assert label_zh("changes requested by bob (still outstanding)") == "bob 要求修改（仍未解决）"
    assert label_zh("2 unresolved review thread(s)") == "2 个评审讨论未解决"
    assert label_zh("docs-only") == "仅文档" and label_zh("docs-only change") == "仅文档改动"
    assert label_zh("release 0.9.1: version set in 12 manifest(s)") == "发布 0.9.1：12 个清单文件设定了版本"
    assert label_zh("default values changed (3)") == "默认值有变 (3)"
    for english in (
        "mostly removes code: read by the users of what goes",
        "mostly removes code: a skim for the users of what goes",
        "commands run through a shell (2)",
        "secrets on command lines (1)",
        "CI or scripts run unpinned downloads or with elevated rights (4)",
        "new settings on by default (2)",
        "settings of CI jobs or scripts changed (3)",
        "defaults changed only in the generated config (2)",
        "patches another library's code at run time (3)",
        "values written into calls or signatures changed (2)",
        "CI or scripts install packages from a branch (1)",
    ):
        assert not re.search(r"[a-z]{3,} [a-z]{3,}", label_zh(english)), english
    # every verdict rule's label, which leads a brief's reasons
    from workbench.analysis.verdicts import VERDICT_RULES

    for rule in VERDICT_RULES:
        assert not re.search(r"[a-z]{3,} [a-z]{3,}", label_zh(rule.label)), rule.label
    # every risk theme's label, as a signal shows it: the table follows the labels when they change
    from workbench.analysis.signals import THEMES

    for label, _needles, _words in THEMES.values():
        zh = label_zh(f"{label} (3 added lines)")
        assert zh.endswith("（新增 3 行）") and not re.search(r"[a-z]{3,} [a-z]{3,}", zh), zh


def test_zh_draft_names_other_repositories_refs_and_each_ref_once():
    from heuristics_helpers import file, hunk, record

    from workbench.analysis.pipeline import analyze

    body = (
        "Follow-up to #298. See https://github.com/old-org/minirl/pull/298 and "
        "https://github.com/example-org/minirl/pull/298 again."
    )
    rec = record(
        [file("pkg/engine.py", hunk(1, [" a", "+b = 1"]))], title="[trainer] fix: sync weights", body=body
    )
    steps = draft_offline(rec, analyze(rec), "zh").next_steps
    refs = [s for s in steps if s.startswith("关注相关 PR")]
    assert [s.split("（")[0] for s in refs] == ["关注相关 PR #298", "关注相关 PR old-org/minirl#298"]


def test_empty_sections_say_nothing_and_risks_come_with_their_evidence():
    a = _analysis(open_items=[], cross_refs=[], discussion=Discussion(), description=Description(text="…"))
    b = draft_offline(_record(state="merged"), a, "zh")
    boiler = ("启发式未发现遗留项", "请核对测试覆盖", "无需后续动作")
    assert not any(x in line for x in boiler for line in b.open_items + b.next_steps)
    # the one real thing open: the concurrency evidence, with its place and line
    assert b.open_items == ["并发风险需核实：`verl/x.py:10` `self._ack_pending = True`"]
    assert b.next_steps == []
    en = draft_offline(_record(state="merged"), a, "en")
    assert en.open_items == ["Concurrency risk to verify: `verl/x.py:10` `self._ack_pending = True`"]
    # a theme the description alone names says what the PR fixes, not a place to verify
    said = Signal(
        "risk.error_handling",
        "error handling (in the description)",
        0.5,
        [Evidence(None, None, "Any run with this estimator crashed in the update step")],
    )
    told = _analysis(
        open_items=[],
        cross_refs=[],
        discussion=Discussion(),
        description=Description(text="…"),
        signals=[said],
    )
    assert draft_offline(_record(state="merged"), told, "zh").open_items == []


def test_only_checked_cross_references_become_next_steps():
    refs = [
        CrossRef(250, "mentions"),  # "micro-batch #250": nothing says it is a PR
        CrossRef(7366, "mentions", "ACK timeout", "open"),  # known to the cache
        CrossRef(7001, "fixes"),  # the text says it fixes it
    ]
    steps = draft_offline(_record(), _analysis(cross_refs=refs), "en").next_steps
    assert not any("#250" in s for s in steps)
    assert any("#7366" in s for s in steps) and any("#7001" in s for s in steps)


def test_focus_carries_the_risk_evidence_of_its_file():
    sig = Signal(
        "risk.concurrency",
        "concurrency",
        1.5,
        [Evidence("verl/workers/rollout/bucketed_weight_transfer.py", 88, "self._ack_pending = True")],
    )
    b = draft_offline(_record(), _analysis(signals=[sig]), "zh")
    assert (
        "风险证据：`verl/workers/rollout/bucketed_weight_transfer.py:88` `self._ack_pending = True`"
        in b.focus[0]
    )


def test_a_command_run_through_a_shell_is_named_in_the_headline_and_its_file():
    from workbench.analysis.pipeline import analyze

    rec = _record(title="[perf] feat: profiler post hook")
    rec.files[0]["patch"] = (
        "@@ -290,2 +290,8 @@ class DistProfiler:\n"
        "         try:\n"
        "+            proc = subprocess.Popen(\n"
        '+                ["/bin/sh", "-c", cmd],\n'
        "+                env=env,\n"
        "+            )\n"
        "+        except Exception as e:  # never crash training\n"
        '+            logger.warning("hook failed: %s", e)'
    )
    a = analyze(rec)
    assert "security" in a.key_files[0].reason
    b = draft_offline(rec, a, "zh")
    assert "安全" in b.headline
    assert (
        '风险证据：`verl/workers/rollout/bucketed_weight_transfer.py:292` `["/bin/sh", "-c", cmd],`'
        in b.focus[0]
    )


def test_a_config_ci_or_script_file_in_focus_says_what_its_values_became():
    from workbench.analysis.pipeline import analyze

    rec = _record(title="[ci] fix: oom in the async test")
    rec.files[:] = [
        {
            "filename": "tests/special_e2e/run_async.sh",
            "status": "modified",
            "additions": 1,
            "deletions": 1,
            "patch": "@@ -104,3 +104,3 @@\n     actor.entropy_coeff=0\n"
            "-    actor_rollout_ref.rollout.gpu_memory_utilization=0.80\n"
            "+    actor_rollout_ref.rollout.gpu_memory_utilization=0.60\n",
        }
    ]
    a = analyze(rec)
    zh, en = draft_offline(rec, a, "zh"), draft_offline(rec, a, "en")
    assert "；改动 `actor_rollout_ref.rollout.gpu_memory_utilization: 0.80 -> 0.60`。" in zh.focus[0]
    assert "; changes `actor_rollout_ref.rollout.gpu_memory_utilization: 0.80 -> 0.60`." in en.focus[0]
    # a code file's focus names its symbols, not values
    assert "改动" not in draft_offline(_record(), _analysis(), "zh").focus[0]


def test_a_value_written_into_a_call_and_a_branch_install_are_asked_to_verify():
    quiet = dict(open_items=[], cross_refs=[], discussion=Discussion(), description=Description(text="…"))
    written = Signal(
        "code.values",
        "values written into calls or signatures changed (1)",
        0.5,
        [Evidence("verl/trainer/ppo/ray_trainer.py", 88, "max_colocate_count: 1 -> 3")],
    )
    branch = Signal(
        "ci.branch_install",
        "CI or scripts install packages from a branch (1)",
        0.0,
        [
            Evidence(
                ".github/workflows/sgl.yml", 110, "pip3 install git+https://github.com/o/mbridge.git@main"
            )
        ],
    )
    zh = draft_offline(_record(), _analysis(**quiet, signals=[branch, written]), "zh")
    assert zh.open_items == [
        "写死的取值风险需核实：`verl/trainer/ppo/ray_trainer.py:88` `max_colocate_count: 1 -> 3`",
        "版本兼容风险需核实：`.github/workflows/sgl.yml:110` `pip3 install git+https://github.com/o/mbridge.git@main`",
    ]
    en = draft_offline(_record(), _analysis(**quiet, signals=[branch, written]), "en")
    assert en.open_items[0].startswith("Hard-coded values risk to verify: ")


def test_a_changed_default_is_said_first_and_once_and_a_told_theme_heads_nothing():
    default = Signal(
        "config.on_by_default",
        "new settings on by default (1)",
        0.5,
        [Evidence("verl/trainer/config/engine/megatron.yaml", 108, "added pad_bshd_to_minibatch_max: True")],
    )
    told = Signal("risk.memory", "memory (in the description)", 0.75, [Evidence(None, None, "fixes an OOM")])
    concurrency = _analysis().signals[0]
    quiet = dict(open_items=[], cross_refs=[], discussion=Discussion(), description=Description(text="…"))
    value = Signal(
        "config.defaults", "default values changed (1)", 1.0, [Evidence("verl/c.yaml", 3, "n: 1 -> 2")]
    )
    a = _analysis(**quiet, signals=[told, concurrency, default, value])
    zh = draft_offline(_record(), a, "zh")
    assert zh.open_items == [  # one theme once, even when two signals found it
        "默认值风险需核实：`verl/trainer/config/engine/megatron.yaml:108` `added pad_bshd_to_minibatch_max: True`",
        "并发风险需核实：`verl/x.py:10` `self._ack_pending = True`",
    ]
    assert "涉及并发与默认值" in zh.headline and "内存" not in zh.headline  # memory: the description's word
    en = draft_offline(_record(), a, "en")
    assert en.open_items[0].startswith("Changed defaults risk to verify: ")
    assert "touching concurrency and changed defaults" in en.headline
    # a line the focus already quotes is not asked again below it
    config_key_file = KeyFile(
        "verl/trainer/config/engine/megatron.yaml", "config", "a changed default", 5.0, 1, 0, []
    )
    b = _analysis(
        open_items=[], cross_refs=[], discussion=Discussion(), signals=[default], key_files=[config_key_file]
    )
    quoted = draft_offline(_record(), b, "zh")
    assert "改动 `added pad_bshd_to_minibatch_max: True`" in quoted.focus[0]
    assert not any("默认值风险需核实" in x for x in quoted.open_items)


def test_a_one_file_pr_names_its_file_once_in_focus():
    rec = _record()
    rec.files.pop()  # the fix alone
    a = _analysis(signals=[], key_files=_analysis().key_files[:1], description=Description())
    for lang in ("zh", "en"):
        focus = draft_offline(rec, a, lang).focus
        assert sum("`verl/workers/rollout/bucketed_weight_transfer.py`" in item for item in focus) == 1, focus
    # with files the key files leave out, the brief still points at them
    rec2 = _record()
    rec2.files.append({"filename": "verl/utils/helpers.py", "additions": 3, "deletions": 1})
    focus = draft_offline(rec2, a, "en").focus
    assert any("Walk through the changed files" in item and "verl/utils/helpers.py" in item for item in focus)


def test_the_judged_risks_are_asked_to_verify_first_with_why_in_english():
    quiet = dict(open_items=[], cross_refs=[], discussion=Discussion(), description=Description(text="…"))
    fix = Risk(
        "behaviour-change",
        "a fix changes what the code does on the path it fixes",
        [Evidence("verl/engine.py", 456, 'if "grad_reduce_in_fp32" not in override:')],
    )
    default = Risk(
        "config-default-change",
        "a new setting is on by default: runs that never set it take the new path",
        [Evidence("verl/trainer/config/engine/megatron.yaml", 47, "added fully_reshardable: True")],
    )
    # the same default seen in the generated copy, and a risk only the title shows: nothing to verify
    sizing = Risk(
        "memory",
        "a default that sizes buffers, batches or parallelism changes",
        [
            Evidence(
                "verl/trainer/config/_generated_ppo_megatron_trainer.yaml",
                459,
                "added fully_reshardable: true",
            )
        ],
    )
    told = Risk("performance", "the change is made for speed", [Evidence(None, None, "perf: faster sync")])
    concurrency = _analysis().signals[0]
    a = _analysis(**quiet, risks=[sizing, fix, told, default], signals=[concurrency])
    zh = draft_offline(_record(), a, "zh")
    assert zh.open_items == [
        "默认值风险需核实：`verl/trainer/config/engine/megatron.yaml:47` `added fully_reshardable: True`",
        '行为变化风险需核实：`verl/engine.py:456` `if "grad_reduce_in_fp32" not in override:`',
        "并发风险需核实：`verl/x.py:10` `self._ack_pending = True`",  # a theme no judged risk names
    ]
    en = draft_offline(_record(), a, "en")
    assert en.open_items[1] == (
        "Behaviour change risk to verify: `verl/engine.py:456` "
        '`if "grad_reduce_in_fp32" not in override:` (a fix changes what the code does on the path it fixes)'
    )
    # a judged risk and the theme that found it are said once
    same = Risk(
        "concurrency", "threads, locks, async tasks or inter-process messages change", concurrency.evidence
    )
    once = draft_offline(_record(), _analysis(**quiet, risks=[same], signals=[concurrency]), "zh")
    assert once.open_items == ["并发风险需核实：`verl/x.py:10` `self._ack_pending = True`"]
