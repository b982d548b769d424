"""PR fixtures for the review-app tests and benchmark: small, untrusted-HTML, 2,000-line and 3,000-file PRs,
written through the real Store so the app reads them exactly as it reads synced data."""

from __future__ import annotations

from pathlib import Path

from workbench.records import PRRecord
from workbench.store import Store

REPO = "example-org/uitest"
XSS = '<script>window.__xss=1;alert(1)</script><img src=x onerror="window.__xss=2;alert(2)">'
# A description/comment that tries every way Markdown can carry live HTML: raw tags, event handlers,
# javascript:/data: links and images, autolinks, raw <details>/<iframe>/<svg> and a template comment.
HOSTILE_MARKDOWN = (
    f"Body {XSS} [click](javascript:alert(6))\n\n"
    '## Summary\n\n<details open><summary>raw</summary><iframe src="javascript:window.__xss=20"></iframe></details>\n\n'
    '<a href="javascript:window.__xss=21">raw link</a> <svg onload="window.__xss=22"></svg>\n\n'
    "![img](javascript:window.__xss=23) ![pixel](https://tracker.example/p.png) [data](data:text/html,x) "
    "<javascript:window.__xss=24> [ok](https://example.org/ok)\n\n"
    "<!-- template: describe your change -->\n"
)


def _patch(n_lines: int, *, start: int = 1, prefix: str = "value") -> str:
    body = [f"+{prefix}_{i} = compute({i})  # line {i}" for i in range(n_lines)]
    return f"@@ -{start},0 +{start},{n_lines} @@ def setup():\n" + "\n".join(body)


def pr(
    number: int,
    title: str,
    files: list[dict],
    *,
    body: str = "",
    state: str = "closed",
    merged: bool = True,
    comments: list[dict] | None = None,
    reviews: list[dict] | None = None,
    review_comments: list[dict] | None = None,
    labels: list[str] = (),
    url: str | None = None,
) -> PRRecord:
    day = 1 + number % 27
    detail = {
        "number": number,
        "title": title,
        "body": body,
        "state": state,
        "user": {"login": f"dev{number % 5}"},
        "created_at": f"2026-01-{day:02d}T08:00:00Z",
        "updated_at": f"2026-01-{day:02d}T12:00:00Z",
        "merged_at": f"2026-01-{day:02d}T12:00:00Z" if merged else None,
        "html_url": url or f"https://github.com/{REPO}/pull/{number}",
        "labels": [{"name": x} for x in labels],
        "head": {"sha": f"{number:040x}"},
        "base": {"ref": "main"},
        "additions": sum(f.get("additions", 0) for f in files),
        "deletions": sum(f.get("deletions", 0) for f in files),
        "changed_files": len(files),
    }
    return PRRecord(
        repo=REPO,
        number=number,
        pr=detail,
        files=files,
        issue_comments=comments or [],
        reviews=reviews or [],
        review_comments=review_comments or [],
        source="api",
    )


def code_file(name: str, n: int = 5, **kw) -> dict:
    return {
        "filename": name,
        "status": kw.pop("status", "modified"),
        "additions": n,
        "deletions": 0,
        "changes": n,
        "patch": _patch(n),
        **kw,
    }


def untrusted_pr(number: int = 7) -> PRRecord:
    evil_name = 'src/<img src=x onerror="window.__xss=3">.py'
    files = [
        {
            "filename": evil_name,
            "status": "added",
            "additions": 2,
            "deletions": 0,
            "changes": 2,
            "patch": "@@ -0,0 +1,2 @@\n+html = '<script>window.__xss=4</script>'\n+link = 'javascript:alert(5)'",
        },
        code_file("README.md", 2),
    ]
    return pr(
        number,
        f"[ui] fix: escape {XSS}",
        files,
        body=HOSTILE_MARKDOWN,
        comments=[
            {
                "id": 9001,
                "user": {"login": "mallory"},
                "body": f"comment {XSS}\n\n{HOSTILE_MARKDOWN}",
                "created_at": "2026-01-05T00:00:00Z",
                "updated_at": "2026-01-05T00:00:00Z",
                "html_url": "javascript:alert(10)",
            }
        ],
        reviews=[
            {
                "id": 9100,
                "user": {"login": "<b>eve</b>"},
                "body": f"review {XSS} [x](javascript:alert(11))",
                "state": "COMMENTED",
                "submitted_at": "2026-01-06T00:00:00Z",
            }
        ],
        review_comments=[
            {
                "id": 9200,
                "pull_request_review_id": 9100,
                "user": {"login": "eve"},
                "body": f"thread {XSS}",
                "path": evil_name,
                "line": 2,
                "diff_hunk": "@@ -0,0 +1,2 @@\n+html = '<script>window.__xss=12</script>'\n+<img src=x onerror=\"window.__xss=13\">",
                "created_at": "2026-01-06T00:00:00Z",
                "thread_resolved": False,
            }
        ],
        labels=["<b>label</b>"],
        url="javascript:alert(7)",
    )


def big_diff_pr(number: int = 20, lines: int = 2000) -> PRRecord:
    files = [
        code_file("pkg/feature/engine.py", lines - 100),
        code_file("tests/test_engine.py", 60),
        code_file("docs/engine.md", 40),
    ]
    return pr(number, "[trainer] feat: a 2,000-line feature", files, body="Adds the engine.")


def many_files_pr(number: int = 30, n_files: int = 3000) -> PRRecord:
    files = [code_file(f"pkg/mod_{i:04d}.py", 3) for i in range(n_files)]
    return pr(number, "[misc] chore: touch 3,000 files", files, body="Mass rename.")


def basic_prs() -> list[PRRecord]:
    return [
        pr(
            1,
            "[rollout] fix: race in ACK",
            [code_file("verl/rollout/ack.py", 12), code_file("tests/test_ack.py", 6)],
            body="Fixes a race. Follow-up to #2.",
        ),
        pr(
            2,
            "[ci] chore: bump runner",
            [code_file(".github/workflows/ci.yml", 3)],
            state="open",
            merged=False,
        ),
        pr(
            3,
            "[doc] docs: typo",
            [
                code_file("docs/index.md", 1),
                {
                    "filename": "assets/logo.png",
                    "status": "modified",
                    "additions": 0,
                    "deletions": 0,
                    "changes": 0,
                },
                {
                    "filename": "pkg/new_name.py",
                    "previous_filename": "pkg/old_name.py",
                    "status": "renamed",
                    "additions": 0,
                    "deletions": 0,
                    "changes": 0,
                },
                {
                    "filename": "pkg/gone.py",
                    "status": "removed",
                    "additions": 0,
                    "deletions": 4,
                    "changes": 4,
                    "patch": "@@ -1,4 +0,0 @@\n-a\n-b\n-c\n-d",
                },
                {
                    "filename": "pkg/huge.json",
                    "status": "modified",
                    "additions": 90000,
                    "deletions": 0,
                    "changes": 90000,
                },
            ],
        ),
    ]


def make_cache(path: Path, *, extra: list[PRRecord] = ()) -> Store:
    store = Store(path)
    pk = store.upsert_repo(REPO, 4242)
    store.write_prs(pk, [*basic_prs(), untrusted_pr(), *extra])
    return store


def live_markup(text: str) -> list[str]:
    """What in an HTML string would run or load in a browser: script/img/iframe... tags, on* attributes,
    javascript:/data: URLs. Escaped text (&lt;script&gt;) is inert and not reported."""
    from html.parser import HTMLParser

    found: list[str] = []

    class P(HTMLParser):
        def handle_starttag(self, tag, attrs):
            if tag in (
                "script",
                "img",
                "iframe",
                "object",
                "embed",
                "svg",
                "math",
                "link",
                "meta",
                "base",
                "form",
            ):
                found.append(f"<{tag}>")
            for k, v in attrs:
                if k.startswith("on"):
                    found.append(f"{tag}[{k}]")
                if (
                    k in ("href", "src", "action", "formaction")
                    and v
                    and v.strip().lower().startswith(("javascript:", "data:", "vbscript:"))
                ):
                    found.append(f"{tag}[{k}={v}]")

    P().feed(text)
    return found
