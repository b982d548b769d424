"""The description and the discussion as a reader needs them: template stripped, what is left open (and
what only looks open), cross-references that are references, reverts linked to what they revert."""

from heuristics_helpers import file, hunk, record, user

from workbench.analysis.conventions import load_conventions
from workbench.analysis.description import open_work, read_description, strip_template
from workbench.analysis.discussion import (
    link_relandings,
    link_reverted_by,
    read_discussion,
    resolve_refs,
    revert_statement,
    reverted_pr,
    written_refs,
)
from workbench.analysis.model import CrossRef, Description, Discussion
from workbench.analysis.pipeline import analyze
from workbench.records import KnownPRs, quoted_title

VERL = load_conventions("verl-project/verl")
REPO = "verl-project/verl"

# verl's PR template as authors leave it: guidance in quotes and comments, the checklists ticked.
TEMPLATE_TAIL = """
### Checklist Before Starting

- [x] Search for similar PRs. Paste at least one query link here: ...
- [x] Format the PR title as `[{modules}] {type}: {description}` (This will be checked by the CI)

### API and Usage Example

> Demonstrate how the API changes if any, and provide usage example(s) if possible.

```python
# Add code snippet or script demonstrating how to use this
```

### Checklist Before Submitting

- [x] Read the [Contribute Guide](https://github.com/volcengine/verl/blob/main/CONTRIBUTING.md).
- [ ] Add / Update [the documentation](https://github.com/volcengine/verl/tree/main/docs).
"""


def code_file(lines: list[str]) -> dict:
    return file("pkg/engine.py", hunk(10, lines))


def desc(body: str) -> Description:
    return read_description("t", body, VERL)


def cross_refs(repo: str, number: int, texts: list[str], known_prs: dict | None) -> list[CrossRef]:
    """The references of `texts` (title, description, comments) as `analyze` resolves them: what they
    write (with the description's own revert line), completed from the cache's PRs."""
    own = revert_statement(texts[1]) if len(texts) > 1 and texts[1] else None
    written = written_refs(repo, number, texts, own.group(1) if own else None)
    return resolve_refs(written.refs, number, known_prs, written.revert_commit, written.revert_title)


def refs(text: str, number: int = 7400, known: dict | None = None) -> dict[int, str]:
    return {r.number: r.relation for r in cross_refs(REPO, number, ["t", text], known)}


# ---- the description's own structure --------------------------------------------------------------


def test_description_reads_as_a_dataclass_with_the_template_gone():
    d = desc(
        "### What does this PR do?\n\nFix the IPC race: the ACK was sent before `_cleanup` ran, "
        "because the block was freed late.\nPeak memory drops from 41.2 GiB to 30.1 GiB.\n\n"
        "### Test\n\nRan `pytest tests/utils` on 8 GPUs.\n" + TEMPLATE_TAIL
    )
    assert isinstance(d, Description) and not d.empty
    assert "Checklist" not in d.text and "Demonstrate how" not in d.text and "Contribute Guide" not in d.text
    assert d.root_cause == [
        "Fix the IPC race: the ACK was sent before `_cleanup` ran, because the block was freed late."
    ]
    assert d.numbers == ["Peak memory drops from 41.2 GiB to 30.1 GiB."]
    assert d.test_plan == ["Ran `pytest tests/utils` on 8 GPUs."]
    assert d.code_spans == ["_cleanup", "pytest tests/utils"]
    assert d.open_items == []  # an unticked template checkbox is not the author's open work


def test_template_only_description_is_empty_and_says_how_long_it_was():
    d = desc("<!-- describe the change -->\n" + TEMPLATE_TAIL)
    assert d.empty and d.raw_chars > 100 and d.open_items == [] and d.test_plan == []
    assert desc("").empty and desc("").raw_chars == 0


def test_headings_inside_code_are_code():
    text, sections = strip_template(
        "Intro.\n```bash\n# not a heading\n### also code\nrun.sh\n```\n## Real\nyes", VERL
    )
    assert [h for h, _ in sections] == ["", "Real"]
    assert "# not a heading" in text and "### also code" in text


def test_from_to_numbers_and_a_number_without_a_unit():
    d = desc("Latency went from 120 to 80 on the same node.\n\nWe ran it 3 times.")
    assert d.numbers == ["Latency went from 120 to 80 on the same node."]


def test_a_measurement_with_its_unit_comes_before_a_range():
    d = desc(
        "Dataset: sequence lengths from 1K to 16K.\n\nThroughput: fixed 2100 tok/s, dynamic 3371 tok/s (+60.6%)."
    )
    assert d.numbers == [
        "Throughput: fixed 2100 tok/s, dynamic 3371 tok/s (+60.6%).",
        "Dataset: sequence lengths from 1K to 16K.",
    ]


def test_a_number_inside_a_name_is_no_measurement():
    # a GPU, an architecture, a package, a URL's escapes: the digits belong to the name
    d = desc(
        "Fixes fully async training on AMD ROCm platforms (MI300X series).\n\n"
        "cupy-cuda12x==14.0.0 requires numpy>=2.0.0, and s390x wheels are missing.\n\n"
        "See [the docs](https://docs.ray.io/en/latest/options.html#ray.actor%3A-%E2%80%94) on a K8s pod."
    )
    assert d.numbers == []
    d = desc("On MI300X the build took 7m22s; with the cache, 1.8x faster.")
    assert d.numbers == ["On MI300X the build took 7m22s; with the cache, 1.8x faster."]
    assert desc("The release build took 7m22s on MI300X.").numbers == [
        "The release build took 7m22s on MI300X."
    ]


def test_a_quoted_sentence_keeps_no_unpaired_bold_marker():
    d = desc("**Root cause:** a use-after-free race between `_cleanup()` and the copy.\n\nFixed it.")
    assert d.root_cause == ["Root cause: a use-after-free race between `_cleanup()` and the copy."]


def test_a_screenshot_is_no_sentence():
    body = (
        "### Test\n\nProfile of the overlapped reset "
        '<img width="1420" height="232" alt="image" src="https://github.com/user-attachments/assets/dd98" />'
        "\n\n![curve](https://example.com/reward.png)\n\n- loss curve: ![loss](https://example.com/l.png)"
    )
    d = desc(body)
    assert d.test_plan == ["Profile of the overlapped reset (image)", "(image)", "loss curve: (image)"]


def test_commit_trailers_are_no_test_plan():
    # a squash commit appends its trailers to the description's last section
    body = (
        "Fixes the returns of observation spans.\n\n### Test\n\n"
        "6 new tests in `tests/test_returns.py`.\n\n"
        "🤖 Generated with [Claude Code](https://claude.com/claude-code)\n\n"
        "Co-authored-by: A. Person <a@example.com>\nSigned-off-by: B. Person <b@example.com>"
    )
    d = desc(body)
    assert d.test_plan == ["6 new tests in `tests/test_returns.py`."]
    assert "Co-authored-by" not in d.text and "Generated with" not in d.text
    only = desc("Fixes the returns.\n\n### Test\n\nCo-Authored-By: A. Person <a@example.com>")
    assert only.test_plan == []


def test_the_issues_a_pr_closes_are_no_test_plan():
    d = desc("Adds the rule.\n\n## Test Plan\n\nNew mdtests from the issue's examples.\n\nCloses #15557")
    assert d.test_plan == ["New mdtests from the issue's examples."]
    refs = desc("Adds the rule.\n\n## Test\n\nFixes #22429, #21873\n\nRefs https://github.com/o/r/issues/1.")
    assert refs.test_plan == []
    told = desc("Adds the rule.\n\n## Test\n\nCloses #12 by adding a regression test for the parser.")
    assert told.test_plan == ["Closes #12 by adding a regression test for the parser."]


def test_linters_passing_are_no_test_plan():
    # verl's template asks for pre-commit's output: it says the code is well-formed, which CI checks on
    # every PR, not that the change works
    d = desc(
        "Fixes the staging of FP8 weights.\n\n### Test\n\n"
        "`pre-commit run --all-files --show-diff-on-failure --color=always` — all hooks passed.\n\n"
        "`python3 -m py_compile verl/utils/vllm/vllm_fp8_utils.py` — passed.\n\n"
        "Inline CPU smoke test for `_layer_needs_fp8_staging` — passed."
    )
    assert d.test_plan == ["Inline CPU smoke test for `_layer_needs_fp8_staging` — passed."]
    lint_only = desc(
        "Fixes the import.\n\n### Test\n\n`ruff check` and `ruff format --check` clean.\n\nPassed."
    )
    assert lint_only.test_plan == []
    # a check named beside a test run, a path that names a linter, and the project's own tool are tests
    both = desc("Fixes it.\n\n### Test\n\n`pytest tests/test_ruff_config.py` and pre-commit pass.")
    assert both.test_plan == ["`pytest tests/test_ruff_config.py` and pre-commit pass."]
    named = desc("Fixes it.\n\n### Test\n\nOpened the links of `docs/pre-commit.md` by hand.")
    assert named.test_plan == ["Opened the links of `docs/pre-commit.md` by hand."]
    ruff = load_conventions("astral-sh/ruff")
    own = read_description(
        "Fix F811", "Fixes F811.\n\n## Test Plan\n\n`ruff check --select F811 stub.pyi`", ruff
    )
    assert own.test_plan == ["`ruff check --select F811 stub.pyi`"]
    elsewhere = read_description("Fix F811", "Fixes F811.\n\n## Test Plan\n\n`cargo clippy` clean", ruff)
    assert elsewhere.test_plan == []


def test_a_link_address_makes_no_test_plan():
    # the query in a search link names a workflow (`e2e_...`): the sentence says nothing of a test
    searched = (
        "This does not duplicate an existing PR: searches for [the workflow]"
        "(https://github.com/o/r/pulls?q=is%3Apr+e2e_ppo_trainer_rocm) found none."
    )
    assert desc(f"Moves the CI image.\n\n{searched}").test_plan == []
    told = "Reproduced the hang with [this script](https://example.com/hang.py) and verified the fix."
    assert desc(f"Fixes the hang.\n\n{told}").test_plan == [told]


# ---- open items: what the author leaves open -------------------------------------------------------


def test_the_items_under_a_cut_heading_are_open_not_the_heading():
    d = desc(
        "Adds sharded delta weight sync.\n\n**Deliberately out of scope**\n\n"
        "- **PP** — each stage holds a disjoint slice, so the export order differs across ranks.\n\n"
        "**Environment notes**\n\nTorchTitan and SGLang share one environment as of SGLang main."
    )
    assert d.open_items == [
        "**PP** — each stage holds a disjoint slice, so the export order differs across ranks."
    ]
    assert not any("Deliberately" in x or "Environment" in x for x in d.open_items)


def test_todo_labels_and_limitation_checklists_are_open_but_ticked_items_are_done():
    d = desc(
        "Implemented AsyncSglangServer.\n\nTODO\n\n- [ ] improve performance when TP>1.\n"
        "- [ ] test in multi node deployment.\n- [x] add a unit test\n\n"
        "**Limitation**\n\n- [ ] FSDP+PP: PP is not supported in the TorchTitan engine.\n" + TEMPLATE_TAIL
    )
    assert d.open_items == [
        "improve performance when TP>1.",
        "test in multi node deployment.",
        "FSDP+PP: PP is not supported in the TorchTitan engine.",
    ]


def test_a_label_over_prose_and_a_limitations_section():
    d = desc(
        "**TODO:**\nImplement dataloader recovery that keeps in-flight samples. It is hard.\n\n"
        "### Known limitations\n\nOnly the NCCL backend. Others later.\n\n- no NPU path\n"
    )
    assert d.open_items == [
        "Implement dataloader recovery that keeps in-flight samples.",
        "Only the NCCL backend.",
        "no NPU path",
    ]


def test_open_work_sentences_anywhere_in_the_text():
    d = desc(
        "Support SFT resume in the next PR. Perf follow-ups (not this PR): closed-form index tables.\n\n"
        "Multi-node is not yet supported. 后续会支持 NPU。"
    )
    assert d.open_items == [
        "Support SFT resume in the next PR.",
        "Perf follow-ups (not this PR): closed-form index tables.",
        "Multi-node is not yet supported.",
        "后续会支持 NPU。",
    ]


def test_what_only_looks_open_is_not():
    for sentence in (
        "This PR removes some existing TODO and cleans up the loader.",
        "Resolves the previous `TODO: this is buggy` in the bucket receiver.",
        "Reward computation now runs in a separate process.",
        "We completed a 100-step follow-up run with the same metrics path.",
        "Follow-up to #7060: PP support.",
        "No claimed PRs, no follow-ups.",
        "In the future, we may run NPU and GPU in one cluster.",
        "This is a follow-up PR to https://github.com/volcengine/verl/pull/3362",
        "This is a follow up task from above PR.",
    ):
        assert not open_work(sentence), sentence
        assert desc(sentence).open_items == [], sentence
    for sentence in (
        "TODO: wire the NPU path.",
        "Scaler integration is tracked for a follow-up PR.",
        "The other backends need the same treatment in a follow-up.",
        "We should remove `verl/third_party` completely in the future.",
    ):
        assert open_work(sentence), sentence


def test_a_todo_in_pasted_code_is_code_not_an_open_item():
    d = desc(
        "Passing tool_kwargs solves it.\n```python\n    # TODO: append malformed calls\n    x = 1\n```\nDone."
    )
    assert d.open_items == []


def test_open_items_reach_the_analysis_and_template_text_never_does():
    body = "Fixes the loader.\n\n### Limitations\n\n- Ascend is not covered.\n" + TEMPLATE_TAIL
    a = analyze(record([code_file(["+x = 1"])], body=body))
    assert "author notes a follow-up / not addressed: Ascend is not covered." in a.open_items
    assert not any("Search for similar" in x or "documentation" in x for x in a.open_items)


# ---- the discussion ---------------------------------------------------------------------------------


def test_discussion_is_a_dataclass_with_promises_and_what_reviewers_deferred():
    rec = record(
        [code_file(["+x = 1"])],
        reviews=[
            {"user": user("bob"), "state": "CHANGES_REQUESTED", "body": "please add an ACK timeout"},
            {
                "user": user("bob"),
                "state": "COMMENTED",
                "body": "ok, we can leave the NPU path for a separate PR.",
            },
            {"user": user("carol"), "state": "APPROVED", "body": "LGTM. Tested on 8 GPUs."},
        ],
        issue_comments=[
            {"user": user("alice"), "body": "Thanks! I will add the docs in a follow-up PR."},
            {"user": user("alice"), "body": "I will rebase. Tests are green."},
            {"user": user("ci-bot"), "body": "TODO: nothing, I am a bot."},
        ],
    )
    disc, sigs = read_discussion(rec, VERL)
    assert isinstance(disc, Discussion)
    assert disc.reviewers == ["bob", "carol"] and disc.approved_by == ["carol"]
    assert disc.changes_requested_outstanding == ["bob"]  # a later comment does not withdraw it
    assert disc.promises == ["I will add the docs in a follow-up PR."]  # "I will rebase" is no later work
    assert disc.deferred == ["bob: ok, we can leave the NPU path for a separate PR."]
    assert disc.comments == 3 and disc.unresolved_threads == 0
    assert {s.name for s in sigs} >= {
        "discussion.changes_requested",
        "discussion.promises",
        "discussion.deferred",
    }
    a = analyze(rec)
    assert "reviewer left for later: bob: ok, we can leave the NPU path for a separate PR." in a.open_items


def test_no_discussion_is_an_empty_discussion():
    disc, sigs = read_discussion(record([code_file(["+x = 1"])]), VERL)
    assert disc == Discussion() and sigs == []


# ---- cross-references -------------------------------------------------------------------------------


def test_numbers_in_a_table_of_micro_batches_are_not_prs():
    table = (
        "Per-micro-batch memory during the training pass:\n\n"
        "| | mb #250 | #300 | #350 | #400 |\n|---|---|---|---|---|\n"
        "| before | 24.8 GiB | 37.9 GiB | ~50 GiB | 64 GiB |\n\nRoot cause in #6698. Fixes #6698."
    )
    assert refs(table) == {6698: "fixes"}
    assert refs("step #3 and rank #2 diverge; see #12") == {12: "mentions"}
    assert refs("| both | #7287 fixes it for 0.5.8 |") == {7287: "mentions"}  # a table cell that names a PR


def test_references_in_code_and_entities_are_not_prs():
    assert refs("Run `grep '#123' log` and\n```\ncolor: #333\n```\nsee #45. Colour &#35;.") == {
        45: "mentions"
    }


def test_relations_kept_distinct():
    got = refs(
        "Fixes #12. Follow-up to #34. Depends on #56. This PR is stacked on #57. "
        "Supersedes #58. Reland of #59. See #60."
    )
    assert got == {
        12: "fixes",
        34: "follow-up",
        56: "depends-on",
        57: "depends-on",
        58: "supersedes",
        59: "relands",
        60: "mentions",
    }
    # the strongest relation wins when a PR is named twice
    assert refs("See #12; this fixes #12.") == {12: "fixes"}


def test_another_repositorys_refs_and_urls():
    got = cross_refs(
        REPO,
        7400,
        ["t", "See sgl-project/sglang#1234 and https://github.com/vllm-project/vllm/pull/99."],
        None,
    )
    assert [(r.name, r.relation, r.url) for r in got] == [
        ("sgl-project/sglang#1234", "mentions", None),
        ("vllm-project/vllm#99", "mentions", "https://github.com/vllm-project/vllm/pull/99"),
    ]
    assert refs("a/b#7 is a path") == {}
    # a link's text #N is the linked repository's, not this one's
    got = cross_refs(
        REPO, 7044, ["t", "Same as [#39771](https://github.com/vllm-project/vllm/pull/39771)."], None
    )
    assert [r.name for r in got] == ["vllm-project/vllm#39771"]
    text = "Same failure as [vLLM\nissue #39771](https://github.com/vllm-project/vllm/issues/39771); see #12."
    assert [r.name for r in cross_refs(REPO, 7044, ["t", text], None)] == ["vllm-project/vllm#39771", "#12"]


def test_a_revert_links_what_it_reverts_under_the_old_repository_name():
    known = {4929: ("Correct Attention FLOPS estimation in flops_counter.py", "merged")}
    got = cross_refs(
        REPO,
        4950,
        ['Revert "Correct Attention FLOPS estimation in flops_counter.py"', "Reverts volcengine/verl#4929"],
        known,
    )
    assert [(r.number, r.relation, r.repo, r.title) for r in got] == [
        (4929, "reverts", None, "Correct Attention FLOPS estimation in flops_counter.py")
    ]


def test_partial_reverts_and_prs_reverted_by_others():
    assert refs("This reverts the forwarding introduced in #7101 and relies on Ray.") == {7101: "reverts"}
    # the PR named as the reverting one is not what this PR reverts
    assert refs("This was addressed by #6228, but was reverted in #6258.") == {
        6228: "mentions",
        6258: "mentions",
    }
    assert refs("- #6350 (original fix, reverted by #6360)") == {6350: "mentions", 6360: "mentions"}


def test_a_squash_merged_revert_title_names_the_reverted_pr():
    title = 'Revert "[megatron] fix: Qwen3.5 LoRA & MTP support (#5599)"'
    assert {r.number: r.relation for r in cross_refs(REPO, 5700, [title, ""], None)} == {5599: "reverts"}
    # a title that only quotes another title: the latest earlier PR of that title in the cache
    title = 'Revert "[model] feat: Add MiniCPM-o 2.6 support"'
    assert cross_refs(REPO, 5700, [title, "This reverts commit 0a1b2c3."], None) == []
    known = {
        1833: ("[model] feat: Add MiniCPM-o 2.6 support", "merged"),
        1900: ("[model] feat: other", "merged"),
    }
    got = cross_refs(REPO, 2000, [title, "This reverts commit 0a1b2c3."], known)
    assert [(r.number, r.relation) for r in got] == [(1833, "reverts")]
    assert cross_refs(REPO, 1800, [title, ""], known) == []  # not a later PR


def test_a_revert_names_its_pr_by_the_commit_that_merged_it():
    sha, other = "352f76f59ff014c6b423eed1a21a7881be1a0b46", "352f76f0" + "0" * 32
    known = KnownPRs(
        {7205: ("[ckpt] feat: split weight chunks", "merged"), 7300: ("[ckpt] feat: other", "merged")},
        {sha: 7205, other: 7300},
    )
    body = f"This reverts commit {sha}.\n\n### What does this PR do?\n#7205 will cause hccl error on npu"
    got = cross_refs(REPO, 7488, ["[ckpt] fix: hccl error", body], known)
    assert [(r.number, r.relation, r.title) for r in got] == [
        (7205, "reverts", "[ckpt] feat: split weight chunks")
    ]
    # git's abbreviation names it while no other merge commit shares it
    assert reverted_pr(cross_refs(REPO, 7488, ["t", "This reverts commit 352f76f5."], known)) == 7205
    assert reverted_pr(cross_refs(REPO, 7488, ["t", "This reverts commit 352f76f."], known)) is None
    # a plain {number: (title, state)} knows no commits: #7205 stays a mention
    assert [(r.number, r.relation) for r in cross_refs(REPO, 7488, ["t", body], dict(known))] == [
        (7205, "mentions")
    ]
    # a commit of an unknown PR, a revert line in a comment: nothing named
    assert reverted_pr(cross_refs(REPO, 7488, ["t", "This reverts commit 0a1b2c3d."], known)) is None
    assert reverted_pr(cross_refs(REPO, 7488, ["t", "", f"This reverts commit {sha}."], known)) is None


def test_reverts_as_people_write_them():
    title = "Revert: [pyflakes] Avoid false positives in `@no_type_check` contexts (F821, F722) (#14615)"
    assert [(r.number, r.relation) for r in cross_refs(REPO, 14726, [title, ""], None)] == [
        (14615, "reverts")
    ]
    assert refs("Reverts the name normalization part of #25937 now that names are in the baseline.") == {
        25937: "reverts"
    }
    sha = "13634ff433310fa4b718c57cb8ea43ab334e2637"
    known = KnownPRs({19499: ("Use PEP 639 license information", "merged")}, {sha: 19499})
    body = f"This partially reverts commit {sha}\nafter issues in the release today."
    assert reverted_pr(cross_refs(REPO, 19624, ["Revert `license` changes", body], known)) == 19499


def test_the_reverts_line_wins_over_an_issue_number_in_the_quoted_title():
    known = {6350: ("[fsdp] fix: emit distillation outputs (#6293)", "merged")}
    texts = ['Revert "[fsdp] fix: emit distillation outputs (#6293)"', "Reverts verl-project/verl#6350"]
    got = cross_refs(REPO, 6360, texts, known)
    assert [(r.number, r.relation) for r in got] == [(6293, "mentions"), (6350, "reverts")]


def test_a_later_relanding_in_the_cache_is_linked_and_refreshed():
    known = {
        6226: ("[reward] fix: compute correct rollout world size", "merged"),
        6240: ("[reward] fix: unrelated", "merged"),
        6300: ("[reward] fix: compute correct rollout world size (#6226)", "merged"),
    }
    texts = ['Revert "[reward] fix: compute correct rollout world size"', "Reverts verl-project/verl#6226"]
    got = cross_refs(REPO, 6250, texts, known)
    assert [(r.number, r.relation) for r in got] == [(6226, "reverts"), (6300, "relanded-in")]
    # a PR before the revert is no relanding; without the relanding in the cache there is none
    assert [(r.number, r.relation) for r in cross_refs(REPO, 6250, texts, {6226: known[6226]})] == [
        (6226, "reverts")
    ]
    # the memo refreshes it: a relanding that arrived later is linked, one that left is dropped
    stale = [CrossRef(6226, "reverts", known[6226][0], "merged")]
    assert [r.number for r in link_relandings(stale, 6250, known)] == [6226, 6300]
    assert [r.number for r in link_relandings(got, 6250, {6226: known[6226]})] == [6226]


def test_revert_end_to_end_in_the_analysis():
    known = {41: ("[trainer] feat: new loss", "merged"), 60: ("[trainer] feat: new loss", "merged")}
    a = analyze(
        record([code_file(["-x = 1"])], title='Revert "[trainer] feat: new loss (#41)"', body="", number=50),
        known_prs=known,
    )
    assert [(r.number, r.relation, r.title) for r in a.cross_refs] == [
        (41, "reverts", "[trainer] feat: new loss"),
        (60, "relanded-in", "[trainer] feat: new loss"),
    ]


def test_a_reverted_pr_is_led_by_the_later_pr_that_reverts_it():
    title = "[reward] fix: compute correct rollout world size"
    known = KnownPRs(
        {
            6226: (title, "merged"),
            6240: ("[reward] fix: unrelated (#6226)", "merged"),
            6258: (f'Revert "{title}"', "merged"),
        }
    )
    mention = [CrossRef(6258, "mentions")]
    got = link_reverted_by(mention, 6226, known)
    assert [(r.number, r.relation, r.state) for r in got] == [(6258, "reverted-by", "merged")]
    assert link_reverted_by(got, 6240, known) == []  # what a revert names is the only PR it reverts
    # a plain {number: (title, state)} serves as well; a revert before the PR reverts something else
    assert link_reverted_by([], 6226, dict(known))[0].number == 6258
    assert link_reverted_by([], 6226, {**known, 6100: (f'Revert "{title}"', "merged")})[0].number == 6258
    # of two reverts, the first took it back
    twice = {**known, 6300: (f'Revert "{title} (#6226)"', "merged")}
    assert [r.number for r in link_reverted_by([], 6226, twice)] == [6258]
    # a PR of the same title in between is what the revert reverts
    later = KnownPRs({**known, 6250: (title, "merged")})
    assert link_reverted_by(got, 6226, later) == [] and link_reverted_by([], 6250, later)[0].number == 6258


def test_a_revert_quoting_a_squash_title_is_found_by_the_whole_title():
    """git's revert of a squash-merged commit quotes the title with its (#N); a title's own (#N) may
    name an issue, and names no PR the revert reverts."""
    known = KnownPRs(
        {
            5599: ("[megatron] fix: Qwen3.5 LoRA & MTP support", "merged"),
            6293: ("[fsdp] fix: the issue", "merged"),
            6350: ("[fsdp] fix: emit distillation outputs (#6293)", "merged"),
            6360: ('Revert "[fsdp] fix: emit distillation outputs (#6293)"', "merged"),
            7173: ('Revert "[megatron] fix: Qwen3.5 LoRA & MTP support (#5599)"', "open"),
        }
    )
    assert [(r.number, r.state) for r in link_reverted_by([], 5599, known)] == [(7173, "open")]
    assert [r.number for r in link_reverted_by([], 6350, known)] == [6360]
    assert link_reverted_by([], 6293, known) == []


def test_a_revert_titled_behind_tags_or_in_lowercase_is_found():
    from workbench.analysis.titles import parse_title

    known = KnownPRs(
        {
            706: ("Use Mcore GPTModel", "merged"),
            883: ('revert: "Use Mcore GPTModel"', "merged"),
            1833: ("[model] feat: Add MiniCPM-o 2.6 support", "merged"),
            2176: ('[model] fix: Revert "[model] feat: Add MiniCPM-o 2.6 support"', "merged"),
            26290: ("[ty] Infer definite equality comparison results", "merged"),
            26308: ('[ty] Revert "[ty] Infer definite equality comparison results"', "closed"),
            5109: ("[vllm] feat: revert to the default behavior of cudagraph_mode", "merged"),
        }
    )
    for reverted, by in ((706, 883), (1833, 2176), (26290, 26308)):
        assert [r.number for r in link_reverted_by([], reverted, known)] == [by]
        assert parse_title(known[by][0]).revert
    # "revert to the default" is a sentence, not a revert's title
    assert not parse_title(known[5109][0]).revert
    assert quoted_title(known[5109][0]) is None


def test_a_reverted_pr_tells_the_reader_in_its_brief():
    from workbench.drafting.offline import draft_offline

    known = {41: ("[trainer] feat: new loss", "merged"), 50: ('Revert "[trainer] feat: new loss"', "merged")}
    rec = record([code_file(["+x = 1"])], title="[trainer] feat: new loss", body="", number=41)
    a = analyze(rec, known_prs=known)
    assert [(r.number, r.relation) for r in a.cross_refs] == [(50, "reverted-by")]
    assert a.verdict == analyze(rec).verdict  # a revert says why; how to read the PR is the PR's own
    assert draft_offline(rec, a, "en").next_steps[0].startswith("Reverted later by #50 (merged)")
    assert draft_offline(rec, a, "zh").next_steps[0].startswith("本 PR 后来被 #50 回滚（已合并）")


def test_title_tags_with_and_without_separators():
    from workbench.analysis.titles import parse_title

    p = parse_title("[rollout, vllm; fsdp/ BREAKING][ci] fix(trainer/ckpt)!: x")
    assert (p.tags, p.kind, p.breaking, p.subject) == (
        ["rollout", "vllm", "fsdp", "ci", "trainer", "ckpt"],
        "fix",
        True,
        "x",
    )
    p = parse_title("[rollout][rollout] feat: y")
    assert (p.tags, p.kind, p.breaking) == (["rollout"], "feat", False)
    p = parse_title("no brackets nor colon")
    assert (p.tags, p.kind, p.revert, p.subject) == ([], None, False, "no brackets nor colon")
    assert parse_title("Revert [x] thing").revert and parse_title("wip: [revert] y").kind == "revert"
    # a part of a series and a status are where the PR stands, not what it touches
    for title in ("[4/n][trainer] feat: z", "[2/N] [trainer] feat: z", "[Part 2][WIP][trainer] feat: z"):
        assert parse_title(title).tags == ["trainer"], title
    assert parse_title("[1/3][fsdp, megatron] fix: y").tags == ["fsdp", "megatron"]


def test_template_memory_is_per_conventions_and_changes_nothing():
    from workbench.analysis.conventions import Conventions

    body = (
        "### Why\n\n> Please describe the change.\n\nThe cache was stale.\n\n### Extra\n\nPlease describe it."
    )
    keeps = Conventions(drop_phrases=[])
    drops = Conventions(drop_phrases=["Please describe"])
    for _ in range(2):  # the second round reads from the memory
        assert strip_template(body, drops)[0] == "### Why\nThe cache was stale."
        assert strip_template(body, keeps)[0] == (
            "### Why\n> Please describe the change.\n\nThe cache was stale.\n\n### Extra\nPlease describe it."
        )
    first = read_description("t", body, Conventions(drop_phrases=["Please describe"]))
    assert read_description("t", body, drops) == first


def test_a_not_addressed_sentence_after_another_open_item_is_open_too():
    from workbench.analysis.conventions import load_conventions
    from workbench.analysis.description import read_description

    body = (
        "Adds the loop.\n\nFollow-up: the GRPO examples still need the KL settings; I did not touch them.\n"
        "Not addressed: async tool execution, and SGLang support (vLLM only for now).\n"
    )
    items = read_description("t", body, load_conventions("example-org/minirl")).open_items
    assert any(i.startswith("Not addressed: async tool execution") for i in items)
    assert (
        read_description("t", "The race is now addressed in `_cleanup`.", load_conventions(None)).open_items
        == []
    )


def test_the_authors_commitment_in_a_reply_is_a_promise():
    from heuristics_helpers import record

    from workbench.analysis.conventions import load_conventions
    from workbench.analysis.discussion import read_discussion

    rec = record([], title="[rollout] fix: ack")
    author = rec.pr["user"]["login"]
    rec.issue_comments = [
        {"user": {"login": author}, "body": "It is configurable. Will add it to the docs page."},
        {"user": {"login": author}, "body": "I added the test you asked for."},
    ]
    disc, _ = read_discussion(rec, load_conventions(None))
    assert disc.promises == ["Will add it to the docs page."]
