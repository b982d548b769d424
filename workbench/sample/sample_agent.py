"""The sample's large feature PR: a multi-turn agent loop with 16 tools (well over 1,500 changed lines).

The tools share one shape, so they are written from a table; the loop, parser and docs by hand.
"""

from __future__ import annotations

LOOP = '''"""Multi-turn rollout: generate, run the tool the model called, append the observation, repeat."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from minirl.agent.parser import parse_tool_calls
from minirl.agent.tools import TOOLS, Tool

logger = logging.getLogger(__name__)


@dataclass
class Trajectory:
    prompt_ids: list[int]
    response_ids: list[int] = field(default_factory=list)
    # 1 for tokens the policy generated (trained on), 0 for tool observations (not trained on).
    response_mask: list[int] = field(default_factory=list)
    turns: int = 0
    tool_calls: int = 0
    finished: bool = False
    errors: list[str] = field(default_factory=list)


class AgentLoop:
    def __init__(self, engine, tokenizer, config):
        self.engine = engine
        self.tokenizer = tokenizer
        self.max_turns = config.max_turns
        self.max_response_length = config.max_response_length
        self.tools: dict[str, Tool] = {name: TOOLS[name]() for name in config.tools}

    def run(self, prompts: list[list[int]]) -> list[Trajectory]:
        trajectories = [Trajectory(prompt_ids=list(p)) for p in prompts]
        for _ in range(self.max_turns):
            active = [t for t in trajectories if not t.finished]
            if not active:
                break
            outputs = self.engine.generate([t.prompt_ids + t.response_ids for t in active])
            for traj, out_ids in zip(active, outputs):
                self._step(traj, list(out_ids))
        for traj in trajectories:
            self._truncate(traj)
        return trajectories

    def _step(self, traj: Trajectory, out_ids: list[int]) -> None:
        traj.turns += 1
        traj.response_ids.extend(out_ids)
        traj.response_mask.extend([1] * len(out_ids))
        text = self.tokenizer.decode(out_ids)
        calls = parse_tool_calls(text)
        if not calls:
            traj.finished = True
            return
        for call in calls:
            traj.tool_calls += 1
            observation = self._run_tool(traj, call.name, call.arguments)
            obs_ids = self.tokenizer.encode(f"<tool_response>{observation}</tool_response>")
            traj.response_ids.extend(obs_ids)
            mask.extend([0] * len(obs_ids)) if False else traj.response_mask.extend([0] * len(obs_ids))
        if len(traj.response_ids) >= self.max_response_length:
            traj.finished = True

    def _run_tool(self, traj: Trajectory, name: str, arguments: dict) -> str:
        tool = self.tools.get(name)
        if tool is None:
            traj.errors.append(f"unknown tool {name}")
            return f"error: unknown tool {name}"
        try:
            return tool.call(**arguments)
        except Exception as e:  # a tool failure is an observation, not a crash of the batch
            traj.errors.append(f"{name}: {e}")
            return f"error: {e}"

    def _truncate(self, traj: Trajectory) -> None:
        # ids and mask are cut together so they stay aligned token for token
        traj.response_ids = traj.response_ids[: self.max_response_length]
        traj.response_mask = traj.response_mask[: self.max_response_length]
'''.replace(
    "            mask.extend([0] * len(obs_ids)) if False else traj.response_mask.extend([0] * len(obs_ids))\n",
    "            mask = traj.response_mask\n            mask.extend([0] * len(obs_ids))\n",
)

PARSER = '''"""Parse Hermes-style tool calls: <tool_call>{"name": ..., "arguments": {...}}</tool_call>."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

_CALL = re.compile(r"<tool_call>\\s*(\\{.*?\\})\\s*</tool_call>", re.DOTALL)


@dataclass
class ToolCall:
    name: str
    arguments: dict


def parse_tool_calls(text: str) -> list[ToolCall]:
    """Every well-formed call in order; malformed JSON is skipped, not raised (the model is learning)."""
    calls = []
    for match in _CALL.finditer(text):
        try:
            payload = json.loads(match.group(1))
        except json.JSONDecodeError:
            continue
        name = payload.get("name")
        arguments = payload.get("arguments") or {}
        if isinstance(name, str) and isinstance(arguments, dict):
            calls.append(ToolCall(name=name, arguments=arguments))
    return calls
'''

BASE = '''"""The tool interface: a name, a JSON schema for the arguments, and call()."""

from __future__ import annotations

from typing import Any, ClassVar


class Tool:
    name: ClassVar[str] = ""
    description: ClassVar[str] = ""
    parameters: ClassVar[dict[str, Any]] = {}

    def schema(self) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters},
        }

    def validate(self, arguments: dict[str, Any]) -> None:
        required = self.parameters.get("required", [])
        missing = [k for k in required if k not in arguments]
        if missing:
            raise ValueError(f"missing arguments: {', '.join(missing)}")
        properties = self.parameters.get("properties", {})
        unknown = [k for k in arguments if k not in properties]
        if unknown:
            raise ValueError(f"unknown arguments: {', '.join(unknown)}")

    def call(self, **arguments: Any) -> str:
        self.validate(arguments)
        return str(self.run(**arguments))

    def run(self, **arguments: Any) -> Any:
        raise NotImplementedError
'''

# name, class name, description, [(arg, type, description)], body of run(), (test args, expected)
TOOLS = [
    (
        "calculator",
        "Calculator",
        "Evaluate an arithmetic expression with + - * / ** and parentheses.",
        [("expression", "string", "the expression, e.g. (3 + 4) * 2")],
        [
            '        allowed = set("0123456789+-*/(). ")',
            "        if not set(expression) <= allowed:",
            '            raise ValueError("only arithmetic is allowed")',
            '        return eval(expression, {"__builtins__": {}}, {})',
        ],
        ('expression="(3 + 4) * 2"', "14"),
    ),
    (
        "python_sandbox",
        "PythonSandbox",
        "Run a short Python snippet in a subprocess and return stdout.",
        [
            ("code", "string", "Python source"),
            ("timeout_s", "number", "seconds before the run is killed (default 3)"),
        ],
        [
            "        import subprocess",
            "        import sys",
            "",
            '        out = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True,',
            "                             timeout=timeout_s or 3)",
            "        return (out.stdout or out.stderr).strip()[:2000]",
        ],
        ('code="print(6 * 7)"', "42"),
    ),
    (
        "unit_convert",
        "UnitConvert",
        "Convert a length, mass or time value between units.",
        [
            ("value", "number", "the value"),
            ("from_unit", "string", "m, km, cm, kg, g, s, min, h"),
            ("to_unit", "string", "target unit"),
        ],
        [
            '        factors = {"m": 1, "km": 1000, "cm": 0.01, "kg": 1, "g": 0.001, "s": 1, "min": 60, "h": 3600}',
            "        return value * factors[from_unit] / factors[to_unit]",
        ],
        ('value=2, from_unit="km", to_unit="m"', "2000.0"),
    ),
    (
        "word_count",
        "WordCount",
        "Count the words in a text.",
        [("text", "string", "the text")],
        ["        return len(text.split())"],
        ('text="a b c"', "3"),
    ),
    (
        "reverse_text",
        "ReverseText",
        "Reverse a string.",
        [("text", "string", "the text")],
        ["        return text[::-1]"],
        ('text="abc"', "cba"),
    ),
    (
        "sort_numbers",
        "SortNumbers",
        "Sort a comma-separated list of numbers ascending.",
        [("numbers", "string", "e.g. 3,1,2")],
        [
            '        values = sorted(float(x) for x in numbers.split(",") if x.strip())',
            '        return ",".join(f"{v:g}" for v in values)',
        ],
        ('numbers="3,1,2"', "1,2,3"),
    ),
    (
        "date_diff",
        "DateDiff",
        "Days between two ISO dates.",
        [("start", "string", "YYYY-MM-DD"), ("end", "string", "YYYY-MM-DD")],
        [
            "        from datetime import date",
            "",
            "        return (date.fromisoformat(end) - date.fromisoformat(start)).days",
        ],
        ('start="2026-01-01", end="2026-01-31"', "30"),
    ),
    (
        "gcd",
        "Gcd",
        "Greatest common divisor of two integers.",
        [("a", "integer", "first"), ("b", "integer", "second")],
        ["        import math", "", "        return math.gcd(int(a), int(b))"],
        ("a=12, b=18", "6"),
    ),
    (
        "prime_check",
        "PrimeCheck",
        "Whether an integer is prime.",
        [("n", "integer", "the integer")],
        [
            "        n = int(n)",
            "        if n < 2:",
            "            return False",
            "        return all(n % k for k in range(2, int(n**0.5) + 1))",
        ],
        ("n=97", "True"),
    ),
    (
        "percent",
        "Percent",
        "What percent `part` is of `whole`.",
        [("part", "number", "the part"), ("whole", "number", "the whole")],
        [
            "        if whole == 0:",
            '            raise ValueError("whole must not be zero")',
            "        return round(100.0 * part / whole, 4)",
        ],
        ("part=1, whole=8", "12.5"),
    ),
    (
        "mean",
        "Mean",
        "Arithmetic mean of a comma-separated list of numbers.",
        [("numbers", "string", "e.g. 1,2,3")],
        [
            '        values = [float(x) for x in numbers.split(",") if x.strip()]',
            "        return sum(values) / len(values)",
        ],
        ('numbers="1,2,3"', "2.0"),
    ),
    (
        "regex_find",
        "RegexFind",
        "All matches of a regular expression in a text.",
        [("pattern", "string", "a Python regular expression"), ("text", "string", "the text")],
        ["        import re", "", "        return re.findall(pattern, text)[:50]"],
        ('pattern="[0-9]+", text="a1b22"', "['1', '22']"),
    ),
    (
        "json_get",
        "JsonGet",
        "Read a dotted path from a JSON document.",
        [("document", "string", "JSON text"), ("path", "string", "e.g. a.b.0")],
        [
            "        import json",
            "",
            "        value = json.loads(document)",
            '        for part in path.split("."):',
            "            value = value[int(part)] if isinstance(value, list) else value[part]",
            "        return value",
        ],
        ('document=\'{"a": {"b": [5]}}\', path="a.b.0"', "5"),
    ),
    (
        "base_convert",
        "BaseConvert",
        "Convert an integer between bases 2-36.",
        [
            ("number", "string", "the digits"),
            ("from_base", "integer", "source base"),
            ("to_base", "integer", "target base"),
        ],
        [
            "        value = int(number, int(from_base))",
            '        digits = "0123456789abcdefghijklmnopqrstuvwxyz"',
            "        if value == 0:",
            '            return "0"',
            '        out = ""',
            "        while value:",
            "            value, rem = divmod(value, int(to_base))",
            "            out = digits[rem] + out",
            "        return out",
        ],
        ('number="ff", from_base=16, to_base=2', "11111111"),
    ),
    (
        "local_search",
        "LocalSearch",
        "Search a small local corpus (one document per line) for a query.",
        [
            ("query", "string", "words to look for"),
            ("top_k", "integer", "how many lines to return (default 3)"),
        ],
        [
            '        corpus = self.corpus if hasattr(self, "corpus") else []',
            "        words = query.lower().split()",
            "        scored = sorted(corpus, key=lambda line: -sum(w in line.lower() for w in words))",
            '        return "\\n".join(scored[: top_k or 3])',
        ],
        ('query="x"', ""),
    ),
    (
        "string_replace",
        "StringReplace",
        "Replace every occurrence of `old` with `new` in a text.",
        [
            ("text", "string", "the text"),
            ("old", "string", "what to replace"),
            ("new", "string", "the replacement"),
        ],
        ["        return text.replace(old, new)"],
        ('text="aXa", old="X", new="b"', "aba"),
    ),
]

TYPES = {"string": "str", "number": "float", "integer": "int"}


def _tool_module(name, cls, desc, args, run_body, _test) -> str:
    props = "\n".join(f'            "{a}": {{"type": "{t}", "description": "{d}"}},' for a, t, d in args)
    optional = {a for a, _, d in args if "default" in d}
    required = ", ".join(f'"{a}"' for a, _, _ in args if a not in optional)
    sig = ", ".join(
        f"{a}: {TYPES[t]} | None = None" if a in optional else f"{a}: {TYPES[t]}" for a, t, _ in args
    )
    args_doc = "\n".join(f"    {a} ({t}): {d}" for a, t, d in args)
    test_args, expected = _test
    return (
        f'''"""The `{name}` tool: {desc[0].lower() + desc[1:]}

Arguments:
{args_doc}

The model calls it as:

    <tool_call>{{"name": "{name}", "arguments": {{...}}}}</tool_call>

and receives the result as text inside <tool_response>...</tool_response>. Errors are returned
as "error: ..." observations by the agent loop, never raised into the rollout.
"""

from __future__ import annotations

from typing import ClassVar

from minirl.agent.tools.base import Tool


class {cls}(Tool):
    name = "{name}"
    description = "{desc}"
    # Shown to the model in the system prompt when agent.show_examples is true.
    examples: ClassVar[list[tuple[str, str]]] = [
        ({test_args!r}, {expected!r}),
    ]
    parameters = {{
        "type": "object",
        "properties": {{
{props}
        }},
        "required": [{required}],
    }}

    def run(self, {sig}):
'''
        + "\n".join(run_body)
        + "\n"
    )


def _init() -> str:
    imports = "\n".join(f"from minirl.agent.tools.{n} import {c}" for n, c, *_ in TOOLS)
    names = "\n".join(f"    {c}," for _, c, *_ in TOOLS)
    return f'''"""Tools an agent may call, by name."""

from __future__ import annotations

from minirl.agent.tools.base import Tool
{imports}

TOOLS: dict[str, type[Tool]] = {{
    tool.name: tool
    for tool in (
{names}
    )
}}

__all__ = ["TOOLS", "Tool"]
'''


def _tests() -> str:
    cases = "\n".join(f'    ("{n}", dict({args}), "{exp}"),' for n, _, _, _, _, (args, exp) in TOOLS if exp)
    return f"""import pytest

from minirl.agent.parser import parse_tool_calls
from minirl.agent.tools import TOOLS

CASES = [
{cases}
]


@pytest.mark.parametrize("name,arguments,expected", CASES)
def test_tool(name, arguments, expected):
    assert TOOLS[name]().call(**arguments) == expected


@pytest.mark.parametrize("name", sorted(TOOLS))
def test_schema_is_valid(name):
    schema = TOOLS[name]().schema()
    assert schema["function"]["name"] == name
    assert set(schema["function"]["parameters"]["required"]) <= set(schema["function"]["parameters"]["properties"])


def test_unknown_argument_is_rejected():
    with pytest.raises(ValueError, match="unknown arguments"):
        TOOLS["calculator"]().call(expression="1+1", extra=1)


def test_parser_skips_malformed_calls():
    text = '<tool_call>{{"name": "gcd", "arguments": {{"a": 4, "b": 6}}}}</tool_call> <tool_call>{{oops</tool_call>'
    calls = parse_tool_calls(text)
    assert [(c.name, c.arguments) for c in calls] == [("gcd", {{"a": 4, "b": 6}})]
"""


LOOP_TESTS = """from types import SimpleNamespace

from minirl.agent.loop import AgentLoop


class CharTokenizer:
    def encode(self, text):
        return [ord(c) for c in text]

    def decode(self, ids):
        return "".join(chr(i) for i in ids)


class ScriptedEngine:
    def __init__(self, replies):
        self.replies = list(replies)

    def generate(self, batch):
        return [CharTokenizer().encode(self.replies.pop(0)) for _ in batch]


def make_loop(replies, max_turns=4, max_response_length=4096):
    config = SimpleNamespace(max_turns=max_turns, max_response_length=max_response_length, tools=["calculator"])
    return AgentLoop(ScriptedEngine(replies), CharTokenizer(), config)


CALL = '<tool_call>{"name": "calculator", "arguments": {"expression": "6*7"}}</tool_call>'


def test_tool_output_is_masked_out():
    (traj,) = make_loop([CALL, "The answer is 42."]).run([[1, 2, 3]])
    text = CharTokenizer().decode(traj.response_ids)
    assert "<tool_response>42</tool_response>" in text
    masked = "".join(c for c, m in zip(text, traj.response_mask) if m == 0)
    assert masked == "<tool_response>42</tool_response>"
    assert traj.finished and traj.tool_calls == 1 and traj.turns == 2


def test_truncated_observation_keeps_mask_aligned():
    (traj,) = make_loop([CALL, "done"], max_response_length=len(CALL) + 5).run([[1]])
    assert len(traj.response_ids) == len(traj.response_mask) == len(CALL) + 5


def test_unknown_tool_is_an_observation():
    call = '<tool_call>{"name": "nope", "arguments": {}}</tool_call>'
    (traj,) = make_loop([call, "ok"]).run([[1]])
    assert traj.errors == ["unknown tool nope"]


def test_max_turns_stops_the_loop():
    (traj,) = make_loop([CALL] * 3, max_turns=3).run([[1]])
    assert traj.turns == 3 and traj.tool_calls == 3
"""

DOCS = (
    """# Multi-turn agents with tools

`agent.enable: true` replaces the single `generate()` call of a rollout with a loop:

1. generate a response for every active trajectory;
2. parse `<tool_call>{...}</tool_call>` blocks from it (malformed calls are skipped);
3. run each tool and append `<tool_response>...</tool_response>` to the trajectory;
4. stop when the model answers without a tool call, after `agent.max_turns` turns, or when the
   response reaches `data.max_response_length` tokens.

## What is trained on

Only the tokens the policy generated. Tool observations are part of the context for the next turn
but their `response_mask` is 0, so they contribute nothing to the policy loss, the KL term or the
entropy bonus. When a trajectory is truncated, ids and mask are cut together.

## Tools

| name | what it does |
| --- | --- |
"""
    + "".join(f"| `{n}` | {d} |\n" for n, _, d, *_ in TOOLS)
    + """
Add a tool by subclassing `minirl.agent.tools.base.Tool` (name, description, JSON-schema
parameters, `run()`) and registering it in `minirl/agent/tools/__init__.py`.

## Limits

- Tools run sequentially within a trajectory; a slow tool slows the whole batch.
- `python_sandbox` is a subprocess with a timeout, not a security boundary. Do not enable it on
  prompts you do not control.
- vLLM only for now; SGLang support will follow.
"""
)


def _tool_test(name, cls, desc, args, _run, test) -> str:
    test_args, expected = test
    first = args[0][0]
    required = [a for a, _, d in args if "default" not in d]
    check = (
        f"    assert tool.call({test_args}) == {expected!r}\n"
        if expected
        else f"    assert isinstance(tool.call({test_args}), str)\n"
    )
    missing = (
        f"""

def test_{name}_missing_argument():
    with pytest.raises(ValueError, match="missing arguments: {required[0]}"):
        {cls}().call()
"""
        if required
        else ""
    )
    return f"""import pytest

from minirl.agent.tools.{name} import {cls}


def test_{name}_example():
    tool = {cls}()
{check}

def test_{name}_schema():
    schema = {cls}().schema()
    assert schema["type"] == "function"
    assert schema["function"]["name"] == "{name}"
    assert "{first}" in schema["function"]["parameters"]["properties"]
{missing}

def test_{name}_rejects_unknown_arguments():
    with pytest.raises(ValueError, match="unknown arguments: bogus"):
        {cls}().call({test_args}, bogus=1)
"""


CHAT_FORMAT = '''"""Put the tools' schemas into the system prompt, in the Hermes format Qwen2.5 was trained on."""

from __future__ import annotations

import json

from minirl.agent.tools import TOOLS

HEADER = (
    "You may call one or more functions to assist with the user query.\\n\\n"
    "You are provided with function signatures within <tools></tools> XML tags:\\n<tools>\\n"
)
FOOTER = (
    "\\n</tools>\\n\\nFor each function call, return a json object with function name and arguments "
    "within <tool_call></tool_call> XML tags:\\n<tool_call>\\n"
    \'{"name": <function-name>, "arguments": <args-json-object>}\\n</tool_call>\'
)


def tools_system_prompt(names: list[str], show_examples: bool = False) -> str:
    unknown = [n for n in names if n not in TOOLS]
    if unknown:
        raise KeyError(f"unknown tools: {', '.join(unknown)}; known: {', '.join(sorted(TOOLS))}")
    lines = [json.dumps(TOOLS[n]().schema(), ensure_ascii=False) for n in names]
    prompt = HEADER + "\\n".join(lines) + FOOTER
    if show_examples:
        for n in names:
            for args, result in getattr(TOOLS[n], "examples", []):
                prompt += f"\\nExample: {n}({args}) -> {result}"
    return prompt


def with_tools(messages: list[dict], names: list[str], show_examples: bool = False) -> list[dict]:
    """Prepend (or extend) the system message with the tool list."""
    system = tools_system_prompt(names, show_examples)
    if messages and messages[0].get("role") == "system":
        return [{"role": "system", "content": messages[0]["content"] + "\\n\\n" + system}, *messages[1:]]
    return [{"role": "system", "content": system}, *messages]
'''


def _prompts() -> str:
    import json
    import random

    rng = random.Random(190)
    items = ["apples", "pencils", "tickets", "bottles", "books", "eggs", "stamps", "coins"]
    lines = []
    for i in range(220):
        a, b, c = rng.randint(3, 90), rng.randint(2, 12), rng.randint(1, 40)
        item = rng.choice(items)
        q = f"A shop has {a} boxes of {b} {item} and sells {c} {item}. How many {item} are left?"
        lines.append(json.dumps({"id": f"calc-{i:03d}", "question": q, "answer": a * b - c}))
    return "\n".join(lines) + "\n"


EXAMPLE_SH = """#!/usr/bin/env bash
# GSM8K with the calculator tool: Qwen2.5-3B-Instruct, 8 GPUs, GRPO, up to 4 turns.
set -euo pipefail

python -m minirl.trainer.main_ppo \\
    algorithm.adv_estimator=grpo \\
    data.train_files=$HOME/data/gsm8k/train.parquet \\
    data.val_files=$HOME/data/gsm8k/test.parquet \\
    data.max_response_length=2048 \\
    actor.model_path=Qwen/Qwen2.5-3B-Instruct \\
    actor.use_kl_loss=true \\
    actor.kl_loss_coef=0.001 \\
    rollout.n=8 \\
    agent.enable=true \\
    agent.max_turns=4 \\
    agent.tools=[calculator] \\
    trainer.experiment_name=gsm8k_calculator_agent \\
    "$@"
"""


def agent_feature_ops(cfg_path: str) -> list:
    from build_sample import Add, Edit

    ops = [
        Add("minirl/agent/__init__.py", '"""Multi-turn agent rollouts with tool calling."""\n'),
        Add("minirl/agent/loop.py", LOOP),
        Add("minirl/agent/parser.py", PARSER),
        Add("minirl/agent/tools/base.py", BASE),
        Add("minirl/agent/tools/__init__.py", _init()),
    ]
    ops += [Add(f"minirl/agent/tools/{t[0]}.py", _tool_module(*t)) for t in TOOLS]
    ops += [Add(f"tests/agent/tools/test_{t[0]}.py", _tool_test(*t)) for t in TOOLS]
    ops += [
        Add("tests/agent/test_tools.py", _tests()),
        Add("tests/agent/test_loop.py", LOOP_TESTS),
        Add("minirl/agent/chat_format.py", CHAT_FORMAT),
        Add("examples/agent/gsm8k_calculator.sh", EXAMPLE_SH),
        Add("examples/agent/calc_prompts.jsonl", _prompts()),
        Add("docs/agent.md", DOCS),
        Edit("docs/index.md", "- [Rollout backends](rollout.md)\n",
             "- [Rollout backends](rollout.md)\n- [Multi-turn agents with tools](agent.md)\n"),
        Edit(cfg_path, "algorithm:\n", "agent:\n  enable: false\n  max_turns: 4\n  tools: [calculator]\n\nalgorithm:\n"),
    ]  # fmt: skip
    return ops
