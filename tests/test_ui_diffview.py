"""One file's diff as HTML: line numbers, highlighting in one call per side, escaping, cut and notes."""

from __future__ import annotations

import re

import pytest

from workbench.analysis.diff import parse_file
from workbench.ui import diffview

PATCH = """@@ -10,4 +10,5 @@ class Engine:
     def run(self):
-        return old()
+        x = '<script>alert(1)</script>'
+        return new(x)
     # tail
@@ -40,2 +41,2 @@ def helper():
-a = 1
+a = 2
"""


def rows(html_text: str) -> list[tuple[str, str, str, str]]:
    """(old_no, new_no, sign, code-without-tags) per diff row."""
    out = []
    for m in re.finditer(r"<tr class=([acd])><td>(\d*)<td>(\d*)<td>(.)<td>(.*?)(?=<tr|</table>)", html_text):
        out.append((m.group(2), m.group(3), m.group(4), re.sub(r"<[^>]+>", "", m.group(5))))
    return out


def test_line_numbers_signs_and_escaping():
    fd = parse_file(
        {"filename": "pkg/engine.py", "status": "modified", "additions": 3, "deletions": 2, "patch": PATCH}
    )
    out = diffview.render_file(fd)
    r = rows(out.html)
    assert r[0] == ("10", "10", " ", "    def run(self):")
    assert r[1][:3] == ("11", "", "-")
    assert r[2][:3] == ("", "11", "+") and "&lt;script&gt;" in r[2][3]
    assert r[4] == ("12", "13", " ", "    # tail")
    assert r[5][:3] == ("40", "", "-") and r[6][:3] == ("", "41", "+")
    assert "<script" not in out.html and "@@ -40,2 +41,2 @@ def helper():" in out.html
    assert '<span class="' in out.html  # highlighted
    assert not out.cut and out.shown == out.total == 9


def test_one_highlight_call_per_side(monkeypatch):
    calls = []
    real = diffview.highlight
    monkeypatch.setattr(diffview, "highlight", lambda *a: calls.append(1) or real(*a))
    patch = "@@ -1,300 +1,300 @@\n" + "\n".join(f"-old_{i} = {i}\n+new_{i} = {i}" for i in range(150)) + "\n"
    fd = parse_file(
        {"filename": "m.py", "status": "modified", "additions": 150, "deletions": 150, "patch": patch}
    )
    diffview.render_file(fd)
    assert len(calls) == 2


def test_multiline_tokens_and_blank_lines_keep_alignment():
    # A docstring spans lines and the first lines are blank: pygments must neither merge nor strip them.
    lines = ["", "", 'DOC = """first', "second <b>", 'third"""', "x = 1"]
    out = diffview.highlight_lines(lines, "a.py")
    assert len(out) == len(lines)
    assert re.sub(r"<[^>]+>", "", out[3]) == "second &lt;b&gt;"
    assert re.sub(r"<[^>]+>", "", out[5]) == "x = 1"


def test_long_file_is_cut_until_show_all():
    patch = "@@ -0,0 +1,1000 @@\n" + "\n".join(f"+line_{i} = {i}" for i in range(1000))
    fd = parse_file(
        {"filename": "big.py", "status": "added", "additions": 1000, "deletions": 0, "patch": patch}
    )
    cut = diffview.render_file(fd)
    assert cut.cut and cut.shown == diffview.LIMIT and cut.total == 1001
    assert len(rows(cut.html)) == diffview.LIMIT - 1  # one row is the hunk header
    full = diffview.render_file(fd, limit=None)
    assert not full.cut and len(rows(full.html)) == 1000


@pytest.mark.parametrize(
    ("file", "note"),
    [
        ({"filename": "logo.png", "status": "modified", "additions": 0, "deletions": 0}, "binary"),
        (
            {
                "filename": "new.py",
                "previous_filename": "old.py",
                "status": "renamed",
                "additions": 0,
                "deletions": 0,
            },
            "renamed from old.py",
        ),
        (
            {
                "filename": "gone.py",
                "status": "removed",
                "additions": 0,
                "deletions": 2,
                "patch": "@@ -1,2 +0,0 @@\n-a\n-b",
            },
            "file removed",
        ),
        ({"filename": "huge.json", "status": "modified", "additions": 9000, "deletions": 0}, "patch omitted"),
    ],
)
def test_special_files_say_what_they_are(file, note):
    fd = parse_file(file)
    assert note in diffview.render_file(fd).html
    title = diffview.file_title(fd)
    assert file["filename"] in title


def test_hostile_file_name_is_text():
    fd = parse_file(
        {
            "filename": 'a/<img src=x onerror="alert(1)">.py',
            "status": "added",
            "additions": 1,
            "deletions": 0,
            "patch": "@@ -0,0 +1,1 @@\n+x = 1",
        }
    )
    out = diffview.render_file(fd).html
    assert "<img" not in out


def test_key_files_first_then_listed_order():
    files = [
        parse_file({"filename": n, "status": "modified", "additions": 1, "deletions": 0}) for n in "abcd"
    ]
    assert [f.filename for f in diffview.order_files(files, ["c", "a"])] == ["c", "a", "b", "d"]


def test_minified_line_is_capped():
    fd = parse_file(
        {
            "filename": "m.js",
            "status": "added",
            "additions": 1,
            "deletions": 0,
            "patch": "@@ -0,0 +1,1 @@\n+" + "x" * 50_000,
        }
    )
    assert len(diffview.render_file(fd).html) < 10_000


def test_show_all_stops_at_max_all():
    n = diffview.MAX_ALL + 100
    patch = f"@@ -0,0 +1,{n} @@\n" + "\n".join(f"+v{i} = {i}" for i in range(n))
    fd = parse_file(
        {"filename": "huge.py", "status": "added", "additions": n, "deletions": 0, "patch": patch}
    )
    out = diffview.render_file(fd, limit=None)
    assert out.shown == diffview.MAX_ALL and "the rest is on GitHub" in out.html
