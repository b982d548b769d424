"""Heuristics: each signal positive and negative on hand-made diffs, each verdict path, bad inputs."""

from __future__ import annotations

import pytest
from heuristics_helpers import code_lines, file, hunk, record, stats, user

from workbench.analysis.conventions import load_conventions
from workbench.analysis.model import Analysis
from workbench.analysis.pipeline import VERDICT_RULES, analysis_frame, analyze


def names(a: Analysis) -> set[str]:
    return {s.name for s in a.signals}


def sig(a: Analysis, name: str):
    s = a.signal(name)
    assert s is not None, f"{name} missing; have {sorted(names(a))}"
    return s


def code_file(lines: list[str], name: str = "pkg/engine.py", start: int = 10, section: str = "") -> dict:
    return file(name, hunk(start, lines, section=section))


# ---- risk themes --------------------------------------------------------------------------------------

THEME_CASES = [
    (
        "risk.concurrency",
        ["     def send(self):", "+        with self._lock:", "+            self._ack_pending = True"],
        ["     def send(self):", "+        self.block_size = 3", "+        clock = time.time()"],
    ),
    (
        "risk.memory",
        ["     out = model(x)", "+    del weights, tensor", "+    torch.cuda.empty_cache()"],
        ["     out = model(x)", "+    model_name = cfg.model", "+    delta = 1"],
    ),
    ("risk.numerics", ["+    logits = logits.to(dtype=torch.bfloat16)"], ["+    logits = logits.to(device)"]),
    (
        "risk.error_handling",
        ["+    try:", "+        run()", "+    except:", "+        pass"],
        [
            "+    try:",
            "+        run()",
            "+    except ValueError as e:",
            "+        raise RuntimeError('x') from e",
        ],
    ),
    (
        "risk.markers",
        ["+    # TODO: handle multi-node", "     x = 1"],
        ["-    # TODO: handle multi-node", "     x = 1"],
    ),
    (
        "risk.security",
        ["+    return eval(expr)", "+    subprocess.run(cmd, shell=True)"],
        ["+    model.eval()", "+    subprocess.run(['ls'])"],
    ),
]


@pytest.mark.parametrize("name, positive, negative", THEME_CASES, ids=[c[0] for c in THEME_CASES])
def test_risk_theme_positive_and_negative(name, positive, negative):
    a = analyze(record([code_file(positive)], title="[misc] chore: tweak"))
    s = sig(a, name)
    assert s.weight > 0
    ev = [e for e in s.evidence if e.file]
    assert ev and ev[0].file == "pkg/engine.py" and isinstance(ev[0].line, int)
    # the evidence line number points at the added line itself
    added = [ln[1:].strip() for ln in positive if ln.startswith("+")]
    assert ev[0].text in added
    b = analyze(record([code_file(negative)], title="[misc] chore: tweak"))
    assert name not in names(b)


def test_theme_evidence_line_numbers_are_new_side_numbers():
    lines = ["     a = 1", "-    b = 2", "     c = 3", "+    torch.cuda.empty_cache()"]
    a = analyze(record([code_file(lines, start=100)], title="x"))
    ev = sig(a, "risk.memory").evidence[0]
    assert (ev.file, ev.line, ev.text) == ("pkg/engine.py", 102, "torch.cuda.empty_cache()")


def test_risk_in_tests_is_not_risk_but_a_title_theme_counts_a_share(tmp_path):
    t = file("tests/test_lock.py", hunk(1, ["+    with threading.Lock():", "+        pass"]))
    a = analyze(record([t], title="[ci] test: lock test"))
    assert "risk.concurrency" not in names(a) or all(
        e.file is None for e in sig(a, "risk.concurrency").evidence
    )
    b = analyze(record([code_file(["+    x = 1"])], title="fix: race between sender and receiver"))
    s = sig(b, "risk.concurrency")
    conv = load_conventions(None)
    share = conv.threshold("described_theme_share")
    assert 0 < share < 1  # the author's word weighs less than a changed line
    assert s.evidence[0].file is None and s.weight == pytest.approx(conv.weight("risk.concurrency") * share)
    # a repository's conventions set the share
    own = tmp_path / "own.toml"
    own.write_text("[thresholds]\ndescribed_theme_share = 0.5\n")
    c = analyze(
        record([code_file(["+    x = 1"])], title="fix: race between sender and receiver"),
        conventions=load_conventions(None, own),
    )
    assert sig(c, "risk.concurrency").weight == pytest.approx(conv.weight("risk.concurrency") * 0.5)


# ---- size, roles, tests ---------------------------------------------------------------------------------


def test_tests_missing_and_added():
    big = code_file(code_lines(40))
    a = analyze(record([big]))
    assert "tests.missing" in names(a) and "tests.added" not in names(a)
    assert any("without tests" in item for item in a.open_items)
    b = analyze(record([big, file("tests/test_engine.py", hunk(1, ["+def test_x():", "+    assert 1"]))]))
    assert "tests.added" in names(b) and "tests.missing" not in names(b)
    small = analyze(record([code_file(code_lines(3))]))
    assert "tests.missing" not in names(small)
    # a run script is tried by running it: its lines ask for no unit test, and the code's are counted alone
    script = file("examples/run_grpo.sh", hunk(1, [f"+    trainer.arg_{i}={i} \\" for i in range(60)]))
    assert "tests.missing" not in names(analyze(record([script, code_file(code_lines(5))])))
    both = analyze(record([script, code_file(code_lines(30))]))
    missing = sig(both, "tests.missing")
    assert missing.label.startswith("30 lines") and [e.file for e in missing.evidence] == ["pkg/engine.py"]


def test_reworded_comments_and_docstrings_ask_for_no_test():
    docs = file(
        "pkg/functional.py",
        hunk(
            20,
            ["     def masked_sum(values, mask):", '         """']
            + [f"-        Old wording of line {i}." for i in range(12)]
            + [f"+        Sum of the values where the mask is set, line {i}." for i in range(12)]
            + ['         """', "-    # compute the sum", "+    # the masked sum, in the values' dtype"],
        ),
    )
    a = analyze(record([docs], title="[doc] feat: better docstrings"))
    assert "tests.missing" not in names(a)
    assert not any("without tests" in item for item in a.open_items)
    # beside code that runs, only the code's lines are counted and named
    both = analyze(record([docs, code_file(code_lines(30))]))
    missing = sig(both, "tests.missing")
    assert missing.label.startswith("30 lines") and [e.file for e in missing.evidence] == ["pkg/engine.py"]


def test_size_signals_and_roles_shares():
    a = analyze(record([code_file(code_lines(600)), file("docs/a.md", hunk(1, ["+doc"]))]))
    assert "size.large" in names(a)
    assert a.roles == {"code": 600, "docs": 1}
    b = analyze(record([code_file(code_lines(2))]))
    assert "size.tiny" in names(b) and "size.large" not in names(b)
    assert sig(b, "size.tiny").label == "tiny change: 2 changed lines in 1 file"  # counted as English says


def test_generated_files_flagged_and_not_counted():
    a = analyze(record([file("uv.lock", hunk(1, code_lines(900))), code_file(code_lines(5))]))
    assert "generated" in names(a)
    assert "size.large" not in names(a)  # lock churn is not reading work
    b = analyze(record([code_file(code_lines(5))]))
    assert "generated" not in names(b)


# ---- dependencies, config, defaults -----------------------------------------------------------------------


def test_dependency_bump():
    req = file("requirements.txt", hunk(1, [" numpy", "-torch==2.4.0", "+torch==2.5.1", " ray>=2.10"]))
    a = analyze(record([req], title="[build] chore: bump torch"))
    s = sig(a, "deps.bump")
    assert s.evidence[0].text == "torch: 2.4.0 -> 2.5.1" and s.evidence[0].line == 2
    same = file("requirements.txt", hunk(1, [" numpy", "+# pinned for CUDA 12", " torch==2.4.0"]))
    assert "deps.bump" not in names(analyze(record([same], title="[build] chore: comment")))


def test_config_keys_changed_in_yaml():
    y = file(
        "pkg/config/ppo.yaml",
        hunk(
            3, ["   rollout:", "-    micro_batch_size: 4", "+    micro_batch_size: 8", "+    enable_gc: true"]
        ),
    )
    a = analyze(record([y]))
    # a changed value is a changed default (a risk); an added key is only a new setting
    assert [e.text for e in sig(a, "config.defaults").evidence] == ["micro_batch_size: 4 -> 8"]
    assert [e.text for e in sig(a, "config.keys").evidence] == ["added enable_gc: true"]
    # a batch size sizes memory and speed too
    assert [r.kind for r in a.risks] == ["memory", "config-default-change", "performance"]
    y2 = file("pkg/config/ppo.yaml", hunk(3, ["   rollout:", "+    # a comment", "     micro_batch_size: 4"]))
    assert "config.keys" not in names(analyze(record([y2])))


def test_program_themes_ignore_settings_in_scripts_ci_and_config():
    # verl's training scripts say "param_offload=True" and its CI installs pytest-asyncio: settings, not a
    # leak or a race; the same words in Python code are behaviour
    script = file(
        "examples/run_grpo.sh", hunk(5, ["+    actor.fsdp_config.param_offload=True \\", "+    dtype=bf16"])
    )
    ci = file(".github/workflows/gpu.yml", hunk(9, ["+      - run: pip install pytest-asyncio"]))
    cfg = file("pkg/config/ppo.yaml", hunk(3, ["+  offload: true"]))
    quiet = names(analyze(record([script, ci, cfg])))
    assert not quiet & {"risk.memory", "risk.concurrency", "risk.numerics"}
    code = file("pkg/engine.py", hunk(5, ["+    torch.cuda.empty_cache()", "+    await asyncio.sleep(1)"]))
    loud = names(analyze(record([script, code])))
    assert {"risk.memory", "risk.concurrency"} <= loud


def test_safe_loads_are_not_security_hits():
    def security(line):
        return "risk.security" in names(analyze(record([code_file([f"+    {line}"])])))

    # a checkpoint the run wrote itself, a job's own objects passed between Ray actors, a safe YAML load
    assert not security('sd = torch.load(path, map_location="cpu", weights_only=True)')
    assert not security("state = torch.load(dataloader_local_path, weights_only=False)")
    assert not security("val_metrics = ray.cloudpickle.loads(val_data)")
    assert not security("c = yaml.load(f, Loader=yaml.SafeLoader)")
    # bytes from a socket or a dataset's field, unpickled, run whatever they hold
    assert security("outputs.append(pickle.loads(socket.recv()))")
    assert security('cases = pickle.loads(zlib.decompress(base64.b64decode(example["private_test_cases"])))')
    assert security("c = yaml.load(f)")


def test_removed_config_keys_are_listed_in_file_order():
    # a set difference listed them in hash order, which changes from one process to the next
    # a meta key (which class reads the section) is no setting a config holds
    keys = ["_target_", "alpha", "beta", "gamma", "delta", "epsilon", "zeta"]
    y = file("pkg/config/ppo.yaml", hunk(3, ["   rollout:"] + [f"-    {k}: 1" for k in keys]))
    texts = [e.text for e in sig(analyze(record([y])), "config.keys").evidence]
    assert texts == ["removed alpha", "removed beta", "removed gamma"]


def test_a_setting_that_becomes_a_section_breaks_configs_and_changes_no_default():
    y = file(
        "pkg/config/reward.yaml",
        hunk(
            3,
            [
                "   reward_model:",
                "-    reward_manager: naive",
                "+    reward_manager:",
                "+      source: register",
                "+      name: naive",
            ],
        ),
    )
    a = analyze(record([y], title="[reward] refactor: reward manager config"))
    assert "config.defaults" not in names(a)  # no value read "naive -> " any more
    assert [e.text for e in sig(a, "config.keys").evidence][0] == (
        "removed reward_manager: naive (now a section)"
    )
    assert "breaking-api" in {r.kind for r in a.risks}


def test_dataclass_and_argparse_defaults():
    lines = [
        "     class Cfg:",
        "-    batch_size: int = 32",
        "+    batch_size: int = 64",
        "-    p.add_argument('--lr', type=float, default=1e-5)",
        "+    p.add_argument('--lr', type=float, default=3e-5)",
    ]
    a = analyze(record([code_file(lines)]))
    texts = [e.text for e in sig(a, "config.defaults").evidence]
    assert "batch_size: 32 -> 64" in texts and any("--lr: default 1e-5 -> 3e-5" in t for t in texts)
    same = ["-    batch_size: int = 32", "+    batch_size: int = 32  # per GPU"]
    b = analyze(record([code_file(same)]))
    assert "config.defaults" not in names(b)


# ---- public API -------------------------------------------------------------------------------------------


def test_api_removed_signature_and_breaking():
    lines = [
        "-def load_weights(path, strict=True):",
        "+def load_weights(path, strict=True, device=None):",
        "-def old_entry(x):",
        "-    return x",
        "-def _private_helper():",
        "-    pass",
    ]
    a = analyze(record([code_file(lines, start=1)]))
    rem = [e.text for e in sig(a, "api.removed").evidence]
    assert any(t.startswith("removed: old_entry") for t in rem)
    assert not any("_private_helper" in t for t in rem)
    assert "load_weights" in sig(a, "api.signature").evidence[0].text
    assert "load_weights" in a.key_symbols
    b = analyze(record([code_file(["-def _helper(x):", "+def _helper(x, y):"])]))
    assert "api.removed" not in names(b) and "api.signature" not in names(b)
    c = analyze(record([code_file(["+x = 1"])], title="[BREAKING][trainer] feat: new config"))
    assert "api.breaking" in names(c)
    template_only = (
        "### Checklist Before Starting\n- [ ] If this PR breaks any API, add `[BREAKING]` to the title."
    )
    d = analyze(record([code_file(["+x = 1"])], title="[trainer] feat: x", body=template_only))
    assert "api.breaking" not in names(d)


def test_nested_functions_and_example_scripts_are_no_api():
    nested = [
        " class Tracker:",
        "     def log(self, data):",
        "-        def sanitize_key(key):",
        "-            return key.replace('@', '_at_')",
        "+        data = {k.replace('@', '_at_'): v for k, v in data.items()}",
        "-    def flush(self):",
        "-        pass",
        " def train(config):",
        "-    def stop_loop():",
        "-        loop.stop()",
        "+    stop = loop.stop",
    ]
    a = analyze(record([code_file(nested, start=1)]))
    rem = [e.text for e in sig(a, "api.removed").evidence]
    assert rem == ["removed: flush(self):"]  # the method goes; the functions nested in others were local
    # where the hunk shows no unindented line, git's hunk header names what holds the definition
    in_function = code_file(["-    def stop():", "-        loop.stop()"], section="def train(config):")
    in_class = code_file(["-    def stop(self):", "-        loop.stop()"], section="class Loop:")
    assert "api.removed" not in names(analyze(record([in_function])))
    assert "api.removed" in names(analyze(record([in_class])))
    # a removed definition is placed among the removed and unchanged lines, not the added ones
    gone = code_file(
        [
            " class Runner:",
            "     pass",
            "-def launch(cfg):",
            "-    def stop_loop():",
            "-        loop.stop()",
            "+x = 1",
        ],
        start=1,
    )
    assert [e.text for e in sig(analyze(record([gone])), "api.removed").evidence] == ["removed: launch(cfg):"]
    example = file(
        "examples/data_preprocess/aime2024.py",
        hunk(1, ["-def build_aime2024_dataset():", "-    return load('aime')", "+x = 1"]),
    )
    assert "api.removed" not in names(analyze(record([example])))
    # nor is a recipe's, where the repository's conventions call recipes satellites; a library's is
    lines = ["-def compute_score_batch(sources, solutions):", "-    return [1.0 for _ in sources]", "+x = 1"]
    verl = load_conventions("verl-project/verl")
    recipe = file("recipe/genrm/reward_function.py", hunk(1, lines))
    library = file("verl/utils/reward_score/reward_function.py", hunk(1, lines))
    assert "api.removed" not in names(analyze(record([recipe], repo="verl-project/verl"), conventions=verl))
    assert "api.removed" in names(analyze(record([library], repo="verl-project/verl"), conventions=verl))


def test_symbols_from_section_headers_and_defs():
    f = file(
        "pkg/w.py",
        hunk(10, ["     x = 1", "+    y = 2"], section="def _cleanup(self):"),
        hunk(50, ["+class BucketSender:", "+    def _ack(self):", "+        pass"]),
    )
    a = analyze(record([f]))
    assert {"_cleanup", "BucketSender", "_ack"} <= set(a.key_symbols)
    assert set(a.key_files[0].symbols) >= {"_cleanup", "BucketSender"}


# ---- revert ---------------------------------------------------------------------------------------------------


def test_a_revert_inside_a_squashed_branch_is_no_revert_of_the_pr():
    """A squash merge's message lists the branch's commits as "* subject" items with their bodies: the
    revert line under `* Revert "..."` undid a commit of the branch, not a merged PR."""
    body = (
        '* add proxy\r\n\r\n* limit pyarrow version\r\n\r\n* Revert "limit pyarrow version"\r\n\r\n'
        "This reverts commit b924f79a79088c21636269d11a4ec3095af10c09.\r\n\r\n* lfs"
    )
    a = analyze(record([code_file(code_lines(30))], title="[data] feat: support pad tokens", body=body))
    assert "revert" not in names(a) and a.reverts is None and a.revert_commit is None
    own = analyze(
        record(
            [code_file(code_lines(3))], title="[ckpt] fix: hccl error", body="This reverts commit b924f79."
        )
    )
    assert "revert" in names(own) and own.revert_commit == "b924f79"


def test_revert_detected_from_title_and_body():
    a = analyze(
        record(
            [code_file(code_lines(3))],
            title='Revert "[trainer] feat: new loss"',
            body="Reverts example-org/minirl#41",
            number=50,
        ),
        known_prs={41: ("[trainer] feat: new loss", "merged")},
    )
    # a tiny revert puts back code readers knew: the title is enough; it links what it reverts
    assert "revert" in names(a) and a.verdict == "skip" and a.reverts == 41
    assert [r.kind for r in a.risks] == ["behaviour-change"]
    ref = next(r for r in a.cross_refs if r.number == 41)
    assert (ref.relation, ref.title, ref.state) == ("reverts", "[trainer] feat: new loss", "merged")
    b = analyze(record([code_file(code_lines(3))], title="[trainer] fix: revert-safe loader"))
    assert "revert" not in names(b)


# ---- description ---------------------------------------------------------------------------------------------

VERL_TEMPLATE_BODY = """### What does this PR do?

Fix the IPC ACK race. Root cause: the receiver acks before `_cleanup` runs, so the sender
reuses a buffer that is still mapped. Peak memory drops from 41.2 GiB to 30.5 GiB (-26%).
The NPU path is out of scope and will be handled in a follow-up PR.

### Checklist Before Starting

- [ ] Search for similar PRs. Paste at least one query link here: ...
- [ ] Format the PR title as `[{modules}] {type}: {description}` (This
will be checked by the CI)

### Test

> For changes that can not be tested by CI (e.g., algorithm
implementation, new model support), validate by experiment(s) and show results.

Ran `pytest tests/utils/test_bucketed_weight_transfer.py` on 8 GPUs.

### API and Usage Example

> Demonstrate how the API changes if any, and provide usage example(s) if possible.

```python
# Add code snippet or script demonstrating how to use this
```

<!-- reviewers: please look at the ack ordering -->

### Checklist Before Submitting

- [x] Read the Contribute Guide.
"""


def test_description_template_stripped_and_substance_found():
    a = analyze(record([code_file(["+x = 1"])], body=VERL_TEMPLATE_BODY))
    d = a.description
    text = d.text
    for gone in (
        "Checklist",
        "Search for similar",
        "Demonstrate how",
        "Add code snippet",
        "reviewers: please",
        "API and Usage Example",
        "For changes that can not",
    ):
        assert gone not in text
    assert "Root cause" in text and "pytest tests/utils" in text
    assert any("Root cause" in s and "still mapped" in s for s in d.root_cause)  # wrapped line kept whole
    assert any("41.2 GiB" in s for s in d.numbers)
    assert any("pytest" in s for s in d.test_plan)
    assert any("out of scope" in s for s in d.open_items)
    assert {"desc.root_cause", "desc.numbers", "desc.test_plan", "desc.followups"} <= names(a)
    assert any("follow-up" in item for item in a.open_items)
    assert "_cleanup" in d.code_spans


def test_a_features_account_of_its_authors_work_weighs_nothing():
    """Why, measured how, tested how: for a fix they say how subtle the bug was; for a feature, that
    its author did the work. Shown either way; only a fix's count towards a close read."""
    body = (
        "The rollout hung because the ACK was sent before the copy finished.\n\n"
        "Peak memory drops from 52.0 GiB to 41.2 GiB on 8 GPUs.\n\n"
        "Tested with `pytest tests/utils/test_ipc.py`."
    )
    weights = {}
    for kind in ("fix", "feat"):
        a = analyze(record([code_file(["+x = 1"])], title=f"[rollout] {kind}: ipc buffers", body=body))
        weights[kind] = {s.name: s.weight for s in a.signals if s.name.startswith("desc.")}
    assert (
        set(weights["feat"]) == set(weights["fix"]) >= {"desc.root_cause", "desc.numbers", "desc.test_plan"}
    )
    assert all(w > 0 for w in weights["fix"].values())
    assert all(w == 0 for w in weights["feat"].values())


def test_template_only_description_is_empty():
    substance = ("Fix the IPC", "Root cause", "reuses a buffer", "Peak memory", "NPU path", "Ran `pytest")
    template_only = "\n".join(
        ln for ln in VERL_TEMPLATE_BODY.split("\n") if not any(k in ln for k in substance)
    )
    a = analyze(record([code_file(["+x = 1"])], body=template_only))
    assert a.description.empty and "desc.empty" in names(a)
    assert not ({"desc.root_cause", "desc.numbers", "desc.followups"} & names(a))
    assert "desc.empty" not in names(
        analyze(record([code_file(["+x = 1"])], body="Fixes the loader because it hung."))
    )


def test_heading_like_lines_in_code_blocks_and_issue_numbers_are_not_headings():
    body = "Fixes #12\n\n```bash\n# Checklist\nrun.sh\n```\n\n#13 is related."
    a = analyze(record([code_file(["+x = 1"])], body=body))
    assert "run.sh" in a.description.text and "#13 is related" in a.description.text


# ---- discussion -------------------------------------------------------------------------------------------------


def test_discussion_reviews_threads_reviewers_promises():
    reviews = [
        {"user": user("bob"), "state": "CHANGES_REQUESTED", "body": "please add an ACK timeout"},
        {"user": user("carol"), "state": "APPROVED", "body": ""},
        {"user": user("dave"), "state": "COMMENTED", "body": "nit"},
        {"user": user("alice"), "state": "COMMENTED", "body": "I will add the timeout in a follow-up PR."},
        {"user": user("codecov[bot]"), "state": "COMMENTED", "body": "coverage"},
    ]
    comments = [
        {
            "id": 1,
            "user": user("bob"),
            "path": "pkg/engine.py",
            "line": 12,
            "body": "what if _cleanup raises?",
            "thread_resolved": False,
        },
        {
            "id": 2,
            "in_reply_to_id": 1,
            "user": user("alice"),
            "path": "pkg/engine.py",
            "body": "good point",
            "thread_resolved": False,
        },
        {
            "id": 3,
            "user": user("erin"),
            "path": "pkg/engine.py",
            "line": 20,
            "body": "typo",
            "thread_resolved": True,
        },
    ]
    a = analyze(record([code_file(code_lines(5))], reviews=reviews, review_comments=comments))
    d = a.discussion
    assert d.reviewers == ["bob", "carol", "dave", "erin"]  # not the author, not the bot
    assert d.changes_requested_outstanding == ["bob"]
    assert d.unresolved_threads == 1
    ev = sig(a, "discussion.unresolved").evidence[0]
    assert (ev.file, ev.line) == ("pkg/engine.py", 12) and "_cleanup raises" in ev.text
    assert "discussion.changes_requested" in names(a) and "discussion.reviewers" in names(a)
    assert any("follow-up" in p for p in d.promises)
    assert any(i.startswith("unresolved review thread") for i in a.open_items)
    assert any(i.startswith("author promised") for i in a.open_items)
    assert (
        a.key_files[0].filename == "pkg/engine.py"
        and "named in the description or review" in a.key_files[0].reason
    )

    quiet = analyze(
        record(
            [code_file(code_lines(5))],
            reviews=[{"user": user("bob"), "state": "APPROVED", "body": "lgtm"}],
            review_comments=[dict(comments[2])],
        )
    )
    assert not (
        {
            "discussion.unresolved",
            "discussion.changes_requested",
            "discussion.reviewers",
            "discussion.promises",
        }
        & names(quiet)
    )


# ---- cross-references ------------------------------------------------------------------------------------------


def test_cross_references_resolved_against_known_prs():
    body = (
        "Fixes #12. Follow-up to #34; see also #56 and https://github.com/example-org/minirl/pull/78 and "
        "https://github.com/other/repo/pull/9. This PR is #100. Colour &#35; and a/b#7 are not refs."
    )
    known = {12: ("loader hangs", "closed"), 34: ("[rollout] feat: buckets", "merged")}
    a = analyze(record([code_file(["+x = 1"])], body=body, number=100), known_prs=known)
    refs = {(r.number, r.url is not None and "other/repo" in r.url): r for r in a.cross_refs}
    assert refs[(12, False)].relation == "fixes" and refs[(12, False)].title == "loader hangs"
    assert refs[(34, False)].relation == "follow-up" and refs[(34, False)].state == "merged"
    assert refs[(56, False)].relation == "mentions" and refs[(56, False)].title is None
    assert refs[(78, False)].url.endswith("/pull/78")
    assert refs[(9, True)].relation == "mentions"
    assert 100 not in {r.number for r in a.cross_refs if not r.url}
    assert 7 not in {r.number for r in a.cross_refs} and 35 not in {r.number for r in a.cross_refs}
    assert analyze(record([code_file(["+x = 1"])], body="no refs here")).cross_refs == []


# ---- verdict paths ------------------------------------------------------------------------------------------------


def test_verdict_rules_are_one_ordered_table():
    assert [r.name for r in VERDICT_RULES][:3] == ["no files", "generated only", "docs only"]
    assert VERDICT_RULES[-1].name == "default"


def test_generated_only_is_skip():
    a = analyze(record([file("uv.lock", hunk(1, code_lines(50)))], title="[build] chore: relock"))
    assert a.verdict == "skip" and a.deciding[0] == "only generated, vendored or binary files"


def test_docs_only_is_skim_for_docs_maintainers_even_when_risky():
    doc = file(
        "docs/ascend/ckpt.md", hunk(1, [f"+The lock and memory leak and race {i}" for i in range(400)])
    )
    a = analyze(
        record(
            [doc],
            title="[doc] feat: race-free memory leak checkpoint docs",
            body="Root cause: the leak was caused by X. Throughput up 30%.",
        )
    )
    assert a.verdict == "skim" and a.audience == "docs maintainers" and a.audience_key == "docs"
    assert a.deciding[0] == "docs-only change" and 3 <= a.minutes <= 15


def test_ci_only_tiny_is_skip_and_larger_is_a_skim_for_ci():
    # CI maintainers skim a CI change; a risk it carries is flagged, not read closely
    small = file(".github/workflows/e2e.yml", hunk(1, ["-  timeout: 10", "+  timeout: 20"]))
    a = analyze(record([small], title="[ci] fix: longer timeout"))
    assert (a.verdict, a.audience, a.audiences) == ("skip", "CI maintainers", ["ci"])
    # a job that only goes is told by its title, however long it was; one that changes is a skim
    cut = file(".github/workflows/e2e_ascend.yml", hunk(1, [f"-      - run: step {i}" for i in range(49)]))
    assert analyze(record([cut], title="[ci] chore: delete redundant npu ci")).verdict == "skip"
    grown = file(".github/workflows/e2e_ascend.yml", hunk(1, [f"+      - run: step {i}" for i in range(49)]))
    assert analyze(record([grown], title="[ci] feat: add npu ci")).verdict == "skim"
    # housekeeping its author calls a chore is told by its title too, up to a medium change
    assert analyze(record([grown], title="[ci] chore: change machine for npu ci")).verdict == "skip"
    readme = file("docs/ascend/README.md", hunk(1, [f"+Step {i}: set the image." for i in range(40)]))
    assert analyze(record([readme], title="[doc] chore: fix ascend readme")).verdict == "skip"
    assert analyze(record([readme], title="[doc] feat: ascend quick start")).verdict == "skim"
    # so is a correction (a wrong path or flag in a guide or a script), up to a medium change
    assert analyze(record([readme], title="[doc] fix: the ascend image path")).verdict == "skip"
    example = file(
        "examples/grpo/reward_fn.py", hunk(1, [f"+    score_{i} = judge(response, {i})" for i in range(40)])
    )
    assert analyze(record([example], title="[recipe] fix: dapo reward flags")).verdict == "skip"
    assert analyze(record([example], title="[recipe] feat: dapo reward for qwen3")).verdict == "skim"
    larger = file(
        ".github/workflows/e2e_ascend.yml", hunk(1, [f"+      - run: step {i}" for i in range(120)])
    )
    assert analyze(record([larger], title="[ci] chore: migrate pip to uv in ascend ci")).verdict == "skim"
    dead = file(
        "tests/special_e2e/run_fsdp_vllm.py",
        hunk(1, [f"-    step({i})" for i in range(60)]),
        status="removed",
    )
    assert analyze(record([dead], title="[ci] fix: remove spmd test")).verdict == "skip"
    risky = file(
        ".github/workflows/npu.yml",
        hunk(
            10,
            [
                "     run: |",
                "+      for i in $(seq 6); do",
                "+        [ -s $LOG ] && break",
                "+        sleep 10",
                "+      done",
                "+      tail -c 4096 $LOG || true",
            ]
            + [f"+      echo step {i}" for i in range(8)],
        ),
    )
    b = analyze(
        record(
            [risky],
            title="[ci] fix: wait for log before checking",
            body="Root cause: the log is flushed late, because tee buffers output. Waits at most 60s.",
        )
    )
    assert (b.verdict, b.audience) == ("skim", "CI maintainers")


def test_deps_only_is_skip_for_build_maintainers():
    req = file("requirements.txt", hunk(1, ["-vllm==0.8.4", "+vllm==0.8.5"]))
    a = analyze(record([req], title="[build] chore: bump vllm to 0.8.5"))
    assert (a.verdict, a.audience) == ("skip", "build maintainers")
    assert "deps.bump" in names(a)


def test_tests_only_is_skim_unless_tiny():
    t = file(
        "tests/test_x.py", hunk(1, ["+def test_x():"] + [f"+    assert f({i}) == {i}" for i in range(12)])
    )
    a = analyze(record([t], title="[ci] test: cover f"))
    assert a.verdict == "skim" and a.audiences[0] == "tests"
    tiny = file("tests/test_x.py", hunk(1, ["+def test_x():", "+    assert f() == 1"]))
    assert analyze(record([tiny], title="[ci] test: cover f")).verdict == "skip"


def test_memory_leak_fix_with_test_and_root_cause_is_deep():
    eng = code_file(
        [
            "     out = self.model(batch)",
            "-    outputs.append(out)",
            "+    outputs.append(detach_tree(out))",
            "+    torch.cuda.ipc_collect()",
        ]
        + code_lines(30, "    y"),
        name="pkg/engine.py",
        section="def step(self, batch):",
    )
    test = file(
        "tests/test_detach.py", hunk(1, ["+def test_graph_not_pinned():", "+    assert ref() is None"])
    )
    body = "Root cause: the output keeps the autograd graph alive, leaking 0.76 MiB per micro-batch."
    a = analyze(record([eng, test], title="[trainer] fix: detach model_output to fix memory leak", body=body))
    assert a.verdict == "deep" and a.audiences[0] == "trainer"  # the title's tag names the module
    assert any("memory" in d for d in a.deciding)
    memory = next(r for r in a.risks if r.kind == "memory")
    assert memory.evidence[0].file == "pkg/engine.py" and "ipc_collect" in memory.evidence[0].text
    assert a.key_files[0].filename == "pkg/engine.py" and "risk: memory" in a.key_files[0].reason
    assert "step" in a.key_symbols


def test_tiny_unremarkable_change_is_skip_and_default_is_skim():
    # a tiny docs edit is read in its title; one changed line of program code can change what runs
    d = file("docs/x.md", hunk(1, ["-teh", "+the"]))
    a = analyze(record([d], title="[misc] chore: tidy", body="tidy"))
    assert a.verdict == "skip" and a.minutes == 1
    c = analyze(record([code_file(["-    x = 1", "+    x = 2"])], title="[misc] chore: tidy", body="tidy"))
    assert c.verdict == "skim"
    b = analyze(
        record([code_file(code_lines(40))], title="[misc] refactor: split helper", body="Split a helper.")
    )
    assert b.verdict == "skim" and b.deciding[0] == "worth a skim"


def test_no_files_and_no_patches():
    a = analyze(record([], title="[trainer] feat: x", body="Adds x."))
    assert a.verdict in ("skim", "deep") and "no file list" in a.truncated
    b = analyze(
        record(
            [stats("pkg/engine.py", 300, 20), stats("tests/test_engine.py", 40)],
            title="[trainer] fix: memory leak in engine",
            body="Root cause: a leak because of a cycle. Saves 2 GiB.",
        )
    )
    assert any("no patch text" in t for t in b.truncated)
    assert "risk.memory" in names(b) and "tests.added" in names(b)
    assert b.verdict == "deep"
    assert b.key_files[0].filename == "pkg/engine.py"


def test_truncation_is_reported():
    files = [
        code_file(code_lines(3)),
        {"filename": "pkg/huge.py", "additions": 9000, "deletions": 0, "patch": None},
    ]
    a = analyze(record(files, files_truncated=True, commits_truncated=True))
    t = " ".join(a.truncated)
    assert "3,000 files" in t and "250 commits" in t and "1 patch(es) omitted: pkg/huge.py" in t
    assert any(i.startswith("data: ") for i in a.open_items)


def test_bad_inputs_never_raise():
    weird = [
        None,
        {},
        {"filename": "x.py", "patch": "garbage\nlines\n+and more"},
        {"filename": "b.png", "binary": True},
        {"filename": "x.py", "patch": "@@ -1,2 +1,2 @@\r\n-a\r\n+b\ufffd\r\n"},
    ]
    rec = record(
        weird,
        title=None,
        body=None,
        reviews=[{"state": None}],
        review_comments=[{"body": None}],
        issue_comments=[{"user": None, "body": None}],
    )
    rec.pr["user"] = None
    a = analyze(rec)
    assert a.verdict in ("deep", "skim", "skip") and 1 <= a.effort <= 5
    assert any("malformed" in t for t in a.truncated)
    a.to_dict()


def test_three_thousand_file_pr_is_fast_enough():
    import time

    files = [file(f"pkg/m{i}.py", hunk(1, ["+    with self._lock:", "+        x = 1"])) for i in range(3000)]
    t = time.perf_counter()
    a = analyze(record(files, files_truncated=True))
    assert time.perf_counter() - t < 10
    assert len(a.key_files) <= 6 and a.verdict == "deep"


def test_effort_and_minutes_grow_with_size():
    small = analyze(record([code_file(code_lines(30))]))
    big = analyze(record([code_file(code_lines(1500))], body="Root cause: x because y."))
    assert 1 <= small.effort < big.effort <= 5
    assert big.minutes > small.minutes


def test_analysis_frame_one_row_per_pr():
    a = analyze(record([code_file(code_lines(3))], number=1))
    b = analyze(record([file("docs/x.md", hunk(1, ["+doc"]))], number=2))
    df = analysis_frame([a, b])
    assert list(df["number"]) == [1, 2]
    assert list(df["verdict"]) == [a.verdict, "skip"] and df.loc[1, "audience"] == "docs maintainers"
    assert {"repo", "effort", "minutes", "key_files", "key_symbols", "flags"} <= set(df.columns)
    assert "docs_only" in df.loc[1, "flags"]
    assert analysis_frame([]).empty


def test_open_items_name_marker_lines_and_keep_stable_prefixes():
    a = analyze(record([code_file(["     x = 1", "+    # FIXME: leaks on retry"] + code_lines(30), start=7)]))
    assert "marker added in pkg/engine.py:8: # FIXME: leaks on retry" in a.open_items
    assert any(i.startswith("changed code without tests: ") for i in a.open_items)


# ---- fuzz: whatever arrives, analysis returns a well-formed result ---------------------------------------

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_patch_line = st.one_of(
    st.sampled_from(["@@ -1,3 +1,4 @@ def f():", "@@ -0,0 +1 @@", "\\ No newline at end of file", ""]),
    st.builds(lambda k, t: k + t, st.sampled_from(["+", "-", " ", "@", "x"]), st.text(max_size=40)),
)
_file = st.fixed_dictionaries(
    {
        "filename": st.one_of(
            st.sampled_from(
                [
                    "a.py",
                    "docs/x.md",
                    ".github/workflows/c.yml",
                    "uv.lock",
                    "requirements.txt",
                    "cfg.yaml",
                    "img.png",
                    "tests/test_a.py",
                ]
            ),
            st.text(max_size=30),
        )
    },
    optional={
        "patch": st.one_of(st.none(), st.lists(_patch_line, max_size=30).map("\n".join)),
        "additions": st.one_of(st.none(), st.integers(-5, 10_000), st.text(max_size=3)),
        "deletions": st.one_of(st.none(), st.integers(0, 10_000)),
        "status": st.sampled_from(["added", "removed", "modified", "renamed"]),
        "binary": st.booleans(),
    },
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    files=st.lists(_file, max_size=8),
    title=st.one_of(
        st.none(), st.text(max_size=80), st.sampled_from(['Revert "x"', "[BREAKING][ci] fix: y"])
    ),
    body=st.one_of(
        st.none(),
        st.text(max_size=400),
        st.sampled_from([VERL_TEMPLATE_BODY, "<!-- unclosed", "```\n# x\n", "Fixes #1 #2 #99999999"]),
    ),
)
def test_analyze_never_raises_and_stays_well_formed(files, title, body):
    a = analyze(record(files, title=title, body=body, number=5), known_prs={1: ("t", "merged")})
    assert a.verdict in ("deep", "skim", "skip") and 1 <= a.effort <= 5 and a.minutes >= 1
    assert len(a.deciding) <= 3 and len(a.key_files) <= 6
    for s in a.signals:
        assert s.evidence and all(isinstance(e.text, str) for e in s.evidence), s.name
        for e in s.evidence:
            assert e.line is None or e.line >= 0
    a.to_dict()


def test_a_change_that_stays_in_examples_or_recipes_is_read_by_their_users():
    # a recipe's own async code, a new loss and a config: a close read in the library, a skim in a recipe
    async_code = [
        "+import asyncio",
        "+async def rollout(self, batch):",
        "+    async with self.lock:",
        "+        results = await asyncio.gather(*[w.generate(b) for w, b in zip(self.workers, batch)])",
        "+    self.buffer.pin_memory()",
        "+    loss = (ratio.clamp(0.8, 1.2) * adv).float().mean()",
    ] + [f"+    step_{i} = self.engine.step({i})" for i in range(60)]
    recipe = file("recipe/fully_async/rollouter.py", hunk(1, async_code, section="class Rollouter:"))
    config = file("recipe/fully_async/config.yaml", hunk(3, ["-  staleness: 1", "+  staleness: 4"]))
    script = file("recipe/fully_async/run.sh", hunk(1, ["+python -m recipe.fully_async.main \\"]))
    verl = load_conventions("verl-project/verl")
    title = "[recipe] feat: fully async rollout with staleness"
    inside = analyze(
        record([recipe, config, script], title=title, repo="verl-project/verl"), conventions=verl
    )
    assert inside.verdict == "skim" and inside.audiences[0] == "recipe"
    assert inside.deciding[0] == "changes only examples, benchmarks or recipes: for their users"
    # unless its author marks it breaking: its users must act on it
    breaking = analyze(
        record([recipe, config, script], title="[BREAKING]" + title, repo="verl-project/verl"),
        conventions=verl,
    )
    assert breaking.verdict == "deep"
    # the same code in the library is read closely; so is a recipe change that also changes library code
    library = file("verl/trainer/rollouter.py", hunk(1, async_code, section="class Rollouter:"))
    assert (
        analyze(record([library], title=title, repo="verl-project/verl"), conventions=verl).verdict == "deep"
    )
    both = analyze(record([recipe, library], title=title, repo="verl-project/verl"), conventions=verl)
    assert both.verdict == "deep"
    # ... or a library config it reads
    shared = file("verl/trainer/config/ppo_trainer.yaml", hunk(3, ["-  staleness: 1", "+  staleness: 4"]))
    assert (
        analyze(record([recipe, shared], title=title, repo="verl-project/verl"), conventions=verl).verdict
        == "deep"
    )
    # a recipe that only goes (moved to its own repository) is told by its title, as a page that only goes
    gone = [
        file(
            "recipe/char_count/create_dataset.py",
            hunk(1, [f"-    row_{i} = make({i})" for i in range(90)]),
            status="removed",
        ),
        file("recipe/char_count/README.md", hunk(1, [f"-Step {i}" for i in range(20)]), status="removed"),
    ]
    moved_out = analyze(
        record(gone, title="[recipe] feat: move char count recipe to verl-recipe", repo="verl-project/verl"),
        conventions=verl,
    )
    assert moved_out.verdict == "skip"
    # ... and changes nothing a user runs: the library its copies call stays as it was
    assert moved_out.risks == []
    # the same code deleted from the library, its default moved off it, changes users' runs
    lib_gone = [
        {**gone[0], "filename": "verl/utils/char_count.py"},
        file("verl/trainer/config/data.yaml", hunk(3, ["-counter: char", "+counter: token"])),
    ]
    lib_removal = analyze(
        record(lib_gone, title="[misc] feat: remove char count helpers", repo="verl-project/verl"),
        conventions=verl,
    )
    assert [r.why for r in lib_removal.risks if r.kind == "behaviour-change"] == [
        "a code path goes away and a default moves runs off it"
    ]
    # a tiny fix of an example script is told by its title; tests and docs beside it may live anywhere
    example = file("examples/grpo/run_qwen.py", hunk(5, ["-    lr = 1e-6", "+    lr = 1e-5"]))
    test = file(
        "tests/examples/test_run_qwen.py", hunk(1, ["+def test_lr():", "+    assert run().lr == 1e-5"])
    )
    assert analyze(record([example, test], title="[misc] fix: example lr")).verdict == "skip"
    # a project without satellites reads an example like any code
    bare = load_conventions(None)
    bare.satellite_areas = []
    assert analyze(record([example], title="[misc] fix: example lr"), conventions=bare).verdict == "skim"


def test_launch_scripts_alone_in_examples_are_told_by_their_title():
    verl = load_conventions("verl-project/verl")
    launch = [f"+    actor_rollout_ref.rollout.tensor_model_parallel_size={i} \\" for i in range(60)]
    scripts = [
        file("examples/grpo_trainer/run_qwen2_32b_npu.sh", hunk(1, ["+python3 -m verl.trainer.main_ppo \\", *launch])),
        file("examples/grpo_trainer/run_qwen3_30b_npu.sh", hunk(1, ["+python3 -m verl.trainer.main_ppo \\", *launch])),
    ]  # fmt: skip

    def verdict(files, title="[model] feat: add NPU GRPO training scripts for Qwen2.5-32B"):
        return analyze(record(files, title=title, repo="verl-project/verl"), conventions=verl).verdict

    # a run of a model on a cluster: its users copy the script, nobody else reads it
    assert verdict(scripts) == "skip"
    # a recipe's own code beside its script is read by the recipe's users
    code = file(
        "recipe/npu_grpo/reward.py", hunk(1, [f"+    score_{i} = judge(response, {i})" for i in range(30)])
    )
    assert verdict([*scripts, code]) == "skim"
    # and a rewrite of scripts beyond a large change is worth a skim
    many = [
        file(f"examples/grpo_trainer/run_{i}.sh", hunk(1, ["+python3 -m verl.trainer.main_ppo \\", *launch]))
        for i in range(10)
    ]
    assert verdict(many, title="[misc] refactor: re-format npu examples") == "skim"
