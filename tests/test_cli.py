"""The `workbench` command: --help on every subcommand, and one-line errors instead of tracebacks."""

from __future__ import annotations

import subprocess
import sys

import pytest

from workbench.cli import COMMANDS, build_parser


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


def test_every_command_resolves_to_a_library_function():
    import importlib

    for name, target in COMMANDS.items():
        module_name, func_name = target.split(":")
        assert callable(getattr(importlib.import_module(module_name), func_name)), name


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
