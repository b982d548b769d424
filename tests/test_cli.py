"""The `workbench` command layer: --help on every subcommand, one-line errors instead of tracebacks,
and one place that reads argparse namespaces."""

from __future__ import annotations

import subprocess
import sys

import pytest

from workbench.cli import build_parser, command_names

COMMANDS = command_names()


def run(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "workbench.cli", *args], capture_output=True, text=True, env=env, timeout=120
    )


def test_top_level_help_lists_every_command():
    r = run("--help")
    assert r.returncode == 0
    for name in COMMANDS:
        assert name in r.stdout


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_subcommand_has_help(command):
    r = run(command, "--help")
    assert r.returncode == 0, r.stderr
    assert f"workbench {command}" in r.stdout
    assert "--cache" in r.stdout


def test_every_command_runs_a_function_of_the_command_layer():
    parser = build_parser()
    for name in COMMANDS:
        args = parser.parse_args([name, "o/r"] if name not in ("sample", "demo", "app") else [name])
        assert args.run.__module__.startswith("workbench.cli."), name


def test_only_the_command_layer_reads_argparse_namespaces():
    """Library code takes plain arguments: no `run_cli(args)` glue outside workbench/cli/."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[1] / "workbench"
    offenders = [
        str(p.relative_to(root))
        for p in root.rglob("*.py")
        if "cli" not in p.relative_to(root).parts
        and re.search(
            r"def run_\w*\(\s*(store[^,]*,\s*)?args\b|^import argparse|^from argparse",
            p.read_text(encoding="utf-8"),
            re.M,
        )
    ]
    assert offenders == []


def test_help_imports_nothing_heavy():
    """`workbench --help` must not pay for pandas, plotly, PyGithub, openai or ipywidgets."""
    code = (
        "import sys, contextlib, io\n"
        "from workbench.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    try: main(['--help'])\n"
        "    except SystemExit: pass\n"
        "heavy = {'pandas', 'plotly', 'github', 'openai', 'ipywidgets', 'numpy', 'tqdm'}\n"
        "print(sorted(heavy & set(sys.modules)))\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]"


def test_a_bad_since_is_one_line_naming_the_accepted_forms(tmp_path):
    for command in ("analyze", "draft", "digest", "report", "sync"):
        r = run("--cache", str(tmp_path), command, "o/r", "--since", "7 fortnights")
        assert r.returncode == 2, (command, r.stderr)
        assert len(r.stderr.strip().splitlines()) == 1, r.stderr
        assert "7d, 2w, 3m, 1y" in r.stderr and "today" in r.stderr


def test_cache_option_is_accepted_before_and_after_the_subcommand(tmp_path):
    parser = build_parser()
    a = parser.parse_args(["--cache", str(tmp_path), "analyze", "o/r"])
    b = parser.parse_args(["analyze", "o/r", "--cache", str(tmp_path)])
    assert a.cache == b.cache == str(tmp_path)


def test_corrupt_cache_is_a_one_line_error_and_left_untouched(tmp_path):
    db = tmp_path / "workbench.db"
    garbage = b"this is not sqlite" * 100
    db.write_bytes(garbage)
    r = run("--cache", str(tmp_path), "analyze", "o/r")
    assert r.returncode == 2
    assert "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    assert "not a usable SQLite database" in r.stderr
    assert db.read_bytes() == garbage


def test_reading_commands_on_a_missing_cache_say_how_to_fill_it(tmp_path):
    r = run("--cache", str(tmp_path), "analyze", "o/r")
    assert r.returncode == 2
    assert "workbench sync" in r.stderr and "workbench sample" in r.stderr
    assert not (tmp_path / "workbench.db").exists()


def test_unknown_repository_is_a_one_line_error(tmp_path):
    from workbench.store import Store

    Store(tmp_path).upsert_repo("some/repo")
    r = run("--cache", str(tmp_path), "analyze", "nobody/nothing")
    assert r.returncode == 2
    assert "nobody/nothing is not in the cache" in r.stderr
    assert "Traceback" not in r.stderr
