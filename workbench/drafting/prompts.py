"""The prompt files under prompts/: data with a version, read here and nowhere else.

VERSION                  bumped whenever any prompt file changes (it is stored with each LLM draft)
system_{lang}.md         role, verdict rubric, context layout, calibration rules, per-field patterns
schema_{lang}.json       the response schema, evidence fields first, descriptions in the brief's language
example_{lang}.md        one built-in brief shaped like the reference digest, used when the team has
                         no final briefs yet
user_labels.json         the user message's opening and closing lines ({open} / {close}: the fence)
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from ..brief import check_lang

PROMPTS_DIR = Path(__file__).resolve().parent / "prompts"


@cache
def _read(name: str) -> str:
    return (PROMPTS_DIR / name).read_text(encoding="utf-8").strip()


def prompt_version() -> str:
    return _read("VERSION")


def system_prompt(lang: str) -> str:
    return _read(f"system_{check_lang(lang)}.md")


def response_schema(lang: str = "en") -> dict[str, Any]:
    """The json_schema payload (name, strict, schema); a fresh copy, callers may not share it."""
    return json.loads(_read(f"schema_{check_lang(lang)}.json"))


def builtin_example(lang: str) -> str:
    return _read(f"example_{check_lang(lang)}.md")


def labels(lang: str) -> dict[str, str]:
    return json.loads(_read("user_labels.json"))[check_lang(lang)]
