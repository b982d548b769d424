"""Drafting reading briefs: the offline drafter, the LLM drafter, and the token-budgeted context.

draft_offline(record, analysis, lang) -> Brief
build_context(record, analysis, lang=..., budget=16000, examples=(), seed=None) -> Context
LLMDrafter(settings).draft(record, analysis, lang=..., on_text=None, cancel=None) -> DraftResult
draft_many(store, repo, ...) -> DraftSummary   # batch.py: what `workbench draft` runs

context.py assembles; sections.py (description, heuristics, discussion, commits), hunks.py (how each
file's patch is shown), fencing.py (the per-request fence tag) and prompts.py (the prompt files) feed it.
"""

from __future__ import annotations

from .context import Context, Example, build_context
from .offline import draft_offline


def __getattr__(name: str):
    # the LLM drafter and the batch runner import the openai SDK and tqdm: only when asked for
    if name in ("LLMDrafter", "DraftResult"):
        from . import llm

        return getattr(llm, name)
    if name == "draft_many":
        from .batch import draft_many

        return draft_many
    raise AttributeError(name)


__all__ = ["Context", "Example", "build_context", "draft_offline", "LLMDrafter", "DraftResult", "draft_many"]
