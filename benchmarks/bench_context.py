"""Context assembly: does what an expert cites reach the model? Ours vs plain truncation of the diff.

On the 57 labelled PRs of ../shared/labels/verl-expert-labels.csv, backfilled from the verl mirror into
a cache named by WORKBENCH_BENCH_VERL_CACHE (skipped with a message when unset), at a 16k and an 8k
budget, three shares, ours side by side with "system prompt + title + body + the whole diff in GitHub's
file order, cut at the budget":

- key files: of the expert's key files that add code, the share whose added code reaches the prompt
  (at least min(10, half) of the file's added lines of 8+ characters appear verbatim)   goal 100% at 16k
- key symbols: of the expert's key symbols, the share present (every word of it a word of the prompt)
                                                                                          goal >= 95%
- open-item identifiers: of the identifiers (snake_case, dotted, CamelCase, file names) named in the
  expert's open items and risk evidence, the share present in the prompt                  goal >= 90%
Symbols and identifiers that occur nowhere in the PR's own text (title, body, patches, commits,
comments) come from the expert's knowledge of the repository; they are counted apart, not scored.

Also: a synthetic 3,000-file PR stays within budget, and the time to build one context.

    WORKBENCH_BENCH_VERL_CACHE=/tmp/verl-cache python benchmarks/run.py context
    (make the cache: workbench sync verl-project/verl --from-git <verl mirror> --cache /tmp/verl-cache)
"""

from __future__ import annotations

import csv
import os
import re
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from workbench.analysis.conventions import load_conventions  # noqa: E402
from workbench.analysis.pipeline import analyze  # noqa: E402
from workbench.drafting import tokens  # noqa: E402
from workbench.drafting.context import build_context, system_prompt  # noqa: E402
from workbench.records import PRRecord  # noqa: E402

REPO = "verl-project/verl"
LABELS = ROOT.parent / "shared" / "labels" / "verl-expert-labels.csv"
BUDGETS = (16000, 8000)
GOALS = {"key_files": (16000, 1.0), "key_symbols": (16000, 0.95), "open_idents": (16000, 0.90)}
_IDENT = re.compile(
    r"[A-Za-z_][\w-]*(?:[./][A-Za-z_][\w-]*)+"  # dotted or a path: torch.uint8, verl/x.py
    r"|[A-Za-z]*_[\w]+"  # snake_case
    r"|[a-z]+[A-Z]\w*|[A-Z][a-z0-9]+[A-Z]\w*"  # camelCase / CamelCase
)


def baseline_prompt(rec: PRRecord, budget: int) -> str:
    """The plain approach: everything, the diff in file order, cut where the budget ends."""
    head = f"{system_prompt('zh')}\n\n{rec.title}\n\n{rec.body}\n\n"
    head, _ = tokens.clip(head, budget // 2)
    diff = "\n".join(
        f"diff --git a/{f['filename']} b/{f['filename']}\n{f.get('patch') or ''}" for f in rec.files
    )
    cut, _ = tokens.clip(diff, max(0, budget - tokens.count(head) - 20))
    return head + cut


def _added_lines(patch: str | None) -> list[str]:
    out = []
    for line in (patch or "").split("\n"):
        if line.startswith("+") and not line.startswith("+++"):
            s = line[1:].strip()
            if len(s) >= 8 and re.search(r"\w", s):
                out.append(s)
    return out


def file_reached(patch: str | None, prompt: str) -> bool | None:
    """None when the file adds no code; else whether enough of its added lines are in the prompt."""
    lines = _added_lines(patch)
    if not lines:
        return None
    need = min(10, (len(lines) + 1) // 2)
    return sum(1 for x in lines if x in prompt) >= need


def symbol_present(sym: str, words: set[str]) -> bool:
    """Every word of the symbol is a word of the prompt: `actor.ppo_epochs`, `timeout-minutes`, `k3+`."""
    parts = re.findall(r"[A-Za-z_]\w*", sym)
    return bool(parts) and all(p in words for p in parts)


def identifiers(text: str) -> set[str]:
    out = set()
    for m in _IDENT.finditer(text or ""):
        tok = m.group(0).strip(".-/")
        if len(tok) >= 4 and not re.fullmatch(r"[\d.]+|e\.g|i\.e", tok):
            out.add(tok)
    return out


def ident_present(ident: str, prompt: str) -> bool:
    return ident in prompt or ident.rsplit("/", 1)[-1] in prompt


def pr_text(rec: PRRecord) -> str:
    """Everything the PR itself says: what a prompt could possibly carry."""
    parts = [rec.title, rec.body]
    parts += [f"{f.get('filename')}\n{f.get('patch') or ''}" for f in rec.files]
    parts += [str((c.get("commit") or {}).get("message") or "") for c in rec.commits]
    parts += [c.get("body") or "" for c in rec.issue_comments + rec.review_comments + rec.reviews]
    return "\n".join(parts)


def reachable(row: dict, rec: PRRecord) -> tuple[list[str], set[str], int]:
    """The expert's symbols and identifiers that occur in the PR's own text (the rest come from the
    expert's knowledge of the repository: no prompt built from this PR can hold them), and how many not."""
    full = pr_text(rec)
    words = set(re.findall(r"[A-Za-z_]\w*", full))
    syms = [s.strip() for s in row["key_symbols"].split(";") if s.strip()]
    ids = identifiers(row["open_items"] + " " + row["risk_evidence"])
    r_syms = [s for s in syms if symbol_present(s, words)]
    r_ids = {i for i in ids if ident_present(i, full)}
    return r_syms, r_ids, len(syms) - len(r_syms) + len(ids) - len(r_ids)


def score(row: dict, rec: PRRecord, prompt: str) -> dict[str, tuple[int, int]]:
    words = set(re.findall(r"[A-Za-z_]\w*", prompt))
    by_name = {f["filename"]: f for f in rec.files}
    kf = [file_reached(by_name[n].get("patch"), prompt) for n in row["key_files"].split(";") if n in by_name]
    kf = [x for x in kf if x is not None]
    syms, ids, _ = reachable(row, rec)
    return {
        "key_files": (sum(kf), len(kf)),
        "key_symbols": (sum(symbol_present(s, words) for s in syms), len(syms)),
        "open_idents": (sum(ident_present(i, prompt) for i in ids), len(ids)),
    }


def labelled(cache: str) -> dict:
    from workbench.store import open_cache

    store = open_cache(cache)
    conv = load_conventions(REPO, cache=store.path.parent)
    known = store.known_prs(REPO)
    rows = list(csv.DictReader(LABELS.open(encoding="utf-8")))
    totals = {(who, b, m): [0, 0] for who in ("ours", "plain") for b in BUDGETS for m in GOALS}
    misses: dict[tuple[int, str], list[str]] = {}
    times, over, outside = [], 0, 0
    for row in rows:
        rec = store.pr(REPO, int(row["pr"]))
        outside += reachable(row, rec)[2]
        a = analyze(rec, conventions=conv, known_prs=known)
        for b in BUDGETS:
            t0 = time.perf_counter()
            ctx = build_context(rec, a, lang="zh", budget=b, seed=0)
            times.append(time.perf_counter() - t0)
            over += ctx.tokens + ctx.reserved > b
            ours = "\n".join(m["content"] for m in ctx.messages)
            for who, prompt in (("ours", ours), ("plain", baseline_prompt(rec, b))):
                for m, (hit, n) in score(row, rec, prompt).items():
                    totals[(who, b, m)][0] += hit
                    totals[(who, b, m)][1] += n
            if b == BUDGETS[0]:
                by_name = {f["filename"]: f for f in rec.files}
                for n in row["key_files"].split(";"):
                    if n in by_name and file_reached(by_name[n].get("patch"), ours) is False:
                        misses.setdefault((b, "key_files"), []).append(f"#{row['pr']} {n}")
    out: dict = {
        "prs": len(rows),
        "over_budget": over,
        "median_build_ms": round(statistics.median(times) * 1000),
    }
    print(
        f"{len(rows)} labelled verl PRs; contexts over budget: {over}; median build {out['median_build_ms']} ms"
    )
    print(f"({outside} expert symbols/identifiers occur nowhere in their PR's text and are not counted)")
    out["not_in_pr_text"] = outside
    print(f"{'share':<42}{'budget':>8}{'ours':>10}{'plain':>10}{'goal':>8}")
    names = {
        "key_files": "expert key files whose added code is shown",
        "key_symbols": "expert key symbols present",
        "open_idents": "identifiers of open items / risk evidence",
    }
    for m, (gb, goal) in GOALS.items():
        for b in BUDGETS:
            o = totals[("ours", b, m)]
            p = totals[("plain", b, m)]
            so, sp = o[0] / max(1, o[1]), p[0] / max(1, p[1])
            mark = f">= {goal:.0%}" if b == gb else ""
            met = "" if b != gb else (" met" if so >= goal else " NOT met")
            print(
                f"{names[m]:<42}{b:>8}{so:>9.1%} {sp:>9.1%} {mark:>8}{met}  ({o[0]}/{o[1]} vs {p[0]}/{p[1]})"
            )
            out[f"{m}_{b}"] = {"ours": round(so, 3), "plain": round(sp, 3), "n": o[1]}
    for (b, m), items in misses.items():
        print(f"missed at {b} ({m}): " + "; ".join(items[:12]))
    return out


def synthetic_3000() -> PRRecord:
    files = []
    for i in range(3000):
        body = "\n".join(f"+    value_{i}_{j} = compute(item_{j})" for j in range(6))
        files.append(
            {
                "filename": f"verl/m{i % 7}/mod_{i:04d}.py",
                "status": "modified",
                "additions": 6,
                "deletions": 0,
                "patch": f"@@ -1,2 +1,8 @@ def step_{i}(self):\n ctx\n{body}\n ctx",
            }
        )
    pr = {"title": "[workers] fix: 3,000 files", "body": "Fix.", "state": "open", "user": {"login": "a"}}
    return PRRecord(repo="o/r", number=1, pr=pr, files=files, files_truncated=True)


def main() -> dict:
    tokens.encoder()  # build the encoder once, outside the timings
    results: dict = {}
    cache = os.environ.get("WORKBENCH_BENCH_VERL_CACHE")
    if not cache:
        print(
            "labelled verl PRs: skipped (set WORKBENCH_BENCH_VERL_CACHE to a cache backfilled from the verl mirror)"
        )
    elif not LABELS.exists():
        print(f"labelled verl PRs: skipped ({LABELS} absent)")
    else:
        results["labelled"] = labelled(cache)
    rec = synthetic_3000()
    t0 = time.perf_counter()
    ctx = build_context(rec, analyze(rec), lang="en", budget=16000, seed=0)
    ms = (time.perf_counter() - t0) * 1000
    print(
        f"synthetic 3,000 files: {ctx.tokens + ctx.reserved} of 16000 tokens, {3000 - len(ctx.left_out)} files "
        f"shown, {len(ctx.left_out)} listed as left out; analysis + context {ms:.0f} ms"
    )
    results["synthetic_3000"] = {"tokens": ctx.tokens, "shown": 3000 - len(ctx.left_out), "ms": round(ms)}
    return results


if __name__ == "__main__":
    main()
