"""Context assembly at a 16k budget: how much of the key files' diff reaches the model.

Ours (key files first, hunks with their @@ function line, deletion-only hunks dropped first, the rest
as stats) vs the plain baseline "system + title + body + the whole diff in GitHub's file order,
truncated at the budget". Measured on:
  (a) the bundled sample's largest PR (cache/sample, when it is there);
  (b) the five largest verl PRs of ../shared/corpus (their real file lists and line counts; the corpus
      has no patch text, so each file gets a synthetic patch of its size, capped at 400 lines);
  (c) a synthetic 3,000-file PR.
Key files are the ones the real heuristics pick. A key hunk "reaches the prompt" when its @@ line and
first changed lines appear verbatim. Also: time to assemble one context, ours vs the baseline.

    python benchmarks/bench_context.py
"""

from __future__ import annotations

import gzip
import json
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from workbench.analysis.pipeline import analyze  # noqa: E402
from workbench.drafting import tokens  # noqa: E402
from workbench.drafting.context import build_context, split_hunks, system_prompt  # noqa: E402
from workbench.records import PRRecord  # noqa: E402

BUDGET = 16000
CORPUS = ROOT.parent / "shared" / "corpus" / "verl_prs_meta.jsonl.gz"
GOAL_SHARE = 1.5  # ours should reach at least 1.5x the baseline's share of key hunks on large PRs
CODE = [
    "        out = self.proj(x).to(dtype=torch.bfloat16)",
    "        with self._lock:",
    "            self._ack_pending = False",
    "        result = model.generate(input_ids, max_new_tokens=self.config.max_tokens)",
    "        logger.info('step %d loss %.4f', step, loss.item())",
    "        return {k: v.detach() for k, v in outputs.items()}",
    "        if self.rank == 0 and not self.is_offload:",
    "        self.socket.send(msg)",
]


NEUTRAL = [
    "        value = compute_value(item)",
    "        items.append(value)",
    "        total += len(items)",
    "        name = f'{prefix}_{index}'",
]


def synthetic_patch(name: str, additions: int, deletions: int, rng: random.Random, pool=CODE) -> str:
    adds, dels = min(additions, 300), min(deletions, 100)
    hunks, h = [], 0
    while adds > 0 or dels > 0:
        a, d = min(adds, rng.randint(4, 14)), min(dels, rng.randint(0, 6))
        if a == 0:  # every hunk changes something: a deletion-only file gets deletion-only hunks
            d = min(dels, rng.randint(4, 14))
        adds, dels = adds - a, dels - d
        body = [" " + pool[(h + i) % len(pool)] for i in range(2)]
        body += [f"-{pool[(h + i + 3) % len(pool)]}  # {name} old {h}.{i}" for i in range(d)]
        body += [f"+{pool[(h + i + 5) % len(pool)]}  # {name} new {h}.{i}" for i in range(a)]
        start = 1 + 60 * h
        hunks.append(
            f"@@ -{start},{2 + d} +{start},{2 + a} @@ def step_{h}(self, batch):\n" + "\n".join(body)
        )
        h += 1
    return "\n".join(hunks)


def baseline_prompt(rec: PRRecord, budget: int) -> str:
    """The plain approach: everything, the diff in file order, cut where the budget ends."""
    head = f"{system_prompt('en')}\n\n{rec.title}\n\n{rec.body}\n\n"
    diff = "\n".join(
        f"diff --git a/{f['filename']} b/{f['filename']}\n{f.get('patch') or ''}" for f in rec.files
    )
    room = budget - tokens.count(head) - 20
    cut, _ = tokens.clip(diff, max(0, room))
    return head + cut


def key_hunk_share(rec: PRRecord, key_files: list[str], prompt: str) -> tuple[int, int, int]:
    """(key hunks reached, key hunks in all, key files with at least one hunk reached)."""
    by_name = {f["filename"]: f for f in rec.files}
    total = reached = files = 0
    for name in key_files:
        got = 0
        for text, _ in split_hunks(by_name.get(name, {}).get("patch")):
            total += 1
            snippet = "\n".join(text.split("\n")[:4])
            got += snippet in prompt
        reached += got
        files += got > 0
    return reached, total, files


def _timed(fn, repeat: int = 3) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times), out


def measure(name: str, rec: PRRecord) -> dict:
    analysis = analyze(rec)
    keys = [k.filename for k in analysis.key_files]
    ours_ms, ctx = _timed(lambda: build_context(rec, analysis, lang="en", budget=BUDGET))
    base_ms, base = _timed(lambda: baseline_prompt(rec, BUDGET))
    user = ctx.messages[1]["content"]
    o_r, total, o_f = key_hunk_share(rec, keys, user)
    b_r, _, b_f = key_hunk_share(rec, keys, base)
    o, b = (o_r / total if total else 1.0), (b_r / total if total else 1.0)
    print(
        f"{name}: {len(rec.files)} files, {len(keys)} key files, {total} key hunks, "
        f"{tokens.count(base)} baseline tokens / {ctx.tokens + ctx.reserved} ours (budget {BUDGET})"
    )
    ratio = o / b if b else float("inf")
    print(
        f"{name} key-hunk share: ours {o:.0%} vs baseline {b:.0%} -> ratio {ratio:.2f} (goal >= {GOAL_SHARE} on large PRs)"
    )
    print(f"{name} key files seen: ours {o_f}/{len(keys)} vs baseline {b_f}/{len(keys)}")
    print(
        f"{name} assemble: ours {ours_ms:.1f} ms vs baseline {base_ms:.1f} ms -> ratio {ours_ms / max(base_ms, 1e-6):.1f} "
        f"(goal: ours <= 1000 ms); left out {len(ctx.left_out)}, clipped {len(ctx.clipped)}"
    )
    return {
        "files": len(rec.files),
        "key_hunks": total,
        "ours_share": round(o, 3),
        "baseline_share": round(b, 3),
        "ours_key_files": o_f,
        "baseline_key_files": b_f,
        "key_files": len(keys),
        "ours_ms": round(ours_ms, 1),
        "baseline_ms": round(base_ms, 1),
        "tokens": ctx.tokens + ctx.reserved,
        "left_out": len(ctx.left_out),
        "clipped": len(ctx.clipped),
    }


def sample_largest() -> PRRecord | None:
    """The sample PR with the most patch text: through the sample loader, or its JSON lines directly."""
    path = ROOT / "workbench" / "sample" / "example-org-minirl.jsonl"
    if not path.exists():
        print(f"sample: {path} absent, skipped")
        return None
    recs = []
    for line in path.read_text(encoding="utf-8").splitlines():
        d = json.loads(line)
        recs.append(PRRecord(repo="example-org/minirl", number=d["pr"]["number"], **d, source="sample"))
    return max(recs, key=lambda r: sum(len(f.get("patch") or "") for f in r.files), default=None)


def corpus_largest(k: int = 5) -> list[PRRecord]:
    if not CORPUS.exists():
        print(f"corpus: {CORPUS} absent, skipped")
        return []
    rows = []
    with gzip.open(CORPUS, "rt", encoding="utf-8") as fh:
        for line in fh:
            d = json.loads(line)
            files = d.get("files") or []
            if 30 <= len(files) <= 3000:
                rows.append(d)
    rows.sort(
        key=lambda d: -sum(int(f.get("additions") or 0) + int(f.get("deletions") or 0) for f in d["files"])
    )
    rng = random.Random(7)
    out = []
    for d in rows[:k]:
        files = []
        for f in sorted(d["files"], key=lambda f: f.get("filename") or ""):  # GitHub lists files by path
            name = f.get("filename") or "?"
            a, dl = int(f.get("additions") or 0), int(f.get("deletions") or 0)
            files.append(
                {
                    "filename": name,
                    "status": f.get("status") or "modified",
                    "additions": a,
                    "deletions": dl,
                    "patch": synthetic_patch(name.rsplit("/", 1)[-1], a, dl, rng),
                }
            )
        pr = {
            "title": d.get("title") or "",
            "body": d.get("body") or d.get("description") or "",
            "state": "closed",
            "merged_at": "2025-01-01T00:00:00Z",
            "user": {"login": "author"},
        }
        out.append(PRRecord(repo="verl-project/verl", number=int(d.get("number") or 0), pr=pr, files=files))
    return out


def synthetic_3000() -> PRRecord:
    rng = random.Random(3)
    files = []
    for i in range(3000):
        name = f"verl/{['trainer', 'workers', 'utils', 'models'][i % 4]}/mod_{i:04d}.py"
        a, d = rng.randint(2, 40), rng.randint(0, 10)
        # the changes that matter sit late in the file order, as they often do: the rest is routine
        pool = CODE if i in (1700, 2400, 2900) else NEUTRAL
        files.append(
            {
                "filename": name,
                "status": "modified",
                "additions": a,
                "deletions": d,
                "patch": synthetic_patch(f"mod_{i}", a, d, rng, pool),
            }
        )
    pr = {
        "title": "[workers] fix: ACK race across 3,000 files",
        "body": "Fix the ACK race in `mod_2900`; the lock moves in `mod_1700` and `mod_2400`.",
        "state": "open",
        "user": {"login": "author"},
    }
    return PRRecord(repo="o/r", number=1, pr=pr, files=files, files_truncated=True)


def main() -> dict:
    tokens.encoder()  # build the encoder once, outside the timings
    results = {}
    rec = sample_largest()
    if rec is not None:
        results["sample_largest"] = measure(f"sample #{rec.number}", rec)
    for rec in corpus_largest():
        results[f"verl_{rec.number}"] = measure(f"verl #{rec.number} (corpus stats, synthetic patches)", rec)
    results["synthetic_3000"] = measure("synthetic 3,000 files", synthetic_3000())
    large = [r for r in results.values() if r["files"] >= 30]
    if large:
        o = statistics.mean(r["ours_share"] for r in large)
        b = statistics.mean(r["baseline_share"] for r in large)
        print(
            f"large PRs mean key-hunk share: ours {o:.0%} vs baseline {b:.0%} -> ratio {o / b if b else float('inf'):.2f} "
            f"(goal >= {GOAL_SHARE})"
        )
        results["large_mean"] = {"ours_share": round(o, 3), "baseline_share": round(b, 3)}
    return results


if __name__ == "__main__":
    main()
