"""How each file is shown to the model: trimmed context, collapsed deletions and licences, tests as
their names and asserts, design docs and manifests ranked by what the PR is."""

from __future__ import annotations

from workbench.analysis.model import Analysis, KeyFile
from workbench.drafting.context import build_context
from workbench.drafting.hunks import collapse_license, removed_summary, summary_of_tests, trim_context
from workbench.records import PRRecord


def _file(name: str, patch: str, status: str = "modified") -> dict:
    adds = sum(1 for x in patch.split("\n") if x.startswith("+"))
    dels = sum(1 for x in patch.split("\n") if x.startswith("-"))
    return {"filename": name, "status": status, "additions": adds, "deletions": dels, "patch": patch}


def _rec(files: list[dict], title: str = "[trainer] feat: something") -> PRRecord:
    return PRRecord(repo="o/r", number=9, pr={"title": title, "body": "Body.", "state": "open"}, files=files)


def _an(keys=(), kind: str | None = "feat", tags=()) -> Analysis:
    return Analysis(
        repo="o/r",
        number=9,
        verdict="deep",
        audience=None,
        effort=3,
        minutes=15,
        deciding=[],
        key_files=[KeyFile(k, "code", "key", 1.0) for k in keys],
        kind=kind,
        tags=list(tags),
    )


def _user(rec, a, budget=16000) -> str:
    return build_context(rec, a, lang="en", budget=budget, seed=0).messages[1]["content"]


def test_long_unchanged_runs_are_cut_short_ones_kept():
    hunk = "@@ -1,14 +1,14 @@ def f():\n" + "\n".join(f" same{i}" for i in range(6)) + "\n-old\n+new\n"
    hunk += "\n".join(f" tail{i}" for i in range(6))
    out = trim_context(hunk)
    assert out.split("\n")[1] == " ⋯ 4 unchanged lines" and " same4" in out and " tail1" in out
    assert out.endswith(" ⋯ 4 unchanged lines") and "tail5" not in out
    assert trim_context("@@ x\n a\n+b") == "@@ x\n a\n+b"


def test_deletion_only_hunk_names_what_went():
    hunk = "@@ -10,5 +9,0 @@ class Engine:\n-    def warmup(self):\n-        pass\n-MAX_STEPS = 3\n-x"
    assert removed_summary(hunk) == (
        "@@ -10,5 +9,0 @@ class Engine:\n[deletion only: 4 lines removed; removed: warmup, MAX_STEPS]"
    )


def test_licence_header_of_a_new_file_is_one_line():
    hunk = "@@ -0,0 +1,8 @@\n+# Copyright 2025 Someone\n+#\n+# Licensed under the Apache License\n+# you may not\n+\n+import os\n+x = 1"
    assert collapse_license(hunk) == "@@ -0,0 +1,8 @@\n+[licence header, 5 lines]\n+import os\n+x = 1"
    plain = "@@ -0,0 +1,3 @@\n+# a comment\n+import os"
    assert collapse_license(plain) == plain


def test_tests_show_as_names_and_asserts_unless_the_pr_is_about_tests():
    test_patch = (
        "@@ -0,0 +1,9 @@\n+import pytest\n+def helper():\n+    return 3\n+def test_ack_order():\n"
        "+    x = helper()\n+    assert x == 3\n+    assert_close(x, 3)\n+def test_timeout():\n+    assert True"
    )
    view = summary_of_tests(test_patch)
    assert view.startswith("[test file, shown as its tests and asserts]\n")
    assert "tests added or changed: test_ack_order, test_timeout" in view and "+ assert x == 3" in view
    assert "helper" not in view and "+ assert_close(x, 3)" in view and view.count("\n") == 4
    # the PR is about tests: shown whole
    about = _rec([_file("tests/test_sync.py", test_patch, "added")], title="[ci] test: ACK order")
    assert "+    return 3" in _user(about, _an(kind="test"))


def test_expanded_back_only_when_room_is_left():
    test_patch = "@@ -0,0 +1,200 @@\n" + "\n".join(
        f"+    value_{i} = compute_thing({i}, {i * 7})" for i in range(200)
    )
    test_patch += "\n+def test_x():\n+    assert value_1 == 8"
    rec = _rec([_file("pkg/sync.py", _bulk(150, "code")), _file("tests/test_big.py", test_patch, "added")])
    roomy = _user(rec, _an(["pkg/sync.py"]), budget=16000)
    tight = _user(rec, _an(["pkg/sync.py"]), budget=5000)
    assert "value_150 = compute_thing" in roomy  # nothing else wanted the room
    assert "value_150 = compute_thing" not in tight and "tests added or changed: test_x" in tight


def _bulk(n: int, name: str) -> str:
    return f"@@ -0,0 +1,{n} @@\n" + "\n".join(f"+{name} line {i} with several words in it" for i in range(n))


def test_a_docs_led_pr_shows_its_design_doc_before_other_docs_and_configs():
    files = [
        _file("pkg/core.py", _bulk(10, "code")),
        _file("configs/big.yaml", _bulk(300, "cfg")),
        _file(".github/workflows/README.md", _bulk(300, "ci-readme")),
        _file("docs/design/async_trainer.md", _bulk(300, "design"), "added"),
    ]
    user = _user(
        _rec(files, title="[doc] docs: async trainer design"), _an(["pkg/core.py"], kind="doc"), 6000
    )
    assert "design line 40 with several words" in user
    assert user.index("docs/design/async_trainer.md") < user.index("configs/big.yaml")
    # the same doc in a code-led PR waits behind the configs
    files[0] = _file("pkg/core.py", _bulk(900, "code"))
    plain = _user(_rec(files, title="[trainer] feat: async trainer"), _an(["pkg/core.py"], kind="feat"), 6000)
    assert plain.index("configs/big.yaml") < plain.index("docs/design/async_trainer.md")


def test_a_packaging_pr_shows_its_manifests_before_a_workflow_readme():
    files = [
        _file(".github/workflows/README.md", _bulk(300, "ci-readme")),
        _file("docker/Dockerfile.uv", _bulk(200, "docker"), "added"),
        _file("pyproject.toml", _bulk(300, "manifest")),
        _file("pkg/core.py", _bulk(5, "code")),
    ]
    user = _user(
        _rec(files, title="[build] feat: package with uv"), _an(["pkg/core.py"], kind="build"), budget=6000
    )
    assert "manifest line 40 with several" in user and "docker line 40 with several" in user
    assert user.index("pyproject.toml (") < user.index(".github/workflows/README.md")
