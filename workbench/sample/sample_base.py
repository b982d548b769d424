"""The made-up repository example-org/minirl as it stood before the sample's first PR.

All code here was written for the sample (a small RL post-training library in the style of the
projects the workbench is meant for); build_sample.py applies each PR's edits on top of it.
"""

WEIGHT_SYNC = '''"""Bucketed weight transfer from the trainer to rollout workers over shared-memory IPC.

The trainer packs parameters into fixed-size buckets, hands each bucket's IPC handle to the
rollout side, and the rollout worker loads the tensors into its engine.
"""

from __future__ import annotations

import gc
import logging
from dataclasses import dataclass, field

import torch

logger = logging.getLogger(__name__)

DEFAULT_BUCKET_MB = 512


@dataclass
class Bucket:
    names: list[str] = field(default_factory=list)
    shapes: list[torch.Size] = field(default_factory=list)
    buffer: torch.Tensor | None = None
    nbytes: int = 0


class BucketedWeightSender:
    """Runs in the trainer process."""

    def __init__(self, channel, bucket_mb: int = DEFAULT_BUCKET_MB, device: str = "cuda"):
        self.channel = channel
        self.bucket_bytes = bucket_mb << 20
        self.device = device
        self._buckets: list[Bucket] = []
        self._handles = []

    def _pack(self, named_params) -> list[Bucket]:
        buckets, current = [], Bucket()
        for name, param in named_params:
            size = param.numel() * param.element_size()
            if current.nbytes and current.nbytes + size > self.bucket_bytes:
                buckets.append(current)
                current = Bucket()
            current.names.append(name)
            current.shapes.append(param.shape)
            current.nbytes += size
        if current.names:
            buckets.append(current)
        return buckets

    def _fill(self, bucket: Bucket, params: dict) -> None:
        flat = [params[n].detach().reshape(-1) for n in bucket.names]
        bucket.buffer = torch.cat(flat).to(self.device)

    def send(self, named_params) -> int:
        params = dict(named_params)
        self._buckets = self._pack(params.items())
        for index, bucket in enumerate(self._buckets):
            self._fill(bucket, params)
            handle = self.channel.share(bucket.buffer)
            self._handles.append(handle)
            self.channel.put({"index": index, "names": bucket.names, "shapes": bucket.shapes, "handle": handle})
        self.channel.put({"done": True})
        self._cleanup()
        return len(self._buckets)

    def _cleanup(self):
        for bucket in self._buckets:
            bucket.buffer = None
        gc.collect()
        torch.cuda.empty_cache()


class BucketedWeightReceiver:
    """Runs in the rollout worker process."""

    def __init__(self, channel, engine):
        self.channel = channel
        self.engine = engine

    def receive(self) -> int:
        loaded = 0
        while True:
            msg = self.channel.get()
            if msg.get("done"):
                break
            buffer = self.channel.open(msg["handle"])
            offset = 0
            weights = []
            for name, shape in zip(msg["names"], msg["shapes"]):
                n = shape.numel()
                weights.append((name, buffer[offset : offset + n].view(shape)))
                offset += n
            self.engine.load_weights(weights)
            loaded += len(weights)
        return loaded
'''

VLLM_ROLLOUT = '''"""Rollout with vLLM: generate responses for a batch of prompts."""

from __future__ import annotations

import logging

from minirl.protocol import DataProto
from minirl.rollout.base import BaseRollout

logger = logging.getLogger(__name__)


class VLLMRollout(BaseRollout):
    def __init__(self, model_path: str, config, tokenizer):
        super().__init__()
        from vllm import LLM

        self.config = config
        self.tokenizer = tokenizer
        self.engine = LLM(
            model=model_path,
            tensor_parallel_size=config.tensor_model_parallel_size,
            gpu_memory_utilization=config.gpu_memory_utilization,
            enforce_eager=config.enforce_eager,
            enable_sleep_mode=True,
        )
        self.sampling_params = self._sampling_params(config)

    @staticmethod
    def _sampling_params(config):
        from vllm import SamplingParams

        return SamplingParams(
            n=config.n,
            temperature=config.temperature,
            top_p=config.top_p,
            max_tokens=config.response_length,
        )

    def generate_sequences(self, prompts: DataProto) -> DataProto:
        token_ids = prompts.batch["input_ids"].tolist()
        outputs = self.engine.generate(prompt_token_ids=token_ids, sampling_params=self.sampling_params)
        responses = [out.outputs[0].token_ids for out in outputs]
        return prompts.union(DataProto.from_responses(responses, pad_id=self.tokenizer.pad_token_id))

    def wake_up(self):
        self.engine.wake_up()

    def sleep(self):
        self.engine.sleep(level=1)
'''

PPO_TRAINER = '''"""The PPO training loop: rollout, reward, advantage, actor and critic updates."""

from __future__ import annotations

import logging

import torch

from minirl.trainer import core_algos
from minirl.utils.metrics import reduce_metrics

logger = logging.getLogger(__name__)


class PPOTrainer:
    def __init__(self, config, actor, critic, rollout, reward_fn, dataloader):
        self.config = config
        self.actor = actor
        self.critic = critic
        self.rollout = rollout
        self.reward_fn = reward_fn
        self.dataloader = dataloader
        self.global_step = 0
        self.use_kl_loss = config.actor.use_kl_loss

    def compute_advantage(self, batch):
        values = batch.batch["values"]
        rewards = batch.batch["token_level_rewards"]
        mask = batch.batch["response_mask"]
        advantages, returns = core_algos.compute_gae_advantage_return(
            rewards, values, mask, gamma=self.config.algorithm.gamma, lam=self.config.algorithm.lam
        )
        batch.batch["advantages"] = advantages
        batch.batch["returns"] = returns
        return batch

    def _update_actor(self, batch):
        metrics = self.actor.update_policy(batch)
        return {f"actor/{k}": v for k, v in metrics.items()}

    def _update_critic(self, batch):
        metrics = self.critic.update_critic(batch)
        return {f"critic/{k}": v for k, v in metrics.items()}

    def step(self, batch):
        self.rollout.wake_up()
        batch = self.rollout.generate_sequences(batch)
        self.rollout.sleep()
        batch.batch["token_level_rewards"] = self.reward_fn(batch)
        batch.batch["values"] = self.critic.compute_values(batch)
        batch = self.compute_advantage(batch)
        metrics = {}
        metrics.update(self._update_critic(batch))
        metrics.update(self._update_actor(batch))
        return metrics

    def fit(self):
        for epoch in range(self.config.trainer.total_epochs):
            for batch in self.dataloader:
                metrics = self.step(batch)
                self.global_step += 1
                if self.global_step % self.config.trainer.log_every == 0:
                    logger.info("step %d: %s", self.global_step, reduce_metrics(metrics))
                if self.global_step % self.config.trainer.save_freq == 0:
                    self.save_checkpoint()

    def save_checkpoint(self):
        path = f"{self.config.trainer.default_local_dir}/global_step_{self.global_step}"
        self.actor.save_checkpoint(path)
        self.critic.save_checkpoint(path)
        torch.save({"global_step": self.global_step}, f"{path}/trainer_state.pt")
'''

CORE_ALGOS = '''"""Loss functions and advantage estimators shared by the trainers."""

from __future__ import annotations

import torch


def masked_mean(values: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    return (values * mask).sum() / mask.sum()


def masked_whiten(values: torch.Tensor, mask: torch.Tensor, eps: float = 1e-8) -> torch.Tensor:
    mean = masked_mean(values, mask)
    var = masked_mean((values - mean) ** 2, mask)
    return (values - mean) * torch.rsqrt(var + eps)


def compute_gae_advantage_return(rewards, values, mask, gamma: float, lam: float):
    with torch.no_grad():
        last = 0
        advantages_reversed = []
        length = rewards.shape[-1]
        for t in reversed(range(length)):
            next_value = values[:, t + 1] if t < length - 1 else 0.0
            delta = rewards[:, t] + gamma * next_value - values[:, t]
            last = delta + gamma * lam * last
            advantages_reversed.append(last)
        advantages = torch.stack(advantages_reversed[::-1], dim=1)
        returns = advantages + values
        advantages = masked_whiten(advantages, mask)
    return advantages, returns


def compute_policy_loss(old_log_prob, log_prob, advantages, mask, clip_ratio: float = 0.2):
    ratio = torch.exp(log_prob - old_log_prob)
    losses = -advantages * ratio
    clipped = -advantages * torch.clamp(ratio, 1.0 - clip_ratio, 1.0 + clip_ratio)
    loss = masked_mean(torch.maximum(losses, clipped), mask)
    clipfrac = masked_mean(torch.gt(clipped, losses).float(), mask)
    return loss, clipfrac


def kl_penalty(log_prob, ref_log_prob, kind: str = "kl") -> torch.Tensor:
    if kind == "kl":
        return log_prob - ref_log_prob
    if kind == "abs":
        return (log_prob - ref_log_prob).abs()
    if kind == "mse":
        return 0.5 * (log_prob - ref_log_prob).square()
    raise ValueError(f"unknown kl penalty {kind}")
'''

METRICS = '''"""Aggregate per-step metrics for logging."""

from __future__ import annotations

import numpy as np


def reduce_metrics(metrics: dict) -> dict:
    out = {}
    for key, value in metrics.items():
        out[key] = float(np.mean(value))
    return out


def compute_response_stats(batch) -> dict:
    lengths = batch.batch["response_mask"].sum(-1).float()
    return {
        "response_length/mean": lengths.mean().item(),
        "response_length/max": lengths.max().item(),
        "response_length/min": lengths.min().item(),
    }
'''

CONFIG = """# Default configuration for PPO training.
data:
  train_files: ~/data/gsm8k/train.parquet
  val_files: ~/data/gsm8k/test.parquet
  max_prompt_length: 512
  max_response_length: 512
  train_batch_size: 1024

actor:
  strategy: fsdp
  ppo_mini_batch_size: 256
  ppo_micro_batch_size_per_gpu: 8
  clip_ratio: 0.2
  use_kl_loss: true
  kl_loss_coef: 0.01
  kl_loss_type: low_var_kl
  entropy_coeff: 0.0
  optim:
    lr: 1e-6
    warmup_steps_ratio: 0.0

rollout:
  name: vllm
  temperature: 1.0
  top_p: 1.0
  n: 1
  response_length: ${data.max_response_length}
  gpu_memory_utilization: 0.5
  tensor_model_parallel_size: 2
  enforce_eager: true
  weight_sync:
    bucket_mb: 512

algorithm:
  gamma: 1.0
  lam: 1.0
  adv_estimator: gae

trainer:
  total_epochs: 15
  log_every: 10
  save_freq: 100
  default_local_dir: checkpoints/${trainer.experiment_name}
  experiment_name: ppo_gsm8k
"""

HF_ROLLOUT = '''"""A slow reference rollout with HuggingFace generate(): for tests and debugging only."""

from __future__ import annotations

import torch

from minirl.protocol import DataProto
from minirl.rollout.base import BaseRollout


def _pad_to(tensors, length, pad_id):
    out = torch.full((len(tensors), length), pad_id, dtype=torch.long)
    for i, t in enumerate(tensors):
        out[i, : len(t)] = t
    return out


def _strip_prompt(output_ids, prompt_len):
    return output_ids[:, prompt_len:]


class HFRollout(BaseRollout):
    def __init__(self, module, config, tokenizer):
        super().__init__()
        self.module = module
        self.config = config
        self.tokenizer = tokenizer

    @torch.no_grad()
    def generate_sequences(self, prompts: DataProto) -> DataProto:
        input_ids = prompts.batch["input_ids"]
        output = self.module.generate(
            input_ids=input_ids,
            attention_mask=prompts.batch["attention_mask"],
            max_new_tokens=self.config.response_length,
            do_sample=self.config.temperature > 0,
            temperature=self.config.temperature,
        )
        responses = _strip_prompt(output, input_ids.shape[1])
        responses = _pad_to(list(responses), self.config.response_length, self.tokenizer.pad_token_id)
        return prompts.union(DataProto.from_tensors(responses=responses))
'''

ROLLOUT_INIT = """from minirl.rollout.base import BaseRollout
from minirl.rollout.hf_rollout import HFRollout

__all__ = ["BaseRollout", "HFRollout"]
"""

SGLANG_ROLLOUT = '''"""Rollout with SGLang: generate responses and receive weights from the trainer."""

from __future__ import annotations

import logging

from minirl.protocol import DataProto
from minirl.rollout.base import BaseRollout

logger = logging.getLogger(__name__)


class SGLangRollout(BaseRollout):
    def __init__(self, model_path: str, config, tokenizer):
        super().__init__()
        import sglang

        self.config = config
        self.tokenizer = tokenizer
        self.engine = sglang.Engine(
            model_path=model_path,
            tp_size=config.tensor_model_parallel_size,
            mem_fraction_static=config.gpu_memory_utilization,
        )

    def generate_sequences(self, prompts: DataProto) -> DataProto:
        token_ids = prompts.batch["input_ids"].tolist()
        params = {"temperature": self.config.temperature, "max_new_tokens": self.config.response_length}
        outputs = self.engine.generate(input_ids=token_ids, sampling_params=params)
        responses = [out["output_ids"] for out in outputs]
        return prompts.union(DataProto.from_responses(responses, pad_id=self.tokenizer.pad_token_id))

    def update_weights(self, named_tensors):
        self.engine.update_weights_from_tensor(list(named_tensors))

    def release_memory(self):
        self.engine.release_memory_occupation()

    def resume_memory(self):
        self.engine.resume_memory_occupation()
'''

CI = """name: tests

on:
  pull_request:
  push:
    branches: [main]

jobs:
  unit:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-python@v5
        with:
          python-version: "3.11"
      - run: pip install -e .[test]
      - run: pytest -q tests

  gpu-e2e:
    runs-on: [self-hosted, gpu]
    steps:
      - uses: actions/checkout@v4
      - run: pip install -e .[test,vllm]
      - run: bash tests/e2e/run_ppo_gsm8k_tiny.sh
"""

PYPROJECT = """[project]
name = "minirl"
version = "0.4.0"
description = "A small library for RL post-training of language models"
requires-python = ">=3.10"
dependencies = [
  "torch>=2.6",
  "transformers>=4.51",
  "ray[default]>=2.41",
  "omegaconf>=2.3",
  "numpy<2.3",
  "pyarrow>=15",
]

[project.optional-dependencies]
vllm = ["vllm==0.11.0"]
sglang = ["sglang[srt]==0.5.3"]
test = ["pytest>=8", "pytest-timeout"]
"""

README = """# minirl

A small library for RL post-training of language models: PPO and GRPO with FSDP actors and
vLLM or SGLang rollout workers.

## Install

    pip install -e .[vllm]

## Run

    python -m minirl.trainer.main_ppo --config minirl/config/ppo_trainer.yaml
"""

DOCS_INDEX = """# minirl documentation

- [Installation](install.md)
- [Configuration reference](config.md)
- [Rollout backends](rollout.md)

## Design

minirl runs the trainer (actor, critic, reference) and the rollout engine in separate Ray
workers. After every actor update the new weights are pushed to the rollout workers in
buckets over shared-memory IPC.
"""

DOCS_CONFIG = """# Configuration reference

## actor

- `ppo_mini_batch_size`: prompts per PPO mini-batch, across all GPUs.
- `ppo_micro_batch_size_per_gpu`: samples per forward pass on one GPU.
- `clip_ratio`: PPO clip range.
- `use_kl_loss`: add a KL term to the actor loss (GRPO style) instead of a KL reward penalty.
- `kl_loss_coef`: weight of that KL term.
- `entropy_coeff`: weight of the entropy bonus.

## rollout

- `gpu_memory_utilization`: fraction of GPU memory vLLM may use for weights and KV cache.
- `tensor_model_parallel_size`: tensor parallel size of the rollout engine.
- `weight_sync.bucket_mb`: size of each weight bucket sent to the rollout workers.
"""

TEST_WEIGHT_SYNC = """import torch

from minirl.rollout.weight_sync import BucketedWeightReceiver, BucketedWeightSender


class LoopbackChannel:
    def __init__(self):
        self.queue = []

    def share(self, tensor):
        return tensor

    def open(self, handle):
        return handle

    def put(self, msg):
        self.queue.append(msg)

    def get(self):
        return self.queue.pop(0)


class RecordingEngine:
    def __init__(self):
        self.weights = {}

    def load_weights(self, weights):
        self.weights.update(dict(weights))


def test_roundtrip_small_buckets():
    params = {f"layer{i}.weight": torch.randn(64, 64) for i in range(8)}
    channel = LoopbackChannel()
    sender = BucketedWeightSender(channel, bucket_mb=0, device="cpu")
    sender.bucket_bytes = 64 * 64 * 4 * 3
    assert sender.send(params.items()) == 3
    engine = RecordingEngine()
    assert BucketedWeightReceiver(channel, engine).receive() == 8
    for name, tensor in params.items():
        torch.testing.assert_close(engine.weights[name], tensor)
"""

BASE_FILES = {
    "minirl/rollout/weight_sync.py": WEIGHT_SYNC,
    "minirl/rollout/vllm_rollout.py": VLLM_ROLLOUT,
    "minirl/rollout/sglang_rollout.py": SGLANG_ROLLOUT,
    "minirl/rollout/hf_rollout.py": HF_ROLLOUT,
    "minirl/rollout/__init__.py": ROLLOUT_INIT,
    "minirl/trainer/ppo_trainer.py": PPO_TRAINER,
    "minirl/trainer/core_algos.py": CORE_ALGOS,
    "minirl/utils/metrics.py": METRICS,
    "minirl/config/ppo_trainer.yaml": CONFIG,
    ".github/workflows/tests.yml": CI,
    "pyproject.toml": PYPROJECT,
    "README.md": README,
    "docs/index.md": DOCS_INDEX,
    "docs/config.md": DOCS_CONFIG,
    "tests/test_weight_sync.py": TEST_WEIGHT_SYNC,
}
