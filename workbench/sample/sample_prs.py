"""The sample's pull requests: titles, descriptions, discussions and code edits, written for the sample.

Numbers leave gaps where issues live (GitHub numbers issues and PRs in one sequence).
Times are UTC, "YYYY-MM-DD HH:MM".
"""

from __future__ import annotations

from build_sample import PR, Add, Binary, Delete, Edit, Omitted, Rename  # noqa: F401
from sample_agent import agent_feature_ops

# PR numbers, named so cross-references in descriptions stay right.
CI_CACHE, QUICKSTART, LEAK, ACK, KL_DEFAULT, RENAME, VLLM_BUMP, AGENT = 181, 182, 183, 185, 186, 188, 189, 190
REVERT_KL, DIAGRAM, SGL_ASYNC, ENTROPY, NULL_AUTHOR, UNSAFE_HTML, UV_LOCK, GAE = (
    192,
    193,
    195,
    196,
    197,
    199,
    200,
    202,
)
GRPO, FREE_CACHE, SCHEDULES, ACK_DOCS, CI_PATHS, RESUME, SEQLEN, STOP_IDS = (
    203,
    205,
    206,
    208,
    209,
    211,
    212,
    214,
)
ALIAS, DEAD_WORKER, DAPO, PERF_STATS, SGL_OOM, TYPOS, LORA, E2E, NAN_LOSS, RUFF = (
    215, 216, 218, 219, 221, 222, 224, 225, 226, 228,
)  # fmt: skip
ISSUE_LEAK, ISSUE_RACE, ISSUE_DEAD, ISSUE_RESUME, ISSUE_NAN = 180, 184, 204, 207, 223


def body(
    what: str, *, test: str = "", usage: str = "", design: str = "", docs: bool = False, tests: bool = True
) -> str:
    """The repository's PR template (modelled on verl's), with the author's text in it."""
    return f"""### What does this PR do?

> Add **concise** overview of what this PR aims to achieve or accomplish. Reference related GitHub issues and PRs that help with the review.

{what.strip()}

### Checklist Before Starting

- [x] Search for similar PRs. Paste at least one query link here: https://github.com/example-org/minirl/pulls?q=is%3Apr
- [x] Format the PR title as `[{{modules}}] {{type}}: {{description}}` (This will be checked by the CI)
  - `{{modules}}` include `fsdp`, `megatron`, `sglang`, `vllm`, `rollout`, `trainer`, `ci`, `recipe`, `misc`, `perf`, `algo`, `data`, `doc`
  - If this PR involves multiple modules, separate them with `,` like `[megatron, fsdp, doc]`
  - `{{type}}` is in `feat`, `fix`, `refactor`, `chore`, `test`
  - If this PR breaks any API (CLI arguments, config, function signature, etc.), add `[BREAKING]` to the beginning of the title.

### Test

> For changes that can not be tested by CI (e.g., algorithm implementation, new model support), validate by experiment(s) and show results like training curve plots, evaluation results, etc.

{test.strip() or "Covered by the existing unit tests."}

### API and Usage Example

> Demonstrate how the API changes if any, and provide usage example(s) if possible.

{usage.strip() or "No API change."}

### Design & Code Changes

> Demonstrate the high-level design if this PR is complex, and list the specific changes.

{design.strip() or "See the diff."}

### Checklist Before Submitting

> [!IMPORTANT]
> Please check all the following items before requesting a review, otherwise the reviewer might deprioritize this PR for review.

- [x] Read the [Contribute Guide](https://github.com/example-org/minirl/blob/main/CONTRIBUTING.md).
- [x] Apply [pre-commit checks](https://github.com/example-org/minirl/blob/main/CONTRIBUTING.md#code-linting-and-formatting): `pre-commit install && pre-commit run --all-files --show-diff-on-failure --color=always`
- [{"x" if docs else " "}] Add / Update [the documentation](https://github.com/example-org/minirl/tree/main/docs).
- [{"x" if tests else " "}] Add unit or end-to-end test(s) to [the CI workflow](https://github.com/example-org/minirl/tree/main/.github/workflows) to cover all the code. If not feasible, explain why: ...
- [ ] Once your PR is ready for CI, send a message in the `ci-request` channel.
"""


W = "minirl/rollout/weight_sync.py"
T_WS = "tests/test_weight_sync.py"
CFG = "minirl/config/ppo_trainer.yaml"
TRAINER = "minirl/trainer/ppo_trainer.py"
ALGOS = "minirl/trainer/core_algos.py"
VLLM = "minirl/rollout/vllm_rollout.py"
SGL = "minirl/rollout/sglang_rollout.py"
CI = ".github/workflows/tests.yml"

PRS: list[PR] = []

# ---------------------------------------------------------------------------------------------------
PRS.append(PR(
    CI_CACHE, "[ci] ci: cache pip wheels and run CPU unit tests with a timeout", author="eve-ops",
    created="2026-09-18 02:10", closed="2026-09-18 09:40", labels=["ci"],
    body=body(
        "The unit job re-downloaded ~2.3 GB of CUDA wheels on every push and sometimes hung for the full 6 h "
        "job limit when a test deadlocked. This caches pip, installs CPU-only torch for the unit job, "
        "adds a per-test timeout and cancels superseded runs on the same branch.",
        test="Unit job: 14m10s -> 4m05s (median of 5 runs on this branch). A deliberately hanging test now fails after 600 s.",
        tests=False,
    ),
    ops=[
        Edit(CI, "on:\n  pull_request:\n  push:\n    branches: [main]\n",
             "on:\n  pull_request:\n  push:\n    branches: [main]\n\nconcurrency:\n"
             "  group: ${{ github.workflow }}-${{ github.ref }}\n  cancel-in-progress: true\n"),
        Edit(CI, '          python-version: "3.11"\n      - run: pip install -e .[test]\n      - run: pytest -q tests\n',
             '          python-version: "3.11"\n          cache: pip\n          cache-dependency-path: pyproject.toml\n'
             "      - run: pip install -e .[test] --extra-index-url https://download.pytorch.org/whl/cpu\n"
             '      - run: pytest -q tests --timeout=600 -m "not gpu"\n'),
    ],
    reviews=[("lena-park", "2026-09-18 09:31", "APPROVED", "Nice, the queue was getting long.")],
    commits=[("2026-09-18 02:08", "ci: cache pip and use cpu torch for unit tests"),
             ("2026-09-18 02:40", "ci: add per-test timeout and cancel superseded runs")],
))  # fmt: skip

QUICKSTART_MD = """# Quickstart: PPO on GSM8K on one node

This walks through a first PPO run with Qwen2.5-0.5B-Instruct on GSM8K on a single node with
2 GPUs (24 GB each is enough).

## 1. Install

    pip install -e .[vllm]

## 2. Prepare the data

    python examples/data_preprocess/gsm8k.py --local_dir ~/data/gsm8k

This writes `train.parquet` and `test.parquet` with a `prompt` column and a `reward_model.ground_truth` column.

## 3. Train

    python -m minirl.trainer.main_ppo \\
        data.train_files=~/data/gsm8k/train.parquet \\
        data.val_files=~/data/gsm8k/test.parquet \\
        actor.model_path=Qwen/Qwen2.5-0.5B-Instruct \\
        rollout.tensor_model_parallel_size=1 \\
        trainer.total_epochs=3

Validation accuracy should move from about 0.36 to above 0.50 within 100 steps.

## 4. If you run out of memory

- lower `rollout.gpu_memory_utilization` (vLLM reserves that fraction of the GPU for weights and KV cache);
- lower `actor.ppo_micro_batch_size_per_gpu`;
- keep `rollout.enforce_eager: true` (CUDA graphs need extra memory).

## 5. Where to go next

- [Configuration reference](config.md)
- [Rollout backends](rollout.md)
"""

PRS.append(PR(
    QUICKSTART, "[doc] docs: add a single-node quickstart for PPO on GSM8K", author="yuki-t",
    created="2026-09-18 11:20", closed="2026-09-19 08:05", labels=["documentation"],
    body=body(
        "New users keep asking in discussions how to do a first run; the README only has the install line. "
        "This adds `docs/quickstart.md` (install, data, train, memory tips) and links it from the index.",
        test="Followed the page on a fresh 2x RTX 4090 box: val acc 0.362 -> 0.517 at step 100.",
        docs=True, tests=False,
    ),
    ops=[
        Add("docs/quickstart.md", QUICKSTART_MD),
        Edit("docs/index.md", "- [Installation](install.md)\n", "- [Quickstart](quickstart.md)\n- [Installation](install.md)\n"),
    ],
    comments=[("tkobayashi", "2026-09-18 14:02", "Could you add the memory tips? That is the first thing people hit on 24 GB cards."),
              ("yuki-t", "2026-09-18 16:45", "Added section 4. Thanks!")],
    reviews=[("tkobayashi", "2026-09-19 07:58", "APPROVED", "")],
    commits=[("2026-09-18 11:15", "docs: quickstart"), ("2026-09-18 16:40", "docs: quickstart memory tips")],
))  # fmt: skip

# ---- the memory leak ------------------------------------------------------------------------------
LEAK_TEST = """

def test_sender_keeps_no_buffers_after_send():
    params = {f"layer{i}.weight": torch.randn(32, 32) for i in range(4)}
    channel = LoopbackChannel()
    sender = BucketedWeightSender(channel, bucket_mb=1, device="cpu")
    for _ in range(3):
        sender.send(params.items())
        BucketedWeightReceiver(channel, RecordingEngine()).receive()
    assert sender._handles == []
    assert sender._buckets == []


def test_repeated_syncs_do_not_keep_old_buffers_alive():
    # Regression test for the host-memory leak: every sync used to pin one more copy of the weights.
    params = {"w": torch.randn(256, 256)}
    channel = LoopbackChannel()
    shared = []
    share = channel.share
    channel.share = lambda tensor: shared.append(weakref.ref(tensor)) or share(tensor)
    sender = BucketedWeightSender(channel, bucket_mb=1, device="cpu")
    for _ in range(5):
        sender.send(params.items())
        BucketedWeightReceiver(channel, RecordingEngine()).receive()
    gc.collect()
    assert [ref() for ref in shared] == [None] * 5
"""

PRS.append(PR(
    LEAK, "[rollout, vllm] fix: free weight buckets after each sync to stop host memory growth", author="mzhou",
    created="2026-09-20 03:30", closed="2026-09-23 10:12", labels=["bug", "rollout"],
    body=body(
        f"""Fixes #{ISSUE_LEAK}.

Host RSS of the trainer grew by ~3.1 GB every 100 steps with Qwen2.5-7B and `weight_sync.bucket_mb=512`
until the node OOM-killed the job around step 1,400.

**Root cause.** `BucketedWeightSender.send()` appends every bucket's IPC handle to `self._handles` and
never clears it. A CUDA IPC handle keeps the bucket's storage alive until the handle is dropped, so
each sync pinned one more full copy of the weights. `_cleanup()` set `bucket.buffer = None`, which
looked like a release but dropped only one of the two references. The `gc.collect()` there never
helped (nothing is cyclic) and costs ~1.2 s per sync on a 7B model with many small tensors.

**Fix.** `_cleanup()` clears `_handles` and `_buckets`, and the full GC is gone.

Numbers (Qwen2.5-7B, 8xH100, 300 steps):
| | before | after |
|---|---|---|
| trainer host RSS at step 300 | 50.6 GB | 41.2 GB (flat after step 10) |
| weight sync time per step | 2.9 s | 1.7 s |

Not addressed here: the receiver keeps the last bucket mapped until the next sync starts; that is
bounded (one bucket) so I left it for a follow-up.""",
        test="Added a regression test that runs five syncs and checks, with weakrefs, that no shared buffer "
             "outlives its sync; it fails on main (5 live buffers) and passes here. Ran the 300-step job above.",
        design="- `_cleanup`: clear `_handles` and `_buckets`; drop `gc.collect()`\n- tests: two regression tests",
    ),
    ops=[
        Edit(W, "import gc\nimport logging\n", "import logging\n"),
        Edit(W, "    def _cleanup(self):\n        for bucket in self._buckets:\n            bucket.buffer = None\n"
                "        gc.collect()\n        torch.cuda.empty_cache()\n",
             "    def _cleanup(self):\n"
             "        # Each IPC handle pins its bucket's storage until the handle itself is dropped; keeping\n"
             "        # them in self._handles across syncs leaked one full copy of the weights per step.\n"
             "        self._handles.clear()\n        for bucket in self._buckets:\n            bucket.buffer = None\n"
             "        self._buckets = []\n        torch.cuda.empty_cache()\n"),
        Edit(T_WS, "import torch\n", "import gc\nimport weakref\n\nimport torch\n"),
        Edit(T_WS, "        torch.testing.assert_close(engine.weights[name], tensor)\n",
             "        torch.testing.assert_close(engine.weights[name], tensor)\n" + LEAK_TEST),
    ],
    comments=[
        ("lena-park", "2026-09-20 09:14", "Great find. Do we know whether the SGLang path has the same pattern?"),
        ("mzhou", "2026-09-20 12:40", "SGLang goes through `update_weights_from_tensor` and does not keep handles, "
                                      "so it should be fine. I checked RSS over 200 steps there: flat."),
        ("tkobayashi", "2026-09-22 02:05", "One thing to watch: now that the buffers are freed right after `put()`, "
                                           "the receiver must be done reading before we free. Today the receiver is "
                                           "synchronous so it is OK, but if anyone makes it async this becomes a race."),
        ("mzhou", "2026-09-22 03:30", "Good point, I will look at an explicit ACK in a follow-up."),
    ],
    reviews=[
        ("tkobayashi", "2026-09-21 06:20", "COMMENTED", "Mostly good, one question on the GC removal."),
        ("lena-park", "2026-09-23 09:58", "APPROVED", "LGTM. Thanks for the numbers."),
    ],
    review_comments=[
        (0, "tkobayashi", "2026-09-21 06:18", W, "self._handles.clear()",
         "Is the full `gc.collect()` not needed for the CUDA IPC refcount to drop? I remember an issue in "
         "torch where the handle was only released on GC.", None, True),
        (0, "mzhou", "2026-09-21 08:02", W, "self._handles.clear()",
         "That was for handles captured in reference cycles. Here nothing is cyclic; the regression test "
         "checks the buffers die without it, and the sync is 1.2 s faster.", 0, True),
    ],
    commits=[("2026-09-20 03:01", "rollout: clear IPC handles after weight sync"),
             ("2026-09-20 03:25", "tests: regression test for weight-sync memory growth"),
             ("2026-09-21 07:50", "rollout: drop full gc.collect from _cleanup")],
))  # fmt: skip

# ---- the race -------------------------------------------------------------------------------------
PRS.append(PR(
    ACK, "[rollout] fix: wait for the receiver's ACK before freeing IPC buckets", author="mzhou",
    created="2026-09-24 05:00", closed="2026-09-26 12:30", labels=["bug", "rollout"],
    body=body(
        f"""Follow-up to #{LEAK}. Fixes #{ISSUE_RACE}.

After #{LEAK} the sender frees each bucket as soon as it has put the handle on the channel. With the
async receiver used by the multi-node launcher, the rollout worker can still be copying out of the
shared buffer when the sender frees it and the allocator hands the memory to the next bucket. The
engine then loads garbage. **Root cause:** a use-after-free race between the sender's `_cleanup()` and the
receiver's copy. About 1 in 40 runs showed NaN rewards right after a sync, and
`test_roundtrip_small_buckets` failed 3/200 times with a slow receiver.

**Fix.** The receiver acknowledges each bucket after `load_weights`; the sender tracks
`_ack_pending` under a lock and waits for every ACK (with a timeout) before `_cleanup()`.

Not addressed: if the rollout worker dies mid-sync the sender waits for the full `ack_timeout`
(60 s) and then raises `TimeoutError`; detecting a dead peer sooner needs a health check and is
left for a follow-up.""",
        test="Ran the receiver in a thread with an artificial 50 ms delay per bucket: 0/500 failures (was 3/200). "
             "The 8xH100 Qwen2.5-7B job ran 1,000 steps without a NaN; sync time unchanged at 1.7 s.",
        design="- `BucketedWeightSender`: `_lock`, `_ack_pending`, `on_ack`, `_wait_for_acks`\n"
               "- `BucketedWeightReceiver.receive`: `channel.ack(index)` after each bucket\n"
               "- tests: the loopback channel is now thread-safe and the receiver runs in a thread",
    ),
    ops=[
        Edit(W, "import logging\nfrom dataclasses", "import logging\nimport threading\nimport time\nfrom dataclasses"),
        Edit(W, "DEFAULT_BUCKET_MB = 512\n", "DEFAULT_BUCKET_MB = 512\nDEFAULT_ACK_TIMEOUT_S = 60.0\n"),
        Edit(W, '    def __init__(self, channel, bucket_mb: int = DEFAULT_BUCKET_MB, device: str = "cuda"):\n'
                "        self.channel = channel\n        self.bucket_bytes = bucket_mb << 20\n        self.device = device\n"
                "        self._buckets: list[Bucket] = []\n        self._handles = []\n",
             "    def __init__(\n        self,\n        channel,\n        bucket_mb: int = DEFAULT_BUCKET_MB,\n"
             '        device: str = "cuda",\n        ack_timeout: float = DEFAULT_ACK_TIMEOUT_S,\n    ):\n'
             "        self.channel = channel\n        self.bucket_bytes = bucket_mb << 20\n        self.device = device\n"
             "        self.ack_timeout = ack_timeout\n        self._buckets: list[Bucket] = []\n        self._handles = []\n"
             "        self._lock = threading.Lock()\n        self._ack_pending: set[int] = set()\n"),
        Edit(W, "            handle = self.channel.share(bucket.buffer)\n            self._handles.append(handle)\n",
             "            handle = self.channel.share(bucket.buffer)\n            with self._lock:\n"
             "                self._handles.append(handle)\n                self._ack_pending.add(index)\n"),
        Edit(W, '        self.channel.put({"done": True})\n        self._cleanup()\n        return len(self._buckets)\n',
             '        self.channel.put({"done": True})\n        self._wait_for_acks()\n        count = len(self._buckets)\n'
             "        self._cleanup()\n        return count\n\n"
             "    def on_ack(self, index: int) -> None:\n        with self._lock:\n            self._ack_pending.discard(index)\n\n"
             "    def _wait_for_acks(self) -> None:\n"
             "        # Freeing a bucket while the receiver still reads it through the IPC handle hands the\n"
             "        # rollout engine garbage weights: wait until every bucket is acknowledged.\n"
             "        deadline = time.monotonic() + self.ack_timeout\n        while True:\n"
             "            for index in self.channel.drain_acks():\n                self.on_ack(index)\n"
             "            with self._lock:\n                if not self._ack_pending:\n                    return\n"
             "                pending = sorted(self._ack_pending)\n"
             "            if time.monotonic() > deadline:\n"
             '                raise TimeoutError(f"rollout worker did not acknowledge buckets {pending}")\n'
             "            time.sleep(0.001)\n"),
        Edit(W, "            self.engine.load_weights(weights)\n            loaded += len(weights)\n",
             "            self.engine.load_weights(weights)\n"
             '            self.channel.ack(msg["index"])  # only now may the sender free this bucket\n'
             "            loaded += len(weights)\n"),
        Edit(T_WS, "import gc\nimport weakref\n", "import gc\nimport queue\nimport threading\nimport time\nimport weakref\n"),
        Edit(T_WS, "class LoopbackChannel:\n    def __init__(self):\n        self.queue = []\n",
             "class LoopbackChannel:\n    def __init__(self, delay=0.0):\n        self.queue = queue.Queue()\n"
             "        self.acks = queue.Queue()\n        self.delay = delay\n"),
        Edit(T_WS, "    def put(self, msg):\n        self.queue.append(msg)\n\n    def get(self):\n        return self.queue.pop(0)\n",
             "    def put(self, msg):\n        self.queue.put(msg)\n\n    def get(self):\n        time.sleep(self.delay)\n"
             "        return self.queue.get(timeout=5)\n\n    def ack(self, index):\n        self.acks.put(index)\n\n"
             "    def drain_acks(self):\n        out = []\n        while not self.acks.empty():\n"
             "            out.append(self.acks.get_nowait())\n        return out\n"),
        Edit(T_WS, "        self.weights.update(dict(weights))\n",
             "        self.weights.update({name: tensor.clone() for name, tensor in weights})\n\n\n"
             "def sync(sender, params, engine=None):\n    engine = engine or RecordingEngine()\n"
             "    receiver = threading.Thread(target=BucketedWeightReceiver(sender.channel, engine).receive)\n"
             "    receiver.start()\n    count = sender.send(params.items())\n    receiver.join(timeout=10)\n"
             "    return count, engine\n"),
        Edit(T_WS, "    assert sender.send(params.items()) == 3\n    engine = RecordingEngine()\n"
                   "    assert BucketedWeightReceiver(channel, engine).receive() == 8\n",
             "    count, engine = sync(sender, params)\n    assert count == 3\n    assert len(engine.weights) == 8\n"),
        Edit(T_WS, "    for _ in range(3):\n        sender.send(params.items())\n        BucketedWeightReceiver(channel, RecordingEngine()).receive()\n",
             "    for _ in range(3):\n        sync(sender, params)\n"),
        Edit(T_WS, "    for _ in range(5):\n        sender.send(params.items())\n        BucketedWeightReceiver(channel, RecordingEngine()).receive()\n",
             "    for _ in range(5):\n        sync(sender, params)\n"),
        Edit(T_WS, "    assert [ref() for ref in shared] == [None] * 5\n",
             "    assert [ref() for ref in shared] == [None] * 5\n\n\n"
             "def test_slow_receiver_never_sees_freed_buffers():\n"
             "    params = {f\"layer{i}.weight\": torch.randn(64, 64) for i in range(6)}\n"
             "    sender = BucketedWeightSender(LoopbackChannel(delay=0.05), bucket_mb=0, device=\"cpu\")\n"
             "    sender.bucket_bytes = 64 * 64 * 4 * 2\n    for _ in range(10):\n"
             "        _, engine = sync(sender, params)\n        for name, tensor in params.items():\n"
             "            torch.testing.assert_close(engine.weights[name], tensor)\n\n\n"
             "def test_missing_ack_times_out():\n"
             "    sender = BucketedWeightSender(LoopbackChannel(), bucket_mb=1, device=\"cpu\", ack_timeout=0.2)\n"
             "    try:\n        sender.send({\"w\": torch.zeros(4)}.items())\n    except TimeoutError as e:\n"
             "        assert \"[0]\" in str(e)\n    else:\n        raise AssertionError(\"expected a timeout\")\n"),
    ],
    comments=[
        ("lena-park", "2026-09-24 08:00", "Thanks for closing the loop on tkobayashi's comment in #183 so quickly."),
        ("ravi-s", "2026-09-25 01:12", "Is 60 s the right default? A 70B sync over PCIe can take ~25 s per bucket "
                                       "on the slow nodes."),
        ("mzhou", "2026-09-25 03:40", "The timeout is per sync, not per bucket, so 70B on PCIe could hit it. "
                                      "It is configurable (`ack_timeout`); I would rather keep 60 s and document it "
                                      "than hide a dead worker for minutes. Will add it to the docs page."),
    ],
    reviews=[
        ("tkobayashi", "2026-09-25 02:30", "CHANGES_REQUESTED", "The busy-wait holds the lock while sorting; see inline."),
        ("tkobayashi", "2026-09-26 06:00", "APPROVED", "Thanks, LGTM now."),
        ("lena-park", "2026-09-26 12:20", "APPROVED", ""),
    ],
    review_comments=[
        (0, "tkobayashi", "2026-09-25 02:25", W, "pending = sorted(self._ack_pending)",
         "Copy the pending set under the lock but raise outside it; otherwise `on_ack` from the receiver "
         "thread blocks while we build the message.", None, True),
        (0, "mzhou", "2026-09-25 05:10", W, "pending = sorted(self._ack_pending)",
         "Done: the sorted copy is taken under the lock and the raise is outside it.", 0, True),
        (0, "tkobayashi", "2026-09-25 02:28", W, "time.sleep(0.001)",
         "1 ms polling is fine for now; a condition variable would be cleaner. Not blocking.", None, True),
    ],
    commits=[("2026-09-24 04:30", "rollout: ACK each bucket before the sender frees it"),
             ("2026-09-24 04:55", "tests: threaded loopback channel, slow receiver test"),
             ("2026-09-25 05:05", "rollout: raise outside the lock")],
))  # fmt: skip

# ---- config default change and its revert ---------------------------------------------------------
KL_EDITS = [
    Edit(CFG, "  use_kl_loss: true\n  kl_loss_coef: 0.01\n", "  use_kl_loss: false\n  kl_loss_coef: 0.001\n"),
    Edit(
        "docs/config.md",
        "- `use_kl_loss`: add a KL term to the actor loss (GRPO style) instead of a KL reward penalty.\n"
        "- `kl_loss_coef`: weight of that KL term.\n",
        "- `use_kl_loss`: add a KL term to the actor loss (GRPO style) instead of a KL reward penalty. "
        "Default `false`.\n- `kl_loss_coef`: weight of that KL term. Default `0.001`.\n",
    ),
]
PRS.append(PR(
    KL_DEFAULT, "[BREAKING][trainer] chore: default use_kl_loss to false and kl_loss_coef to 0.001",
    author="ravi-s", created="2026-09-27 06:00", closed="2026-09-29 02:15", labels=["breaking"],
    body=body(
        "PPO with a critic does not need the KL loss term, and most of our PPO users turn it off by hand; "
        "`kl_loss_coef: 0.01` was also 10x the value used in the papers we cite. This makes PPO the "
        "default experience.\n\n**Breaking:** GRPO runs that relied on the default must now set "
        "`actor.use_kl_loss=true actor.kl_loss_coef=0.001` explicitly.",
        test="PPO GSM8K Qwen2.5-0.5B: val acc 0.512 -> 0.519 at step 200 with the new defaults (3 seeds).",
        docs=True, tests=False,
    ),
    ops=KL_EDITS,
    comments=[
        ("tkobayashi", "2026-09-27 09:30", "This silently changes every GRPO example script, they do not set "
                                           "`use_kl_loss`. Can we update `examples/grpo_trainer/*.sh` in the same PR?"),
        ("ravi-s", "2026-09-28 01:00", "Fair. I will update the GRPO examples in a follow-up this week; they need explicit values anyway."),
    ],
    reviews=[("lena-park", "2026-09-29 02:00", "APPROVED", "OK if the examples follow soon.")],
    commits=[("2026-09-27 05:55", "config: PPO-friendly KL defaults")],
))  # fmt: skip

PRS.append(PR(
    REVERT_KL, 'Revert "[BREAKING][trainer] chore: default use_kl_loss to false and kl_loss_coef to 0.001"',
    author="lena-park", created="2026-10-05 07:40", closed="2026-10-05 10:05", labels=["revert"],
    body=f"Reverts example-org/minirl#{KL_DEFAULT}\n\nThe GRPO examples lost their KL term without anyone "
         "noticing: three users reported reward hacking on GSM8K this weekend (#191). The examples did not get "
         f"updated in the promised follow-up (#{AGENT} mentions them but leaves them alone). Reverting until the examples set both values explicitly; then we can "
         "change the default again.",
    ops=("revert", KL_DEFAULT),
    comments=[("ravi-s", "2026-10-05 08:30", "Agreed, my bad. I will re-land with the example updates."),],
    reviews=[("mzhou", "2026-10-05 09:50", "APPROVED", "")],
    commits=[("2026-10-05 07:38", f'Revert "[BREAKING][trainer] chore: default use_kl_loss to false and kl_loss_coef to 0.001 (#{KL_DEFAULT})"')],
))  # fmt: skip

# ---- refactor with renames ------------------------------------------------------------------------
PADDING = '''"""Padding helpers shared by the rollout backends."""

from __future__ import annotations

import torch


def pad_to(tensors, length: int, pad_id: int) -> torch.Tensor:
    """Right-pad 1-D token tensors to `length` and stack them."""
    out = torch.full((len(tensors), length), pad_id, dtype=torch.long)
    for i, t in enumerate(tensors):
        out[i, : len(t)] = t
    return out


def strip_prompt(output_ids: torch.Tensor, prompt_len: int) -> torch.Tensor:
    """Drop the prompt tokens that generate() echoes before the response."""
    return output_ids[:, prompt_len:]
'''
PRS.append(PR(
    RENAME, "[misc] refactor: rename hf_rollout to naive_rollout and move padding helpers to utils",
    author="oskar-h", created="2026-09-29 03:00", closed="2026-10-01 04:44", labels=["refactor"],
    body=body(
        "`HFRollout` is not specific to HF models, it is the naive generate() loop we use in tests. The "
        "name keeps confusing people into using it for training (see discussions). This renames the module "
        "and class, and moves the padding helpers to `minirl/utils/padding.py` so the SGLang tests can use them.\n\n"
        "`HFRollout` stays importable as a deprecated alias for one release.",
        usage="```python\nfrom minirl.rollout import NaiveRollout  # was HFRollout\n```",
        design="- `minirl/rollout/hf_rollout.py` -> `minirl/rollout/naive_rollout.py`, `HFRollout` -> `NaiveRollout`\n"
               "- `_pad_to`, `_strip_prompt` -> `minirl.utils.padding.pad_to`, `strip_prompt`",
    ),
    ops=[
        Rename("minirl/rollout/hf_rollout.py", "minirl/rollout/naive_rollout.py", [
            ('"""A slow reference rollout with HuggingFace generate(): for tests and debugging only."""',
             '"""A slow reference rollout with a plain generate() loop: for tests and debugging only."""'),
            ("from minirl.rollout.base import BaseRollout\n",
             "from minirl.rollout.base import BaseRollout\nfrom minirl.utils.padding import pad_to, strip_prompt\n"),
            ("\n\ndef _pad_to(tensors, length, pad_id):\n    out = torch.full((len(tensors), length), pad_id, dtype=torch.long)\n"
             "    for i, t in enumerate(tensors):\n        out[i, : len(t)] = t\n    return out\n\n\n"
             "def _strip_prompt(output_ids, prompt_len):\n    return output_ids[:, prompt_len:]\n", ""),
            ("class HFRollout(BaseRollout):", "class NaiveRollout(BaseRollout):"),
            ("        responses = _strip_prompt(output, input_ids.shape[1])\n"
             "        responses = _pad_to(list(responses), self.config.response_length, self.tokenizer.pad_token_id)\n",
             "        responses = strip_prompt(output, input_ids.shape[1])\n"
             "        responses = pad_to(list(responses), self.config.response_length, self.tokenizer.pad_token_id)\n"),
            ("        return prompts.union(DataProto.from_tensors(responses=responses))\n",
             "        return prompts.union(DataProto.from_tensors(responses=responses))\n\n\n"
             "# Deprecated: kept for one release so existing scripts keep importing.\nHFRollout = NaiveRollout\n"),
        ]),
        Add("minirl/utils/padding.py", PADDING),
        Edit("minirl/rollout/__init__.py",
             'from minirl.rollout.hf_rollout import HFRollout\n\n__all__ = ["BaseRollout", "HFRollout"]\n',
             'from minirl.rollout.naive_rollout import HFRollout, NaiveRollout\n\n__all__ = ["BaseRollout", "HFRollout", "NaiveRollout"]\n'),
    ],
    reviews=[("lena-park", "2026-09-30 10:00", "COMMENTED", "Please add a DeprecationWarning on the alias."),
             ("lena-park", "2026-10-01 04:30", "APPROVED", "")],
    review_comments=[
        (0, "lena-park", "2026-09-30 09:58", "minirl/rollout/naive_rollout.py", "HFRollout = NaiveRollout",
         "A bare alias will never warn anyone. A module `__getattr__` with a DeprecationWarning?", None, True),
        (0, "oskar-h", "2026-09-30 13:20", "minirl/rollout/naive_rollout.py", "HFRollout = NaiveRollout",
         "We never warn anywhere else yet; I would rather remove it next release and say so in the changelog. OK?", 0, True),
        (0, "lena-park", "2026-10-01 04:29", "minirl/rollout/naive_rollout.py", "HFRollout = NaiveRollout",
         "Fine, but open an issue so we do not forget the removal.", 0, True),
    ],
    commits=[("2026-09-29 02:40", "refactor: rename HFRollout to NaiveRollout"),
             ("2026-09-29 02:55", "refactor: move padding helpers to minirl.utils.padding")],
))  # fmt: skip

PRS.append(PR(
    VLLM_BUMP, "[ci] chore(deps): bump vllm from 0.11.0 to 0.11.2", author="dependabot[bot]",
    created="2026-09-30 04:00", closed="2026-10-02 03:10", labels=["dependencies"], branch="dependabot/pip/vllm-0.11.2",
    body="Bumps [vllm](https://github.com/vllm-project/vllm) from 0.11.0 to 0.11.2.\n\n<details>\n<summary>Release notes</summary>\n"
         "<p><em>Sourced from vllm's releases.</em></p>\n<blockquote>\n<h2>v0.11.2</h2>\n<ul>\n"
         "<li>Fix a memory leak in sleep mode level 1 when prefix caching is enabled</li>\n"
         "<li>Fix <code>update_weights</code> with tied embeddings</li>\n</ul>\n</blockquote>\n</details>\n\n"
         "Dependabot will resolve any conflicts with this PR as long as you don't alter it yourself.",
    ops=[Edit("pyproject.toml", 'vllm = ["vllm==0.11.0"]', 'vllm = ["vllm==0.11.2"]')],
    comments=[("eve-ops", "2026-10-01 08:00", "GPU e2e passed on the self-hosted runner. The sleep-mode leak fix "
                                              "in 0.11.2 is relevant to us (see #183 discussion)."),],
    reviews=[("eve-ops", "2026-10-02 03:00", "APPROVED", "")],
    commits=[("2026-09-30 04:00", "chore(deps): bump vllm from 0.11.0 to 0.11.2")],
))  # fmt: skip

# ---- the large feature ----------------------------------------------------------------------------
PRS.append(PR(
    AGENT, "[trainer, rollout] feat: multi-turn agent loop with tool calling", author="chen-li",
    created="2026-10-02 08:00", closed="2026-10-14 11:30", labels=["feature", "agent"],
    body=body(
        f"""Adds a multi-turn agent loop so a policy can call tools during rollout and be trained on the whole
trajectory. This is the first piece of the agent RFC (#177).

- `minirl/agent/loop.py`: `AgentLoop` drives generate -> parse tool call -> run tool -> append observation
  until the model answers or `max_turns` is reached. Tool output tokens are masked out of the loss
  (`response_mask` is 0 on them), so the policy is trained only on its own tokens.
- `minirl/agent/tools/`: a small `Tool` base class and 16 tools (calculator, python sandbox stub,
  unit conversion, retrieval over a local corpus, ...), each with a JSON schema.
- `minirl/agent/parser.py`: parses `<tool_call>{{...}}</tool_call>` blocks (Hermes style) tolerantly.
- config: `agent.enable`, `agent.max_turns`, `agent.tools`.

Follow-up: the examples for GRPO still need the explicit KL settings discussed in #{KL_DEFAULT}; I did not
touch them here to keep the diff reviewable. Not addressed: async tool execution (tools run sequentially
per trajectory), and SGLang support (vLLM only for now).""",
        test="Unit tests for the parser, every tool, and the loop with a scripted fake engine (42 tests). "
             "GSM8K with the calculator tool, Qwen2.5-3B, 8xH100: val acc 0.71 -> 0.78 after 150 steps; "
             "rollout time per step +18% vs single-turn.",
        usage="```yaml\nagent:\n  enable: true\n  max_turns: 4\n  tools: [calculator, unit_convert]\n```",
        design="See `docs/agent.md` for the loop and the masking rules.",
        docs=True,
    ),
    ops=agent_feature_ops(CFG),
    comments=[
        ("lena-park", "2026-10-03 02:00", "This is big. Could you split the tools into a separate PR? The loop and the "
                                          "masking are what need careful review."),
        ("chen-li", "2026-10-03 05:30", "The tools are mostly boilerplate around one base class and each has its own "
                                        "tests; splitting would leave the loop untested end to end. I would prefer to "
                                        "keep them, but happy to move them if you insist."),
        ("mzhou", "2026-10-08 09:00", "Ran it with 8 turns on the 7B config: no memory growth across 300 steps, weight "
                                      "sync unaffected. Rollout time +31% at 8 turns though."),
        ("chen-li", "2026-10-09 01:00", "Expected: turns are sequential per trajectory. Async tool execution is the "
                                        "next PR."),
    ],
    reviews=[
        ("lena-park", "2026-10-06 07:00", "CHANGES_REQUESTED", "The masking needs a test with a tool output that "
                                                               "spans a chunk boundary; see inline."),
        ("mzhou", "2026-10-08 09:05", "COMMENTED", ""),
        ("lena-park", "2026-10-14 10:00", "APPROVED", "Thanks for the extra tests."),
    ],
    review_comments=[
        (0, "lena-park", "2026-10-06 06:50", "minirl/agent/loop.py", "mask.extend([0] * len(obs_ids))",
         "What happens when the observation is truncated by `max_response_length` halfway? The mask and the "
         "ids must stay aligned.", None, True),
        (0, "chen-li", "2026-10-07 03:00", "minirl/agent/loop.py", "mask.extend([0] * len(obs_ids))",
         "Both are truncated together in `_truncate`; added `test_truncated_observation_keeps_mask_aligned`.", 0, True),
        (1, "mzhou", "2026-10-08 09:04", "minirl/agent/tools/python_sandbox.py", "timeout_s",
         "A 10 s default timeout per call could stall a whole batch. 3 s?", None, True),
        (1, "chen-li", "2026-10-09 01:05", "minirl/agent/tools/python_sandbox.py", "timeout_s",
         "Made it 3 s.", 2, True),
    ],
    commits=[("2026-10-02 07:00", "agent: loop and parser"), ("2026-10-02 07:40", "agent: tools and schemas"),
             ("2026-10-02 07:55", "agent: docs and config"), ("2026-10-07 02:50", "agent: keep mask aligned on truncation"),
             ("2026-10-09 01:02", "agent: 3 s sandbox timeout")],
))  # fmt: skip

PRS.append(PR(
    DIAGRAM, "[doc] docs: add a diagram of the trainer-to-rollout weight flow", author="yuki-t",
    created="2026-10-06 01:00", closed="2026-10-07 03:00", labels=["documentation"],
    body=body(
        f"Adds `docs/_static/weight_flow.png` (exported from the draw.io source in the design doc) and embeds it "
        f"in the index's Design section, with the ACK step from #{ACK}.",
        test="Built the docs locally; the image renders at 1200 px.", docs=True, tests=False,
    ),
    ops=[
        Binary("docs/_static/weight_flow.png", "added"),
        Edit("docs/index.md", "buckets over shared-memory IPC.\n",
             "buckets over shared-memory IPC.\n\n![Weight flow: pack, share, load, ACK, free](_static/weight_flow.png)\n"),
    ],
    reviews=[("mzhou", "2026-10-07 02:40", "APPROVED", "The ACK arrow is right, thanks.")],
    commits=[("2026-10-06 00:55", "docs: weight flow diagram")],
))  # fmt: skip

# ---- open PR with requested changes and an unresolved thread ---------------------------------------
PRS.append(PR(
    SGL_ASYNC, "[rollout, sglang] feat: overlap SGLang weight updates with the next batch's generation",
    author="farah-n", created="2026-10-08 06:00", state="open", updated="2026-11-20 09:15", labels=["rollout", "sglang"],
    body=body(
        "Weight updates to SGLang block the trainer for ~4 s per step on 7B. This starts the update in a "
        "background thread and lets the trainer prepare the next batch meanwhile; `generate_sequences` waits "
        "for the update to finish before generating.",
        test="Qwen2.5-7B GRPO, 8xH100: step time 38.2 s -> 34.9 s (-8.6%), reward curve identical over 200 steps.",
        design="- `SGLangRollout.update_weights` -> starts `_update_thread`\n- `generate_sequences` joins it first",
    ),
    ops=[
        Edit(SGL, "import logging\n", "import logging\nimport threading\n"),
        Edit(SGL, "            mem_fraction_static=config.gpu_memory_utilization,\n        )\n",
             "            mem_fraction_static=config.gpu_memory_utilization,\n        )\n"
             "        self._update_thread: threading.Thread | None = None\n"),
        Edit(SGL, "    def generate_sequences(self, prompts: DataProto) -> DataProto:\n        token_ids",
             "    def generate_sequences(self, prompts: DataProto) -> DataProto:\n        self.wait_for_update()\n        token_ids"),
        Edit(SGL, "    def update_weights(self, named_tensors):\n        self.engine.update_weights_from_tensor(list(named_tensors))\n",
             "    def update_weights(self, named_tensors):\n        # Overlap the update with the trainer preparing the next batch.\n"
             "        tensors = list(named_tensors)\n        self._update_thread = threading.Thread(\n"
             "            target=self.engine.update_weights_from_tensor, args=(tensors,), daemon=True\n        )\n"
             "        self._update_thread.start()\n\n    def wait_for_update(self):\n"
             "        if self._update_thread is not None:\n            self._update_thread.join()\n"
             "            self._update_thread = None\n"),
    ],
    comments=[
        ("farah-n", "2026-10-20 04:00", "Rebased on main. @mzhou could you take another look?"),
        ("ravi-s", "2026-11-02 07:00", "Any news here? The 8% would help our 32B runs a lot."),
        ("farah-n", "2026-11-20 09:15", "Still working on the ACK part, should have time next week."),
    ],
    reviews=[
        ("mzhou", "2026-10-10 08:00", "CHANGES_REQUESTED",
         f"This reintroduces the race fixed in #{ACK}: `tensors` can be freed by the trainer while the thread is "
         "still reading them. Needs the same ACK (or a copy). See inline."),
        ("tkobayashi", "2026-10-12 02:00", "COMMENTED", "+1 to mzhou. Also: what happens if the update thread raises?"),
    ],
    review_comments=[
        (0, "mzhou", "2026-10-10 07:55", SGL, "target=self.engine.update_weights_from_tensor, args=(tensors,), daemon=True",
         f"The trainer frees these tensors right after `update_weights` returns (same pattern as #{LEAK}), so the "
         "thread may read freed memory. Either keep a reference until the thread ACKs, or copy.", None, False),
        (0, "farah-n", "2026-10-11 03:00", SGL, "target=self.engine.update_weights_from_tensor, args=(tensors,), daemon=True",
         "`tensors` is a list that holds references, so they should stay alive until the thread ends?", 0, False),
        (0, "mzhou", "2026-10-11 05:30", SGL, "target=self.engine.update_weights_from_tensor, args=(tensors,), daemon=True",
         "The Python references stay alive, but the trainer reuses the underlying bucket storage for the next "
         "pack. It needs the explicit handshake, not just a reference.", 0, False),
        (1, "tkobayashi", "2026-10-12 01:58", SGL, "self._update_thread.join()",
         "An exception in the thread is lost here and generation proceeds with stale weights. Propagate it.", None, False),
    ],
    commits=[("2026-10-08 05:40", "sglang: update weights in a background thread"),
             ("2026-10-20 03:50", "Merge branch 'main' into farah-n/sglang-async-update")],
))  # fmt: skip

# ---- closed without merging -----------------------------------------------------------------------
PRS.append(PR(
    ENTROPY, "[trainer] feat: linear warmup schedule for the entropy bonus", author="dmitri-k",
    created="2026-10-09 10:00", state="closed", closed="2026-10-24 06:00", labels=["trainer"],
    body=body(
        "Adds `actor.entropy_warmup_steps`: the entropy bonus ramps linearly from 0 to `entropy_coeff`. "
        "Helps early collapse on small models.",
        test="Qwen2.5-0.5B GSM8K: entropy at step 50 0.21 -> 0.34; final acc unchanged (0.52).",
    ),
    ops=[
        Edit(CFG, "  entropy_coeff: 0.0\n", "  entropy_coeff: 0.0\n  entropy_warmup_steps: 0\n"),
        Edit(TRAINER, "    def _update_actor(self, batch):\n        metrics = self.actor.update_policy(batch)\n",
             "    def _entropy_coeff(self):\n        warmup = self.config.actor.entropy_warmup_steps\n"
             "        target = self.config.actor.entropy_coeff\n        if warmup <= 0:\n            return target\n"
             "        return target * min(1.0, self.global_step / warmup)\n\n"
             "    def _update_actor(self, batch):\n        batch.meta_info[\"entropy_coeff\"] = self._entropy_coeff()\n"
             "        metrics = self.actor.update_policy(batch)\n"),
    ],
    comments=[
        ("lena-park", "2026-10-12 03:00", "Could this be generic? We will want the same for the KL coefficient."),
        ("dmitri-k", "2026-10-13 02:00", "Makes sense, I will write a small scheduler that works for any coefficient."),
        ("dmitri-k", "2026-10-24 06:00", f"Closing in favour of #{SCHEDULES}, which schedules any loss coefficient."),
    ],
    reviews=[("lena-park", "2026-10-12 03:01", "COMMENTED", "")],
    commits=[("2026-10-09 09:50", "trainer: entropy warmup")],
))  # fmt: skip

# ---- deleted author ------------------------------------------------------------------------------
PRS.append(PR(
    NULL_AUTHOR, "[misc] fix: reduce_metrics returns NaN and warns on empty metric lists", author=None,
    created="2026-10-12 04:00", closed="2026-10-13 02:00", labels=["bug"],
    body="`np.mean([])` warns `Mean of empty slice` and returns NaN; with `log_every=1` and a skipped critic "
         "update the logs fill with warnings and wandb drops the NaN points. Skip empty lists instead.\n\n"
         "Test: added a case to tests/test_metrics.py.",
    ops=[
        Edit("minirl/utils/metrics.py", "    for key, value in metrics.items():\n        out[key] = float(np.mean(value))\n",
             "    for key, value in metrics.items():\n        if hasattr(value, \"__len__\") and len(value) == 0:\n"
             "            continue  # nothing was measured this step (e.g. the critic update was skipped)\n"
             "        out[key] = float(np.mean(value))\n"),
        Add("tests/test_metrics.py", "from minirl.utils.metrics import reduce_metrics\n\n\n"
            "def test_empty_lists_are_skipped():\n    assert reduce_metrics({\"a\": [], \"b\": [1.0, 3.0]}) == {\"b\": 2.0}\n"),
    ],
    reviews=[("tkobayashi", "2026-10-13 01:50", "APPROVED", "")],
    commits=[("2026-10-12 03:55", "metrics: skip empty lists")],
))  # fmt: skip

# ---- untrusted HTML, for the UI's safety tests ----------------------------------------------------
PREVIEW = '''"""Render a prompt for the dataset preview page."""

from __future__ import annotations

import html


def preview_html(prompt: str, max_chars: int = 2000) -> str:
    # Prompts come from user datasets: escape them, chat templates are full of <tags>.
    return "<pre class=\\"prompt\\">" + html.escape(prompt[:max_chars]) + "</pre>"
'''
PRS.append(PR(
    UNSAFE_HTML, "[data] fix: escape prompts in the dataset preview <script>alert(1)</script>", author="lab-intern",
    created="2026-10-14 03:00", closed="2026-10-15 05:00", labels=["bug", "data"],
    body="The dataset preview rendered prompts as raw HTML, so a prompt like `<img src=x onerror=alert(1)>` ran "
         "script in the preview page:\n\n<img src=x onerror=alert(1)>\n\n<script>alert(1)</script>\n\n"
         "Repro: load `examples/prompts/<img src=x onerror=alert(1)>.txt` and open the preview. "
         "See also [the report](javascript:alert(1)) and <a href=\"javascript:alert(1)\">this link</a>.\n\n"
         "Fix: `html.escape` before rendering.",
    ops=[
        Add("minirl/data/preview.py", PREVIEW),
        Add("examples/prompts/<img src=x onerror=alert(1)>.txt",
            "<|im_start|>user\n<script>alert(1)</script> What is 6*7?<|im_end|>\n"),
    ],
    comments=[
        ("lena-park", "2026-10-14 06:00", "Thanks! For the record, the payload was `<script>alert(1)</script>` "
                                          "and <img src=x onerror=alert(1)>; please never paste real exploits here."),
        ("lab-intern", "2026-10-14 07:00", "Sorry! <b>Noted</b>. [details](javascript:alert(document.cookie))"),
    ],
    reviews=[("lena-park", "2026-10-15 04:50", "APPROVED", "<script>alert('review')</script> LGTM")],
    commits=[("2026-10-14 02:55", "data: escape prompts in preview <script>alert(1)</script>")],
))  # fmt: skip

# ---- a patch GitHub omits ------------------------------------------------------------------------
PRS.append(PR(
    UV_LOCK, "[ci] chore: require torch 2.8 and regenerate uv.lock", author="eve-ops",
    created="2026-10-16 02:00", closed="2026-10-17 06:00", labels=["dependencies"],
    body=body(
        "vLLM 0.11.2 (#189) is built against torch 2.8; with torch 2.6 pip resolves two torch versions in the GPU "
        "image. Raise the floor and regenerate `uv.lock` (the lock diff is too large for GitHub to show).",
        test="GPU e2e green; `uv pip check` clean.", tests=False,
    ),
    ops=[
        Edit("pyproject.toml", '  "torch>=2.6",\n', '  "torch>=2.8",\n'),
        Omitted("uv.lock", "modified", 4210, 3977),
    ],
    reviews=[("ravi-s", "2026-10-17 05:00", "APPROVED", "")],
    commits=[("2026-10-16 01:55", "deps: torch>=2.8, regenerate uv.lock")],
))  # fmt: skip

# ---- GAE fix --------------------------------------------------------------------------------------
GAE_TEST = """import torch

from minirl.trainer.core_algos import compute_gae_advantage_return


def test_gae_ignores_values_past_the_response():
    rewards = torch.tensor([[0.0, 1.0, 0.0, 0.0]])
    mask = torch.tensor([[1.0, 1.0, 0.0, 0.0]])
    clean = torch.tensor([[0.5, 0.5, 0.0, 0.0]])
    noisy = torch.tensor([[0.5, 0.5, 9.0, 9.0]])  # garbage values on padding
    a1, _ = compute_gae_advantage_return(rewards, clean, mask, gamma=1.0, lam=1.0)
    a2, _ = compute_gae_advantage_return(rewards, noisy, mask, gamma=1.0, lam=1.0)
    torch.testing.assert_close(a1 * mask, a2 * mask)
"""
PRS.append(PR(
    GAE, "[trainer] fix: stop GAE from bootstrapping on padding tokens", author="tkobayashi",
    created="2026-10-17 05:00", closed="2026-10-19 03:00", labels=["bug", "algo"],
    body=body(
        "`compute_gae_advantage_return` bootstraps from `values[:, t + 1]` even when `t + 1` is padding, so the "
        "critic's (meaningless) values on pad tokens leak into the last real token's advantage. On GSM8K with "
        "right padding this biased the final-token advantage by +0.08 on average.\n\nFix: mask the next value "
        "and the running GAE term with `mask[:, t + 1]`.",
        test="New unit test: advantages on real tokens no longer depend on values at padding positions (fails on main). "
             "PPO Qwen2.5-0.5B GSM8K: val acc 0.519 -> 0.533 at step 200, 3 seeds.",
    ),
    ops=[
        Edit(ALGOS, "            next_value = values[:, t + 1] if t < length - 1 else 0.0\n"
                    "            delta = rewards[:, t] + gamma * next_value - values[:, t]\n"
                    "            last = delta + gamma * lam * last\n",
             "            # Padding after the response must not be bootstrapped from.\n"
             "            next_mask = mask[:, t + 1] if t < length - 1 else 0.0\n"
             "            next_value = values[:, t + 1] * next_mask if t < length - 1 else 0.0\n"
             "            delta = rewards[:, t] + gamma * next_value - values[:, t]\n"
             "            last = delta + gamma * lam * last * next_mask\n"),
        Add("tests/test_core_algos.py", GAE_TEST),
    ],
    reviews=[("ravi-s", "2026-10-18 02:00", "APPROVED", "Good catch. Does the megatron critic path share this function?"),
             ("lena-park", "2026-10-19 02:50", "APPROVED", "")],
    comments=[("tkobayashi", "2026-10-18 04:00", "Yes, both paths call `core_algos`, so this covers megatron too.")],
    commits=[("2026-10-17 04:50", "algo: mask padding in GAE")],
))  # fmt: skip

# ---- GRPO -----------------------------------------------------------------------------------------
GRPO_FN = '''

def compute_grpo_outcome_advantage(rewards, mask, group_ids, eps: float = 1e-6):
    """GRPO: a response's advantage is its outcome reward normalised within its prompt's group."""
    scores = (rewards * mask).sum(-1)
    advantages = torch.zeros_like(scores)
    groups: dict = {}
    for i, gid in enumerate(group_ids):
        groups.setdefault(gid, []).append(i)
    for members in groups.values():
        idx = torch.tensor(members)
        group = scores[idx]
        if len(members) == 1:
            advantages[idx] = 0.0  # a lone sample has no baseline to compare with
        else:
            advantages[idx] = (group - group.mean()) / (group.std() + eps)
    return advantages.unsqueeze(-1) * mask
'''
GRPO_TEST = """

def test_grpo_advantages_are_normalised_per_group():
    from minirl.trainer.core_algos import compute_grpo_outcome_advantage

    rewards = torch.tensor([[0.0, 1.0], [0.0, 0.0], [0.0, 1.0], [0.0, 3.0]])
    mask = torch.ones_like(rewards)
    adv = compute_grpo_outcome_advantage(rewards, mask, ["a", "a", "b", "c"])
    assert adv[0, 0] > 0 > adv[1, 0]
    assert adv[2].abs().sum() == 0 and adv[3].abs().sum() == 0  # lone samples
"""
PRS.append(PR(
    GRPO, "[trainer, algo] feat: GRPO advantage estimator with per-group normalisation", author="ravi-s",
    created="2026-10-20 02:00", closed="2026-10-23 08:00", labels=["feature", "algo"],
    body=body(
        "Adds `algorithm.adv_estimator: grpo`: sample `rollout.n` responses per prompt, and use each response's "
        "outcome reward normalised within its group as the advantage. No critic is needed, so the trainer skips "
        "the critic when `critic` is None.",
        test="Qwen2.5-3B GSM8K, n=8: val acc 0.71 -> 0.80 at step 300 (PPO with critic: 0.79), 22% less GPU time per step.",
        usage="```bash\npython -m minirl.trainer.main_ppo algorithm.adv_estimator=grpo rollout.n=8 critic=null\n```",
        design="- `core_algos.compute_grpo_outcome_advantage`\n- `PPOTrainer.compute_advantage` dispatches on "
               "`adv_estimator`; critic steps are skipped without a critic",
    ),
    ops=[
        Edit(ALGOS, "        advantages = masked_whiten(advantages, mask)\n    return advantages, returns\n",
             "        advantages = masked_whiten(advantages, mask)\n    return advantages, returns\n" + GRPO_FN),
        Edit(TRAINER, '    def compute_advantage(self, batch):\n        values = batch.batch["values"]\n'
                      '        rewards = batch.batch["token_level_rewards"]\n        mask = batch.batch["response_mask"]\n'
                      "        advantages, returns = core_algos.compute_gae_advantage_return(\n"
                      "            rewards, values, mask, gamma=self.config.algorithm.gamma, lam=self.config.algorithm.lam\n        )\n",
             '    def compute_advantage(self, batch):\n        rewards = batch.batch["token_level_rewards"]\n'
             '        mask = batch.batch["response_mask"]\n        if self.config.algorithm.adv_estimator == "grpo":\n'
             "            advantages = core_algos.compute_grpo_outcome_advantage(\n"
             '                rewards, mask, batch.non_tensor_batch["uid"]\n            )\n            returns = advantages\n'
             '        else:\n            values = batch.batch["values"]\n'
             "            advantages, returns = core_algos.compute_gae_advantage_return(\n"
             "                rewards, values, mask, gamma=self.config.algorithm.gamma, lam=self.config.algorithm.lam\n            )\n"),
        Edit(TRAINER, '        batch.batch["values"] = self.critic.compute_values(batch)\n',
             '        if self.critic is not None:\n            batch.batch["values"] = self.critic.compute_values(batch)\n'),
        Edit(TRAINER, "        metrics.update(self._update_critic(batch))\n",
             "        if self.critic is not None:\n            metrics.update(self._update_critic(batch))\n"),
        Edit(CFG, "  adv_estimator: gae\n", "  adv_estimator: gae  # gae | grpo\n"),
        Edit("tests/test_core_algos.py", "    torch.testing.assert_close(a1 * mask, a2 * mask)\n",
             "    torch.testing.assert_close(a1 * mask, a2 * mask)\n" + GRPO_TEST),
    ],
    comments=[("mzhou", "2026-10-21 03:00", "With `critic=None`, `save_checkpoint` still calls `self.critic.save_checkpoint`."),
              ("ravi-s", "2026-10-21 05:00", "Good catch; that path is rewritten in the checkpoint-resume PR anyway, "
                                             "I will leave it to that one (follow-up)."),],
    reviews=[("tkobayashi", "2026-10-22 01:00", "APPROVED", "The lone-sample case is handled, nice."),
             ("lena-park", "2026-10-23 07:50", "APPROVED", "")],
    review_comments=[
        (0, "tkobayashi", "2026-10-22 00:58", ALGOS, "advantages[idx] = 0.0",
         "Zero for a lone sample matches the paper's implementation; worth a sentence in the docs.", None, True),
    ],
    commits=[("2026-10-20 01:50", "algo: GRPO outcome advantage"), ("2026-10-20 01:58", "trainer: run without a critic")],
))  # fmt: skip

PRS.append(PR(
    FREE_CACHE, "[rollout, vllm] perf: keep the KV cache between steps when free_cache_engine is false", author="mzhou",
    created="2026-10-22 06:00", closed="2026-10-24 02:00", labels=["perf", "rollout"],
    body=body(
        "On nodes with enough memory, putting vLLM to sleep and waking it every step costs 1.1-1.6 s "
        "(reallocating the KV cache and re-capturing state). `rollout.free_cache_engine: false` now skips both.",
        test="Qwen2.5-7B, 8xH100, gpu_memory_utilization 0.4: step time 36.1 s -> 34.6 s. Default (true) unchanged.",
        docs=False,
    ),
    ops=[
        Edit(CFG, "  enforce_eager: true\n", "  enforce_eager: true\n  free_cache_engine: true\n"),
        Edit(VLLM, "    def wake_up(self):\n        self.engine.wake_up()\n\n    def sleep(self):\n        self.engine.sleep(level=1)\n",
             "    def wake_up(self):\n        if self.config.free_cache_engine:\n            self.engine.wake_up()\n\n"
             "    def sleep(self):\n        # Sleeping frees the KV cache for the trainer; skip it when memory allows.\n"
             "        if self.config.free_cache_engine:\n            self.engine.sleep(level=1)\n"),
    ],
    reviews=[("tkobayashi", "2026-10-23 03:00", "APPROVED", "Please document the flag."),],
    commits=[("2026-10-22 05:55", "vllm: honour free_cache_engine")],
))  # fmt: skip

SCHED = '''"""Schedules for loss coefficients (entropy, KL): constant, linear warmup, cosine decay."""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass
class Schedule:
    kind: str = "constant"  # constant | warmup | cosine
    value: float = 0.0
    warmup_steps: int = 0
    total_steps: int = 0
    final_value: float = 0.0

    def __call__(self, step: int) -> float:
        if self.kind == "constant":
            return self.value
        if self.kind == "warmup":
            if self.warmup_steps <= 0:
                return self.value
            return self.value * min(1.0, step / self.warmup_steps)
        if self.kind == "cosine":
            if self.total_steps <= 0:
                return self.value
            progress = min(1.0, step / self.total_steps)
            return self.final_value + 0.5 * (self.value - self.final_value) * (1 + math.cos(math.pi * progress))
        raise ValueError(f"unknown schedule kind {self.kind!r}")


def build_schedules(config) -> dict[str, Schedule]:
    return {name: Schedule(**dict(spec)) for name, spec in (config or {}).items()}
'''
SCHED_TEST = """import pytest

from minirl.utils.schedules import Schedule


def test_warmup_reaches_value():
    s = Schedule("warmup", value=0.01, warmup_steps=100)
    assert s(0) == 0.0 and s(50) == pytest.approx(0.005) and s(500) == 0.01


def test_cosine_ends_at_final_value():
    s = Schedule("cosine", value=1.0, total_steps=10, final_value=0.1)
    assert s(0) == pytest.approx(1.0) and s(10) == pytest.approx(0.1)


def test_unknown_kind():
    with pytest.raises(ValueError):
        Schedule("step")(1)
"""
PRS.append(PR(
    SCHEDULES, "[trainer] feat: schedule any loss coefficient (entropy, kl) with warmup or cosine decay",
    author="dmitri-k", created="2026-10-24 05:00", closed="2026-10-29 04:00", labels=["feature", "trainer"],
    body=body(
        f"Supersedes #{ENTROPY}. Instead of one flag for the entropy bonus, `trainer.schedules` maps a coefficient "
        "name to a schedule; the trainer puts the current values into `batch.meta_info` before each actor update.",
        usage="```yaml\ntrainer:\n  schedules:\n    entropy_coeff: {kind: warmup, value: 0.001, warmup_steps: 50}\n"
              "    kl_loss_coef: {kind: cosine, value: 0.01, total_steps: 1000, final_value: 0.001}\n```",
        test="Unit tests for the three kinds. Qwen2.5-0.5B GSM8K with the entropy warmup above: entropy at step 50 "
             "0.21 -> 0.33, final acc 0.53 (unchanged).",
    ),
    ops=[
        Add("minirl/utils/schedules.py", SCHED),
        Add("tests/test_schedules.py", SCHED_TEST),
        Edit(TRAINER, "from minirl.utils.metrics import reduce_metrics\n",
             "from minirl.utils.metrics import reduce_metrics\nfrom minirl.utils.schedules import build_schedules\n"),
        Edit(TRAINER, "        self.use_kl_loss = config.actor.use_kl_loss\n",
             "        self.use_kl_loss = config.actor.use_kl_loss\n"
             "        self.schedules = build_schedules(config.trainer.get(\"schedules\"))\n"),
        Edit(TRAINER, "    def _update_actor(self, batch):\n        metrics = self.actor.update_policy(batch)\n"
                      '        return {f"actor/{k}": v for k, v in metrics.items()}\n',
             "    def _update_actor(self, batch):\n        for name, schedule in self.schedules.items():\n"
             "            batch.meta_info[name] = schedule(self.global_step)\n"
             "        metrics = self.actor.update_policy(batch)\n"
             '        metrics.update({f"coef/{name}": batch.meta_info[name] for name in self.schedules})\n'
             '        return {f"actor/{k}": v for k, v in metrics.items()}\n'),
    ],
    comments=[("lena-park", "2026-10-26 02:00", "Much better than a one-off flag, thanks for generalising."),],
    reviews=[("lena-park", "2026-10-28 09:00", "APPROVED", ""), ("ravi-s", "2026-10-29 03:00", "APPROVED", "")],
    commits=[("2026-10-24 04:50", "utils: coefficient schedules"), ("2026-10-24 04:58", "trainer: apply schedules")],
))  # fmt: skip

ROLLOUT_DOC = f"""# Rollout backends

minirl supports vLLM (`rollout.name: vllm`) and SGLang (`rollout.name: sglang`).

## Weight sync

After every actor update the trainer sends the new weights to the rollout workers:

1. the sender packs parameters into buckets of `rollout.weight_sync.bucket_mb` MB;
2. for each bucket it shares an IPC handle and puts a message on the channel;
3. the receiver loads the bucket into the engine and sends an **ACK** with the bucket's index;
4. the sender waits until every bucket is acknowledged, then frees the buckets.

Step 4 is what makes freeing safe (#{ACK}): without the ACK the sender could free a bucket the receiver
is still reading, and the engine would load garbage. The wait is bounded by `ack_timeout` (60 s by
default); a 70B model over PCIe may need more.

## Memory

- `rollout.free_cache_engine: true` (default) puts vLLM to sleep between rollouts so the trainer can use
  the KV cache memory; set it to `false` when memory allows, to save ~1.5 s per step.
- The sender keeps no reference to the buckets after a sync (#{LEAK}); host memory should stay flat.
"""
PRS.append(PR(
    ACK_DOCS, "[doc] docs: document the weight-sync ACK protocol and its timeout", author="mzhou",
    created="2026-10-27 03:00", closed="2026-10-28 02:00", labels=["documentation"],
    body=f"Follow-up to #{ACK} and #{LEAK}, as promised in the review of #{ACK}: a `docs/rollout.md` page "
         "describing the four steps of a weight sync, why the ACK exists and when to raise `ack_timeout`.",
    ops=[Add("docs/rollout.md", ROLLOUT_DOC)],
    reviews=[("ravi-s", "2026-10-27 09:00", "APPROVED", "Exactly what I wanted, thanks.")],
    commits=[("2026-10-27 02:55", "docs: rollout page with the weight sync protocol")],
))  # fmt: skip

PRS.append(PR(
    CI_PATHS, "[ci] ci: run the GPU e2e job only when code under minirl/ or tests/e2e changes", author="eve-ops",
    created="2026-10-28 04:00", closed="2026-10-29 06:00", labels=["ci"],
    body="The self-hosted GPU runner is our bottleneck (queue up to 3 h on Tuesdays) and a third of its runs "
         "are for docs-only PRs. Add a `changes` job with a paths filter and make `gpu-e2e` depend on it.\n\n"
         "Test: opened a docs-only test PR (closed): GPU job skipped; a code PR: GPU job ran.",
    ops=[
        Edit(CI, "  gpu-e2e:\n    runs-on: [self-hosted, gpu]\n",
             "  changes:\n    runs-on: ubuntu-latest\n    outputs:\n      code: ${{ steps.filter.outputs.code }}\n"
             "    steps:\n      - uses: actions/checkout@v4\n      - uses: dorny/paths-filter@v3\n        id: filter\n"
             "        with:\n          filters: |\n            code:\n              - 'minirl/**'\n"
             "              - 'tests/e2e/**'\n              - 'pyproject.toml'\n\n"
             "  gpu-e2e:\n    needs: changes\n    if: needs.changes.outputs.code == 'true'\n    runs-on: [self-hosted, gpu]\n"),
    ],
    reviews=[("lena-park", "2026-10-29 05:00", "APPROVED", "")],
    comments=[("tkobayashi", "2026-10-28 08:00", "Should `.github/workflows/**` count as code too? A workflow change "
                                                 "that breaks the GPU job would go unnoticed."),
              ("eve-ops", "2026-10-28 09:30", "Good point, but then every CI PR pays the GPU queue. Not addressed here; "
                                              "I will run those by hand.")],
    commits=[("2026-10-28 03:55", "ci: paths filter for the GPU job")],
))  # fmt: skip

# ---- checkpoint resume ---------------------------------------------------------------------------
PRS.append(PR(
    RESUME, "[trainer] fix: resuming from a checkpoint restores the dataloader position", author="oskar-h",
    created="2026-10-30 02:00", closed="2026-11-03 07:00", labels=["bug", "trainer"],
    body=body(
        f"Fixes #{ISSUE_RESUME}. A resumed run restarted the epoch from the first batch, so the first "
        f"`global_step % len(dataloader)` batches were trained on twice. Save the dataloader state "
        f"(`StatefulDataLoader`) with the trainer state and restore both in `load_checkpoint`. Also skips the "
        f"critic when there is none (left over from #{GRPO}).",
        test="Stopped a run at step 150, resumed: the batch indices of steps 151-160 match an uninterrupted run "
             "(they were 1-10 before).",
    ),
    ops=[
        Edit(TRAINER, "    def fit(self):\n        for epoch in range(self.config.trainer.total_epochs):\n",
             "    def fit(self):\n        if self.config.trainer.get(\"resume_from\"):\n"
             "            self.load_checkpoint(self.config.trainer.resume_from)\n"
             "        for epoch in range(self.config.trainer.total_epochs):\n"),
        Edit(TRAINER, "        self.actor.save_checkpoint(path)\n        self.critic.save_checkpoint(path)\n"
                      '        torch.save({"global_step": self.global_step}, f"{path}/trainer_state.pt")\n',
             "        self.actor.save_checkpoint(path)\n        if self.critic is not None:\n"
             "            self.critic.save_checkpoint(path)\n"
             '        state = {"global_step": self.global_step, "dataloader": self.dataloader.state_dict()}\n'
             '        torch.save(state, f"{path}/trainer_state.pt")\n\n'
             "    def load_checkpoint(self, path):\n        self.actor.load_checkpoint(path)\n"
             "        if self.critic is not None:\n            self.critic.load_checkpoint(path)\n"
             '        state = torch.load(f"{path}/trainer_state.pt", weights_only=False)\n'
             '        self.global_step = state["global_step"]\n'
             "        # Without this the resumed epoch starts again at batch 0 and repeats data.\n"
             '        self.dataloader.load_state_dict(state["dataloader"])\n'),
    ],
    reviews=[("ravi-s", "2026-11-01 04:00", "COMMENTED", "Old checkpoints have no `dataloader` key; see inline."),
             ("ravi-s", "2026-11-03 06:30", "APPROVED", "")],
    review_comments=[
        (0, "ravi-s", "2026-11-01 03:58", TRAINER, 'self.dataloader.load_state_dict(state["dataloader"])',
         "This raises `KeyError` on checkpoints written before this PR. Fall back to the old behaviour with a warning?",
         None, True),
        (0, "oskar-h", "2026-11-02 02:00", TRAINER, 'self.dataloader.load_state_dict(state["dataloader"])',
         "Old checkpoints cannot be resumed correctly anyway; I would rather fail loudly. Added a note to the "
         "changelog instead.", 0, True),
    ],
    commits=[("2026-10-30 01:55", "trainer: save and restore dataloader state")],
))  # fmt: skip

SEQLEN_MOD = '''"""Balance micro-batches by token count instead of by sample count."""

from __future__ import annotations

import heapq


def balanced_partitions(seqlens: list[int], k: int) -> list[list[int]]:
    """Split sample indices into k groups with near-equal total length (greedy longest-first).

    Greedy longest-processing-time is within 4/3 of optimal and runs in O(n log n); good enough for
    micro-batches where the lengths vary by 10x.
    """
    if k <= 0:
        raise ValueError("k must be positive")
    if len(seqlens) < k:
        raise ValueError(f"cannot split {len(seqlens)} samples into {k} non-empty groups")
    heap = [(0, i) for i in range(k)]
    groups: list[list[int]] = [[] for _ in range(k)]
    for idx in sorted(range(len(seqlens)), key=lambda i: -seqlens[i]):
        total, g = heapq.heappop(heap)
        groups[g].append(idx)
        heapq.heappush(heap, (total + seqlens[idx], g))
    return [sorted(g) for g in groups]


def imbalance(seqlens: list[int], groups: list[list[int]]) -> float:
    totals = [sum(seqlens[i] for i in g) for g in groups]
    return max(totals) / (sum(totals) / len(totals))
'''
SEQLEN_TEST = """import random

import pytest

from minirl.utils.seqlen_balancing import balanced_partitions, imbalance


def test_every_sample_once():
    lens = [random.Random(0).randint(10, 4000) for _ in range(257)]
    groups = balanced_partitions(lens, 8)
    assert sorted(i for g in groups for i in g) == list(range(257))


def test_better_than_chunking():
    lens = sorted(random.Random(1).randint(10, 4000) for _ in range(256))
    chunked = [list(range(i, i + 32)) for i in range(0, 256, 32)]
    assert imbalance(lens, balanced_partitions(lens, 8)) < 1.01 < imbalance(lens, chunked)


def test_too_few_samples():
    with pytest.raises(ValueError):
        balanced_partitions([1, 2], 3)
"""
PRS.append(PR(
    SEQLEN, "[trainer, perf] feat: balance micro-batches by sequence length", author="chen-li",
    created="2026-11-02 03:00", closed="2026-11-05 05:00", labels=["perf"],
    body=body(
        "Micro-batches were formed by sample count, so one GPU could get 8 responses of 4k tokens while another "
        "got 8 of 200: the slowest rank set the step time. `balanced_partitions` splits by total tokens.\n\n"
        "Not addressed: wiring it into the FSDP actor's micro-batching; this PR adds the helper and its tests, "
        "the actor change follows.",
        test="On the GSM8K response-length distribution: max/mean token imbalance across 8 ranks 1.9 -> 1.004.",
    ),
    ops=[Add("minirl/utils/seqlen_balancing.py", SEQLEN_MOD), Add("tests/test_seqlen_balancing.py", SEQLEN_TEST)],
    reviews=[("tkobayashi", "2026-11-04 02:00", "APPROVED", "Clean. Looking forward to the actor wiring.")],
    commits=[("2026-11-02 02:50", "utils: sequence-length balanced partitions")],
))  # fmt: skip

PRS.append(PR(
    STOP_IDS, "[rollout, vllm] fix: stop generation at the tokenizer's EOS ids from generation_config", author="bwang",
    created="2026-11-04 06:00", closed="2026-11-06 03:00", labels=["bug", "rollout"],
    body=body(
        "Qwen2.5-Instruct ends turns with `<|im_end|>` (151645), which is not `tokenizer.eos_token_id`. vLLM kept "
        "generating past the end of the answer until `max_tokens`, so 23% of responses hit the length limit and "
        "got truncated rewards. Pass `stop_token_ids` from the model's generation config.",
        test="Qwen2.5-0.5B-Instruct GSM8K: responses hitting max length 23% -> 0.4%; mean response length 498 -> 211.",
    ),
    ops=[
        Edit(VLLM, "        self.sampling_params = self._sampling_params(config)\n",
             "        self.sampling_params = self._sampling_params(config, tokenizer)\n"),
        Edit(VLLM, "    @staticmethod\n    def _sampling_params(config):\n        from vllm import SamplingParams\n\n"
                   "        return SamplingParams(\n",
             "    @staticmethod\n    def _sampling_params(config, tokenizer):\n        from vllm import SamplingParams\n\n"
             "        # Chat models often end a turn with a token that is not eos_token_id (<|im_end|>).\n"
             "        stop_ids = set(getattr(tokenizer, \"generation_eos_token_ids\", None) or [])\n"
             "        if tokenizer.eos_token_id is not None:\n            stop_ids.add(tokenizer.eos_token_id)\n"
             "        return SamplingParams(\n"),
        Edit(VLLM, "            max_tokens=config.response_length,\n        )\n",
             "            max_tokens=config.response_length,\n            stop_token_ids=sorted(stop_ids),\n        )\n"),
    ],
    comments=[("farah-n", "2026-11-04 09:00", "SGLang reads the generation config itself, so it is not affected. "
                                              "But our reward for truncated responses on SGLang runs looked fine, consistent.")],
    reviews=[("mzhou", "2026-11-05 02:00", "APPROVED", "")],
    commits=[("2026-11-04 05:55", "vllm: stop at generation-config eos ids")],
))  # fmt: skip

PRS.append(PR(
    ALIAS, "[BREAKING][rollout] chore: remove the deprecated HFRollout alias", author="oskar-h",
    created="2026-11-05 03:00", closed="2026-11-07 02:00", labels=["breaking"],
    body=f"Follow-up to #{RENAME}: the alias was kept for one release (0.5.0 is out). Use `NaiveRollout`.\n\n"
         "- [x] changelog entry\n- [x] no remaining uses in the repository (`git grep HFRollout`)",
    ops=[
        Edit("minirl/rollout/naive_rollout.py",
             "\n\n# Deprecated: kept for one release so existing scripts keep importing.\nHFRollout = NaiveRollout\n", ""),
        Edit("minirl/rollout/__init__.py",
             'from minirl.rollout.naive_rollout import HFRollout, NaiveRollout\n\n__all__ = ["BaseRollout", "HFRollout", "NaiveRollout"]\n',
             'from minirl.rollout.naive_rollout import NaiveRollout\n\n__all__ = ["BaseRollout", "NaiveRollout"]\n'),
    ],
    reviews=[("lena-park", "2026-11-06 03:00", "APPROVED", "")],
    commits=[("2026-11-05 02:55", "rollout: drop HFRollout alias")],
))  # fmt: skip

PRS.append(PR(
    DEAD_WORKER, "[rollout] fix: fail fast when a rollout worker dies during weight sync", author="tkobayashi",
    created="2026-11-07 04:00", closed="2026-11-12 06:00", labels=["bug", "rollout"],
    body=body(
        f"Fixes #{ISSUE_DEAD}; the case left open in #{ACK}. When a rollout worker crashed mid-sync the trainer "
        "waited the whole `ack_timeout` and then raised a `TimeoutError` that named no worker. Now the sender "
        "checks `channel.peer_alive()` while waiting and raises at once with the worker's exit code.",
        test="Killed a rollout worker (SIGKILL) during sync: the trainer raised after 0.2 s instead of 60 s. "
             "Unit test with a channel whose peer dies.",
    ),
    ops=[
        Edit(W, "            if time.monotonic() > deadline:\n",
             "            if not self.channel.peer_alive():\n"
             "                raise RuntimeError(\n"
             '                    f"rollout worker exited (code {self.channel.peer_exitcode()}) during weight sync; "\n'
             '                    f"buckets {pending} were never acknowledged"\n                )\n'
             "            if time.monotonic() > deadline:\n"),
        Edit(T_WS, "    def drain_acks(self):\n",
             "    def peer_alive(self):\n        return not getattr(self, \"dead\", False)\n\n"
             "    def peer_exitcode(self):\n        return -9\n\n    def drain_acks(self):\n"),
        Edit(T_WS, "        raise AssertionError(\"expected a timeout\")\n",
             "        raise AssertionError(\"expected a timeout\")\n\n\n"
             "def test_dead_worker_fails_fast():\n    channel = LoopbackChannel()\n    channel.dead = True\n"
             "    sender = BucketedWeightSender(channel, bucket_mb=1, device=\"cpu\", ack_timeout=30)\n"
             "    start = time.monotonic()\n    try:\n        sender.send({\"w\": torch.zeros(4)}.items())\n"
             "    except RuntimeError as e:\n        assert \"code -9\" in str(e)\n"
             "    assert time.monotonic() - start < 1\n"),
    ],
    comments=[("mzhou", "2026-11-08 02:00", "Thanks for picking this up. Does `peer_alive` work for the Ray channel? "
                                            "Ray actors do not expose an exit code."),
              ("tkobayashi", "2026-11-09 03:00", "For Ray it uses `ray.util.state` and returns None as the code; "
                                                 "the message then says `code None`. Not pretty but honest.")],
    reviews=[("mzhou", "2026-11-12 05:00", "APPROVED", "")],
    commits=[("2026-11-07 03:55", "rollout: fail fast on a dead rollout worker")],
))  # fmt: skip

DAPO_README = f"""# DAPO recipe

An implementation of DAPO's two main ingredients on top of minirl's GRPO (#{GRPO}):

- **Dynamic sampling**: drop prompt groups whose responses all get the same reward (no learning
  signal) and keep sampling until the batch is full.
- **Overlong reward shaping**: responses longer than `max_response_length - overlong_buffer` get a
  linear penalty instead of a hard zero.

Run:

    python -m recipe.dapo.main_dapo --config recipe/dapo/config.yaml

Qwen2.5-7B on DAPO-Math-17k, 16xH100: AIME24 avg@32 0.21 -> 0.32 after 400 steps.
"""
DAPO_CODE = '''"""DAPO on top of the GRPO trainer: dynamic sampling and overlong reward shaping."""

from __future__ import annotations

import logging

import torch

from minirl.trainer.ppo_trainer import PPOTrainer

logger = logging.getLogger(__name__)


def overlong_penalty(lengths: torch.Tensor, max_len: int, buffer: int, factor: float = 1.0) -> torch.Tensor:
    """0 inside the budget, falling linearly to -factor at max_len."""
    start = max_len - buffer
    return -factor * ((lengths - start).clamp(min=0) / buffer).clamp(max=1.0)


def informative_groups(scores: torch.Tensor, group_ids: list) -> list:
    """Groups whose scores are not all equal: only these carry a GRPO learning signal."""
    by_group: dict = {}
    for score, gid in zip(scores.tolist(), group_ids):
        by_group.setdefault(gid, set()).add(round(score, 6))
    return [gid for gid, values in by_group.items() if len(values) > 1]


class DAPOTrainer(PPOTrainer):
    def step(self, batch):
        cfg = self.config.recipe
        kept, tries = [], 0
        while sum(len(b) for b in kept) < cfg.train_batch_size and tries < cfg.max_sampling_tries:
            tries += 1
            self.rollout.wake_up()
            sampled = self.rollout.generate_sequences(batch)
            self.rollout.sleep()
            scores = self.reward_fn(sampled).sum(-1)
            lengths = sampled.batch["response_mask"].sum(-1)
            scores = scores + overlong_penalty(lengths, cfg.max_response_length, cfg.overlong_buffer)
            keep = set(informative_groups(scores, sampled.non_tensor_batch["uid"]))
            kept.append(sampled.select_groups(keep))
        if tries == cfg.max_sampling_tries:
            logger.warning("dynamic sampling gave up after %d tries", tries)
        return super().step_on_sampled(kept)
'''
DAPO_CFG = """defaults:
  - ../../minirl/config/ppo_trainer

algorithm:
  adv_estimator: grpo

recipe:
  train_batch_size: 512
  max_sampling_tries: 10
  max_response_length: 20480
  overlong_buffer: 4096

actor:
  clip_ratio_low: 0.2
  clip_ratio_high: 0.28
"""
PRS.append(PR(
    DAPO, "[recipe] feat: DAPO recipe with dynamic sampling and overlong reward shaping", author="chen-li",
    created="2026-11-10 02:00", closed="2026-11-16 04:00", labels=["recipe"],
    body=body(
        "Adds `recipe/dapo/` (kept out of the core package as agreed in the recipes RFC). Reuses the GRPO estimator "
        f"from #{GRPO}. `step_on_sampled` in the trainer is a follow-up PR; until then the recipe runs on the "
        "branch in `chen-li/dapo-trainer-hook`.",
        test="Qwen2.5-7B on DAPO-Math-17k, 16xH100: AIME24 avg@32 0.21 -> 0.32 after 400 steps.",
        tests=False,
    ),
    ops=[Add("recipe/dapo/README.md", DAPO_README), Add("recipe/dapo/dapo_trainer.py", DAPO_CODE),
         Add("recipe/dapo/config.yaml", DAPO_CFG)],
    comments=[("lena-park", "2026-11-12 02:00", "Merging a recipe that needs an unmerged trainer hook is odd. Can we "
                                                "land the hook first?"),
              ("chen-li", "2026-11-12 06:00", "The hook PR is blocked on the trainer refactor; recipes are not "
                                              "imported by the package, so nothing breaks. I would like users to be "
                                              "able to read the recipe now."),
              ("lena-park", "2026-11-16 03:50", "OK, merging, but please link the hook PR in the README.")],
    reviews=[("lena-park", "2026-11-16 03:55", "APPROVED", "")],
    commits=[("2026-11-10 01:50", "recipe: DAPO")],
))  # fmt: skip

PRS.append(PR(
    PERF_STATS, "[trainer] perf: one host sync instead of three in response-length stats", author="bwang",
    created="2026-11-13 05:00", closed="2026-11-14 03:00", labels=["perf"],
    body="`compute_response_stats` called `.item()` three times, each a device-to-host sync that waits for the whole "
         "step's queued kernels. Stack the three values and sync once.\n\nStep time (Qwen2.5-7B, 8xH100): "
         "41.3 s -> 39.8 s; the profile shows two fewer `cudaStreamSynchronize` per step.",
    ops=[Edit("minirl/utils/metrics.py",
              '    lengths = batch.batch["response_mask"].sum(-1).float()\n    return {\n'
              '        "response_length/mean": lengths.mean().item(),\n'
              '        "response_length/max": lengths.max().item(),\n'
              '        "response_length/min": lengths.min().item(),\n    }\n',
              '    lengths = batch.batch["response_mask"].sum(-1).float()\n'
              "    # One device-to-host copy instead of three .item() syncs.\n"
              "    mean, high, low = torch.stack([lengths.mean(), lengths.max(), lengths.min()]).tolist()\n"
              '    return {"response_length/mean": mean, "response_length/max": high, "response_length/min": low}\n'),
         Edit("minirl/utils/metrics.py", "import numpy as np\n", "import numpy as np\nimport torch\n")],
    reviews=[("mzhou", "2026-11-14 02:50", "APPROVED", "")],
    commits=[("2026-11-13 04:55", "metrics: single host sync")],
))  # fmt: skip

PRS.append(PR(
    SGL_OOM, "[rollout, sglang] fix: flush the KV cache before a weight update to avoid OOM on 32B", author="farah-n",
    created="2026-11-15 06:00", closed="2026-11-18 02:00", labels=["bug", "sglang"],
    body=body(
        "Qwen2.5-32B on 8xH100 with `gpu_memory_utilization: 0.85` OOMed in `update_weights_from_tensor`: the update "
        "needs staging memory while the KV cache is still held. Flush the cache first.\n\nThis is independent of "
        f"#{SGL_ASYNC} (still open); if that lands, the flush must happen before the update thread starts.",
        test="32B GRPO ran 200 steps without OOM (crashed at step 1 before). 7B step time unchanged.",
    ),
    ops=[Edit(SGL, "    def update_weights(self, named_tensors):\n        self.engine.update_weights_from_tensor(list(named_tensors))\n",
              "    def update_weights(self, named_tensors):\n"
              "        # The update needs staging memory; with the KV cache held, 32B at 0.85 utilisation OOMs.\n"
              "        self.engine.flush_cache()\n        self.engine.update_weights_from_tensor(list(named_tensors))\n")],
    reviews=[("mzhou", "2026-11-17 03:00", "APPROVED", "")],
    commits=[("2026-11-15 05:55", "sglang: flush cache before update")],
))  # fmt: skip

PRS.append(PR(
    TYPOS, "[doc] docs: document free_cache_engine and ack_timeout in the config reference", author="first-timer-42",
    created="2026-11-17 09:00", closed="2026-11-19 03:00", labels=["documentation", "good first issue"],
    body=f"The config reference missed two options added recently (#{FREE_CACHE}, #{ACK}). First PR here, "
         "happy to adjust wording!",
    ops=[Edit("docs/config.md", "- `weight_sync.bucket_mb`: size of each weight bucket sent to the rollout workers.\n",
              "- `weight_sync.bucket_mb`: size of each weight bucket sent to the rollout workers.\n"
              "- `free_cache_engine`: put vLLM to sleep between rollouts to free its KV cache (default `true`).\n"
              "- `weight_sync.ack_timeout`: seconds to wait for the rollout workers to acknowledge a sync (default 60).\n")],
    comments=[("lena-park", "2026-11-18 02:00", "Welcome, and thanks! `ack_timeout` is not under `weight_sync` in the "
                                                "config yet, it is a constructor argument. Let's keep the doc and add "
                                                "the config key in a follow-up."),],
    reviews=[("lena-park", "2026-11-19 02:50", "APPROVED", "")],
    commits=[("2026-11-17 08:55", "docs: two missing options")],
))  # fmt: skip

PRS.append(PR(
    LORA, "[rollout, vllm] feat: sync only LoRA adapter weights when the actor trains LoRA", author="bwang",
    created="2026-11-24 03:00", state="open", draft=True, labels=["rollout", "WIP"],
    body="Draft. With LoRA only the adapter weights change, but we sync the full model every step (14 GB for 7B "
         "instead of ~80 MB). This sends only `lora_` parameters when `actor.lora_rank > 0`.\n\nTODO: vLLM needs "
         "`load_lora_adapter` instead of `load_weights`; tests; numbers.",
    ops=[Edit(W, "    def send(self, named_params) -> int:\n        params = dict(named_params)\n",
              "    def send(self, named_params, lora_only: bool = False) -> int:\n        params = dict(named_params)\n"
              "        if lora_only:\n            # Only the adapters change during LoRA training.\n"
              '            params = {k: v for k, v in params.items() if "lora_" in k}\n')],
    commits=[("2026-11-24 02:55", "wip: lora-only weight sync")],
))  # fmt: skip

E2E_SH = """#!/usr/bin/env bash
# GRPO smoke test: 5 steps of Qwen2.5-0.5B on 64 GSM8K prompts; fails if reward is NaN or the run crashes.
set -euo pipefail

DATA=${DATA:-$HOME/data/gsm8k-tiny}
python examples/data_preprocess/gsm8k.py --local_dir "$DATA" --limit 64

python -m minirl.trainer.main_ppo \\
    algorithm.adv_estimator=grpo \\
    data.train_files="$DATA/train.parquet" \\
    data.val_files="$DATA/test.parquet" \\
    data.train_batch_size=16 \\
    actor.model_path=Qwen/Qwen2.5-0.5B-Instruct \\
    actor.ppo_mini_batch_size=8 \\
    rollout.n=4 \\
    rollout.tensor_model_parallel_size=1 \\
    trainer.total_epochs=1 \\
    trainer.total_training_steps=5 \\
    trainer.log_every=1 | tee /tmp/grpo_tiny.log

if grep -q "reward/mean: nan" /tmp/grpo_tiny.log; then
    echo "NaN reward" >&2
    exit 1
fi
"""
PRS.append(PR(
    E2E, "[ci, trainer] test: GRPO smoke test on gsm8k-tiny in the GPU job", author="ravi-s",
    created="2026-11-20 02:00", closed="2026-11-25 04:00", labels=["ci", "test"],
    body=f"GRPO (#{GRPO}) had no e2e coverage; the KL default episode (#{KL_DEFAULT}, #{REVERT_KL}) would have been "
         "caught by a run that checks the reward. Adds a 5-step GRPO run (~3 min on one GPU) to the GPU job.",
    ops=[Add("tests/e2e/run_grpo_gsm8k_tiny.sh", E2E_SH),
         Edit(CI, "      - run: bash tests/e2e/run_ppo_gsm8k_tiny.sh\n",
              "      - run: bash tests/e2e/run_ppo_gsm8k_tiny.sh\n      - run: bash tests/e2e/run_grpo_gsm8k_tiny.sh\n")],
    reviews=[("eve-ops", "2026-11-25 03:50", "APPROVED", "GPU job +3m10s, fine.")],
    commits=[("2026-11-20 01:55", "tests: grpo e2e smoke")],
))  # fmt: skip

PRS.append(PR(
    NAN_LOSS, "[trainer] fix: NaN loss when a mini-batch has no response tokens", author="tkobayashi",
    created="2026-11-24 07:00", closed="2026-11-26 05:00", labels=["bug", "algo"],
    body=body(
        f"Fixes #{ISSUE_NAN}. With dynamic sampling (#{DAPO}) a mini-batch can end up with every response empty "
        "(mask all zero); `masked_mean` divided by zero and the NaN propagated into the weights. Clamp the "
        "denominator at 1: an empty batch now contributes 0 loss.\n\nNot addressed: the optimizer still steps on a "
        "zero gradient (harmless with Adam but wasteful); skipping the step needs a trainer change.",
        test="New unit test; a DAPO run that produced NaN at step 212 now passes it.",
    ),
    ops=[Edit(ALGOS, "    return (values * mask).sum() / mask.sum()\n",
              "    # An all-padding batch (mask sums to 0) must give 0, not NaN.\n"
              "    return (values * mask).sum() / mask.sum().clamp(min=1)\n"),
         Edit("tests/test_core_algos.py", "from minirl.trainer.core_algos import compute_gae_advantage_return\n",
              "from minirl.trainer.core_algos import compute_gae_advantage_return, masked_mean\n\n\n"
              "def test_masked_mean_of_empty_mask_is_zero():\n"
              "    assert masked_mean(torch.ones(2, 3), torch.zeros(2, 3)).item() == 0.0\n")],
    reviews=[("ravi-s", "2026-11-25 02:00", "APPROVED", "")],
    commits=[("2026-11-24 06:55", "algo: masked_mean on empty mask")],
))  # fmt: skip

PRECOMMIT = """repos:
  - repo: https://github.com/astral-sh/ruff-pre-commit
    rev: v0.7.4
    hooks:
      - id: ruff
        args: [--fix]
      - id: ruff-format
"""
PRS.append(PR(
    RUFF, "[ci] ci: run ruff through pre-commit, pinned to 0.7.4", author="eve-ops",
    created="2026-11-26 02:00", closed="2026-11-27 03:00", labels=["ci"],
    body="Contributors ran whatever ruff they had; 0.8 reformats differently and produced noisy diffs in three PRs "
         "this week. Pin it in `.pre-commit-config.yaml` and run the same hooks in CI.",
    ops=[Add(".pre-commit-config.yaml", PRECOMMIT),
         Edit(CI, "jobs:\n", "jobs:\n  lint:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/checkout@v4\n"
                             "      - uses: actions/setup-python@v5\n        with:\n          python-version: \"3.11\"\n"
                             "      - run: pip install pre-commit\n      - run: pre-commit run --all-files --show-diff-on-failure\n\n")],
    reviews=[("lena-park", "2026-11-27 02:50", "APPROVED", "")],
    commits=[("2026-11-26 01:55", "ci: pre-commit with pinned ruff")],
))  # fmt: skip
