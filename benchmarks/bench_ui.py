"""Review app: time from Next to every pane updated, in the widget layer (`ReviewApp.next()`, synchronous).

Cases: the bundled sample (every step through its queue), a PR with a 2,000-line diff, one with 3,000
files, and one with 500 comments, reviews and review threads stepped onto with the Conversation tab open
(its baseline: rendering the whole discussion at once). Each timed step is cold (the PR's analysis is not
cached), as on a first pass through the queue.
Baseline: the naive view of the same PR: every file rendered up front, highlighted line by line, uncut
(the diff rendering alone: it leaves out loading and analysis, which ours includes).
Also reported: the HTML sent per step (the size of every HTML widget value that changed).

    python benchmarks/bench_ui.py
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pygments import highlight  # noqa: E402

from workbench.analysis.diff import parse_files  # noqa: E402
from workbench.records import PRRecord  # noqa: E402
from workbench.store import Store  # noqa: E402
from workbench.ui import conversation, diffview  # noqa: E402
from workbench.ui.app import SIDE_TABS, ReviewApp  # noqa: E402

BIG_REPO = "bench-org/big"
GOAL_MS = 150.0
COMMENTS = 500


def _file(name: str, n: int) -> dict:
    lines = [f"+    value_{i} = compute(items[{i}], scale={i % 7})  # step {i}" for i in range(n)]
    patch = f"@@ -1,0 +1,{n} @@ class Engine:\n" + "\n".join(lines)
    return {"filename": name, "status": "added", "additions": n, "deletions": 0, "changes": n, "patch": patch}


def _discussion(n: int) -> dict:
    """n issue comments, n/10 reviews and n/5 inline review comments, GitHub-sized Markdown bodies."""
    body = (
        "Thanks! Two things:\n\n1. `compute()` allocates per item; see [the docs](https://example.org/d).\n"
        "2. **Please** add a test:\n\n```python\nassert compute(items) == expected\n```\n"
    )

    def at(i: int) -> str:
        return f"2026-01-{1 + i % 28:02d}T{i % 24:02d}:{i % 60:02d}:00Z"

    comments = [
        {"id": 10_000 + i, "user": {"login": f"u{i % 9}"}, "body": body, "created_at": at(i)}
        for i in range(n)
    ]
    reviews = [
        {
            "id": 20_000 + i,
            "user": {"login": f"r{i % 4}"},
            "body": body,
            "state": "COMMENTED",
            "submitted_at": at(i),
        }
        for i in range(n // 10)
    ]
    hunk = "@@ -1,6 +1,6 @@ class Engine:\n" + "\n".join(
        f"+    value_{i} = compute(items[{i}])" for i in range(6)
    )
    inline = [
        {
            "id": 30_000 + i,
            "user": {"login": f"r{i % 4}"},
            "body": body,
            "path": "pkg/engine.py",
            "line": 3,
            "diff_hunk": hunk,
            "created_at": at(i),
            "in_reply_to_id": 30_000 + i - i % 3 if i % 3 else None,
        }
        for i in range(n // 5)
    ]
    return {"issue_comments": comments, "reviews": reviews, "review_comments": inline}


def _pr(number: int, title: str, files: list[dict], **discussion) -> PRRecord:
    detail = {
        "number": number,
        "title": title,
        "body": "Benchmark PR.",
        "state": "closed",
        "user": {"login": "bench"},
        "created_at": "2026-01-01T00:00:00Z",
        "updated_at": "2026-01-02T00:00:00Z",
        "merged_at": "2026-01-02T00:00:00Z",
        "head": {"sha": f"{number:040x}"},
    }
    return PRRecord(repo=BIG_REPO, number=number, pr=detail, files=files, source="api", **discussion)


def _build(path: Path) -> Store:
    store = Store(path)
    try:
        from workbench.sources.sample import load_sample

        load_sample(store, include_verl=False)
    except ImportError:
        pass
    pk = store.upsert_repo(BIG_REPO)
    store.write_prs(pk, [
        _pr(1, "small", [_file("pkg/small.py", 10)]),
        _pr(2, "[trainer] feat: 2,000-line feature", [_file("pkg/engine.py", 1900), _file("tests/test_engine.py", 100)]),
        _pr(3, "small again", [_file("pkg/other.py", 10)]),
        _pr(4, "[misc] chore: 3,000 files", [_file(f"pkg/mod_{i:04d}.py", 3) for i in range(3000)]),
        _pr(5, "small again", [_file("pkg/end.py", 10)]),
        _pr(6, "[trainer] fix: 500 comments", [_file("pkg/engine.py", 40)], **_discussion(COMMENTS)),
        _pr(7, "small at the end", [_file("pkg/last.py", 10)]),
    ])  # fmt: skip
    return store


def _step(app: ReviewApp, move) -> tuple[float, int]:
    """Time one navigation; return (ms, bytes of HTML whose value changed)."""
    app._analyses.clear()  # cold, as on a first pass through the queue: no analysis kept in the app
    if app.analyses.memo is not None:
        app.analyses.memo.entries.clear()  # ... nor in the analysis memo
    before = {id(w): w.value for w in app.html_widgets()}
    t0 = time.perf_counter()
    move()
    ms = (time.perf_counter() - t0) * 1000
    sent = sum(len(w.value.encode()) for w in app.html_widgets() if before.get(id(w)) != w.value)
    return ms, sent


def _naive(record) -> tuple[float, int]:
    """The baseline view: all files rendered at once, one highlight() call per line, nothing cut."""
    t0 = time.perf_counter()
    size = 0
    for fd in parse_files(record.files):
        lexer = diffview.lexer_for(fd.filename)
        for h in fd.hunks:
            for line in h.lines:
                size += len(highlight(line.text, lexer, diffview._FORMATTER)) + 60
    return (time.perf_counter() - t0) * 1000, size


def _naive_conversation(record) -> tuple[float, int]:
    """The baseline Conversation tab: the description and every entry of the discussion rendered at once."""
    t0 = time.perf_counter()
    html = conversation.description_html(record.body, None)
    html += "".join(conversation.entry_html(x) for x in conversation.timeline(record))
    return (time.perf_counter() - t0) * 1000, len(html.encode())


def _case(app: ReviewApp, target: int, runs: int) -> tuple[list[float], list[int]]:
    times, sizes = [], []
    for _ in range(runs):
        app.go(target - 1)
        ms, sent = _step(app, app.prev)  # the queue is newest first: prev() from target-1 lands on target
        assert app.record.number == target, app.record.number
        times.append(ms)
        sizes.append(sent)
    return times, sizes


def main() -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        store = _build(Path(tmp) / "cache")
        results: dict = {}
        repos = list(store.repos()["full_name"])
        cases = []
        if "example-org/minirl" in repos:
            app = ReviewApp(store, repo="example-org/minirl", exports=Path(tmp) / "exports")
            times, sizes, base_t, base_s = [], [], [], []
            while not app.queue.at_end:
                ms, sent = _step(app, app.next)
                times.append(ms)
                sizes.append(sent)
                bt, bs = _naive(app.record)
                base_t.append(bt)
                base_s.append(bs)
            cases.append(("sample", times, sizes, statistics.median(base_t), statistics.median(base_s), None))
        app = ReviewApp(store, repo=BIG_REPO, exports=Path(tmp) / "exports")
        for name, number, runs, goal in (("2000_line_diff", 2, 15, GOAL_MS), ("3000_files", 4, 7, None)):
            times, sizes = _case(app, number, runs)
            base_ms, base_size = _naive(store.pr(BIG_REPO, number))
            cases.append((name, times, sizes, base_ms, base_size, goal))
        app.w_side.selected_index = SIDE_TABS.index("Conversation")  # open: it renders on every step
        times, sizes = _case(app, 6, 15)
        base_ms, base_size = _naive_conversation(store.pr(BIG_REPO, 6))
        cases.append((f"{COMMENTS}_comments_conversation_open", times, sizes, base_ms, base_size, GOAL_MS))
        for name, times, sizes, base_ms, base_size, goal in cases:
            med = statistics.median(times)
            r = {
                "steps": len(times),
                "median_ms": med,
                "worst_ms": max(times),
                "baseline_ms": base_ms,
                "ratio": med / base_ms if base_ms else None,
                "html_kib": statistics.median(sizes) / 1024,
                "html_kib_max": max(sizes) / 1024,
                "baseline_html_kib": base_size / 1024,
            }
            results[name] = r
            goal_text = (
                f"goal <= {goal:.0f} ms median" if goal else "goal: fast enough to step, no fixed bound"
            )
            print(
                f"ui_next_{name}: ours {med:.1f} ms vs baseline {base_ms:.1f} ms -> ratio {r['ratio']:.2f} "
                f"({goal_text}); worst {r['worst_ms']:.1f} ms over {len(times)} steps; HTML per step "
                f"{r['html_kib']:.1f} KiB (max {r['html_kib_max']:.1f}) vs baseline {r['baseline_html_kib']:.0f} KiB"
            )
        store.close()
    results["goal_met"] = all(
        results[name]["median_ms"] <= GOAL_MS
        for name in ("2000_line_diff", f"{COMMENTS}_comments_conversation_open")
    )
    return results


if __name__ == "__main__":
    main()
