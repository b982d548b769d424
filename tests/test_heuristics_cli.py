"""Conventions loading and the `workbench analyze` command over a real SQLite cache."""

from __future__ import annotations

import csv
import io
import json

import pytest
from heuristics_helpers import file, hunk, record

from workbench.analysis.conventions import glob_to_regex, load_conventions
from workbench.analysis.pipeline import analyze
from workbench.cli import main
from workbench.config import WorkbenchError
from workbench.store import Store

# ---- conventions -------------------------------------------------------------------------------------------


def test_defaults_when_no_file(tmp_path):
    c = load_conventions("nobody/nothing", cache=tmp_path)
    assert c.lang == "zh" and c.sources == ["default.toml"]
    assert c.threshold("deep_score") == 3.0 and c.weight("risk.memory") > 0
    assert c.audiences["ci"] == "CI maintainers"
    assert c.area_of(".github/workflows/x.yml") == "ci"
    assert c.area_of("pkg/workers/rollout.py") == "workers"  # no rule: a name from the path
    assert c.area_of("src/pkg/sub/x.py") == "sub"
    assert c.area_of("setup.py") == "root"
    assert c.is_bot("dependabot[bot]") and c.is_bot("codecov") and not c.is_bot("alice")


def test_shipped_repo_file_and_cache_override(tmp_path):
    verl = load_conventions("verl-project/verl", cache=tmp_path)
    assert verl.area_of("verl/workers/rollout/vllm_rollout/x.py") == "rollout"
    assert verl.area_of("verl/workers/actor/dp_actor.py") == "worker"
    assert verl.area_of("docs/index.md") == "docs"  # default rules still apply after the repo's own
    (tmp_path / "conventions").mkdir()
    (tmp_path / "conventions" / "acme-widgets.toml").write_text(
        'lang = "en"\n[[areas]]\nglob = "core/**"\narea = "engine"\n[thresholds]\ndeep_score = 2.0\n'
        '[tag_aliases]\nrl = "rollout"\n'
    )
    c = load_conventions("acme/widgets", cache=tmp_path)
    assert c.lang == "en" and c.area_of("core/a/b.py") == "engine"
    assert c.threshold("deep_score") == 2.0 and c.threshold("tiny_lines") == 10  # merged with defaults
    assert c.parse_title("[rl] fix: x").tags == ["rollout"]
    assert c.parse_title("fix(trainer)!: y").breaking


def test_conventions_change_verdicts(tmp_path):
    p = tmp_path / "strict.toml"
    p.write_text("[thresholds]\ndeep_score = 0.5\n")
    rec = record([file("pkg/a.py", hunk(1, [f"+x{i} = {i}" for i in range(30)]))], body="Refactor.")
    assert analyze(rec).verdict == "skim"
    assert analyze(rec, conventions=load_conventions(None, p)).verdict == "deep"


def test_bad_conventions_files(tmp_path):
    with pytest.raises(WorkbenchError, match="does not exist"):
        load_conventions("a/b", tmp_path / "missing.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("lang = [unclosed\n")
    with pytest.raises(WorkbenchError, match="not valid TOML"):
        load_conventions("a/b", bad)
    bad.write_text('lang = "fr"\n')
    with pytest.raises(WorkbenchError, match="lang must be"):
        load_conventions("a/b", bad)
    bad.write_text('[[areas]]\nglob = "x/**"\n')
    with pytest.raises(WorkbenchError, match="needs both"):
        load_conventions("a/b", bad)
    bad.write_text('[[audience_rules]]\nword = "npu"\ntag = "npu"\naudience = "ascend-npu"\n')
    with pytest.raises(WorkbenchError, match="one of 'glob', 'tag' or 'word'"):
        load_conventions("a/b", bad)


@pytest.mark.parametrize(
    "glob, path, hit",
    [
        ("docs/**", "docs/a/b.md", True),
        ("docs/**", "src/docs/a.md", False),
        ("**/test_*.py", "a/b/test_x.py", True),
        ("**/test_*.py", "test_x.py", True),
        ("verl/*.py", "verl/a.py", True),
        ("verl/*.py", "verl/sub/a.py", False),
        ("a?c/x", "abc/x", True),
    ],
)
def test_glob_to_regex(glob, path, hit):
    assert bool(glob_to_regex(glob).match(path)) is hit


# ---- the CLI ------------------------------------------------------------------------------------------------------


@pytest.fixture()
def cache(tmp_path):
    repo = "example-org/minirl"
    store = Store(tmp_path)
    pk = store.upsert_repo(repo, 1)
    recs = [
        record(
            [file("docs/guide.md", hunk(1, ["+# Guide", "+Read me."]))], title="[doc] docs: guide", number=1
        ),
        record(
            [file(".github/workflows/ci.yml", hunk(1, ["-  timeout: 5", "+  timeout: 9"]))],
            title="[ci] fix: timeout",
            number=2,
        ),
        record(
            [
                file(
                    "pkg/sync.py",
                    hunk(
                        10,
                        ["+    with self._lock:", "+        del buf", "+        gc.collect()"]
                        + [f"+    y{i} = {i}" for i in range(30)],
                        section="def send(self):",
                    ),
                ),
                file("tests/test_sync.py", hunk(1, ["+def test_send():", "+    assert True"])),
            ],
            title="[rollout] fix: race in send frees buffers early",
            body="Root cause: the ack comes because ... Fixes #2",
            number=3,
        ),
    ]
    for r in recs:
        r.pr["updated_at"] = f"2026-01-0{r.number}T00:00:00Z"
        store.write_pr(pk, r)
    store.close()
    return tmp_path


def run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_analyze_table(cache, capsys):
    code, out, err = run(capsys, "--cache", str(cache), "analyze", "example-org/minirl")
    assert code == 0, err
    lines = out.strip().splitlines()
    assert lines[0].split()[:5] == ["number", "verdict", "audience", "effort", "minutes"]
    body = "\n".join(lines[1:])
    # the same fields as --format json, flattened: audiences by their vocabulary names
    assert " docs " in body and " ci " in body and "pkg/sync.py" in body


def test_analyze_json_and_number_filter(cache, capsys):
    code, out, _ = run(
        capsys, "--cache", str(cache), "analyze", "example-org/minirl", "--number", "3", "--format", "json"
    )
    rows = json.loads(out, parse_constant=lambda c: pytest.fail(f"not strict JSON: {c}"))
    assert code == 0 and [r["number"] for r in rows] == [3]
    row = rows[0]
    assert set(row) == {"repo", "number", "verdict", "audience", "key_files", "key_symbols", "risks", "reverts",
                        "related_prs", "open_items", "effort", "minutes", "deciding"}  # fmt: skip
    assert row["verdict"] == "deep" and row["key_files"][0] == "pkg/sync.py" and row["audience"]
    assert "send" in row["key_symbols"] and row["reverts"] is None
    concurrency = next(r for r in row["risks"] if r["kind"] == "concurrency")
    assert concurrency["evidence"][0]["file"] == "pkg/sync.py" and concurrency["evidence"][0]["line"]


def test_analyze_csv_and_since(cache, capsys):
    code, out, _ = run(
        capsys,
        "--cache",
        str(cache),
        "analyze",
        "example-org/minirl",
        "--format",
        "csv",
        "--since",
        "2026-01-02",
    )
    rows = list(csv.DictReader(io.StringIO(out)))
    assert code == 0 and sorted(int(r["number"]) for r in rows) == [2, 3]
    assert {r["verdict"] for r in rows} <= {"deep", "skim", "skip"}


def test_analyze_errors_are_one_line(cache, tmp_path, capsys):
    code, _, err = run(capsys, "--cache", str(cache), "analyze", "nobody/nothing")
    assert code == 2 and "not in the cache" in err and len(err.strip().splitlines()) == 1
    code, _, err = run(capsys, "--cache", str(tmp_path / "empty"), "analyze", "a/b")
    assert code == 2 and "no cache" in err
    code, _, err = run(capsys, "--cache", str(cache), "analyze", "noslash")
    assert code == 2 and "OWNER/REPO" in err
