"""Build small git repositories for the clone-backfill tests: squash and merge-commit styles,
a rename, a binary file, non-UTF-8 bytes, and dated commits so `since` can be checked."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

ADA = ("Ada Dev", "1234+ada-dev@users.noreply.github.com")
BOB = ("Bob Branch", "bob@example.org")
MERGER = ("Merge Bot", "merger@example.org")

MODULE = "".join(f"def helper_{i}(x):\n    return x + {i}\n\n\n" for i in range(30))


def git(repo: Path, *args: str, author=ADA, date: str = "2026-10-01T10:00:00+00:00", **kw) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": author[0], "GIT_AUTHOR_EMAIL": author[1],
        "GIT_COMMITTER_NAME": author[0], "GIT_COMMITTER_EMAIL": author[1],
        "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date,
        "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1",
    }  # fmt: skip
    out = subprocess.run(["git", "-C", str(repo), *args], env=env, check=True, capture_output=True, **kw)
    return out.stdout.decode("utf-8", "replace")


def commit(repo: Path, message: str, *, author=ADA, date: str, body: str | None = None) -> None:
    git(repo, "add", "-A", author=author, date=date)
    args = ["commit", "-q", "--allow-empty", "-m", message] + (["-m", body] if body else [])
    git(repo, *args, author=author, date=date)


def build_repo(root: Path) -> Path:
    """History (oldest first): init; #1 squash adding the module; a direct push; #2 squash with a
    rename + binary + latin-1 bytes; #3 merge commit from bob's branch; #4 squash, later in time."""
    repo = root / "clone"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "README.md").write_text("# demo\n")
    commit(repo, "initial import", date="2026-09-01T08:00:00+00:00")

    (repo / "pkg").mkdir()
    (repo / "pkg" / "core.py").write_text(MODULE)
    commit(
        repo, "[trainer] feat: add core helpers (#1)", date="2026-09-02T08:00:00+02:00",
        body="Adds thirty helpers.\n\n### Test\n- [x] unit tests",
    )  # fmt: skip

    (repo / "README.md").write_text("# demo\n\nDirect push, not a PR.\n")
    commit(repo, "bump version", date="2026-09-03T08:00:00+00:00")

    git(repo, "mv", "pkg/core.py", "pkg/helpers.py")
    text = (repo / "pkg" / "helpers.py").read_text().replace("return x + 7\n", "return x + 7  # seven\n")
    (repo / "pkg" / "helpers.py").write_text(text)
    (repo / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    (repo / "legacy.txt").write_bytes(b"caf\xe9 au lait\nna\xefve\n")
    commit(
        repo, "[misc] refactor: rename core to helpers (#2)", date="2026-09-10T08:00:00+00:00",
        body="Renames the module. Follow-up to #1.",
    )  # fmt: skip

    git(repo, "checkout", "-q", "-b", "bob/docs")
    (repo / "docs").mkdir()
    (repo / "docs" / "guide.md").write_text("# Guide\n\nHow to use helpers.\n")
    commit(repo, "write the guide", author=BOB, date="2026-09-20T08:00:00+00:00")
    git(repo, "checkout", "-q", "main")
    (repo / "README.md").write_text("# demo\n\nDirect push, not a PR.\nAnother line on main.\n")
    commit(repo, "touch readme on main", date="2026-09-21T08:00:00+00:00")
    git(
        repo, "merge", "-q", "--no-ff", "bob/docs", "-m", "Merge pull request #3 from bob/docs",
        "-m", "[doc] docs: add a guide", author=MERGER, date="2026-09-22T08:00:00+00:00",
    )  # fmt: skip

    text = (repo / "pkg" / "helpers.py").read_text().replace("return x + 3\n", "return x + 33\n")
    (repo / "pkg" / "helpers.py").write_text(text)
    (repo / "logo.png").unlink()
    commit(repo, "[trainer] fix: helper_3 off by thirty (#4)", date="2026-11-01T08:00:00+00:00")
    return repo
