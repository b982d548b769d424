"""The bundled sample: every required scenario is present (checked by properties, not by number),
patches are valid unified diffs, loading is idempotent and fast, the verl facts come out right."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from workbench.config import sample_dir
from workbench.sources.sample import (
    SAMPLE_REPO,
    VERL_REPO,
    facts_records,
    facts_title,
    load,
    load_sample,
    sample_records,
)
from workbench.store import Store

HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@(.*)$")


@pytest.fixture(scope="module")
def records():
    return {r.number: r for r in sample_records()}


@pytest.fixture(scope="module")
def loaded(tmp_path_factory):
    store = Store(tmp_path_factory.mktemp("sample") / "cache")
    load_sample(store)
    yield store
    store.close()


def _one(records, pred, what):
    found = [r for r in records.values() if pred(r)]
    assert found, f"the sample has no {what}"
    return found[0]


def _text(r):
    return "\n".join(
        [r.title, r.body] + [c["body"] for c in r.issue_comments + r.reviews + r.review_comments]
    )


def _paths(r):
    return [f["filename"] for f in r.files]


def test_at_least_32_prs_over_ten_weeks(records):
    assert len(records) >= 32
    created = sorted(r.pr["created_at"] for r in records.values())
    assert created[0] >= "2026-09-15" and created[-1] <= "2026-11-27T23:59:59Z"
    last = max(r.pr["merged_at"] or r.pr["closed_at"] or r.pr["updated_at"] for r in records.values())
    assert last.startswith("2026-11-27")


def test_required_scenarios(records):
    leak = _one(
        records,
        lambda r: (
            "memory" in r.title and r.state == "merged" and any(p.startswith("tests/") for p in _paths(r))
        ),
        "memory-leak fix with a regression test",
    )
    assert "regression test" in leak.body.lower()
    race = _one(
        records,
        lambda r: "ACK" in r.title and any("_lock" in (f.get("patch") or "") for f in r.files),
        "race fix with an ACK and a lock",
    )
    assert "race" in race.body
    _one(records, lambda r: r.files and all(p.startswith("docs/") for p in _paths(r)), "docs-only PR")
    _one(records, lambda r: r.files and all(p.startswith(".github/") for p in _paths(r)), "CI-only PR")
    _one(
        records,
        lambda r: (
            "default" in r.title and any(p.endswith(".yaml") for p in _paths(r)) and r.state == "merged"
        ),
        "config default change",
    )
    _one(
        records,
        lambda r: any(f["status"] == "renamed" and f.get("previous_filename") for f in r.files),
        "refactor with renames",
    )
    _one(records, lambda r: "bump" in r.title and _paths(r) == ["pyproject.toml"], "dependency bump")
    big = _one(
        records,
        lambda r: r.pr["additions"] + r.pr["deletions"] > 1500 and all(f.get("patch") for f in r.files),
        "large feature with patches",
    )
    assert "feat" in big.title and len(big.files) > 20
    revert = _one(records, lambda r: r.title.startswith("Revert "), "revert")
    assert re.search(r"#\d+", revert.body)
    binary = _one(
        records,
        lambda r: any(f["filename"].endswith(".png") and "patch" not in f for f in r.files),
        "PR with a binary file",
    )
    assert binary.state == "merged"
    _one(
        records,
        lambda r: any(f.get("patch_status") == "omitted" for f in r.files),
        "PR with an omitted patch",
    )
    _one(records, lambda r: r.state == "closed" and not r.pr["merged_at"], "closed-unmerged PR")
    _one(records, lambda r: r.pr["user"] is None and r.author is None, "PR by a deleted account")


def test_open_pr_with_requested_changes_and_unresolved_thread(records):
    pr = _one(
        records,
        lambda r: (
            r.state == "open"
            and any(v["state"] == "CHANGES_REQUESTED" for v in r.reviews)
            and any(c["thread_resolved"] is False for c in r.review_comments)
        ),
        "open PR with requested changes",
    )
    unresolved = [c for c in pr.review_comments if c["thread_resolved"] is False]
    root = unresolved[0]
    replies = [c for c in unresolved if c.get("in_reply_to_id") == root["id"]]
    assert replies, "an unresolved thread has a back-and-forth"
    assert root["path"] in _paths(pr) and root["diff_hunk"].startswith("@@ ")


def test_cross_references_point_at_sample_prs(records):
    refs = set()
    for r in records.values():
        refs |= {
            int(n)
            for n in re.findall(r"(?:follow-up to|Follow-up to|Supersedes|Reverts [\w/-]+)#?(\d+)", _text(r))
        }
        refs |= {int(n) for n in re.findall(r"(?i)follow-up to #(\d+)", _text(r))}
    assert len(refs & set(records)) >= 3
    assert any(re.search(r"Fixes #\d+", r.body) for r in records.values())


def test_untrusted_html_everywhere_in_one_pr(records):
    r = _one(records, lambda r: "<script>alert(1)</script>" in r.title, "PR with HTML in its title")
    assert "<img src=x onerror=alert(1)>" in r.body and "javascript:" in r.body
    assert any("<script>" in c["body"] or "onerror" in c["body"] for c in r.issue_comments)
    assert any("<img src=x onerror=alert(1)>" in p for p in _paths(r))


def test_template_checklists_and_caveats(records):
    bodies = [r.body for r in records.values()]
    assert sum("### Checklist Before Submitting" in b and "- [x]" in b for b in bodies) >= 15
    assert sum("Not addressed" in b for b in bodies) >= 3
    assert sum("follow-up" in b.lower() for b in bodies) >= 5
    assert any("Root cause" in b for b in bodies)


def test_patches_are_valid_unified_diffs_with_function_context(records):
    contexts = 0
    for r in records.values():
        for f in r.files:
            patch = f.get("patch")
            if not patch:
                continue
            adds = dels = 0
            lines = patch.split("\n")
            i = 0
            while i < len(lines):
                m = HUNK.match(lines[i])
                assert m, f"#{r.number} {f['filename']}: bad hunk header {lines[i]!r}"
                contexts += bool(m.group(5).strip())
                old_len = int(m.group(2) or 1) if m.group(2) != "0" else 0
                new_len = int(m.group(4) or 1) if m.group(4) != "0" else 0
                i += 1
                old_seen = new_seen = 0
                while i < len(lines) and not lines[i].startswith("@@ "):
                    kind = lines[i][:1]
                    assert kind in (" ", "+", "-", "\\"), f"#{r.number} {f['filename']}: {lines[i]!r}"
                    old_seen += kind in (" ", "-")
                    new_seen += kind in (" ", "+")
                    adds += kind == "+"
                    dels += kind == "-"
                    i += 1
                assert (old_seen, new_seen) == (old_len, new_len), f"#{r.number} {f['filename']}"
            assert (adds, dels) == (f["additions"], f["deletions"])
    assert contexts >= 20
    # git-style context: the nearest def/class above the hunk, e.g. "@@ -66,9 +65,12 @@ def send(self, ...) -> int:"
    weight_sync = [f for r in records.values() for f in r.files if f["filename"].endswith("weight_sync.py")]
    assert any(
        re.search(
            r"^@@ -\d+,\d+ \+\d+,\d+ @@ def send\(self, named_params\) -> int:$", f.get("patch") or "", re.M
        )
        for f in weight_sync
    )


def test_review_comment_lines_match_their_hunks(records):
    for r in records.values():
        for c in r.review_comments:
            last = c["diff_hunk"].split("\n")[-1]
            assert not last.startswith("-")
            m = HUNK.match(c["diff_hunk"].split("\n")[0])
            new_no = (
                int(m.group(3)) - 1 + sum(1 for x in c["diff_hunk"].split("\n")[1:] if not x.startswith("-"))
            )
            assert new_no == c["line"], f"#{r.number} comment {c['id']}"


def test_generator_is_deterministic_and_matches_the_shipped_file(tmp_path):
    shipped = (sample_dir() / "example-org-minirl.jsonl").read_bytes()
    script = sample_dir() / "build_sample.py"
    code = (
        "import sys, runpy; sys.path.insert(0, sys.argv[1]); import build_sample; "
        "from pathlib import Path; build_sample.OUTPUT = Path(sys.argv[2]); build_sample.main()"
    )
    out = tmp_path / "again.jsonl"
    subprocess.run(
        [sys.executable, "-c", code, str(script.parent), str(out)], check=True, capture_output=True
    )
    assert out.read_bytes() == shipped, "rerun workbench/sample/build_sample.py and commit its output"


def test_loaded_sample(loaded, records):
    df = loaded.prs(SAMPLE_REPO)
    assert len(df) == len(records)
    assert set(df["source"]) == {"sample"}
    assert set(df["state"]) == {"merged", "open", "closed"}
    row = df.set_index("number")
    big = max(
        records.values(),
        key=lambda r: r.pr["additions"] + r.pr["deletions"] if r.files[0].get("patch") else 0,
    )
    assert row.loc[big.number, "additions"] == big.pr["additions"]
    back = loaded.pr(SAMPLE_REPO, big.number)
    assert [f["filename"] for f in back.files] == _paths(big)
    unresolved = [
        n for n, r in records.items() if any(c["thread_resolved"] is False for c in r.review_comments)
    ]
    rc = loaded.pr(SAMPLE_REPO, unresolved[0]).review_comments
    assert any(c["thread_resolved"] is False for c in rc)
    omitted = [f for n in records for f in loaded.pr(SAMPLE_REPO, n).files if f["patch_status"] == "omitted"]
    assert omitted and omitted[0]["patch"] is None
    assert row["author"].isna().sum() == 1  # the deleted account


def _snapshot(store: Store) -> dict:
    """Every row of every PR table; prs without synced_at (a rewrite may move it)."""
    q = store.conn.execute
    snap = {
        "prs": [
            tuple(v for k, v in zip(r.keys(), r, strict=True) if k != "synced_at")
            for r in q("SELECT * FROM prs ORDER BY 1, 2")
        ]
    }
    for t in ("pr_files", "issue_comments", "reviews", "review_comments", "commits", "repos"):
        snap[t] = [tuple(r) for r in q(f"SELECT * FROM {t} ORDER BY 1, 2, 3")]
    return snap


def test_idempotent(tmp_path):
    store = Store(tmp_path / "c")
    first = load(store)
    assert not any(r.skipped for r in first)
    before = _snapshot(store)
    again = load(store)
    assert all(r.skipped for r in again)
    assert _snapshot(store) == before
    forced = load(store, force=True)  # rewriting the same rows changes nothing but sync times
    assert not any(r.skipped for r in forced)
    after = _snapshot(store)
    after["repos"] = before["repos"] = None  # repos.updated_at moves
    assert after == before
    store.close()


def test_load_without_verl_and_cli(tmp_path):
    out = subprocess.run(
        [sys.executable, "-m", "workbench.cli", "sample", "--no-verl", "--cache", str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr
    assert f"{SAMPLE_REPO}: 34 PRs" in out.stdout and VERL_REPO not in out.stdout
    with Store(tmp_path) as s:
        assert list(s.repos()["full_name"]) == [SAMPLE_REPO]


def test_verl_facts_load_right(tmp_path):
    # (how fast is a benchmark's question, not a timed test's: a shared machine makes timings flaky)
    csv_path = sample_dir() / "verl_pr_facts.csv"
    store = Store(tmp_path / "c")
    load_sample(store, include_verl=True)
    df = store.prs(VERL_REPO)
    assert len(df) == 2883
    assert set(df["state"]) == {"merged"} and set(df["source"]) == {"facts"}
    import pandas as pd

    raw = pd.read_csv(csv_path).set_index("number")
    got = df.set_index("number")
    one = raw.index[0]
    # +08:00 in the CSV, UTC in the cache
    assert got.loc[one, "merged_at"] == pd.Timestamp(raw.loc[one, "merged_at"]).tz_convert("UTC")
    assert int(got["breaking"].sum()) == int(raw["breaking"].sum())
    assert int(got["revert"].sum()) == int(raw["revert"].sum())
    tagged = raw[raw["tags"] == "rollout;vllm"].index
    if len(tagged):
        assert set(got.loc[tagged, "title_tags"]) == {"rollout;vllm"}
    assert (got["additions"] == raw["additions"].reindex(got.index)).all()
    extra = json.loads(got.loc[one, "extra_json"])
    assert {"test_files", "doc_files", "ci_files", "author_id"} <= set(extra)
    assert got.loc[one, "author"] == raw.loc[one, "author_id"]
    assert got["comments"].isna().all()  # unknown, not zero
    store.close()


def test_facts_titles():
    assert facts_title(["rollout", "vllm"], "fix", False, False) == "[rollout, vllm] fix"
    assert facts_title(["trainer"], "feat", True, False) == "[BREAKING][trainer] feat"
    assert facts_title([], None, False, True) == 'Revert "(no title in the facts)"'
    recs = facts_records()
    assert all(r.pr["_extra"]["title_synthesised"] for r in recs)


def test_missing_sample_file_is_a_clear_error(tmp_path):
    from workbench.config import WorkbenchError

    with pytest.raises(WorkbenchError, match="is missing"):
        sample_records(tmp_path / "nope.jsonl")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"pr": {}}\n')
    with pytest.raises(WorkbenchError, match="bad.jsonl:1"):
        sample_records(bad)


def test_sample_lives_in_the_repository():
    assert Path(sample_dir(), "verl_pr_facts.csv").is_file()
    assert Path(sample_dir(), "README.md").is_file()
