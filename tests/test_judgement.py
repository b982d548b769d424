"""Risks that hold up: raised from program code only, each kind with the lines that show it, on small
real-looking patches (Python, YAML, a dataclass, shell and CI, Rust); reverts and removals end to end."""

from __future__ import annotations

import time

from heuristics_helpers import file, guide_beside_config, hunk, record

from workbench.analysis.codelines import is_python_prose
from workbench.analysis.conventions import load_conventions
from workbench.analysis.patchscan import workflow_names
from workbench.analysis.pipeline import analyze
from workbench.analysis.signals import text_theme_evidence
from workbench.drafting import offline


def kinds(a):
    return {r.kind for r in a.risks}


def py(lines, name="pkg/worker.py"):
    return file(name, hunk(10, lines, section="def run(self):"))


def test_comments_strings_imports_and_metric_lines_raise_no_theme():
    quiet = py(
        [
            "+import socket",
            "+from threading import Lock",
            "+    # Pin memory before the copy, else the lock is held too long",
            '+    logger.info("empty_cache after the lock")',
            '+    metrics["actor/lock_wait"] = wait',
            '+    msg = "call torch.cuda.empty_cache() first"',
            "+    def empty_cache(self):",
            "+    assert buf.dtype == torch.bfloat16",
            "+from pkg.utils import (",
            "+    empty_cache,",
            "+    selective_log_softmax,  # fp32 inside",
            "+    pin_memory as pin,",
            "+)",
        ]
    )
    a = analyze(record([quiet], title="[worker] feat: more logging"))
    assert not {"memory", "concurrency", "numerics"} & kinds(a)
    loud = py(["+    with self._lock:", "+        torch.cuda.ipc_collect()", "+    x = x.to(torch.bfloat16)"])
    # a name alone on its line outside an import list is a call's argument: it runs
    passed = py(
        [
            "+from pkg.utils import (",
            "+    release,",
            "+)",
            "+    release(",
            "+        empty_cache,",
            "+    )",
        ]
    )
    assert "memory" in kinds(analyze(record([passed], title="[worker] feat: free cache")))
    b = analyze(record([loud], title="[worker] feat: free cache"))
    assert {"memory", "concurrency", "numerics"} <= kinds(b)
    memory = next(r for r in b.risks if r.kind == "memory")
    assert memory.why and memory.evidence[0].file == "pkg/worker.py" and memory.evidence[0].line == 11


def test_yaml_and_dataclass_defaults_are_changed_defaults():
    yaml = file("pkg/config/rollout.yaml", hunk(3, ["   rollout:", "-    mode: sync", "+    mode: async"]))
    a = analyze(record([yaml], title="[rollout] chore: async by default"))
    risk = next(r for r in a.risks if r.kind == "config-default-change")
    assert risk.evidence[0].text == "mode: sync -> async" and a.verdict != "skip"  # never trivial
    dc = py(
        [
            " class RolloutConfig:",
            "     name: str = 'vllm'",
            "-    calculate_log_probs: bool = False",
            "+    calculate_log_probs: bool = True",
        ]
    )
    assert "config-default-change" in kinds(analyze(record([dc])))
    # a hunk inside the class body, under the class header git names
    field = file(
        "pkg/config/rollout.py",
        hunk(
            40,
            ["-    free_cache_engine: bool = True", "+    free_cache_engine: bool = False"],
            section="class RolloutConfig(BaseConfig):",
        ),
    )
    assert "config-default-change" in kinds(analyze(record([field])))
    # the key whose default changed is what a reader must know by name: it leads the key symbols
    code = py(["+def helper_a():", "+    return 1"], name="pkg/rollout.py")
    assert analyze(record([code, yaml], title="[rollout] feat: async")).key_symbols[0] == "mode"
    # a parameter of a signature and a meta key are not defaults
    sig = py(["-    def f(self, a, b: int = 1):", "+    def f(self, a, b: int = 2):"])
    meta = file("pkg/config/x.yaml", hunk(1, ["-  _target_: pkg.A", "+  _target_: pkg.B"]))
    assert "config-default-change" not in kinds(analyze(record([sig, meta])))


def test_field_call_defaults_as_the_hugging_face_libraries_write_them():
    hf = file(
        "pkg/trainer/grpo_config.py",
        hunk(
            300,
            [
                "     vllm_mode: str = field(",
                '-        default="server",',
                '+        default="colocate",',
                "         metadata={",
                '             "help": "Mode to use for vLLM integration.",',
                "         },",
                "     )",
                "     beta: float = field(",
                "-        default=0.04,",
                "+        default=0.0,",
                '         metadata={"help": "KL coefficient."},',
                "     )",
            ],
            section="class GRPOConfig(TrainingArguments):",
        ),
    )
    a = analyze(record([hf], title="Change default vllm_mode to colocate"))
    risk = next(r for r in a.risks if r.kind == "config-default-change")
    assert [e.text for e in risk.evidence] == ['vllm_mode: "server" -> "colocate"', "beta: 0.04 -> 0.0"]
    assert risk.evidence[0].line == 301 and a.key_symbols[:2] == ["vllm_mode", "beta"]
    # on one line, the call's default is compared, not its help text
    one_line = file(
        "pkg/script_args.py",
        hunk(
            10,
            [
                '-    group_by_length: bool = field(default=True, metadata={"help": "group by length"})',
                '+    group_by_length: bool = field(default=False, metadata={"help": "group by length"})',
                '-    dataset_name: str = field(default="hh-rlhf", metadata={"help": "the model name"})',
                '+    dataset_name: str = field(default="hh-rlhf", metadata={"help": "the dataset name"})',
                '-    output_dir: str = field(default="out", metadata={"help": "where"})',
                "+    output_dir: str = field(",
                '+        default="out", metadata={"help": "where"}',
                "+    )",
                "-    profiler: ProfilerConfig = field(default_factory=ProfilerConfig)",
                "+    profiler: Optional[ProfilerConfig] = None",
            ],
            section="class ScriptArguments:",
        ),
    )
    b = analyze(record([one_line], title="Fix help texts"))
    risk = next(r for r in b.risks if r.kind == "config-default-change")
    assert [e.text for e in risk.evidence] == [
        "group_by_length: True -> False",
        "profiler: ProfilerConfig() -> None",
    ]


def test_a_functions_annotated_locals_are_no_defaults():
    # a method's local, under the class header git names (one level deeper than the class body)
    method = file(
        "pkg/trainer.py",
        hunk(
            600,
            [
                "         train_val_metrics = await self._validate_process()",
                "-        val_metrics: dict = ray.get(val_future)",
                "+        val_metrics: dict = await asyncio.wrap_future(val_future.future())",
            ],
            section="class FullyAsyncTrainer(SeparateRayPPOTrainer):",
        ),
    )
    # a module-level function's local, at the depth a field would have
    function = file(
        "pkg/core_algos.py",
        hunk(
            120,
            [
                "-    mask: torch.Tensor = (weights >= lower) & (weights <= upper)",
                "+    mask: torch.Tensor = response_mask.bool()",
            ],
            section="def compute_rollout_correction(weights, lower, upper):",
        ),
    )
    # a field that goes and another whose name begins like it: no default changed
    renamed = file(
        "pkg/detach.py",
        hunk(
            30,
            [
                " class RolloutSample:",
                "-    param_version: Optional[int] = None",
                "+    param_version_start: list[int] = field(default_factory=list)",
            ],
        ),
    )
    for f in (method, function, renamed):
        assert "config-default-change" not in kinds(analyze(record([f], title="[trainer] fix: x")))


def test_commands_through_a_shell_and_secrets_on_command_lines():
    shell = py(["+    proc = subprocess.Popen(cmd, shell=True)"])
    a = analyze(record([shell], title="[tool] feat: run a user command"))
    assert "security" in kinds(a) and a.signal("security.shell")
    os_system = py(['+    os.system(f"rm -rf {path}")'])
    assert analyze(record([os_system])).signal("security.shell")
    safe = py(
        ['+    subprocess.run(["git", "status"], check=True)', "+    # subprocess.Popen(cmd, shell=True)"]
    )
    assert not analyze(record([safe])).signal("security.shell")
    # a user's finish hook handed to a shell as an argv, the call spread over lines
    argv = py(
        [
            "+        proc = subprocess.Popen(",
            '+            ["/bin/sh", "-c", cmd],',
            "+            env=env,",
            "+        )",
        ]
    )
    s = analyze(record([argv], title="[perf] feat: profiler post hook")).signal("security.shell")
    assert s and s.evidence[0].text == '["/bin/sh", "-c", cmd],'
    spelled_out = py(['+    subprocess.run(["bash", "-c", "nvidia-smi | head -5"], check=True)'])
    assert not analyze(record([spelled_out])).signal("security.shell")
    ci = file(
        ".github/workflows/e2e.yml",
        hunk(
            5,
            [
                "+      - run: huggingface-cli login --token ${{ secrets.HF_TOKEN }}",
                "+          HF_TOKEN: ${{ secrets.HF_TOKEN }}",
            ],
        ),
    )
    b = analyze(record([ci], title="[ci] feat: login"))
    assert [e.line for e in b.signal("security.secret_cli").evidence] == [5]  # the env mapping is fine


def test_unpinned_downloads_and_elevated_ci():
    ci = file(
        ".github/workflows/rocm.yml",
        hunk(
            1,
            [
                "+      - uses: actions/checkout@main",
                "+      - run: curl -fsSL https://example.com/install.sh | bash",
                "+      - run: docker run --privileged image:1.2",
                "+      - uses: actions/setup-python@v5",
            ],
        ),
    )
    a = analyze(record([ci], title="[ci] feat: rocm job"))
    assert [e.line for e in a.signal("security.ci_download").evidence] == [1, 2, 3]
    pinned = file(
        ".github/workflows/ok.yml",
        hunk(
            1,
            [
                "+      - uses: actions/checkout@v4",
                "+      - run: pip install vllm==0.8.5",
                # an installer fetched from one release's URL runs that release
                '+      - run: "curl -LsSf https://github.com/axodotdev/cargo-dist/releases/download/v0.14.0/installer.sh | sh"',
            ],
        ),
    )
    assert not analyze(record([pinned], title="[ci] feat: job")).signal("security.ci_download")


def test_a_package_installed_from_a_branch_is_a_compatibility_risk():
    # what a job or an image installs from `@main`, or from a repository with no ref, changes with the branch
    ci = file(
        ".github/workflows/e2e_sglang_ascend.yml",
        hunk(
            20,
            [
                "+          pip3 install megatron-bridge --no-deps",
                "+          pip3 install git+https://github.com/ISEEKYAN/mbridge.git@main --no-deps",
                "+          pip3 install -e .",
            ],
        ),
    )
    image = file("docker/Dockerfile.stable", hunk(5, ['+    "git+https://github.com/NVIDIA/apex.git" && \\']))
    a = analyze(record([ci, image], title="[ci] chore: add sglang ascend ci"))
    compat = next(r for r in a.risks if r.kind == "compatibility")
    assert [(e.file, e.line) for e in compat.evidence] == [
        (".github/workflows/e2e_sglang_ascend.yml", 21),
        ("docker/Dockerfile.stable", 5),
    ]
    assert "security" not in kinds(a)  # the project's own CI reads the branch; it is no attack surface
    # a commit, a release tag or a build argument pins it; a comment, a page or program code runs nothing
    quiet = [
        ".github/workflows/a.yml",
        [
            "+      - run: pip install git+https://github.com/NVIDIA/TransformerEngine.git@v2.2",
            "+      - run: pip install git+https://github.com/o/r.git@4f2a9c1e",
            "+      - run: pip install git+https://github.com/NVIDIA/TransformerEngine.git@${TE_VERSION}",
            "+      # pip install git+https://github.com/o/r.git@main",
        ],
    ]
    page = file("docs/install.md", hunk(1, ["+pip install git+https://github.com/o/r.git@main"]))
    code = py(['+    url = "git+https://github.com/o/r.git@main"'], name="pkg/installer.py")
    for f in (file(quiet[0], hunk(1, quiet[1])), page, code):
        assert not analyze(record([f], title="[ci] chore: x")).signal("ci.branch_install"), f["filename"]


def test_rust_vocabulary():
    rs = file(
        "crates/core/src/cache.rs",
        hunk(
            1,
            [
                "+use std::sync::{Arc, Mutex};",
                "+// unsafe { this comment is not code }",
                "+    let shared = Arc::new(Mutex::new(map));",
                "+    unsafe { ptr.write(value) }",
            ],
        ),
    )
    a = analyze(record([rs], title="perf: share the cache"))
    conc = next(r for r in a.risks if r.kind == "concurrency")
    assert [e.line for e in conc.evidence] == [3]  # the `use` line and the comment are not behaviour
    assert next(r for r in a.risks if r.kind == "memory").evidence[0].line == 4


def test_revert_end_to_end_links_and_is_judged_on_what_it_undoes():
    known = {41: ("[trainer] feat: new loss", "merged")}
    code = py(
        ["-    loss = new_loss(x)", "+    with self._lock:", "+        loss = old_loss(x)"]
        + [f"+    y{i} = {i}" for i in range(20)]
    )
    # the revert button's title, without a number: linked through the cache's titles
    a = analyze(
        record([code], title='Revert "[trainer] feat: new loss"', body="", number=50), known_prs=known
    )
    assert a.reverts == 41 and a.cross_refs[0].relation == "reverts" and a.cross_refs[0].title == known[41][0]
    assert kinds(a) == {"behaviour-change"} and a.verdict == "skim"  # restored code raises no new themes
    assert not a.signal("risk.concurrency")


def test_removal_end_to_end():
    gone = file(
        "pkg/backend_old.py", hunk(1, [f"-def api_{i}():" for i in range(120)], old_start=1), status="removed"
    )
    test_gone = file(
        "tests/test_backend_old.py", hunk(1, [f"-    assert {i}" for i in range(40)]), status="removed"
    )
    glue = py(
        ["-    from pkg.backend_old import api_1", "+    raise ValueError('backend_old was removed')"],
        name="pkg/registry.py",
    )
    a = analyze(record([gone, test_gone, glue], title="[backend] feat: remove the old backend"))
    assert a.verdict == "skim" and a.signal("removal") and not a.signal("tests.added")
    # what goes breaks the code of those who chose it; everyone else runs as before
    assert "breaking-api" in kinds(a) and "behaviour-change" not in kinds(a)
    assert a.key_files[0].filename == "pkg/backend_old.py"  # removing is what it does
    # ... and the code that stays and lets go of it comes next, before the deleted test
    assert [k.filename for k in a.key_files[:3]] == [
        "pkg/backend_old.py",
        "pkg/registry.py",
        "tests/test_backend_old.py",
    ]
    more_gone = [
        file(f"pkg/backend_old_{n}.py", hunk(1, [f"-x{i} = {i}" for i in range(200)]), status="removed")
        for n in range(3)
    ]
    wide = analyze(record([gone, *more_gone, glue], title="[backend] feat: remove the old backend"))
    assert wide.key_files[1].filename == "pkg/registry.py"
    # ... unless a default moves them off the path that goes: their runs change too
    default = file("pkg/config/runtime.yaml", hunk(3, ["-backend: old", "+backend: new"]))
    moved_off = analyze(
        record([gone, test_gone, glue, default], title="[backend] feat: remove the old backend")
    )
    assert {"breaking-api", "config-default-change", "behaviour-change"} <= kinds(moved_off)
    # in a PR that is not a removal, a deleted file ranks below the code that changed
    fix = py([f"+    y{i} = {i}" for i in range(30)] + ["-    x = 1"], name="pkg/core.py")
    small_gone = file("pkg/unused.py", hunk(1, [f"-z{i} = {i}" for i in range(20)]), status="removed")
    b = analyze(record([small_gone, fix], title="[core] fix: x"))
    assert b.key_files[0].filename == "pkg/core.py"
    # workflows that go take no code path of users with them
    ci = file(".github/workflows/e2e_old.yml", hunk(1, [f"-      - run: step {i}" for i in range(120)]))
    c = analyze(record([ci], title="[ci] chore: drop the old e2e job"))
    assert c.signal("removal") and "behaviour-change" not in kinds(c)
    # a PR that deletes a lot and adds a large change of its own is read for what it adds
    big_gone = file(
        "pkg/legacy.py", hunk(1, [f"-def old_{i}():" for i in range(2000)], old_start=1), status="removed"
    )
    feature = file(
        "pkg/resume.py", hunk(1, [f"+def step_{i}(): return {i}" for i in range(600)]), status="added"
    )
    d = analyze(record([big_gone, feature], title="[trainer] feat: resume on abort"))
    assert (
        not d.signal("removal") and d.deciding[0] != "mostly removes code: a skim for the users of what goes"
    )
    small = file(
        "pkg/resume.py", hunk(1, [f"+def step_{i}(): return {i}" for i in range(300)]), status="added"
    )
    # a medium change of its own is what a removal rewires when the title says code goes; a rework
    # titled as one is read for what it adds; a little glue is a removal's, whatever the title
    assert analyze(record([big_gone, small], title="[trainer] feat: retire the legacy loop")).signal(
        "removal"
    )
    rework = analyze(record([big_gone, small], title="[trainer] refactor: resume through the engine"))
    assert not rework.signal("removal")
    glue = file("pkg/resume.py", hunk(1, [f"+def step_{i}(): return {i}" for i in range(40)]), status="added")
    assert analyze(record([big_gone, glue], title="[trainer] refactor: resume through the engine")).signal(
        "removal"
    )


def test_move_end_to_end():
    # a trainer moved to another package: the old module keeps a shim, the new one holds the same code
    body = [
        "class KTOTrainer(BaseTrainer):",
        "    def compute_loss(self, model, inputs):",
        "        logits = model(**inputs).logits.to(torch.float32)",
        "        with self.lock:",
        "            self.stats.append(logits.detach())",
        "        return torch.nn.functional.logsigmoid(self.beta * logits).mean()",
    ] + [f"    def helper_{i}(self, batch):" for i in range(30)]
    old = py(
        [f"-{line}" for line in body] + ["+from trl.experimental.kto import KTOTrainer  # shim"],
        name="trl/trainer/kto_trainer.py",
    )
    new = file("trl/experimental/kto/kto_trainer.py", hunk(1, [f"+{line}" for line in body]), status="added")
    a = analyze(record([old, new], title="Move KTO to trl.experimental"))
    assert a.signal("move") and a.verdict == "skim"
    assert not {"numerics", "concurrency"} & kinds(a)  # the moved code ran before: no new risk
    moved = record([old, new], title="Move KTO to trl.experimental")
    assert offline.headline(moved, "en", a).count("moves")
    # the file it adds is where the code went, not new code
    assert next(k for k in a.key_files if k.filename == new["filename"]).reason.count("code moved here")
    assert any("代码迁入的新文件" in item for item in offline.draft_offline(moved, a, "zh").focus)
    # the same code written new, with nothing removed, is read as what it does
    b = analyze(record([new], title="Add a KTO trainer"))
    assert not b.signal("move") and {"numerics", "concurrency"} <= kinds(b)
    # lines moved within one file (into a lock, a loop) run elsewhere now: no move
    within = py([f"-{line}" for line in body] + [f"+    {line}" for line in body], name="trl/trainer/kto.py")
    c = analyze(record([within], title="Rework the KTO trainer"))
    assert not c.signal("move")
    # a refactor that moves some code but mostly writes new code is no move
    mixed = file(
        "trl/trainer/kto_v2.py",
        hunk(
            1, [f"+{line}" for line in body[:10]] + [f"+    value_{i} = torch.exp(x{i})" for i in range(30)]
        ),
        status="added",
    )
    d = analyze(record([old, mixed], title="Rework KTO"))
    assert not d.signal("move")


def test_manifest_leads_a_dependency_change_and_fix_ranks_above_its_test():
    req = file("requirements.txt", hunk(1, ["-vllm==0.8.4", "+vllm==0.8.5"]))
    code = py([f"+    y{i} = compat({i})" for i in range(12)], name="pkg/compat.py")
    a = analyze(record([code, req], title="[build] chore: bump vllm"))
    assert a.key_files[0].filename == "requirements.txt" and "compatibility" in kinds(a)
    # a version that moved is shown, and its manifest leads, before packages another manifest adds
    apt = file(
        "docker/Dockerfile.sglang",
        hunk(1, [f"+    libcudnn9-{i}-cuda-12=9.16.0.29-1 \\" for i in range(4)]),
    )
    image = file(
        "docker/Dockerfile.vllm", hunk(1, ["-RUN pip install torch==2.9.1", "+RUN pip install torch==2.10.0"])
    )
    bump = analyze(record([apt, image], title="[docker] feat: update the stable images"))
    shown = [e.text for e in bump.signal("deps.bump").evidence]
    assert shown[0] == "torch: 2.9.1 -> 2.10.0" and len(shown) == 3
    assert "docker/Dockerfile.vllm" in [k.filename for k in bump.key_files[:2]]
    fix = py(["-    n = len(x)", "+    n = len(x) - 1"], name="pkg/loss.py")
    test = file("tests/test_loss.py", hunk(1, [f"+    assert loss({i}) == {i}" for i in range(20)]))
    b = analyze(record([test, fix], title="[trainer] fix: off by one"))
    assert b.key_files[0].filename == "pkg/loss.py"
    # ... also when the description points at the test
    bshd = file("pkg/mcore/util.py", hunk(10, ["-    pad = rows", "+    pad = max(rows, minimum)"]))
    cases = file(
        "tests/utils/test_bshd.py", hunk(1, [f"+    assert padded({i}).shape[0] == {i}" for i in range(43)])
    )
    named = analyze(
        record(
            [cases, bshd], title="[megatron] fix: pad THD tensors", body="Adds `tests/utils/test_bshd.py`."
        )
    )
    assert [k.filename for k in named.key_files] == ["pkg/mcore/util.py", "tests/utils/test_bshd.py"]
    # a feature's program leads the run script that shows it off
    script = file(
        "examples/grpo/run_qwen3_lora_fp16.sh",
        hunk(1, [f"+    actor.lora.opt_{i}=True \\" for i in range(60)]),
        status="added",
    )
    engine = file(
        "pkg/engine/megatron.py", hunk(10, [f"+        self.lora_{i} = cfg.lora_{i}" for i in range(12)])
    )
    body = "Run `examples/grpo/run_qwen3_lora_fp16.sh`."
    c = analyze(record([script, engine], title="[megatron] feat: LoRA training with FP16", body=body))
    assert c.key_files[0].filename == "pkg/engine/megatron.py"
    # and the library's change leads the example program or recipe that uses it, however long that is
    reward_fn = file(
        "examples/flowgrpo/reward_fn.py",
        hunk(1, [f"+    score_{i} = ocr_model.score(image, {i})" for i in range(150)]),
        status="added",
    )
    loop = py([f"+        self.reward_{i} = manager.run({i})" for i in range(40)], name="pkg/reward_loop.py")
    d = analyze(record([reward_fn, loop], title="[reward] feat: image-based rewards"))
    assert [k.filename for k in d.key_files] == ["pkg/reward_loop.py", "examples/flowgrpo/reward_fn.py"]
    # so does a small fix beside the CI job that runs it
    job = file(
        ".github/workflows/nightly_ascend.yml", hunk(1, [f"+      - run: step {i}" for i in range(52)])
    )
    engine_fix = py(
        ["-    strategy = 'mindspeed_llm'", "+    strategy = 'mindspeed_megatron'"] * 4, name="pkg/engine.py"
    )
    ci_and_fix = analyze(record([job, engine_fix], title="[ci, trainer] fix: mindspeed backend"))
    assert ci_and_fix.key_files[0].filename == "pkg/engine.py"
    # an example alone is what there is to read
    e = analyze(record([reward_fn], title="[reward] feat: an OCR reward example"))
    assert e.key_files[0].filename == "examples/flowgrpo/reward_fn.py"


def test_a_file_the_title_names_leads_the_files_that_use_it():
    # a config refactor touches every trainer that reads it; the title says which config it is about
    trainers = [
        py(
            [
                line
                for i in range(3)
                for line in (f"-    r{i} = cfg.reward_model.r{i}", f"+    r{i} = cfg.reward.r{i}")
            ],
            name=f"pkg/{t}/trainer.py",
        )
        for t in ("ppo", "sync", "async")
    ]
    section = ["+reward:", *[f"+  option_{i}: {i}" for i in range(20)]]
    config = file("pkg/config/reward.yaml", hunk(1, section), status="added")
    a = analyze(record([*trainers, config], title="[BREAKING][reward] refactor: the reward configuration"))
    assert (
        a.key_files[0].filename == "pkg/config/reward.yaml" and "named in the title" in a.key_files[0].reason
    )
    # a tag is not the title's subject, nor is a word too common to name a file, nor a CI job
    tagged = analyze(record([*trainers, config], title="[reward] refactor: read the new section"))
    assert tagged.key_files[0].filename != "pkg/config/reward.yaml"
    utils = py([f"+    u{i} = f({i})" for i in range(2)], name="pkg/utils.py")
    common = analyze(record([*trainers, utils], title="[trainer] refactor: move helpers to utils"))
    assert common.key_files[0].filename != "pkg/utils.py"
    job = file(".github/workflows/vllm.yml", hunk(1, ["+      - run: pip install vllm==0.9.1"]))
    ci = analyze(record([*trainers, job], title="[docker] feat: upgrade vllm"))
    assert "named in the title" not in " ".join(k.reason for k in ci.key_files)


def test_a_platform_the_title_names_is_read_by_its_users():
    verl = load_conventions("verl-project/verl")
    patch = py(["+import torch_npu", "+torch_npu._C._set_nested_guard(False)"], name="verl/__init__.py")

    def audiences(title):
        return analyze(record([patch], title=title), conventions=verl).audiences

    # a hardware workaround touching a top-level file was read by "everyone"
    assert audiences("[hardware] fix: workaround for torch-npu's nested tensors")[0] == "ascend-npu"
    # before the module the author tags: the platform narrows who is concerned to its users
    assert audiences("[megatron] fix: attention mask shape for VLM on Ascend NPU")[:2] == [
        "ascend-npu",
        "engine-megatron",
    ]
    # after a role area the title leads with: CI maintainers read a [ci] change first
    assert audiences("[ci, megatron] fix: the nightly job on Ascend NPU") == [
        "ci",
        "ascend-npu",
        "engine-megatron",
    ]
    assert "amd-rocm" in audiences("[vllm] fix: preserve ROCm attention cache for CUDA graphs")
    # MindSpeed is the Megatron of Ascend: its backend's changes are read on Ascend NPUs
    assert "ascend-npu" in audiences("[megatron] feat: add MindSpeed-Bridge and Megatron backend support")
    # a word inside another word names nothing
    assert "ascend-npu" not in audiences("[trainer] fix: sort the inputs by npus_per_node")


def test_every_pr_gets_an_audience_with_default_conventions():
    conv = load_conventions("someone/else")
    for rec in (
        record([py(["+    x = 1"], name="src/parser/lexer.py")], title="fix lexer", repo="someone/else"),
        record([], title="a PR with no files", repo="someone/else"),
    ):
        a = analyze(rec, conventions=conv)
        assert a.audiences and all(a.audiences)
    # an uncurated code area is read by its maintainers: a brief never says "parser should skim"
    lexer = analyze(
        record([py(["+    x = 1"], name="src/parser/lexer.py")], title="Fix the lexer", repo="someone/else"),
        conventions=conv,
    )
    assert lexer.audiences[0] == "parser" and lexer.audience == "parser maintainers"
    assert offline.draft_offline(record([], repo="someone/else"), lexer).audience == "parser 维护者"
    # a file at the top level has no area of its own: its role says who reads it
    manifest = file("pyproject.toml", hunk(1, ["-    'vllm>=0.15',", "+    'vllm>=0.16',"]))
    code = py(
        ["+    if vllm_version < (0, 16):", "+        raise ImportError('vllm>=0.16')"],
        name="trl/import_utils.py",
    )
    drop = analyze(
        record([manifest, code], title="Drop vLLM 0.15 support", repo="someone/else"), conventions=conv
    )
    assert "root" not in drop.audiences and "build" in drop.audiences
    # examples have their maintainers too (not "everyone")
    example = py([f"+    step_{i}()" for i in range(12)], name="examples/scripts/gkd.py")
    ex = analyze(record([example], title="Fix the GKD example", repo="someone/else"), conventions=conv)
    assert ex.audiences[0] == "examples" and ex.audience == "example maintainers"
    # a one-word title tag names a module; a tag of several words names a project, no reader
    tagged = analyze(
        record([example], title="[DistillationTrainer refactor] Fix the example", repo="someone/else"),
        conventions=conv,
    )
    assert tagged.audiences == ["examples"]
    dpo = analyze(record([example], title="[DPO] Fix the example", repo="someone/else"), conventions=conv)
    assert dpo.audiences[:2] == ["dpo", "examples"]
    # docs beside code are written for the code's readers: docs maintainers follow them, however long
    # the page, unless the title says the PR is about its docs
    for title, first in (
        ("Change the default vllm_mode and add a migration guide", "trainer"),
        ("Add a migration page to the docs", "docs"),
        ("Document the vllm_mode migration", "docs"),
    ):
        both = analyze(record(guide_beside_config(), title=title, repo="someone/else"), conventions=conv)
        assert both.audiences[0] == first and set(both.audiences[:2]) == {"trainer", "docs"}, title
    verl = load_conventions("verl-project/verl")
    v = analyze(
        record(
            [py(["+    x = 1"], name="verl/workers/rollout/vllm_rollout/x.py")],
            title="[vllm] fix: x",
            repo="verl-project/verl",
        ),
        conventions=verl,
    )
    assert v.audiences[0] == "rollout"
    # a recipe's own checkpoint engine syncs weights: its recipe's authors and weight sync both read it
    sync = py(["+    self.buffer = None"], name="recipe/fully_async_policy/checkpoint_engine.py")
    r = analyze(record([sync], title="[recipe] feat: x", repo="verl-project/verl"), conventions=verl)
    assert set(r.audiences[:2]) == {"recipe", "weight-sync"}


def test_a_removed_backend_is_read_by_its_users_before_its_ci_tag():
    verl = load_conventions("verl-project/verl")
    gone = [f"-    line_{i} = {i}" for i in range(300)]
    backend = file("verl/workers/engine/mindspeed/transformer_impl.py", hunk(1, gone), status="removed")
    ci = file(".github/workflows/e2e_mindspeed.yml", hunk(1, [f"-  step_{i}: run" for i in range(30)]))
    title = "[ci, trainer] feat: remove mindspeedllm backend engine support."
    a = analyze(record([backend, ci], title=title, repo="verl-project/verl"), conventions=verl)
    assert a.verdict == "skim" and a.audiences[0] != "ci" and "engine-megatron" in a.audiences
    # a dependency update that deletes what the new version no longer needs keeps its tag first
    req = file("requirements.txt", hunk(1, ["-megatron-core==0.12.0", "+megatron-core==0.13.0"]))
    code = file("verl/utils/megatron/compat.py", hunk(1, gone[:200]))
    bump = analyze(
        record([req, code], title="[build] chore: bump megatron-core", repo="verl-project/verl"),
        conventions=verl,
    )
    assert bump.audiences[0] == "build-deps"


def test_a_test_beside_code_is_read_by_the_code_owners_not_test_maintainers():
    verl = load_conventions("verl-project/verl")
    fix = py(["-    n = 1", "+    n = 2"], name="verl/workers/engine/fsdp/transformer_impl.py")
    test = file(
        "tests/workers/test_distillation_on_cpu.py", hunk(1, [f"+    assert out[{i}]" for i in range(80)])
    )
    a = analyze(
        record([test, fix], title="[fsdp] fix: topk outputs", repo="verl-project/verl"), conventions=verl
    )
    assert a.audiences == ["engine-fsdp"]
    alone = analyze(
        record([test], title="[ci] test: more asserts", repo="verl-project/verl"), conventions=verl
    )
    assert alone.audiences[0] == "tests"  # a change to tests alone is for test maintainers
    # ... unless its author tags it as CI's work and not as test work (an e2e script, a nightly job)
    ci = analyze(
        record([test], title="[ci] fix: oom in the e2e test", repo="verl-project/verl"), conventions=verl
    )
    assert ci.audiences[:2] == ["ci", "tests"]
    # a test that lives in a code area (a linter rule's fixture) still names that area's readers
    ruff = load_conventions("astral-sh/ruff")
    fixture = file(
        "crates/ruff_linter/resources/test/fixtures/flake8_simplify/SIM222.py",
        hunk(1, [f"+x{i} = (a or b)" for i in range(12)]),
    )
    helper = file("crates/ruff_python_ast/src/helpers.rs", hunk(1, ["-    a", "+    b"] * 7))
    r = analyze(record([fixture, helper], title="Fix SIM222", repo="astral-sh/ruff"), conventions=ruff)
    assert "linter" in r.audiences


def test_size_uses_pr_totals_when_patches_are_omitted():
    big = {"filename": "pkg/huge.py", "status": "modified", "additions": 0, "deletions": 0}
    other = {"filename": "pkg/other.py", "status": "modified", "additions": 0, "deletions": 0}
    rec = record([big, other], title="[core] feat: rewrite")
    rec.pr.update({"additions": 4211, "deletions": 3978})
    a = analyze(rec)
    assert (
        not a.signal("size.tiny")
        and a.signal("size.large")
        and "8189 changed lines" in a.signal("size.large").label
    )


def test_objective_arithmetic_is_numerics_but_its_metrics_are_not():
    loss = py(
        [
            "-        seq_losses = torch.sum(loss_mat * loss_mask, dim=-1) / loss_mask.sum(-1)",
            "+        seq_losses = torch.sum(loss_mat * loss_mask, dim=-1) / loss_scale_factor",
        ],
        name="pkg/core_algos.py",
    )
    a = analyze(record([loss], title="[algo] fix: seq-mean scale"))
    numerics = next(r for r in a.risks if r.kind == "numerics")
    assert (
        numerics.evidence[0].file == "pkg/core_algos.py" and "loss_scale_factor" in numerics.evidence[-1].text
    )
    logged = py(
        [
            '+            "actor/kl_loss": kl_loss.detach().item() * loss_scale_factor,',
            '+        metrics["actor/pg_loss"] = pg_loss.item() * scale',
            "+        # loss = loss / n  (kept for reference)",
            "+        entropy_rmpad = self.compute_entropy_from_logits(logits_rmpad)  # ((total_nnz / sp) + pad)",
            "+        old_log_prob=log_prob,  # current policy (for the IS ratio: pi_current / pi_rollout)",
        ]
    )
    assert "numerics" not in kinds(analyze(record([logged], title="[trainer] feat: log losses")))
    # a list literal repeated to pad log-probs or a loss mask is a length, not arithmetic
    padded = py(
        [
            "+        agent_data.response_logprobs += [0.0] * len(response_ids)",
            "+        response_logprobs = torch.tensor(output.response_logprobs + [0.0] * pad_size)",
            "+        self.loss_mask += [int(loss_mask)] * len(new_input_ids)",
        ],
        name="pkg/agent_loop.py",
    )
    assert "numerics" not in kinds(analyze(record([padded], title="[rollout] fix: pad tool turns")))
    # ... while an element of a list times a loss still is
    weighted = py(["+        loss = weights[i] * per_token_loss"], name="pkg/core_algos.py")
    assert "numerics" in kinds(analyze(record([weighted], title="[algo] fix: weight losses")))


def test_integer_bookkeeping_is_no_numerics_but_a_running_sum_of_rewards_is():
    packed = py(
        [
            "+    seqlens_in_batch = attention_mask.sum(dim=-1, dtype=torch.int32)",
            "+    cu_seqlens = F.pad(torch.cumsum(seqlens_in_batch, dim=0, dtype=torch.int32), (1, 0))",
            "+    position_ids = (attention_mask.cumsum(dim=1) - 1) * attention_mask",
            "+    return prepare_sequence_ids(cu_seqlens).to(torch.int32)",
        ],
        name="pkg/attention_utils.py",
    )
    assert "numerics" not in kinds(analyze(record([packed], title="[misc] feat: pack sequences")))
    returns = py(
        [
            "+    returns = (token_level_rewards * response_mask).flip(dims=[-1]).cumsum(dim=-1).flip(dims=[-1])"
        ],
        name="pkg/core_algos.py",
    )
    assert "numerics" in kinds(analyze(record([returns], title="[algo] feat: reinforce returns")))
    # a mask cast to int8 to find a position, or a byte buffer, is bookkeeping too; int8 values are not
    flush = py(
        [
            "+    first_empty_col = int(empty_cols.to(torch.int8).argmax()) if empty_cols.any() else M",
            "+    order = valid.to(torch.int8).argsort(descending=True, stable=True)",
            "+    return torch.empty(size, device=get_device_name(), dtype=torch.int8)",
        ],
        name="pkg/utils.py",
    )
    assert "numerics" not in kinds(analyze(record([flush], title="[misc] fix: flush left")))
    # a tensor made in an integer dtype is a signal or a mask: it holds counts, not values
    made = py(
        [
            "+    signal = torch.tensor([1], dtype=torch.int8, device=torch.npu.current_device())",
            "+    return torch.ones((b, t), dtype=torch.int32, device=latents.device)",
        ],
        name="pkg/engine.py",
    )
    assert "numerics" not in kinds(analyze(record([made], title="[ckpt] feat: hccl engine")))
    scores = py(["+    scores = torch.tensor(raw_scores, dtype=torch.int8)"], name="pkg/engine.py")
    assert "numerics" in kinds(analyze(record([scores], title="[ckpt] feat: hccl engine")))
    quant = py(["+    q = (w / scale).round().clamp(-128, 127).to(torch.int8)"], name="pkg/quant.py")
    assert "numerics" in kinds(analyze(record([quant], title="[misc] feat: int8 weights")))


def test_defaults_the_composed_config_moves_without_a_source_line_are_a_close_read():
    # two trainer configs become one: the megatron trainer now inherits the other's defaults, which
    # only its generated (composed) copy shows
    own = [f"-  option_{i}: {i}" for i in range(12)]
    source = file(
        "pkg/config/megatron_trainer.yaml",
        hunk(1, ["-model:", "-  use_remove_padding: false", *own, "+defaults:", "+  - trainer"]),
    )
    generated = file(
        "pkg/config/_generated_megatron_trainer.yaml",
        hunk(
            1,
            [
                " model:",
                "-  use_remove_padding: false",
                "+  use_remove_padding: true",
                "-  layer_name_map: {}",
            ],
        ),
    )
    body = "One trainer config for every engine: `megatron_trainer.yaml` now takes the shared defaults."
    a = analyze(record([source, generated], title="[cfg] refactor: unify the trainer configs", body=body))
    assert a.signal("config.drift") and a.verdict == "deep"
    assert [e.text for e in a.signal("config.drift").evidence] == ["model.use_remove_padding: false -> true"]
    assert "config-default-change" in kinds(a)
    # a default the author changes in the source shows there too: written down, no drift
    written = file(
        "pkg/config/trainer.yaml",
        hunk(1, [" model:", "-  use_remove_padding: false", "+  use_remove_padding: true"]),
    )
    b = analyze(record([written, generated], title="[cfg] feat: remove padding by default"))
    assert b.signal("config.defaults") and not b.signal("config.drift")
    # the generated copy alone catching up with its sources: no source reshaped, nothing drifts
    c = analyze(record([generated], title="[cfg] chore: regenerate the reference config"))
    assert c.signal("config.defaults") and not c.signal("config.drift")


def test_code_that_patches_another_library_is_a_compatibility_risk():
    patch = file(
        "pkg/utils/megatron/router_patch.py",
        hunk(
            1,
            [
                "+from megatron.core.transformer import TransformerConfig",
                "+from megatron.core.transformer.moe.router import TopKRouter",
                "+import types, sys",
                "+",
                "+def apply_router_patch():",
                "+    TopKRouter.__init__ = patched_init  # until upstream lands routing replay",
                "+    module = types.ModuleType('fast_hadamard_transform')",
                '+    sys.modules["fast_hadamard_transform"] = module',
                "+    cells = run_fn.__closure__",
            ],
        ),
        status="added",
    )
    a = analyze(record([patch], title="[megatron] feat: routing replay"))
    risk = next(r for r in a.risks if r.kind == "compatibility")
    assert risk.why.startswith("patches another library's code at run time")
    assert [e.text for e in risk.evidence] == [
        "TopKRouter.__init__ = patched_init  # until upstream lands routing replay",
        'sys.modules["fast_hadamard_transform"] = module',
        "cells = run_fn.__closure__",
    ]
    assert risk.evidence[0].line == 6
    # the project's own classes, library settings, the standard library, a test, a module loaded from a
    # user's file, a package's own lazy module, and a patch whose import the hunk does not show
    own = file(
        "pkg/workers/actor.py",
        hunk(
            1,
            [
                "+from pkg.models import Policy",
                "+import torch",
                "+import signal",
                "+Policy.forward = fast_forward",
                "+torch.backends.cuda.matmul.allow_tf32 = True",
                "+signal.signal = handler",
                "+self.forward = fast_forward",
                "+# TopKRouter.__init__ = patched_init",
                "+module = importlib.util.module_from_spec(spec)",
                "+sys.modules[module_name] = module",
                "+GPTModel._postprocess = patched_postprocess",
            ],
        ),
    )
    in_test = file(
        "tests/test_router.py", hunk(1, ["+from megatron.core import Router", "+Router.route = fake_route"])
    )
    lazy = file(
        "pkg/__init__.py",
        hunk(1, ["+import sys", "+sys.modules[__name__] = _LazyModule(__name__, _structure)"]),
    )
    b = analyze(record([own, lazy, in_test], title="[trainer] feat: faster actor"))
    assert not b.signal("compat.patches")


def test_a_section_emptied_or_filled_changes_keys_not_a_default():
    yaml = file(
        "pkg/config/rollout.yaml",
        hunk(
            10,
            [
                " engine_kwargs:",
                "-  vllm:",
                "-    swap_space: 4",
                "+  vllm: {}",
                "-  override_config: {}",
                "+  override_config:",
                "+    moe_router: frozen",
                "-  max_num_seqs: 1024",
                "+  max_num_seqs: 256",
            ],
        ),
    )
    a = analyze(record([yaml], title="[rollout] feat: pass engine args through"))
    assert [e.text for e in a.signal("config.defaults").evidence] == [
        "engine_kwargs.max_num_seqs: 1024 -> 256"
    ]
    keys = [e.text for e in a.signal("config.keys").evidence]
    assert (
        "removed engine_kwargs.vllm.swap_space" in keys
        and "added engine_kwargs.override_config.moe_router: frozen" in keys
    )


def test_a_new_switch_that_is_on_changes_what_every_run_does():
    yaml = file(
        "pkg/config/engine/megatron.yaml",
        hunk(
            20,
            [
                " dist_checkpointing_prefix: ''",
                "+# Pad every micro-batch to the mini-batch max (BSHD only).",
                "+pad_bshd_to_minibatch_max: True",
                "+",
                " trainer:",
                "+  balance_batch: true",
                "+  quiet: false",
                "+  distillation:",
                "+    # a new feature's own fields",
                "+    use_task_rewards: true",
            ],
        ),
    )
    a = analyze(record([yaml], title="[megatron] feat: pad BSHD micro-batches"))
    risk = next(r for r in a.risks if r.kind == "config-default-change")
    assert risk.why.startswith("a new setting is on by default")
    shown = [e.text for e in a.signal("config.on_by_default").evidence]
    assert shown == ["added pad_bshd_to_minibatch_max: True", "added trainer.balance_batch: true"]
    assert risk.evidence[0].line == 22  # after the context line 20 and the comment
    # padding and balancing batches size what every run holds and computes
    sizing = {r.kind: [e.text for e in r.evidence] for r in a.risks if r.kind in ("memory", "performance")}
    assert sizing == {
        "memory": ["added pad_bshd_to_minibatch_max: True", "added trainer.balance_batch: true"],
        "performance": ["added pad_bshd_to_minibatch_max: True", "added trainer.balance_batch: true"],
    }
    # a new file, a switch that is off, Cargo's inheritance: nothing is switched on for existing runs
    new_file = file("pkg/config/new.yaml", hunk(1, ["+enable_x: true"]), status="added")
    cargo = file(
        "crates/a/Cargo.toml", hunk(3, [' name = "a"', "-edition = '2021'", "+edition.workspace = true"])
    )
    b = analyze(record([new_file, cargo], title="[cfg] chore: configs"))
    assert not b.signal("config.on_by_default") and "config-default-change" not in kinds(b)
    # TOML: a key under a table the patch adds is that table's field
    from workbench.analysis.patchscan import in_added_section

    toml = "@@ -1,2 +1,4 @@\n [tool]\n+strict = true\n+[tool.new]\n+fast = true"
    assert not in_added_section(toml, toml.index("+strict")) and in_added_section(toml, toml.index("+fast"))


def test_a_ci_or_script_setting_names_the_key_symbol_after_any_code_symbol():
    workflow = file(
        ".github/workflows/e2e_sft.yml",
        hunk(
            90,
            [
                "   e2e_sft:",
                "-    timeout-minutes: 30 # raise as needed",
                "+    timeout-minutes: 40 # raise as needed",
            ],
        ),
    )
    a = analyze(record([workflow], title="[ci] feat: a longer timeout for the SFT job"))
    assert a.key_symbols == ["timeout-minutes"] and a.signal("settings.changed").weight == 0
    assert not a.risks  # the project's own job, no user's default
    script = file(
        "tests/special_e2e/run_async.sh",
        hunk(
            104,
            [
                "     actor_rollout_ref.actor.entropy_coeff=0",
                "-    actor_rollout_ref.rollout.gpu_memory_utilization=0.80",
                "+    actor_rollout_ref.rollout.gpu_memory_utilization=0.60",
                "-    # trainer.n_gpus_per_node=8",
                "+    # trainer.n_gpus_per_node=4",
                "-    trainer.logger=console",
                "+    trainer.logger=console  ",
            ],
        ),
    )
    b = analyze(record([script], title="[ci] fix: oom in the async test"))
    assert b.key_symbols == ["gpu_memory_utilization"]  # not a comment, not a line only re-spaced
    # beside code, the code's symbols come first
    code = py(["+def drain_queue(q):", "+    return q.get()"], name="pkg/queue.py")
    c = analyze(record([script, code], title="[rollout] fix: drain"))
    assert c.key_symbols.index("drain_queue") < c.key_symbols.index("gpu_memory_utilization")


def test_a_docs_page_names_what_it_documents_after_any_code_symbol():
    from workbench.analysis.patchscan import documented_names

    rst = hunk(
        9,
        [
            "-   User can set ``reward_model.reward_loop=True`` to enable it.",
            "+   User can set ``reward_model.use_reward_loop=True`` to enable it.",
            "+Subclass ``RewardLoopWorker`` and override ``run_single()``; see ``verl/experimental``.",
            "+Set `max_num_seqs` in `yaml`, e.g. ``0.5``; ``@register`` adds it.",
            " Unchanged ``context_line_name`` stays out.",
        ],
    )
    assert documented_names(rst) == ["use_reward_loop", "RewardLoopWorker", "run_single", "max_num_seqs"]
    page = file("docs/advance/reward_loop.rst", rst)
    a = analyze(record([page], title="[doc] fix: reward_loop flag name"))
    assert a.key_symbols[0] == "use_reward_loop" and "reward_loop" not in a.key_symbols
    # beside code, the code's symbols come first, and the page's names do not lift its rank
    code = py(["+def drain_queue(q):", "+    return q.get()"], name="pkg/queue.py")
    names = "+See ``drain_queue``, ``QueueConfig`` and ``queue_size``."
    big_page = file("docs/guide.rst", hunk(1, [names] + ["+More prose."] * 39))
    b = analyze(record([big_page, code], title="[rollout] feat: drain"))
    assert b.key_symbols.index("drain_queue") < b.key_symbols.index("QueueConfig")
    assert b.key_files[0].filename == "pkg/queue.py"


def test_the_type_a_pr_adds_leads_the_methods_every_implementation_repeats():
    tools = [
        file(
            f"pkg/tools/{name.lower()}.py",
            hunk(1, [f"+class {name}(Tool):", "+    def run(self, args):", "+        return args"]),
            status="added",
        )
        for name in ("Calculator", "JsonGet", "BaseConvert")
    ]
    loop = file(
        "pkg/agent/loop.py",
        hunk(1, ["+def start_loop(cfg):", "+    return AgentLoop(cfg)", "+class AgentLoop:", "+    pass"]),
        status="added",
    )
    a = analyze(record([loop, *tools], title="[agent] feat: multi-turn agent loop"))
    # every tool's `run` is one interface implemented three times: not three times the weight
    assert a.key_symbols[0] == "AgentLoop"
    assert a.key_symbols.index("start_loop") < a.key_symbols.index("run")


def test_the_type_a_removal_deletes_leads_its_methods():
    gone = file(
        "pkg/memory_buffer.py",
        hunk(
            10,
            [
                "-    def zero(self):",
                "-        self.data.zero_()",
                "-class MemoryBufferForRollout:",
                "-    pass",
            ],
        ),
    )
    a = analyze(record([gone], title="[worker] chore: remove the rollout memory buffer"))
    assert a.key_symbols[0] == "MemoryBufferForRollout"


def test_a_test_file_names_its_tests_before_its_stubs():
    # the brief's "look at" for a test file: what it checks, not the fakes it builds to check it
    test = file(
        "tests/test_agent_loop_on_cpu.py",
        hunk(
            1,
            [
                "+class _FakeTokenizer:",
                "+    def encode(self, text):",
                "+        return [1]",
                "+def _make_output():",
                "+    return {}",
                "+def test_default_extra_fields_are_kept():",
                "+    assert _make_output() == {}",
            ],
        ),
        status="added",
    )
    code = file(
        "pkg/agent_loop.py",
        hunk(10, [" def as_dict(self):", "-    return {}", "+    return dict(self.extra)"]),
    )
    a = analyze(record([code, test], title="[rollout] fix: keep default extra fields"))
    tests_file = next(k for k in a.key_files if k.filename.startswith("tests/"))
    assert tests_file.symbols[0] == "test_default_extra_fields_are_kept"
    assert set(tests_file.symbols) >= {"_FakeTokenizer", "_make_output"}  # still there, after it
    code_file = next(k for k in a.key_files if k.filename == "pkg/agent_loop.py")
    assert code_file.symbols == ["as_dict"]


def test_a_class_and_its_methods_are_named_once_each_the_class_first():
    engine = file(
        "pkg/engine.py",
        hunk(
            10,
            [
                " x = 1",
                "+class Sender:",
                "+    def _cleanup(self, force: bool = False):",
                "+        del self.buf",
                "+",
                "+    async def ack(self):",
                "+        pass",
            ],
        ),
    )
    a = analyze(record([engine], title="[worker] feat: sender"))
    assert a.key_symbols == ["Sender", "_cleanup", "ack"]


def test_a_dependency_that_loses_its_pin_is_named_and_a_risk():
    req = file("requirements-npu.txt", hunk(11, [" pybind11", "-ray==2.46.0", "+ray[default]", " wandb"]))
    a = analyze(record([req], title="[ray] chore: update ray"))
    compat = next(r for r in a.risks if r.kind == "compatibility")
    assert compat.evidence[0].text == "ray: 2.46.0 -> ray[default] (no version)"
    assert compat.evidence[0].file == "requirements-npu.txt" and a.key_symbols == ["ray"]
    # still pinned in another spelling, or by the workspace; a setting that is no version; no manifest
    cargo = file(
        "crates/ruff/Cargo.toml",
        hunk(
            60,
            [
                '-similar = "2.2.1"',
                '+similar = { version = "2.2.1" }',
                '-memchr = "2.7.1"',
                "+memchr = { workspace = true }",
                "-debug = 1",
                '+debug = "full"',
            ],
        ),
    )
    stub = file("vendor/typeshed/stdlib/tkinter/constants.pyi", hunk(1, ["-Key = 2.0", "+Key = KeyPress"]))
    b = analyze(record([cargo, stub], title="Use workspace dependencies", repo="astral-sh/ruff"))
    dep_texts = [e.text for s in b.signals if s.name == "deps.bump" for e in s.evidence]
    assert not [t for t in dep_texts if "(no version)" in t]


def test_a_pin_dropped_from_a_manifest_is_a_dependency_change_that_leads():
    # `triton-ascend==3.2.1` goes and nothing pins it again: installs now get whatever resolves that day
    req = file(
        "requirements-npu.txt", hunk(19, [" hf_transfer", "-triton-ascend==3.2.1", " TransferQueue==0.1.8"])
    )
    ci = file(".github/workflows/nightly.yml", hunk(5, [f"+      - run: step {i}" for i in range(16)]))
    a = analyze(record([ci, req], title="[ci] chore: fix npu nightly ci"))
    compat = next(r for r in a.risks if r.kind == "compatibility")
    assert [e.text for e in compat.evidence] == ["triton-ascend: 3.2.1 -> removed"]
    assert a.key_files[0].filename == "requirements-npu.txt" and "triton-ascend" in a.key_symbols
    # a pin that moves to another manifest moved; a manifest deleted whole (a redundant image) unpins
    # nothing; a removed setting is no pin
    moved = file("pyproject.toml", hunk(30, ['+    "triton-ascend==3.2.1",']))
    b = analyze(record([req, moved], title="[build] chore: requirements into pyproject"))
    assert [e.text for s in b.signals if s.name == "deps.bump" for e in s.evidence] == [
        "triton-ascend: added 3.2.1"
    ]
    gone = file(
        "docker/Dockerfile.rocm7",
        hunk(1, ["-RUN pip install ray==2.46.0", "-pyarrow==15.0.0"]),
        status="removed",
    )
    setting = file("setup.cfg", hunk(3, ["-debug = 1.5"]))
    kept = file(
        "pyproject.toml",
        hunk(9, ["-    \"transformers>=4.57.0; python_version < '3.10'\",", '     "transformers>=4.56.2",']),
    )
    c = analyze(record([gone, setting, kept], title="[hardware] chore: remove redundant Dockerfile.rocm7"))
    assert not [e.text for s in c.signals if s.name == "deps.bump" for e in s.evidence if "removed" in e.text]


def test_a_workspace_version_bump_is_one_release_not_changed_defaults():
    crates = [
        file(f"crates/{c}/Cargo.toml", hunk(1, ['-version = "0.1.5"', '+version = "0.1.6"']))
        for c in ("ruff", "ruff_linter", "ruff_server")
    ]
    a = analyze(record(crates, title="Bump version to 0.1.6", repo="astral-sh/ruff"))
    assert not a.signal("config.defaults") and "config-default-change" not in kinds(a)


def test_a_new_refusal_is_a_compatibility_risk_that_does_not_push_the_verdict():
    refuse = py(['+    if strategy == "fsdp":', '+        raise ValueError("TiledMLP needs FSDP2")'])
    a = analyze(record([refuse], title="[fsdp] feat: tiled mlp"))
    compat = next(r for r in a.risks if r.kind == "compatibility")
    assert "raise ValueError" in compat.evidence[0].text and a.signal("risk.refusal").weight == 0
    quoted = py(['+    msg = "raise ValueError when empty"'])
    assert "compatibility" not in kinds(analyze(record([quoted])))


def test_manifests_dependencies_docs_and_releases_are_not_defaults():
    cargo = file(
        "Cargo.toml",
        hunk(
            1,
            [
                '-ruff_cache = { version = "0.0.4", path = "crates/ruff_cache" }',
                '+ruff_cache = { version = "0.0.5", path = "crates/ruff_cache" }',
                '-get-size = ["dep:get-size2"]',
                '+get-size = ["dep:get-size2", "ruff_text_size/get-size"]',
            ],
        ),
        status="modified",
    )
    toolchain = file("rust-toolchain.toml", hunk(1, ['-channel = "1.96"', '+channel = "1.96.1"']))
    schema = file(
        "ty.schema.json",
        hunk(1, ['-      "description": "A path.",', '+      "description": "A relative path.",']),
    )
    a = analyze(record([cargo, toolchain, schema], title="Update dependencies", repo="astral-sh/ruff"))
    assert not a.signal("config.defaults") and not {"memory", "performance"} & kinds(a)
    # a learning rate is a setting, not a release
    lr = file(
        "pkg/config/optim.yaml", hunk(1, ["-  lr: 1.0e-6", "+  lr: 2.0e-6", "-  clip: 0.2", "+  clip: 0.28"])
    )
    assert len(analyze(record([lr])).signal("config.defaults").evidence) == 2
    # a manifest's keys are its dependencies and its own tools' settings: none is a user's config key
    gone = file(
        "Cargo.toml",
        hunk(
            1,
            [
                '-num_cpus = { version = "1.16" }',
                " rayon = { workspace = true }",
                "+[lints]",
                "+panic = true",
            ],
        ),
    )
    b = analyze(record([gone], title="Drop num_cpus", repo="astral-sh/ruff"))
    assert (
        not b.signal("config.keys")
        and not b.signal("config.on_by_default")
        and "breaking-api" not in kinds(b)
    )
    dropped = file("pkg/config/ppo.yaml", hunk(1, ["   actor:", "-    use_kl: true", "+    warmup: 10"]))
    assert "breaking-api" in kinds(analyze(record([dropped])))  # a config file's key that goes


def test_rust_identifiers_that_only_contain_a_theme_word_are_not_themes():
    rs = file(
        "crates/ty/src/types.rs",
        hunk(
            1,
            [
                "+    walk_non_atomic_type(db, ty);",
                '+    let weakref_name = Name::new_static("__weakref__");',
            ],
        ),
    )
    assert not {"memory", "concurrency"} & kinds(
        analyze(record([rs], title="[ty] refactor: walk types", repo="astral-sh/ruff"))
    )


def test_a_name_or_a_verb_in_the_title_or_description_is_no_theme():
    quiet = text_theme_evidence(
        [
            "[tool, megatron] fix: resolve PrecisionDebugger model chunks",
            "The PR also threads `OpsImplementationConfig` through `VeOmniEngine`, and renames "
            "`lock_timeout_s` in the docs.",
            "[ci] chore: require torch 2.8 and regenerate uv.lock and Cargo.lock",
        ]
    )
    assert quiet == {}
    told = text_theme_evidence(
        ["[fsdp] fix: NaN in the loss", "Fixes a race between two threads through the queue lock."]
    )
    assert set(told) == {"risk.numerics", "risk.concurrency"}
    assert told["risk.numerics"][0].text == "[fsdp] fix: NaN in the loss"


def test_a_script_that_evals_a_variable_runs_it_through_a_shell():
    sh = file("scripts/run.sh", hunk(3, ['+eval "$USER_CMD"', "+python evaluate.py --eval-steps 10"]))
    a = analyze(record([sh], title="[scripts] feat: run a command"))
    assert [e.line for e in a.signal("security.shell").evidence] == [3]
    # a tool's own setup code is no input: conda's activation hook in a run script
    conda = file(
        "examples/sapo/run.sh", hunk(3, ['+eval "$(conda shell.bash hook)"', "+conda activate sapo"])
    )
    assert analyze(record([conda], title="[algo] feat: SAPO example")).signal("security.shell") is None
    # a script that downloads what it evaluates runs an unpinned download
    fetched = file("scripts/setup.sh", hunk(3, ['+bash -c "$(curl -fsSL https://example.org/install.sh)"']))
    b = analyze(record([fetched], title="[scripts] feat: setup"))
    assert b.signal("security.shell") is None and b.signal("security.ci_download") is not None


def test_a_flag_replaced_by_its_opposite_flips_its_meaning():
    y = file("pkg/config/ppo.yaml", hunk(3, ["   actor:", "-    disable_gc: false", "+    enable_gc: true"]))
    a = analyze(record([y], title="[trainer] refactor: gc flag"))
    flip = next(r for r in a.risks if r.kind == "behaviour-change")
    assert "enable_gc" in flip.evidence[0].text and "opposite" in flip.why
    same = file("pkg/config/ppo.yaml", hunk(3, ["   actor:", "-    gc_every: 2", "+    gc_period: 2"]))
    assert "behaviour-change" not in kinds(analyze(record([same], title="[trainer] refactor: rename")))


def test_a_revert_links_the_relanding_in_the_cache():
    known = {
        41: ("[trainer] feat: new loss", "merged"),
        50: ("x", "merged"),
        63: ("[trainer] feat: new loss", "merged"),
    }
    code = py(["-    loss = new_loss(x)", "+    loss = old_loss(x)"])
    a = analyze(record([code], title='Revert "[trainer] feat: new loss"', number=50), known_prs=known)
    assert {(41, "reverts"), (63, "relanded-in")} <= {(r.number, r.relation) for r in a.cross_refs}


def test_a_new_error_is_a_refusal_only_where_code_already_ran():
    raises = ['+        raise ValueError(f"unknown backend {name}")']
    changed = analyze(record([py(raises)], title="[worker] fix: refuse unknown backends"))
    assert "compatibility" in kinds(changed)
    # a new file refuses nothing that worked before, and an abstract method is no refusal at all
    added = file("pkg/backends.py", hunk(0, raises, section="def pick(name):"), status="added")
    abstract = py(["+        raise NotImplementedError"])
    fresh = analyze(record([added, abstract], title="[worker] feat: backends"))
    assert "compatibility" not in kinds(fresh)


def test_what_added_code_says_it_does_not_do_is_an_open_item_not_a_risk():
    unbuilt = py(
        [
            "+    if cfg.fp8:",
            '+        raise NotImplementedError("Dynamic CP does not support FP8 training")',
            "+    if cfg.vpp:",
            "+        raise NotImplementedError(",
            '+            "Dynamic CP does not support "',
            '+            f"virtual pipelines (got {cfg.vpp})."',
            "+        )",
            '+    # raise NotImplementedError("a comment says nothing")',
            '+    raise NotImplementedError(f"{name}: {MSG}")',
            "+    raise NotImplementedError",
        ]
    )
    a = analyze(record([unbuilt], title="[megatron] feat: dynamic CP"))
    assert "compatibility" not in kinds(a)
    assert [i for i in a.open_items if i.startswith("not supported yet")] == [
        "not supported yet, raised in pkg/worker.py:11: Dynamic CP does not support FP8 training; "
        "Dynamic CP does not support virtual pipelines (got {cfg.vpp})"
    ]
    # Rust says it with a macro; a revert restores old code and leaves nothing newly open
    rust = file(
        "crates/ty/src/infer.rs",
        hunk(1, ['+        todo!("Implement escape command support")', '+        // todo!("a comment")']),
    )
    b = analyze(record([rust], title="[ty] feat: infer escapes", repo="astral-sh/ruff"))
    assert [i for i in b.open_items if i.startswith("not supported")] == [
        "not supported yet, raised in crates/ty/src/infer.rs:1: Implement escape command support"
    ]
    # a Chinese brief says it in Chinese, with the place and the author's own words
    from workbench.drafting.offline import draft_offline

    zh = draft_offline(record([unbuilt], title="[megatron] feat: dynamic CP"), a, "zh").open_items
    assert any(
        i.startswith("尚不支持（pkg/worker.py:11 处报错）：Dynamic CP does not support FP8") for i in zh
    )
    # an example in a docstring, or a template the code writes out, raises nothing here
    example = py(
        [
            '+    """Subclasses refuse what they lack:',
            '+        raise NotImplementedError("this base has no FP8 training")',
            '+    """',
        ]
    )
    assert not [i for i in analyze(record([example])).open_items if i.startswith("not supported")]
    reverted = analyze(record([unbuilt], title='Revert "[megatron] feat: dynamic CP"'))
    assert not [i for i in reverted.open_items if i.startswith("not supported")]


def test_a_refusal_in_a_function_only_new_code_calls_refuses_nothing_that_ran():
    refusal = [
        "+        if server_id not in self.servers:",
        '+            raise ValueError(f"unknown {server_id}")',
    ]
    new_api = file(
        "pkg/manager.py", hunk(20, [" class Manager:", "+    def release(self, server_id):", *refusal])
    )
    assert "compatibility" not in kinds(analyze(record([new_api], title="[rollout] feat: release")))
    # the same new method, now called by an old function, refuses what that function ran before
    caller = file(
        "pkg/worker.py",
        hunk(
            5,
            ["     def run(self):", "+        self.manager.release(self.sid)", "         return self.step()"],
        ),
    )
    assert "compatibility" in kinds(analyze(record([new_api, caller], title="[rollout] feat: release")))
    # a function rewritten under the same name, or old code split into a new one, was there before
    rewritten = file(
        "pkg/manager.py",
        hunk(
            20,
            [
                " class Manager:",
                "-    def release(self):",
                "-        self.free()",
                "+    def release(self, server_id):",
                *refusal,
            ],
        ),
    )
    split = file(
        "pkg/manager.py",
        hunk(
            20,
            [
                " class Manager:",
                "-    def step(self):",
                "-        self.free()",
                "+    def release(self, server_id):",
                *refusal,
            ],
        ),
    )
    for old in (rewritten, split):
        assert "compatibility" in kinds(analyze(record([old], title="[rollout] refactor: release")))
    # a hook the language calls, added to an old class, runs wherever the class ran; in a new class, nowhere
    check = [
        "+        if self.mode not in MODES:",
        '+            raise ValueError(f"unknown mode {self.mode}")',
    ]
    hook = file(
        "pkg/config.py",
        hunk(
            3, [" class RolloutConfig:", "     mode: str = 'sync'", "+    def __post_init__(self):", *check]
        ),
    )
    assert "compatibility" in kinds(analyze(record([hook], title="[rollout] feat: check modes")))
    fresh = file("pkg/config.py", hunk(3, ["+class DeltaConfig:", "+    def __post_init__(self):", *check]))
    assert "compatibility" not in kinds(analyze(record([fresh], title="[rollout] feat: delta config")))


def test_a_docstrings_prose_does_nothing_and_an_exponential_is_numerics():
    docstring = [
        '+    """Stable log-sum-exp, computed in fp32.',
        "+",
        "+    Holds the lock of the sender; float16 inputs would overflow and OOM.",
        '+    """',
    ]
    body = [
        "+    shifted = logits - logits.max(dim=-1, keepdim=True).values",
        "+    return shifted.exp().sum(-1).log()",
    ]
    lse = py(["+def fused_lse(logits):", *docstring, *body], name="pkg/kernels.py")
    a = analyze(record([lse], title="[kernel] feat: fused lse"))
    numerics = next(r for r in a.risks if r.kind == "numerics")
    assert [e.line for e in numerics.evidence] == [16]  # the code's exponential, not the docstring's words
    assert not {"memory", "concurrency"} & kinds(a)
    # a hunk that starts inside a docstring: the quotes it shows close it, and what follows is code
    tail = file(
        "pkg/sender.py",
        hunk(20, ["     Args:", "         scores: float16 logits", '     """', "+    with self._lock:"]),
    )
    assert "concurrency" in kinds(analyze(record([tail], title="[worker] fix: hold the lock")))
    # ... also when the closing quotes are its first line, under a header that names a class
    first = file(
        "pkg/sender.py", hunk(20, ['     """', "+    with self._lock:"], section="class Sender(Base):")
    )
    assert "concurrency" in kinds(analyze(record([first], title="[worker] fix: hold the lock")))
    # ... and the prose it adds above those closing quotes is the docstring's, not code
    args = [
        "         Args:",
        "+            bf16: keep master weights in the param buffer (not fp32 clones).",
        "+            raise ValueError when the buffer is too small.",
        '         """',
        "         return self._buffer",
    ]
    prose = analyze(record([file("pkg/sender.py", hunk(20, args))], title="[worker] fix: document args"))
    assert not {"numerics", "compatibility", "behaviour-change"} & kinds(prose)
    # a def between the line and the quotes opens a docstring of its own (a comment may stand between)
    code_then_def = [
        "+    weights = weights.to(torch.float32)",
        "+",
        "+def scale(weights):",
        "+    # docstyle-ignore",
        '+    """',
        "+    Scale the weights.",
        '+    """',
    ]
    a = analyze(record([file("pkg/sender.py", hunk(20, code_then_def))], title="[worker] feat: scale"))
    assert "numerics" in kinds(a)
    # a signature's last line, right above the quotes, opens the docstring
    signature = [
        "+def scale(weights,",
        "+          epsilon: float = 1e-6):",
        '+    """',
        "+    Scale.",
        '+    """',
    ]
    a = analyze(record([file("pkg/sender.py", hunk(20, signature))], title="[worker] feat: scale"))
    assert "numerics" in kinds(a)


def test_a_class_touched_in_many_places_does_not_outrank_what_the_pr_adds():
    edits = [hunk(10 * i, [f"+        self.x{i} = {i}"], section="class Worker:") for i in range(1, 6)]
    added = hunk(80, ["+    def drain_queue(self):", "+        self.queue.clear()"], section="class Worker:")
    a = analyze(record([file("pkg/worker.py", *edits, added)], title="[worker] feat: drain the queue"))
    assert a.key_symbols[:2] == ["drain_queue", "Worker"]


def test_an_unclosed_message_full_of_backslashes_is_read_at_once():
    """Patches are untrusted: a message pattern that could split a run of backslashes two ways tried
    2**(n/2) readings of an unclosed string. Run in a child with a timeout, so a regression fails
    instead of hanging the suite."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    code = (
        "from workbench.analysis.signals import _message\n"
        "print(_message('raise NotImplementedError(\"' + '\\\\\\\\' * 200 + 'x'))\n"
        'print(_message(\'raise NotImplementedError("it is \\\\"not\\\\" done yet")\'))\n'
    )
    root = str(Path(__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines() == ["None", 'it is "not" done yet']


def test_a_signature_that_only_gains_optional_parameters_breaks_no_caller():
    def signature(old, new):
        return py([f"-def estimate_flops{old}:", f"+def estimate_flops{new}:"], name="pkg/flops.py")

    for new in ("(self, seqlens, delta_time, **kwargs)", "(self, seqlens, delta_time, *args)",
                "(self, seqlens, delta_time, *, images=None)"):  # fmt: skip
        a = analyze(record([signature("(self, seqlens, delta_time)", new)], title="[perf] feat: vl flops"))
        assert a.signal("api.signature") and "breaking-api" not in kinds(a), new
    for new in (
        "(self, seqlens, images)",
        "(self, seqlens, *, images)",
        "(self, seqlens, delta_time, images)",
    ):
        a = analyze(record([signature("(self, seqlens, delta_time)", new)], title="[perf] feat: vl flops"))
        assert "breaking-api" in kinds(a), new
    # before a `**kwargs` or `*args` that stays, or among the names after a `*`, an optional one too
    old = "(self, seqlens, *args, scale=1, **kwargs)"
    for new in ("(self, seqlens, priority: int = 0, *args, scale=1, **kwargs)",
                "(self, seqlens, *args, images=None, scale=1, **kwargs)"):  # fmt: skip
        assert "breaking-api" not in kinds(analyze(record([signature(old, new)]))), new
    for new in ("(self, seqlens, *args, scale, **kwargs)",  # loses its default
                "(self, seqlens, *args, **kwargs)",  # `scale` goes
                "(self, seqlens, *args, scale=1)",  # `**kwargs` goes
                "(self, seqlens, *args, scale=1, images, **kwargs)"):  # fmt: skip
        assert "breaking-api" in kinds(analyze(record([signature(old, new)]))), new


def test_injection_in_a_description_is_security_only_as_an_attack():
    code = py(["+    self.seed = seed + index"])
    design = "Adds a seed injection point so subclasses pick their own; Docker bypasses GPU injection here."
    a = analyze(record([code], title="[rollout] feat: seeds", body=design))
    assert not a.signal("risk.security")
    attack = "Fixes a shell injection: the command was built from user input."
    b = analyze(record([code], title="[rollout] fix: quoting", body=attack))
    assert b.signal("risk.security")


def test_a_changed_setting_is_compared_with_the_line_it_replaces():
    # `train_tp=1` becomes 2; further down a branch that also set `train_tp=2` goes: the change is 1 -> 2
    script = file(
        "tests/special_e2e/run_fully_async.sh",
        hunk(
            185,
            [
                "     gen_tp=2",
                "-    train_tp=1",
                "+    train_tp=2",
                "-    actor_offload=False",
                "+    actor_offload=True",
                "     python3 -m verl.trainer.main \\",
                '-    if [ "$device_name" == "npu" ]; then',
                "-        train_tp=2",
                "-        actor_offload=True",
                "-    fi",
            ],
        ),
    )
    a = analyze(record([script], title="[ci] fix: oom in the fully async test"))
    texts = [e.text for e in a.signal("settings.changed").evidence]
    assert texts == ["train_tp: 1 -> 2", "actor_offload: False -> True"]
    assert a.key_symbols[:2] == ["train_tp", "actor_offload"]


def test_a_value_spelt_another_way_is_no_changed_default():
    respelt = file(
        "pkg/config/ppo.yaml",
        hunk(
            10,
            [
                "   actor:",
                "-    trust_remote_code: False",
                "+    trust_remote_code: false",
                "-    expert_tensor_parallel_size: None",
                "+    expert_tensor_parallel_size: null",
                '-    loss_agg_mode: "token-mean"',
                "+    loss_agg_mode: token-mean",
                "-    lr_warmup_steps_ratio: 0.",
                "+    lr_warmup_steps_ratio: 0.0",
                "-    logger: ['console', 'wandb']",
                '+    logger: [ "console", "wandb" ]',
            ],
        ),
    )
    a = analyze(record([respelt], title="[trainer] chore: reformat the config"))
    assert not a.signal("config.defaults") and "config-default-change" not in kinds(a)
    script = file(
        "examples/run.sh",
        hunk(3, ['-    algorithm.adv_estimator="$ADV" \\', "+    algorithm.adv_estimator=$ADV"]),
    )
    assert not analyze(record([script], title="[ci] chore: quotes")).signal("settings.changed")
    changed = file(
        "pkg/config/ppo.yaml", hunk(10, ["   actor:", "-    use_shm: False", "+    use_shm: true"])
    )
    b = analyze(record([changed], title="[trainer] feat: shm on"))
    assert [e.text for e in b.signal("config.defaults").evidence] == ["use_shm: False -> true"]


def test_a_field_declared_by_its_type_does_nothing():
    fields = py(
        [
            "+    zmq_port: int",
            "+    lock: threading.Lock | None",
            "+    socket: zmq.Socket,",
            "+    buf: torch.Tensor",
        ]
    )
    a = analyze(record([fields], title="[ckpt] feat: metadata"))
    assert not a.signal("risk.concurrency") and not a.signal("risk.memory")
    used = py(
        [
            "+    lock: threading.Lock = threading.Lock()",
            "+    self.socket = self.zmq_context.socket(zmq.REQ)",
        ]
    )
    b = analyze(record([used], title="[ckpt] feat: sockets"))
    assert len(b.signal("risk.concurrency").evidence) == 2


def test_a_fix_shows_the_program_it_rewrites_before_its_run_script():
    script = file(
        "examples/run_mtp.sh",
        hunk(1, ["-    trainer.x=1 \\"] + [f"+    trainer.arg_{i}={i} \\" for i in range(40)]),
    )
    code = py(["-    return mask.sum()", "+    return mask.sum(dim=-1)"], name="pkg/forward.py")
    a = analyze(record([script, code], title="[megatron] fix: mtp loss mask"))
    change = next(r for r in a.risks if r.kind == "behaviour-change")
    # the first line the fix writes anew, comments aside, shows where
    e = change.evidence[0]
    assert (e.file, e.line, e.text) == ("pkg/forward.py", 10, "return mask.sum(dim=-1)")
    commented = py(
        ["-    return mask.sum()", "+    # per row", "+    return mask.sum(dim=-1)"], name="pkg/forward.py"
    )
    b = analyze(record([commented], title="[megatron] fix: mtp loss mask"))
    assert (
        next(r for r in b.risks if r.kind == "behaviour-change").evidence[0].text == "return mask.sum(dim=-1)"
    )


def test_a_fix_for_a_crash_changes_nothing_for_runs_that_went_through():
    rewrite = py(["-    out = torch.cat(parts)", "+    out = torch.cat([p.to(device) for p in parts])"])
    for title in (
        "[fsdp] fix: device mismatch between offload and weight transfer",
        "[rollout] fix: KeyError when the tool list is empty",
        "[megatron] fix: hang with context parallelism",
        "fix: crash in start_profile on non-master nodes",
    ):
        assert "behaviour-change" not in kinds(analyze(record([rewrite], title=title))), title
    # a failure that went unnoticed gave wrong results; a mistake called an error computes differently;
    # an error the PR starts to raise refuses what ran before
    for title in (
        "[reward] fix: silent scoring failure in math_verify",
        "[trainer] fix: off-by-one error in the loss mask",
        "[trainer] fix: raise ValueError for an unsupported mode",
        "[trainer] fix: loss mask",
    ):
        assert "behaviour-change" in kinds(analyze(record([rewrite], title=title))), title


def test_a_change_to_comments_only_runs_nothing_new():
    typo = py(["-    # use the startegy of the model", "+    # use the strategy of the model"])
    a = analyze(record([typo], title="[doc] fix: correct typo in a comment"))
    assert a.verdict == "skip" and "behaviour-change" not in kinds(a)
    rust_doc = file(
        "crates/linter/src/rules/assert_used.rs",
        hunk(
            5,
            [
                "-/// Exempts assertions in a `TYPE_CHECKING` block.",
                "+/// Exempts assertions in `TYPE_CHECKING` blocks,",
                "+/// which only a type checker reads.",
            ],
        ),
    )
    assert analyze(record([rust_doc], title="Fix the S101 docs")).verdict == "skip"
    # a docstring's prose: a link fixed in the text a function documents itself with
    link = [
        "     def make_iterator(self, mini_batch_size, epochs):",
        '         r"""Make an iterator from the DataProto, as a dataset.',
        "-        See https://pytorch.org/tensordict/tutorials/data_fashion for more details.",
        "+        See https://pytorch.org/tensordict/stable/tutorials/data_fashion for more details.",
        '         """',
    ]
    c = analyze(record([py(link, name="verl/protocol.py")], title="[doc] fix: broken hyperlinks"))
    assert c.verdict == "skip" and "behaviour-change" not in kinds(c)
    # the docstring's own first line, reworded (its opening quotes on the changed line)
    opener = [
        " class KIMICheckpointEngine(CheckpointEngine):",
        '-    """NCCL checkpoint engine with collective communication.',
        '+    """kimi checkpoint engine with collective communication.',
    ]
    o = analyze(record([py(opener, name="verl/ckpt_engine.py")], title="[ckpt] fix: docstring of kimi"))
    assert o.verdict == "skip" and "behaviour-change" not in kinds(o)
    # one line of code beside the comment, a dereference, a shebang: each changes what runs
    for lines, name in (
        (
            ["-    # retry twice", "+    # retry three times", "-    retries = 2", "+    retries = 3"],
            "pkg/worker.py",
        ),
        (["-    *count = 0;", "+    *count = 1;"], "src/counter.c"),
        (["-#!/usr/bin/env python", "+#!/usr/bin/env -S uv run --script"], "scripts/primer.py"),
    ):
        b = analyze(record([file(name, hunk(1, lines))], title="fix: retries"))
        assert b.verdict == "skim" and "behaviour-change" in kinds(b), name


def test_a_signature_breaks_callers_by_names_order_defaults_and_types_where_typed():
    def breaking(old, new, rust=False):
        define, end, name = ("pub fn", " {", "src/ops.rs") if rust else ("def", ":", "pkg/ops.py")
        f = file(name, hunk(1, [f"-{define} gather{old}{end}", f"+{define} gather{new}{end}"]))
        return "breaking-api" in kinds(analyze(record([f], title="feat: gather")))

    # Python: annotations are hints; names, order, defaults and the return type are what calls rely on
    assert not breaking("(data, label)", "(data: torch.Tensor, label: torch.Tensor) -> torch.Tensor")
    assert not breaking("(data, scale=1.0)", "(data: torch.Tensor, scale: float = 2.0)")
    assert breaking("(data, label)", "(data, labels)")
    assert breaking("(data, scale=1.0)", "(data, scale)")
    assert breaking("(data) -> list[int]", "(data) -> torch.Tensor")
    assert not breaking("() -> any", "()")  # a hint dropped promises nothing new
    # Rust: no return type is `()`, another type
    assert breaking("(db: &dyn Db) -> Module", "(db: &dyn Db)", rust=True)
    # Rust: a parameter's type is part of the call
    assert breaking(
        "(db: &dyn Db, file: File) -> Module", "(db: &dyn Db, file: PythonFile) -> Module", rust=True
    )
    assert not breaking("(db: &dyn Db) -> Module", "(db:  &dyn Db) -> Module", rust=True)


def test_a_class_that_loses_its_base_breaks_its_users():
    lost = py(
        ["-class SGLangHttpServer(BaseRolloutServer):", "+class SGLangHttpServer:"], name="pkg/server.py"
    )
    assert "breaking-api" in kinds(analyze(record([lost], title="refactor: servers")))
    same = py(["-class Hijack():", "+class Hijack:"], name="pkg/hijack.py")
    assert "breaking-api" not in kinds(analyze(record([same], title="refactor: hijack")))


def test_a_pass_swallows_an_error_only_under_an_except():
    def error_handling(lines):
        a = analyze(record([py(lines, name="pkg/replay_buffer.py")], title="[trainer] feat: refill groups"))
        s = a.signal("risk.error_handling")
        return [e.text for e in s.evidence] if s else []

    # an empty hook a subclass overrides, a docstring'd no-op, an empty branch: nothing is swallowed
    hook = [
        "+class AsyncBuffer(ReplayBuffer):",
        "+    def _validate_mode_config(self) -> None:",
        "+        pass",
    ]
    noop = ["+    def close(self):", '+        """Nothing to release."""', "+        pass"]
    branch = [
        "+        if self.mode == 'sync':",
        "+            # refilled by the caller",
        "+            pass",
    ]
    assert error_handling(hook + noop + branch) == []
    # under an except (the clause unchanged above, a comment between): the error is dropped
    swallowed = [
        "         try:",
        "             self.refill(group)",
        "         except KeyError:",
        "+            # gone",
        "+            pass",
    ]
    assert error_handling(swallowed) == ["except KeyError: pass"]
    # the except clause this PR removes is not the line before the pass in the new file
    replaced = ["         if group.stale:", "-        except KeyError:", "+            pass"]
    assert error_handling(replaced) == []
    # an optional dependency: the import may fail, and the code runs without it
    optional = ["+try:", "+    import flash_attn", "+except ImportError:", "+    pass"]
    assert error_handling(optional) == []
    # Python inside a Rust rule's string (its doc example) runs nothing in the Rust crate
    snippet = ['+    let source = r#"', "+try:", "+    run()", "+except:", "+    pass", '+"#;']
    rust = file("crates/checker/src/rules/bare_except.rs", hunk(10, snippet))
    a = analyze(record([rust], title="[checker] fix: bare except"))
    assert a.signal("risk.error_handling") is None


def test_a_file_the_description_names_is_no_suffix_symbol():
    body = (
        "Rank 0 now writes `ckpt_contents.json` after the shards; `check_license.py` skips it.\n"
        "See `MegatronCheckpointManager`."
    )
    manager = py(
        [
            "+    def _write_manifest(self, path):",
            '+        with open(os.path.join(path, "ckpt_contents.json"), "w") as f:',
            "+            json.dump(self.contents, f)",
        ],
        name="verl/utils/checkpoint/megatron_checkpoint_manager.py",
    )
    check = file("tests/special_sanity/check_license.py", hunk(3, ['+SKIP = ("ckpt_contents.json",)']))
    a = analyze(
        record([manager, check], title="[ckpt] feat: a manifest of what a checkpoint holds", body=body)
    )
    assert "ckpt_contents.json" in a.key_symbols  # the file the code writes: a name a reader needs
    assert not {"json", "py", "check_license.py"} & set(a.key_symbols)  # a suffix, a file the PR changes
    assert "_write_manifest" in a.key_symbols


def test_tests_the_description_lists_do_not_outrank_the_code_they_test():
    body = (
        "Wrap nested data in `NonTensorStack` so `DataProto` converts.\n\n## Test\n"
        "1. `test_nested_lists`\n2. `test_nested_dicts`\n3. `test_round_trip`"
    )
    code = py(
        ["+        stack = NonTensorStack.from_list(items)", "+        return stack"],
        name="verl/protocol.py",
    )
    tests = file(
        "tests/test_protocol_on_cpu.py",
        hunk(3, ["+def test_nested_lists():", "+def test_nested_dicts():", "+def test_round_trip():"]),
    )
    a = analyze(record([code, tests], title="[misc] fix: convert nested data", body=body))
    assert a.key_symbols[0] == "run"  # the code's definition leads
    assert "NonTensorStack" in a.key_symbols[:2]  # the name the description quotes, in the code
    assert a.key_symbols.index("test_nested_lists") > a.key_symbols.index("NonTensorStack")
    # a tests-only PR's tests are what it is about: the description still raises them
    only = analyze(record([tests], title="[misc] test: nested data", body=body))
    assert only.key_symbols[:1] == ["test_nested_lists"]


def test_a_ci_change_names_the_jobs_it_adds_removes_or_changes():
    workflow = file(
        ".github/workflows/e2e_ascend.yml",
        hunk(
            12,
            [
                "   non_rl_job:",
                "     runs-on: linux-aarch64-a2-8",
                "-    timeout-minutes: 30",
                "+    timeout-minutes: 60",
                "     env:",
                '+      HCCL_OP_EXPANSION_MODE: "AIV"',
                "+  nightly_grpo_ascend:",
                "+    runs-on: linux-aarch64-a3-8",
                "+    steps:",
                "+      - uses: actions/checkout@v4",
            ],
            section="jobs:",
        ),
        hunk(80, ["-  legacy_job:", "-    runs-on: old", "-    steps: []"], old_start=80, section="jobs:"),
    )
    a = analyze(record([workflow], title="[ci] feat: add a nightly GRPO job on Ascend"))
    # whole jobs first (added, removed), then the setting whose value changed, then the job it is in
    # and the variable it sets
    assert a.key_symbols[:3] == ["nightly_grpo_ascend", "legacy_job", "timeout-minutes"]
    assert a.key_files[0].symbols[:3] == ["nightly_grpo_ascend", "legacy_job", "non_rl_job"]  # the brief's
    assert {"non_rl_job", "HCCL_OP_EXPANSION_MODE"} <= set(a.key_symbols[3:])
    # a workflow's own variables, set or no longer set, and the job a line changes in
    top = hunk(
        1,
        [
            " env:",
            '+  WORKER_REPLICAS: "2"',
            "-  OLD_VAR: x",
            " jobs:",
            "   build:",
            "+    timeout-minutes: 5",
        ],
    )
    assert workflow_names(top) == {"WORKER_REPLICAS": False, "OLD_VAR": False, "build": False}
    # beside program code a job follows the code's definitions
    code = py(["+        self.flush()"], name="verl/trainer/ppo.py")
    b = analyze(record([code, workflow], title="[trainer] fix: flush before the step"))
    assert b.key_symbols[0] == "run"
    assert "nightly_grpo_ascend" in b.key_symbols
    # a config file's own `jobs:` section holds settings, not CI jobs
    cfg = file("configs/scheduler.yaml", hunk(3, ["   workers:", "-    n: 2", "+    n: 4"], section="jobs:"))
    c = analyze(record([cfg], title="[cfg] chore: more workers"))
    assert "workers" not in c.key_symbols


def test_the_environment_variables_code_reads_or_sets_are_named():
    patch = py(
        [
            '+        enabled = bool(int(os.getenv("VERL_NPU_ENABLE_MC2_PATCH", "0")))',
            '-        os.environ["NCCL_DETERMINISTIC"] = "1"',
            '+        os.environ["HCCL_DETERMINISTIC"] = "true"',
            '         device = os.environ.get("CUDA_VISIBLE_DEVICES")',  # unchanged: not this PR's
            '+        # os.environ["IN_A_COMMENT"] is not read',
        ],
        name="verl/workers/engine/utils.py",
    )
    a = analyze(record([patch], title="[engine] fix: deterministic collectives on NPU"))
    assert a.key_symbols[0] == "run"  # the definition the lines are in leads
    assert a.key_symbols[1:] == ["VERL_NPU_ENABLE_MC2_PATCH", "NCCL_DETERMINISTIC", "HCCL_DETERMINISTIC"]
    # a shell script's exports are no symbols: a run script sets a dozen
    script = file(
        "examples/run_grpo_npu.sh", hunk(1, ["+export HCCL_CONNECT_TIMEOUT=1800", "+python3 -m main"])
    )
    assert (
        "HCCL_CONNECT_TIMEOUT" not in analyze(record([script], title="[npu] chore: a run script")).key_symbols
    )


def test_a_hunk_under_a_table_of_constants_names_the_table():
    entries = ['+    "qwen3_vl_moe": {', '+        "IMAGE_INPUT_INDEX": 151655,', "+    },"]
    table = file("verl/workers/engine/veomni/utils.py", hunk(21, entries, section="VL_TYPE2INDEX = {"))
    a = analyze(record([table], title="[model] feat: support the Qwen3-VL MoE model in the index table"))
    assert a.key_symbols == ["VL_TYPE2INDEX"]
    # a test fixture's example value and the module's `__all__` are no table a reader looks up
    fixture = file("tests/fixtures/alias.py", hunk(3, ["+    int,"], section="x1 = ["))
    exports = file("pkg/__init__.py", hunk(3, ['+    "Worker",'], section="__all__ = ["))
    b = analyze(record([fixture, exports], title="[misc] chore: export Worker"))
    assert b.key_symbols == []


def test_the_definition_a_hunks_context_shows_holds_the_changes_under_it():
    # git heads a hunk with the definition above its first line: here `_load`, whose body the hunk
    # never touches; the change is in `_update_weights`, whose line the context shows
    body = [
        "         return self._load(path)",
        " ",
        "     def _update_weights(self, weights):",
        "         for name, tensor in weights:",
        "-            self.model.load(name, tensor)",
        "+            self.model.load(name, tensor.clone())",
        " ",
        "     def _sibling(self):",
        "         pass",
        " ",
        " LIMIT = 3",
        "-RETRIES = 1",
        "+RETRIES = 2",
    ]
    ext = file("verl/workers/rollout/ext.py", hunk(40, body, section="def _load(self, path):"))
    a = analyze(record([ext], title="[rollout] fix: copy weights on update"))
    # the module-level change below `_sibling`'s block is where the header says
    assert a.key_symbols == ["_update_weights", "_load"]
    # a nested definition holds what is indented under it, and a comment or a closing bracket at the
    # margin ends no block
    nested = hunk(
        10,
        [
            " class Worker:",
            "     def step(self):",
            " # a note at the margin",
            "         x = run(",
            "     )",
            "-        return x",
            "+        return x * 2",
        ],
        section="import os",
    )
    b = analyze(record([file("verl/workers/worker.py", nested)], title="[worker] fix: double the step"))
    assert b.key_symbols == ["step"]


def test_an_identifier_the_title_names_leads_the_key_symbols():
    code = file(
        "verl/utils/checkpoint/fsdp_checkpoint_manager.py",
        hunk(
            30,
            [
                "     def save(self, path):",
                "-        config = AutoConfig.from_pretrained(path)",
                "+        config = AutoConfig.from_pretrained(path, trust_remote_code=self.trust_remote_code)",
                "+        rank = self.lora_rank_max",
                "+        model = FSDP(model)  # LoRA adapters are saved apart, DeepSeek's too",
                "+",
                "+    def _write_manifest(self, path):",
                "+        pass",
            ],
            section="class FSDPCheckpointManager:",
        ),
    )
    title = (
        "[ckpt] fix: pass trust_remote_code and lora_rank to DeepSeek LoRA checkpoints in "
        "FSDPCheckpointManager"
    )
    a = analyze(record([code], title=title))
    assert set(a.key_symbols[:2]) == {"trust_remote_code", "FSDPCheckpointManager"}
    # a name the patch spells only inside a longer one is not there; an acronym (`LoRA`) names a topic,
    # and so does a CamelCase name the PR neither defines nor edits (`DeepSeek`, in a comment)
    assert not {"lora_rank", "LoRA", "FSDP", "DeepSeek"} & set(a.key_symbols)
    # a name the patch never spells is no symbol of this PR, whatever the title says
    b = analyze(record([code], title="[ckpt] fix: pass model_revision to the checkpoint manager"))
    assert "model_revision" not in b.key_symbols and b.key_symbols[0] == "_write_manifest"


def test_a_line_rewrapped_or_reindented_keeps_the_risk_it_had():
    def risk_kinds(lines):
        return kinds(
            analyze(record([py(lines, name="verl/utils/checkpoint/fsdp.py")], title="[ckpt] fix: save"))
        )

    # a call given one more argument, re-wrapped: its dtype was there before
    rewrapped = [
        "                 with init_empty_weights():",
        "-                    model = auto_cls.from_config(model_config, torch_dtype=torch.bfloat16)",
        "+                    model = auto_cls.from_config(",
        "+                        model_config, torch_dtype=torch.bfloat16, trust_remote_code=self.trust_remote_code",
        "+                    )",
    ]
    assert "numerics" not in risk_kinds(rewrapped)
    # old code moved under a new condition: the thread it starts is the one it started before
    reindented = [
        "-        self._checker = threading.Thread(target=check_alive, args=(self._workers,))",
        "+        if self.check_alive:",
        "+            self._checker = threading.Thread(target=check_alive, args=(self._workers,))",
    ]
    assert "concurrency" not in risk_kinds(reindented)
    # the same call on a new operand is a new computation
    operand = [
        "         _max = tl.maximum(_max_old, m_pid_n)",
        "-        exp_logits = tl.exp(logits - _max[:, None])",
        "+        exp_logits = tl.exp(logits_for_lse - _max[:, None])",
    ]
    assert "numerics" in risk_kinds(operand)
    # and a new dtype on an old call is a new dtype
    cast = ["-    out = model(x)", "+    out = model(x).to(torch.float32)"]
    assert "numerics" in risk_kinds(cast)


def test_a_traceback_in_the_description_names_no_theme():
    body = (
        "Saving a Nemotron checkpoint failed:\n\n```\n"
        'File "/usr/lib/python3.12/concurrent/futures/_base.py", line 456, in result\n'
        "    raise self._exception\n"
        "During handling of the above exception, another exception occurred:\n```\n\n"
        "Pass trust_remote_code to from_config."
    )
    change = py(["+        self.trust_remote_code = trust_remote_code"], name="verl/utils/checkpoint/fsdp.py")
    a = analyze(record([change], title="[fsdp] fix: trust_remote_code on save", body=body))
    assert a.signal("risk.concurrency") is None and a.signal("risk.error_handling") is None
    said = body.replace(
        "Pass trust_remote_code", "The save raced with the async writer; pass trust_remote_code"
    )
    b = analyze(record([change], title="[fsdp] fix: trust_remote_code on save", body=said))
    assert b.signal("risk.concurrency") is not None  # what the author writes in prose still counts


def test_a_bump_of_the_version_file_is_a_release_chore_to_skip():
    bump = file("verl/version/version", hunk(1, ["-0.9.0.dev", "+0.10.0.dev"]))
    a = analyze(record([bump], title="[misc] chore: bump version to 0.10.0.dev"))
    assert a.verdict == "skip" and a.roles == {"build": 2}
    # a module that computes the version is code: a change there is read
    module = file("pkg/_version.py", hunk(1, ["-__version__ = read()", "+__version__ = read(strict=True)"]))
    assert analyze(record([module], title="[misc] chore: strict version")).verdict != "skip"


def test_a_fixs_behaviour_change_points_at_what_it_rewrites_not_what_it_adds():
    new_script = file(
        "examples/grpo_trainer/run_qwen3_235b_256k.sh",
        hunk(1, ["+#!/bin/bash", "+set -x", *[f"+    actor.opt_{i}=True \\" for i in range(30)]]),
        status="added",
    )
    new_module = file(
        "pkg/long_context.py", hunk(1, [f"+LIMIT_{i} = {i}" for i in range(30)]), status="added"
    )
    edited = py(["-    return rollout_n", "+    return rollout_n * 2"], name="pkg/rollout.py")
    a = analyze(
        record([new_script, new_module, edited], title="[model] fix: 256k long-sequence script for 235b")
    )
    change = next(r for r in a.risks if r.kind == "behaviour-change")
    assert [e.file for e in change.evidence] == ["pkg/rollout.py"]


def test_a_fix_that_only_rewords_a_log_quotes_a_hint_or_edits_an_example_changes_no_behaviour():
    def fix(f, title="[data] fix: the warning"):
        return analyze(record([f], title=title))

    def change(a):
        return next((r for r in a.risks if r.kind == "behaviour-change"), None)

    log = py(
        [
            '-        logger.warning(f"tools_kwargs is empty for index {index}")',
            '+        logger.warning("tools_kwargs is empty for index %s", index)',
        ],
        name="pkg/dataset.py",
    )
    hint = py(
        [
            "         reward_manager_cls = cast(",
            "-            type[AbstractRewardManager],",
            '+            "type[AbstractRewardManager]",',
        ],
        name="pkg/reward.py",
    )
    example = file(
        "examples/run_qwen3_32b_npu.sh",
        hunk(
            170,
            [
                "-    +rollout.checkpoint_engine.bucket_mb=4096 \\",
                "+    rollout.checkpoint_engine.bucket_mb=4096 \\",
            ],
        ),
    )
    # an import that moved in a new release of a dependency, with a fallback to its old place
    fallback = py(
        [
            "-from vllm.lora.models import LoRAModel",
            "+try:",
            "+    from vllm.lora.lora_model import LoRAModel",
            "+except ImportError:",
            "+    from vllm.lora.models import LoRAModel",
        ],
        name="pkg/vllm_utils.py",
    )
    for f in (log, hint, example, fallback):
        assert change(fix(f)) is None, f["filename"]
    # an except clause that handles a failure of what runs is code that does something
    handled = py(["-        except ImportError:", "+        except RuntimeError:"], name="pkg/loader.py")
    assert change(fix(handled)) is not None
    # an assertion rewritten, or code only taken out, still changes which runs go on
    check = py(
        [
            "-            assert np.all(tensor_dict2[key] == tensor_dict1[key])",
            "+            assert pd.DataFrame(tensor_dict2[key]).equals(pd.DataFrame(tensor_dict1[key]))",
        ],
        name="pkg/protocol.py",
    )
    assert change(fix(check)).evidence[0].text.startswith("assert pd.DataFrame")
    dropped = py(["         model.train()", "-        torch.cuda.empty_cache()"], name="pkg/engine.py")
    assert change(fix(dropped)).evidence[0].text == "code: +0/-1"
    # the evidence is the first line that does something: not the import or decorator above it, nor a
    # parameter the signature gains (what the body does with it is the change)
    above = [
        "-import os",
        "+import json",
        "+@functools.cache",
        "-    tools = tools",
        "+    tools = json.loads(tools)",
    ]
    gained = [
        "         workers=None,",
        "+        offload: bool = True,",
        "     ):",
        "-        self.x = True",
        "+        self.x = offload",
    ]
    for lines, shown in ((above, "tools = json.loads(tools)"), (gained, "self.x = offload")):
        assert change(fix(py(lines, name="pkg/tools.py"))).evidence[0].text == shown


def test_a_docstring_middle_that_the_hunk_shows_no_quotes_of_is_prose():
    # neither the opening nor the closing quotes are in the hunk: two names side by side are prose
    middle = py(
        [
            "     For more details, see:",
            '-    "When Speed Kills Stability: Demystifying RL Collapse from the Inference-Training Mismatch"',
            "-    https://yingru.notion.site/When-Speed-Kills-Stability",
            '+    "When Speed Kills Stability: Demystifying RL Collapse from the Training-Inference Mismatch"',
            "+    https://richardli.xyz/rl-collapse",
            "+    - Memory-efficient metrics without large intermediate tensors (prevents CUDA OOM with a lock).",
            "     This typed config replaces the old dict-based approach and provides:",
        ],
        name="pkg/config/algorithm.py",
    )
    assert not analyze(record([middle], title="[doc] fix: the reference title")).risks
    # code of every shape keeps reading as code
    for line in ("if x is not None and y:", "return a if b else c", "import a as b", "lambda x: x",
                 "match cmd:", "raise X from e", "x = 'hello world'  # two words", "with open(p) as f:"):  # fmt: skip
        assert not is_python_prose(line), line
    assert is_python_prose("This typed config replaces the old dict-based approach and provides:")
    assert is_python_prose("loss_agg_mode: (str) see `agg_loss`")


def test_a_breaking_change_is_one_the_author_says_this_pr_makes():
    change = py(["-        self.warmup(args)", "+        self.warmup(kwargs)"], name="pkg/server.py")

    def marked(body, title="[rollout] fix: warmup kwargs"):
        s = analyze(record([change], title=title, body=body)).signal("api.breaking")
        return s.evidence[0].text if s else None

    said = "This is a breaking change because configs must now set `warmup_kwargs`."
    assert marked(said) == said
    listed = "Moves the loader.\n\n### Breaking changes\n- `trainer.min_num_params` moved to `trainer.wrap.min_num_params`"
    assert marked(listed).startswith("Breaking changes: `trainer.min_num_params` moved")
    for body in (
        "### Breaking changes\nNone",
        "- ✅ **No breaking changes** - API remains identical",
        "I don't think this is a breaking change even though it gives more diagnostics.",
        "Not sure if this would qualify as a breaking change.",
        # another project's change, and a dependency's release notes quoted by a bot
        "Breaking change in https://github.com/sgl-project/sglang/pull/14869, kept backwards compatible.",
        "Bumps uv.\n<details>\n<summary>Release notes</summary>\n\n### Breaking changes\nThe networking stack.\n</details>",
        "~~Then we would have to make a breaking change.~~ Addressed by the new design.",
        "Black has more layouts when it comes to breaking binary expressions:\n```rust\nlet x = 1;\n```",
    ):
        assert marked(body) is None, body
    # a revert's description says what broke in the PR it undoes
    assert (
        marked("This PR introduces a breaking change that fails CI.", title='Revert "[trainer] feat: x"')
        is None
    )


def test_a_change_made_to_use_less_memory_is_one_to_measure():
    refit = py(
        ["-        weights = gather(experts)", "+        weights = gather(experts, ep_rank=self.ep_rank)"]
    )

    def memory(title):
        return "memory" in kinds(analyze(record([refit], title=title)))

    assert memory("[fsdp] feat: integrate TiledMLP for memory-efficient MLP computation")
    assert memory("[vllm] feat: opt for FP8 rollout memory")
    assert memory("[trainer] fix: reduce memory footprint by moving data to the device per mini batch")
    assert not memory("[trainer] fix: free memory of the old weights")  # what it does, not what it is for
    assert not memory("[doc] fix: memory section of the FAQ")
    assert not memory("[rollout] feat: faster weight sync")  # speed alone
    assert not memory("[profiler] feat: more detailed memory usage reports")  # a topic, not a goal


def test_a_title_that_promises_speed_raises_no_performance_risk():
    # What a change is for is no risk of it: a speed-up is flagged where its code shows one (a default
    # that sizes batches), not because its title says "faster". Readers labelled the titled kind a
    # performance risk on 2 of 9 PRs (benchmarks/labels/README.md).
    refit = py(
        ["-        weights = gather(experts)", "+        weights = gather(experts, ep_rank=self.ep_rank)"]
    )

    def perf(title):
        return "performance" in kinds(analyze(record([refit], title=title)))

    assert not perf("[fsdp] feat: Merge lora in fsdp training to speed up rollout")
    assert not perf("[algo, perf] feat: Vectorize RLOO Advantage Estimator - 20x Speedup")
    sized = file("verl/trainer/config/rollout.yaml", hunk(1, ["-max_num_seqs: 1024", "+max_num_seqs: 256"]))
    assert "performance" in kinds(analyze(record([sized], title="[rollout] fix: fewer sequences")))


def test_a_guide_about_memory_changes_nothing_that_runs():
    guide = file(
        "docs/perf/tuning.md", hunk(1, ["+# Memory tuning", "+", "+Raise `micro_batch_size` first."])
    )
    title = "[doc] feat: a guide to reducing memory use"
    assert "memory" not in kinds(analyze(record([guide], title=title)))
    # beside the code it describes, the same title speaks of what runs
    code = py(["-        size = 1", "+        size = self.micro_batch_size"])
    assert "memory" in kinds(analyze(record([guide, code], title=title)))


def test_asking_for_cores_or_the_current_thread_or_catching_is_no_concurrency():
    def concurrency(line):
        return "concurrency" in kinds(analyze(record([py(["-        n = 1", f"+        {line}"])])))

    assert not concurrency("num_proc = multiprocessing.cpu_count() // 2")
    assert not concurrency("on_main = threading.current_thread() is threading.main_thread()")
    assert not concurrency("is_async = asyncio.iscoroutinefunction(fn)")
    assert not concurrency("except (asyncio.TimeoutError, aiohttp.ClientConnectorError) as e:")
    assert concurrency("pool = multiprocessing.Pool(processes=4)")
    assert concurrency("worker = threading.Thread(target=self._loop, daemon=True)")
    assert concurrency("task = asyncio.create_task(self._run())")
    # asking for the running loop runs nothing; running a coroutine to its end on it does
    assert not concurrency("loop = asyncio.get_running_loop()")
    assert not concurrency("loop = asyncio.get_event_loop()")
    assert concurrency("asyncio.get_event_loop().run_until_complete(self._run())")
    # a name that holds a needle as one of its words is the name of something else
    assert not concurrency("pool_state = self._get_or_create_task_pool(task_key, batch)")
    assert not concurrency("zmq_handle=self._get_zmq_handle(),")
    assert not concurrency("self.controller_info = process_zmq_server_info(self.controller)")
    assert concurrency("self.socket = zmq.Context().socket(zmq.REQ)")
    assert concurrency("task = loop.create_task(self._poll())")


def test_a_switch_flipped_for_every_run_in_a_pr_marked_breaking_is_a_close_read():
    def flipped(old, new):
        return file(
            "pkg/config/trainer.yaml", hunk(3, ["   trainer:", f"-    use_v1: {old}", f"+    use_v1: {new}"])
        )

    title = "[BREAKING][trainer, cfg] chore: enable the V1 trainer by default"
    a = analyze(record([flipped("false", "true")], title=title))
    assert (
        a.verdict == "deep" and a.deciding[0] == "marked breaking, and a switch's default flips for every run"
    )
    # a size default in a PR marked breaking, or a flip that is not marked so: a skim
    sized = file("pkg/config/trainer.yaml", hunk(3, ["   megatron:", "-    etp: 1", "+    etp: null"]))
    assert (
        analyze(record([sized], title="[BREAKING][megatron] chore: set ETP default to null")).verdict
        == "skim"
    )
    plain = "[rollout] chore: change the default to calculate_log_probs=True"
    assert analyze(record([flipped("false", "true")], title=plain)).verdict == "skim"


def test_a_removed_config_key_is_breaking_however_many_keys_the_pr_adds():
    yaml = file(
        "pkg/config/trainer.yaml",
        hunk(3, ["   trainer:", *[f"+    new_key_{i}: 1" for i in range(5)], "-    layer_name_map: {}"]),
    )
    a = analyze(record([yaml], title="[cfg] refactor: unify the trainer configs"))
    breaking = next(r for r in a.risks if r.kind == "breaking-api")
    assert [e.text for e in breaking.evidence] == ["removed layer_name_map"]
    assert a.signal("config.keys").evidence[0].text == "removed layer_name_map"


def test_versions_a_dockerfile_pins_in_its_pip_commands_are_dependency_changes():
    docker = file(
        "docker/Dockerfile.vllm",
        hunk(
            27,
            [
                "-RUN pip install torch==2.9.0 torchvision --index-url https://download.example.org/cu129",
                "+RUN pip install torch==2.9.1 torchvision --index-url https://download.example.org/cu129",
                " RUN pip install pybind11",
                "-RUN pip install vllm[audio]==0.11.0 flashinfer==0.3",
                "+RUN pip install vllm[audio]==0.12.0 flashinfer==0.3",
            ],
        ),
    )
    a = analyze(record([docker], title="[env] fix: upgrade torch and vllm in the image"))
    bumps = [e.text for e in a.signal("deps.bump").evidence]
    assert bumps == ["torch: 2.9.0 -> 2.9.1", "vllm: 0.11.0 -> 0.12.0"]  # flashinfer stays
    assert "compatibility" in kinds(a)
    # a comment that names a pin, or a pin that stays, is no change
    same = file(
        "docker/Dockerfile.vllm", hunk(3, ["-# vllm==0.11.0 is broken", "+RUN pip install vllm==0.11.0"])
    )
    assert not analyze(record([same], title="[env] chore: tidy")).signal("deps.bump")
    # a post release or a local build of the same release changes packaging, not what callers meet
    for old, new in (("2.7.1", "2.7.1.post2"), ("2.6.0", "2.6.0+cu124")):
        rebuilt = file(
            "docker/Dockerfile.ascend",
            hunk(37, [f"-RUN pip install torch_npu=={old}", f"+RUN pip install torch_npu=={new}"]),
        )
        a = analyze(record([rebuilt], title="[ci] chore: set torch-npu in the ascend image"))
        assert a.signal("deps.bump") and "compatibility" not in kinds(a), new
    newer = file(
        "docker/Dockerfile.ascend",
        hunk(37, ["-RUN pip install torch_npu==2.7.1", "+RUN pip install torch_npu==2.7.2"]),
    )
    assert "compatibility" in kinds(
        analyze(record([newer], title="[ci] chore: set torch-npu in the ascend image"))
    )
    # the base image a Dockerfile starts from is its first dependency; a stage name is none
    image = file(
        "docker/Dockerfile.stable.sglang",
        hunk(
            1,
            [
                "-FROM lmsysorg/sglang:v0.5.9",
                "+FROM lmsysorg/sglang:v0.5.12 AS base",
                " ARG PIP_NO_CACHE_DIR=1",
            ],
        ),
    )
    code = py(["-    return 1", "+    return 2"], name="pkg/agent_loop.py")
    b = analyze(record([code, image], title="[docker] chore: upgrade sglang to 0.5.12"))
    assert [e.text for e in b.signal("deps.bump").evidence] == ["lmsysorg/sglang: v0.5.9 -> v0.5.12"]
    assert b.key_files[0].filename == "docker/Dockerfile.stable.sglang"  # the manifest leads
    stage = file("docker/Dockerfile", hunk(1, ["-FROM base AS app", "+FROM base AS runtime"]))
    assert not analyze(record([stage], title="[docker] chore: rename the stage")).signal("deps.bump")


def test_a_bound_that_flips_and_a_source_ref_that_moves_are_dependency_changes():
    req = file("requirements-npu.txt", hunk(5, [" hydra-core", "-numpy>=2.0.0", "+numpy<2.0.0", " pandas"]))
    a = analyze(record([req], title="[npu] chore: tidy requirements"))
    assert [e.text for e in a.signal("deps.bump").evidence] == ["numpy: >=2.0.0 -> <2.0.0"]
    assert "compatibility" in kinds(a)
    # the same bound in another spelling is no change
    same = file("requirements.txt", hunk(5, ["-numpy >= 2.0.0", '+"numpy>=2.0.0"']))
    assert not analyze(record([same], title="[env] chore: quote")).signal("deps.bump")
    # a repository a Dockerfile installs from moves to another branch, tag or commit
    te = "git+https://github.com/NVIDIA/TransformerEngine.git"
    docker = file(
        "docker/Dockerfile.stable.vllm",
        hunk(
            40,
            [
                f"-RUN export NVTE_FRAMEWORK=pytorch && pip3 install --no-build-isolation {te}@release_v2.8",
                f"+RUN export NVTE_FRAMEWORK=pytorch && pip3 install --no-build-isolation {te}@release_v2.10",
                "     git clone https://gitcode.com/Ascend/MindSpeed.git && \\",
                "-    cd MindSpeed && git checkout 2.3.0_core_r0.12.1 && cd .. ",
                "+    cd MindSpeed && git checkout core_r0.16.0 && cd .. ",
                "-RUN git clone -b v0.5.9 https://github.com/sgl-project/sglang.git",
                "+RUN git clone --branch v0.5.10 https://github.com/sgl-project/sglang.git",
            ],
        ),
    )
    b = analyze(record([docker], title="[docker] fix: images for the new releases"))
    assert [e.text for e in b.signal("deps.bump").evidence] == [
        "transformerengine: release_v2.8 -> release_v2.10",
        "mindspeed: 2.3.0_core_r0.12.1 -> core_r0.16.0",
        "sglang: v0.5.9 -> v0.5.10",
    ]
    assert "compatibility" in kinds(b)
    # the same ref on another line, a comment, or a clone that names no ref: nothing moved
    kept = file(
        "docker/Dockerfile",
        hunk(
            3,
            [
                f"-RUN pip install {te}@release_v2.8",
                f"+RUN pip install --no-cache-dir {te}@release_v2.8",
                "+# later: cd MindSpeed && git checkout core_r0.16.0",
                "-RUN git clone https://github.com/sgl-project/sglang.git",
                "+RUN git clone --depth 1 https://github.com/sgl-project/sglang.git",
            ],
        ),
    )
    assert not analyze(record([kept], title="[docker] chore: smaller layers")).signal("deps.bump")


def test_a_hostile_dockerfile_line_does_not_hang_the_dependency_scan():
    # thousands of "git+" and no "@" on one line: a pattern free to start at each "git+" read the rest
    # of the line from each (40 s); matched word by word it is one pass. A hang guard, not a benchmark.
    line = "+RUN pip install " + "git+https://example.org/" * 5000 + "x" * 50000
    started = time.monotonic()
    a = analyze(record([file("docker/Dockerfile", hunk(1, [line]))], title="[docker] chore: x"))
    assert time.monotonic() - started < 10 and not a.signal("deps.bump")


def test_two_manifests_bumped_together_both_lead_the_key_files():
    def image(name, old, new):
        return file(
            f"docker/Dockerfile.stable.{name}",
            hunk(
                3,
                [f"-RUN pip install {p}=={old}" for p in ("torch", "flash_attn", "triton", name)]
                + [f"+RUN pip install {p}=={new}" for p in ("torch", "flash_attn", "triton", name)],
            ),
        )

    code = py(["-    return 1", "+    return 2"], name="pkg/engine.py")
    a = analyze(
        record(
            [image("sglang", "1.0", "1.1"), image("vllm", "2.0", "2.1"), code],
            title="[docker] chore: new images",
        )
    )
    assert {e.file for e in a.signal("deps.bump").evidence} == {
        "docker/Dockerfile.stable.sglang",
        "docker/Dockerfile.stable.vllm",
    }
    assert {k.filename for k in a.key_files[:2]} == {
        "docker/Dockerfile.stable.sglang",
        "docker/Dockerfile.stable.vllm",
    }


def test_new_hints_or_another_spelling_of_a_type_change_no_call():
    def change(old, new, name="estimate_flops"):
        return analyze(record([py([f"-def {name}{old}:", f"+def {name}{new}:"], name="pkg/flops.py")]))

    # annotations only, or the same return type spelled with builtins and `|`: no signature changed
    for old, new in (("(self, seqlens)", "(self, seqlens: list[int])"),
                     ("(self, n=1) -> Optional[List[int]]", "(self, n: int = 1) -> list[int] | None")):  # fmt: skip
        a = change(old, new)
        assert not a.signal("api.signature") and "breaking-api" not in kinds(a), new
    # another return type is a change callers meet
    a = change("(self, data) -> torch.Tensor", "(self, data) -> dict[str, torch.Tensor]")
    assert a.signal("api.signature") and "breaking-api" in kinds(a)
    # a class that gains its first base keeps every use; one that loses a base does not
    gains = py(["-class TaskRunner:", "+class TaskRunner(BaseTaskRunner):"], name="pkg/runner.py")
    assert "breaking-api" not in kinds(analyze(record([gains])))
    loses = py(["-class TaskRunner(BaseTaskRunner):", "+class TaskRunner:"], name="pkg/runner.py")
    assert "breaking-api" in kinds(analyze(record([loses])))
    # nor does one that gains a mixin beside the base it keeps; one that swaps its base does not
    mixin = py(
        ["-class EnvWorker(Worker):", "+class EnvWorker(Worker, DistProfilerExtension):"], name="pkg/env.py"
    )
    assert "breaking-api" not in kinds(analyze(record([mixin])))
    swaps = py(["-class EnvWorker(Worker):", "+class EnvWorker(DistProfilerExtension):"], name="pkg/env.py")
    assert "breaking-api" in kinds(analyze(record([swaps])))
    # a function's new parameter without a default is still one every call must pass
    grows = py(["-def build_env(worker):", "+def build_env(worker, profiler):"], name="pkg/env.py")
    assert "breaking-api" in kinds(analyze(record([grows])))


def test_a_setting_named_after_an_operation_performs_none():
    def themes(lines):
        return kinds(analyze(record([py(lines, name="pkg/config.py")], title="[cfg] fix: help strings")))

    # a field whose longer name holds the needle is a setting about it
    assert "memory" not in themes(
        ["-    steps: int = 1", "+    torch_empty_cache_steps: int | None = field("]
    )
    assert "numerics" not in themes(
        ["-    x: int = 1", "+    train_adam_epsilon: float = field(default=1e-8)"]
    )
    # the switch named by the needle itself, or an operation in the value, still counts
    assert "numerics" in themes(["-    x: int = 1", "+    bf16: bool = field("])
    assert "memory" in themes(["-    x: int = 1", "+    empty_cache_fn: Callable = torch.cuda.empty_cache"])
    # memory that is not pinned is the default: nothing is allocated differently
    assert "memory" not in themes(["-    x = 1", "+    loader = DataLoader(ds, pin_memory=False)"])
    assert "memory" in themes(["-    x = 1", "+    loader = DataLoader(ds, pin_memory=True)"])


def test_a_fix_that_adds_an_early_exit_to_old_code_changes_behaviour():
    guard = file(
        "pkg/engine/base.py",
        hunk(
            242,
            [
                "     def _context_switch(self, device):",
                "         if self.disable_auto_offload:",
                "             return",
                '+        if device != "cpu" and not self.engine.offloaded:',
                "+            return",
                '         if self.mode == "eval":',
            ],
            section="class BaseEngineCtx:",
        ),
    )
    a = analyze(record([guard], title="[fsdp, perf] fix: skip redundant to(cuda) when offload is off"))
    change = next(r for r in a.risks if r.kind == "behaviour-change")
    assert [(e.file, e.line, e.text) for e in change.evidence] == [("pkg/engine/base.py", 246, "return")]
    # a return inside a function the fix adds supplies a missing piece: nothing that ran stops early
    helper = file(
        "pkg/engine/base.py",
        hunk(
            300,
            ["     pass", "+def _is_offloaded(engine):", "+    if engine is None:", "+        return False"],
        ),
    )
    b = analyze(record([helper], title="[fsdp] fix: add the missing offload check"))
    assert "behaviour-change" not in kinds(b)


def test_a_yaml_key_is_named_with_the_sections_above_it():
    nested = file(
        "pkg/config/ppo_trainer.yaml",
        hunk(
            10,
            ["   rollout:", "     name: vllm", "-    mode: sync", "+    mode: async"],
            section="actor_rollout_ref:",
        ),
    )
    deep = file(
        "pkg/config/ppo_trainer.yaml",
        hunk(90, ["     a: 1", "-    mode: sync", "+    mode: async"], section="critic:"),  # a level unseen
    )
    a = analyze(record([nested, deep], title="[rollout] chore: async by default"))
    shown = [e.text for e in a.signal("config.defaults").evidence]
    assert shown == ["actor_rollout_ref.rollout.mode: sync -> async", "mode: sync -> async"]
    # a key added after a file's last line that had no newline
    tail = file(
        "pkg/config/ppo_trainer.yaml",
        hunk(
            10,
            [
                "   rollout:",
                "-    name: vllm",
                "\\ No newline at end of file",
                "+    name: vllm",
                "+    mode: async",
            ],
            section="actor_rollout_ref:",
        ),
    )
    b = analyze(record([tail], title="[rollout] feat: a mode"))
    assert [e.text for e in b.signal("config.keys").evidence] == [
        "added actor_rollout_ref.rollout.mode: async"
    ]
    # a key moved between hunks is one key: the path one side shows names it on the other
    moved = file(
        "pkg/config/model.yaml",
        hunk(3, ["   freeze_vision: true", "-  freeze_language_model: true"], section="lora:"),
        hunk(40, ["   x: 1", "+  freeze_language_model: true"]),
    )
    c = analyze(record([moved], title="[cfg] chore: tidy"))
    assert not c.signal("config.keys") and "breaking-api" not in kinds(c)


def test_a_refusal_shows_its_message_from_the_lines_below():
    guard = py(
        [
            "-        mode = cfg.mode",
            "+        if cfg.mode == 'R2' and cfg.replay:",
            "+            raise ValueError(",
            '+                "conflicting router replay configuration: "',
            '+                "mode R2 and replay cannot both be set"',
            "+            )",
        ]
    )
    a = analyze(record([guard], title="[megatron] fix: router replay"))
    refusal = next(r for r in a.risks if r.kind == "compatibility")
    assert refusal.evidence[0].text == (
        'raise ValueError( "conflicting router replay configuration: " "mode R2 and replay cannot both be set"'
    )


def test_an_error_about_a_setting_the_pr_brings_in_refuses_nothing_that_ran():
    def compat(*files):
        return "compatibility" in kinds(analyze(record(list(files), title="[rollout] feat: limit traces")))

    field = file(
        "pkg/config/rollout.py",
        hunk(
            80,
            [
                "     project_name: Optional[str] = None",
                "+    max_samples_per_step_per_worker: Optional[int] = None",
                "+",
                "     def __post_init__(self):",
                "+        if self.max_samples_per_step_per_worker is not None and self.max_samples_per_step_per_worker < 0:",
                '+            raise ValueError("`max_samples_per_step_per_worker` must be a non-negative integer or null.")',
                "         self.check()",
            ],
            section="class TraceConfig(BaseConfig):",
        ),
    )
    assert not compat(field)
    # an old setting checked anew still stops runs that set it that way
    old = py(
        [
            "     def __post_init__(self):",
            "         if self.use_remove_padding is None:",
            "+        if self.ulysses_sequence_parallel_size > 1 and not self.use_remove_padding:",
            '+            raise ValueError("sequence parallelism needs `use_remove_padding`")',
        ],
        name="pkg/config/actor.py",
    )
    assert compat(old)
    # a new local variable in the message says nothing of what runs set; an old name beside the new
    # one says old calls now stop
    local = py(
        [
            "     def load(self, path):",
            "+        legacy_adapter_path = os.path.join(path, 'adapter')",
            "+        if os.path.exists(legacy_adapter_path):",
            '+            raise RuntimeError(f"Found a legacy checkpoint at {legacy_adapter_path}")',
        ],
        name="pkg/checkpoint.py",
    )
    assert compat(local)
    renamed = py(
        [
            "+def gather_outputs_and_unpad(x):",
            "+    return x",
            " def gather_outpus_and_unpad(x):",
            "-    return x",
            '+    raise RuntimeError("use gather_outputs_and_unpad instead of gather_outpus_and_unpad")',
        ],
        name="pkg/ulysses.py",
    )
    assert compat(renamed)


def test_handing_the_allocators_cache_back_is_no_memory_risk_but_still_worth_attention():
    def analysed(line):
        return analyze(record([py(["-        x = 1", f"+        {line}"])], title="[fsdp] feat: x"))

    for line in ("torch.cuda.empty_cache()", "aggressive_empty_cache(force_sync=True)"):
        a = analysed(line)
        assert "memory" not in kinds(a) and a.signal("risk.memory"), line  # a PR that manages memory
    for line in (
        "torch.cuda.ipc_collect()",
        "buffer = buffer.pin_memory()",
        "shm = shared_memory.SharedMemory(create=True, size=bucket_size)",
        'buffer = torch.empty(bucket_size, dtype=torch.uint8, device="cuda")',
    ):
        assert "memory" in kinds(analysed(line)), line
    # a name that only holds the word allocates nothing; nor does a comment, nor a tensor made like one
    for line in (
        "# a SharedMemory segment per sync",
        "use_shm = config.shared_memory_transfer",
        "# torch.empty(bucket_size) would not be zeroed",
        "mask = torch.empty_like(scores)",
    ):
        assert "memory" not in kinds(analysed(line)), line


def test_a_new_entry_in_the_projects_registries_is_a_close_read():
    verl = load_conventions("verl-project/verl")
    loss = [
        '+@register_policy_loss("dppo_tv")',
        "+def compute_policy_loss_dppo_tv(old_log_prob, log_prob, advantages, response_mask, config=None):",
        "+    ratio = torch.exp(log_prob - old_log_prob)",
        *[f"+    term_{i} = advantages * {i}" for i in range(60)],
    ]
    title = "[algo] feat: add DPPO with binary TV"
    body = "DPPO replaces ratio clipping with a binary trust-region mask."
    a = analyze(
        record([py(loss, name="verl/trainer/ppo/core_algos.py")], title=title, body=body), conventions=verl
    )
    assert a.signal("api.registered").evidence[0].text == 'register_policy_loss("dppo_tv")'
    assert a.verdict == "deep"
    # the same loss, not registered (a helper), is a skim
    helper = [line for line in loss if "register_policy_loss" not in line]
    c = analyze(
        record([py(helper, name="verl/trainer/ppo/core_algos.py")], title=title, body=body), conventions=verl
    )
    assert c.verdict == "skim"
    # a project that names no registries reads the same code for its size and risks alone
    assert not analyze(record([py(loss, name="pkg/core_algos.py")], title=title)).signal("api.registered")
    # a registration re-wrapped over lines, or moved between files, adds no entry
    rewrapped = py(
        [
            "-@register_adv_est(AdvantageEstimator.GRPO)",
            "+@register_adv_est(",
            "+    AdvantageEstimator.GRPO",
            "+)",
        ],
        name="verl/trainer/ppo/core_algos.py",
    )
    moved_out = py(
        ['-@register_policy_loss("gpg")', "-def compute_gpg(x):"], name="verl/trainer/ppo/core_algos.py"
    )
    moved_in = py(
        ['+@register_policy_loss("gpg")', "+def compute_gpg(x):"], name="verl/trainer/ppo/losses.py"
    )
    b = analyze(record([rewrapped, moved_out, moved_in], title="[algo] refactor: tidy"), conventions=verl)
    assert not b.signal("api.registered")


def test_a_tensor_made_in_full_precision_is_no_numerics_but_one_in_low_precision_is():
    def numerics(line):
        return "numerics" in kinds(analyze(record([py(["-        x = 1", f"+        {line}"])])))

    assert not numerics("rm_scores = torch.zeros_like(response_mask, dtype=torch.float32)")
    assert not numerics("rm_scores = torch.tensor(scores, dtype=torch.float32).unsqueeze(-1)")
    assert numerics("weights = torch.zeros_like(response_mask, dtype=torch.bfloat16)")
    assert numerics("logits = logits.to(torch.float32)")  # a cast of values already computed


def test_a_value_written_into_a_call_or_a_signature_is_a_behaviour_change():
    # no config holds `max_colocate_count=1`: every pool now asks for a third of a GPU per worker
    pools = py(
        [
            "     resource_pool = RayResourcePool(",
            "-        process_on_nodes=nodes, use_gpu=True, max_colocate_count=1, name_prefix=name",
            "+        process_on_nodes=nodes, use_gpu=True, max_colocate_count=3, name_prefix=name",
            "     )",
        ],
        name="pkg/trainer/ray_trainer.py",
    )
    a = analyze(record([pools], title="[worker] feat: restore colocated workers"))
    change = next(r for r in a.risks if r.kind == "behaviour-change")
    assert change.evidence[0].text == "max_colocate_count: 1 -> 3"
    assert (change.evidence[0].file, change.evidence[0].line) == ("pkg/trainer/ray_trainer.py", 11)
    # a parameter's default: every caller that leaves it out
    strict = py(
        [
            "     def load(self, path: str,",
            "-             strict: bool = False,",
            "+             strict: bool = True,",
            "     ):",
        ],
        name="pkg/reward_model.py",
    )
    b = analyze(record([strict], title="[reward] feat: discriminative reward models"))
    assert [e.text for r in b.risks if r.kind == "behaviour-change" for e in r.evidence] == [
        "strict: False -> True"
    ]
    # not: a string (a label, a message), another name, a comment, a test, a recipe, a dataclass field
    # (a config default, read as such), nor two lines that differ in more than values
    quiet = [
        ['-    log(role="rollout", level=1)', '+    log(role="actor_rollout", level=1)'],
        ["-    run(retries=3)", "+    run(attempts=5)"],
        ["-    # call(timeout=5)", "+    # call(timeout=10)"],
        ["-    call(timeout=5)", "+    call_async(timeout=10)"],
    ]
    for lines in quiet:
        c = analyze(record([py(lines, name="pkg/worker.py")], title="[worker] feat: x"))
        assert not c.signal("code.values"), lines
    same = ["-    wait(timeout=5)", "+    wait(timeout=10)"]
    verl = load_conventions("verl-project/verl")
    for name in ("tests/test_worker.py", "recipe/dapo/worker.py"):
        d = analyze(
            record([py(same, name=name)], title="[worker] feat: x", repo="verl-project/verl"),
            conventions=verl,
        )
        assert not d.signal("code.values"), name
    field = file("pkg/config.py", hunk(3, [" class RolloutConfig:", "-    n: int = 1", "+    n: int = 4"]))
    e = analyze(record([field], title="[rollout] feat: x"))
    assert not e.signal("code.values") and e.signal("config.defaults")
    hf_field = file(
        "pkg/grpo_config.py",
        hunk(
            40,
            [
                "     max_completion_length: int = field(",
                "-        default=256,",
                "+        default=512,",
                "     )",
            ],
        ),
    )
    f = analyze(record([hf_field], title="Change default max_completion_length"))
    assert not f.signal("code.values") and f.signal("config.defaults")


def test_a_module_removed_or_moved_breaks_the_imports_of_its_old_path():
    def breaking(*files, title="[model] refactor: engine folder structure"):
        a = analyze(record(list(files), title=title))
        risk = next((r for r in a.risks if r.kind == "breaking-api"), None)
        return [e.text for e in risk.evidence] if risk else []

    engine = file("verl/workers/engine_workers.py", hunk(1, ["+class ActorWorker(Worker):", "+    pass"]))
    # every class moves to another file: none is removed, but `from verl.workers.roles import ...` fails
    gone = file(
        "verl/workers/roles/actor.py", hunk(1, ["-class ActorWorker(Worker):", "-    pass"]), status="removed"
    )
    package = file(
        "verl/workers/roles/__init__.py", hunk(1, ["-from .actor import ActorWorker"]), status="removed"
    )
    assert breaking(engine, gone, package) == [
        "module removed: verl.workers.roles.actor",
        "module removed: verl.workers.roles",
    ]
    moved = file("verl/utils/tokenizer/chat_template.py", status="renamed",
                 previous_filename="verl/utils/chat_template.py")  # fmt: skip
    assert breaking(moved) == ["module moved: verl.utils.chat_template -> verl.utils.tokenizer.chat_template"]
    # what nobody imports: a test, a private module, a developer's script, an example
    for path in ("tests/roles/test_actor.py", "verl/workers/_impl.py", "scripts/convert_ckpt.py",
                 "examples/run_actor.py", "docs/roles.md"):  # fmt: skip
        quiet = file(path, hunk(1, ["-x = 1"]), status="removed")
        assert breaking(engine, quiet) == [], path


def test_a_change_to_what_runs_report_is_read_by_those_who_read_the_reports():
    monitor = py(
        [
            "-        return outputs",
            "+        counts = torch.bincount(routed_experts.flatten(), minlength=num_experts)",
            "+        self._lock = threading.Lock()",
            "+        buffer = torch.empty(num_experts, dtype=torch.int64, device='cuda')",
            "+        task = asyncio.create_task(self._publish(counts))",
            *[f"+        metrics['moe/load_{i}'] = counts[{i}].item()" for i in range(40)],
            "+        return outputs",
        ],
        name="verl/workers/rollout/replica.py",
    )

    test = file("tests/test_replica.py", hunk(1, [f"+def test_load_{i}():" for i in range(5)]))

    def judged(title, *files):
        a = analyze(record(list(files or [monitor, test]), title=title))
        return a.verdict, a.deciding[0]

    verdict, why = judged("[trainer, rollout] feat: log rollout moe load-balance metrics")
    assert (verdict, why.split(":")[0]) == (
        "skim",
        "changes what runs report (metrics, profiles, traces, logs)",
    )
    # the same code under a title about what it computes, about a loss beside its metrics, or marked
    # breaking is judged on its signals: a close read
    for title in (
        "[rollout] feat: balance the MoE load across replicas",
        "[megatron] fix: align MTP loss and rollout metrics",
        "[BREAKING][perf] feat: profiler hooks for every worker",
    ):
        assert judged(title)[0] == "deep", title
    # a small fix of what a run logs is told by its title
    logger = py(['-        logger.warning(f"skip {n}")', '+        logger.warning("skip %s", n)'])
    assert judged("[data] fix: use %-style placeholders in logger.warning()", logger)[0] == "skip"


def test_a_sample_run_by_hand_raises_only_security_and_breaking_risks():
    # the same fix, a dtype, a lock and a default, once in the library and once in an example
    lines = [
        "-    seed = 0",
        "+    seed = args.seed",
        "+    x = x.to(torch.bfloat16)",
        "+    with self._lock:",
        "+        step()",
    ]
    config = [" trainer:", "-  micro_batch_size: 64", "+  micro_batch_size: 8"]
    title = "[trainer] fix: seed the data loader"

    def risks(where):
        code = py(lines, name=f"{where}/train.py")
        yaml = file(f"{where}/config/train.yaml", hunk(3, config))
        return kinds(analyze(record([code, yaml], title=title)))

    ran = {"behaviour-change", "numerics", "concurrency", "config-default-change", "memory", "performance"}
    assert ran <= risks("pkg")
    # whoever copies the example meets them; no run of the project does
    assert not ran & risks("examples")
    # beside a larger rewrite of an example, the fix still changes the library's path it rewrites
    sample = py(
        [f"-    step({i})" for i in range(5)] + [f"+    step({i}, seed)" for i in range(5)],
        name="examples/a.py",
    )
    fix = py(["-    seed = 0", "+    seed = args.seed"], name="pkg/train.py")
    change = next(
        r for r in analyze(record([sample, fix], title=title)).risks if r.kind == "behaviour-change"
    )
    assert [e.file for e in change.evidence] == ["pkg/train.py"]
    # the project's own lines are shown before a sample's, however many the sample has
    many = py([f"+    with self._lock_{i}:" for i in range(4)], name="examples/serve.py")
    one = py(["+    with self._lock:"], name="pkg/serve.py")
    samples_conf = file(
        "examples/config/a.yaml",
        hunk(3, [" trainer:"] + [f"-  k{i}: 1" for i in range(4)] + [f"+  k{i}: 2" for i in range(4)]),
    )
    own_conf = file(
        "pkg/config/a.yaml", hunk(3, [" trainer:", "-  micro_batch_size: 64", "+  micro_batch_size: 8"])
    )
    mixed = analyze(record([many, samples_conf, one, own_conf], title="[trainer] feat: locks and sizes"))
    shown = {r.kind: [e.file for e in r.evidence] for r in mixed.risks}
    assert shown["concurrency"] == ["pkg/serve.py"]
    assert shown["config-default-change"] == ["pkg/config/a.yaml"]
    # a sample that runs a command string through a shell is still a hole where it runs, and a key
    # gone from a sample's config breaks the command lines that pass it
    shell = py(['+    subprocess.run(f"python {args.script}", shell=True)'], name="examples/launch.py")
    gone = file("examples/config/train.yaml", hunk(3, [" trainer:", "-  warmup: 10"]))
    kept = kinds(analyze(record([shell, gone], title="[examples] feat: launch from a script")))
    assert {"security", "breaking-api"} <= kept


def test_the_newest_release_of_one_file_edited_alike_leads():
    edit = hunk(5, ["-RUN pip install torch==2.6.0", "+RUN pip install torch==2.7.1"])
    dockerfiles = [
        file("docker/Dockerfile.ascend_8.2.rc1_a2", edit),
        file("docker/Dockerfile.ascend_8.2.rc1_a3", edit),
        file("docker/Dockerfile.ascend_8.3.rc1_a2", edit),
    ]
    a = analyze(record(dockerfiles, title="[ci] fix: torch version in the ascend images"))
    assert [k.filename for k in a.key_files] == [
        "docker/Dockerfile.ascend_8.3.rc1_a2",
        "docker/Dockerfile.ascend_8.2.rc1_a2",
        "docker/Dockerfile.ascend_8.2.rc1_a3",
    ]
    # a model's size is no release: launch scripts for two sizes keep their order
    script = hunk(3, ["-    trainer.total_epochs=1 \\", "+    trainer.total_epochs=2 \\"])
    runs = [file("examples/run_qwen3_8b.sh", script), file("examples/run_qwen3_32b.sh", script)]
    b = analyze(record(runs, title="[examples] chore: two epochs"))
    assert [k.filename for k in b.key_files] == ["examples/run_qwen3_8b.sh", "examples/run_qwen3_32b.sh"]
