"""Fencing untrusted PR text in a prompt with a per-request random delimiter.

Why not a Markdown code fence: a PR can hold any run of backticks, and a fence computed from the
text tells an attacker who can predict it how to close it. A random tag drawn per request, checked to
occur nowhere in the text being fenced, cannot be forged by text written before the tag existed.
Production draws the tag from the OS's randomness; tests and golden files pass a seed.
"""

from __future__ import annotations

import random
import secrets
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Fence:
    tag: str  # e.g. "DATA-3f9a1c07": opens as "<<<DATA-3f9a1c07 kind", closes as "DATA-3f9a1c07>>>"

    def __call__(self, text: str, kind: str = "text") -> str:
        return f"<<<{self.tag} {kind}\n{text.rstrip()}\n{self.tag}>>>"

    @property
    def opener(self) -> str:
        return f"<<<{self.tag}"

    @property
    def closer(self) -> str:
        return f"{self.tag}>>>"


def new_fence(texts: Iterable[str], seed: int | None = None) -> Fence:
    """A fence whose tag occurs in none of `texts` (all the untrusted text of one request)."""
    rng: random.Random = random.Random(seed) if seed is not None else secrets.SystemRandom()
    pool = [t for t in texts if t]
    while True:
        tag = f"DATA-{rng.getrandbits(48):012x}"
        if not any(tag in t for t in pool):
            return Fence(tag)
