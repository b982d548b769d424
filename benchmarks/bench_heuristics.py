"""Heuristics cost per PR, as a ratio to decoding the same records' JSON (goal: at most 5x).

(a) every PR of the verl corpus (../shared/corpus/verl_prs_meta.jsonl.gz: titles, descriptions, file
    stats, no patches), as the cache holds facts-only PRs;
(b) 3,000 PRs WITH patches: the corpus PRs' own file lists and line counts, each file given a synthetic
    patch of that size (capped at 400 lines per file) drawn from realistic Python / YAML / Markdown
    lines, including risk keywords, def lines, defaults and TODOs, so every detector does real work.
    The baseline decodes each record's JSON including its patches.
(c) 3,000 PRs from a clone backfill: bench_store's fast-import history (squash commits "title (#N)")
    read by `workbench.sources.git.backfill` into a cache, then `store.records`; skipped when the
    backfill is unavailable.
(d) a real project's history, when WORKBENCH_BENCH_CLONE names a local clone (bare or not): its
    squash-merged PRs backfilled the same way, with their real patches. Synthetic patches are regular;
    real ones (long new files, notebooks, scripts full of config flags) are what the heuristics meet.

Each set also prints where the time goes: every stage of `analyze` timed on its own (µs per PR, and as
a multiple of the set's json.loads time), so a reader sees which part a goal depends on.

Fairness: each set's records are serialised once (`PRRecord.to_dict()` as JSON, patches included); the
baseline is `json.loads` of exactly those lines, and ours runs on the records decoded from them (decoding
is not counted on our side). Three numbers per set, never mixed:
  cold  `analyze(record)` from scratch, the cost of a PR seen for the first time or after a change;
  warm  `AnalysisMemo.analyze(record)` for an unchanged PR (see workbench/analysis_memo.py): loading the
        memo file, fingerprinting the record, unpickling its stored Analysis and re-resolving its
        cross-references, all timed;
  fill  the first run with the memo: cold analysis plus fingerprinting, pickling and writing the file
        (what the memo costs on top of cold; the goal applies to cold and warm).

    python benchmarks/bench_heuristics.py
    WORKBENCH_BENCH_CLONE=~/src/verl python benchmarks/bench_heuristics.py   # adds (d)
"""

from __future__ import annotations

import gc
import gzip
import json
import os
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from workbench.analysis.conventions import load_conventions  # noqa: E402
from workbench.analysis.memo import AnalysisMemo  # noqa: E402
from workbench.analysis.pipeline import analyze  # noqa: E402
from workbench.records import PRRecord  # noqa: E402

CORPUS = ROOT.parent / "shared" / "corpus" / "verl_prs_meta.jsonl.gz"
GOAL = 5.0

CODE_LINES = [
    "    def forward(self, x, mask=None):",
    "        out = self.proj(x).to(dtype=torch.bfloat16)",
    "        with self._lock:",
    "            self._ack_pending = False",
    "        torch.cuda.empty_cache()",
    "        del weights, tensor",
    "        # TODO: handle the multi-node case",
    "        except Exception:",
    "            pass",
    "    batch_size: int = 32",
    "    parser.add_argument('--lr', type=float, default=1e-5)",
    "        result = model.generate(input_ids, max_new_tokens=self.config.max_tokens)",
    "        logger.info('step %d loss %.4f', step, loss.item())",
    "        return {k: v.detach() for k, v in outputs.items()}",
    "class RolloutWorker(Worker):",
    "        if self.rank == 0 and not self.is_offload:",
    "        tokens = tokenizer(batch['prompt'], padding=True, return_tensors='pt')",
    "        self.socket.send(msg)",
    "        await asyncio.sleep(0.1)",
    "        scores = torch.clamp(scores, min=-self.eps, max=self.eps)",
]
# Most changed lines in real PRs are plain: three in four lines come from here.
PLAIN_LINES = [
    "        x = self.layer_norm(hidden_states)",
    "        batch = batch.to(self.device)",
    '        metrics["actor/entropy"] = entropy.mean().item()',
    "        for i, item in enumerate(items):",
    "            outputs.append(self._process(item))",
    "        return outputs",
    "",
    "    @property",
    "        config = OmegaConf.to_container(self.config, resolve=True)",
    "        if not self.use_remove_padding:",
    "            input_ids = input_ids.unsqueeze(0)",
    '        assert len(responses) == len(prompts), f"{len(responses)} != {len(prompts)}"',
]
YAML_LINES = [
    "  micro_batch_size: 4",
    "  lr: 1e-6",
    "  enable_gc: true",
    "rollout:",
    "  tensor_parallel_size: 2",
]
DOC_LINES = [
    "This page explains how to configure the rollout.",
    "",
    "## Usage",
    "Set `rollout.name` to vllm.",
]


def _records_from_corpus() -> list[dict]:
    with gzip.open(CORPUS, "rt", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


def _record(d: dict) -> PRRecord:
    pr = {"number": d["number"], "title": d["title"], "body": d.get("body"), "merged_at": d.get("merged_at")}
    return PRRecord(
        repo="verl-project/verl", number=d["number"], pr=pr, files=d.get("files") or [], source="facts"
    )


def _synth_patch(rng: random.Random, filename: str, adds: int, dels: int) -> str:
    pool = (
        YAML_LINES
        if filename.endswith((".yaml", ".yml"))
        else DOC_LINES
        if filename.endswith((".md", ".rst"))
        else None
    )
    adds, dels = min(adds, 300), min(dels, 100)

    def pick() -> str:
        if pool is not None:
            return rng.choice(pool)
        return rng.choice(CODE_LINES) if rng.random() < 0.25 else rng.choice(PLAIN_LINES)

    out, old, new = [], 10, 10
    while adds or dels:
        a, r, ctx = min(adds, rng.randint(1, 25)), min(dels, rng.randint(0, 8)), 3
        out.append(f"@@ -{old},{r + 2 * ctx} +{new},{a + 2 * ctx} @@ def step(self, batch):")
        body = [" " + pick() for _ in range(ctx)]
        body += ["-" + pick() for _ in range(r)] + ["+" + pick() for _ in range(a)]
        body += [" " + pick() for _ in range(ctx)]
        out += body
        adds, dels = adds - a, dels - r
        old, new = old + r + 2 * ctx + 20, new + a + 2 * ctx + 20
    return "\n".join(out)


def _with_patches(rows: list[dict], n: int = 3000) -> list[dict]:
    rng = random.Random(7)
    out = []
    for i in range(n):
        d = json.loads(json.dumps(rows[i % len(rows)]))
        d["number"] = 100000 + i
        for f in d["files"][:300]:
            if not f.get("binary"):
                f["patch"] = _synth_patch(
                    rng, f["filename"], int(f.get("additions") or 0), int(f.get("deletions") or 0)
                )
        out.append(d)
    return out


def _measure(label: str, records: list[PRRecord], conv, known, repeat: int = 1) -> dict:
    """Cold and warm analysis of `records` vs json.loads of the same records' JSON (see the module note).

    `repeat` runs a small set several times per timing so that it lasts long enough to measure.
    """
    import tempfile
    from collections import Counter

    lines = [json.dumps(r.to_dict()) for r in records]
    decoded = [PRRecord.from_dict(json.loads(s)) for s in lines]  # what ours analyses; not timed
    for r in decoded[:200]:  # warm the per-extension lexer and role caches, as a long session has them
        analyze(r, conventions=conv, known_prs=known)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "memo.pickle"
        with AnalysisMemo(path, conv) as memo:  # fill the memo: one cold pass, untimed
            verdicts = Counter(memo.analyze(r, known_prs=known).verdict for r in decoded)
        unique, lines, decoded = decoded, lines * repeat, decoded * repeat
        cold, warm, fill, base = [], [], [], []
        for _ in range(3):  # interleave, keep the best: the machine is shared and noisy
            gc.collect()
            t = time.perf_counter()
            for s in lines:
                json.loads(s)
            base.append(time.perf_counter() - t)
            gc.collect()
            t = time.perf_counter()
            for r in decoded:
                analyze(r, conventions=conv, known_prs=known)
            cold.append(time.perf_counter() - t)
            gc.collect()
            t = time.perf_counter()
            memo = AnalysisMemo(path, conv)  # the file load is part of the warm cost
            for r in decoded:
                memo.analyze(r, known_prs=known)
            warm.append(time.perf_counter() - t)
            if memo.hits != len(decoded):
                raise AssertionError(f"{label}: warm pass missed the memo {memo.misses} times")
            fresh = Path(tmp) / "fill.pickle"
            gc.collect()
            t = time.perf_counter()
            for _ in range(repeat):
                fresh.unlink(missing_ok=True)
                with AnalysisMemo(fresh, conv) as memo:  # first run with the memo: analyse, remember, write
                    for r in unique:
                        memo.analyze(r, known_prs=known)
            fill.append(time.perf_counter() - t)
    n = len(decoded)
    b = min(base) / n * 1e3
    out = {
        "prs": len(unique),
        "json_kib_per_pr": round(sum(len(s) for s in lines) / n / 1024, 2),
        "baseline_ms_per_pr": round(b, 4),
        "goal": GOAL,
        "verdicts": dict(verdicts),
    }
    times = f" (each timed {repeat} times)" if repeat > 1 else ""
    print(
        f"{label}: {len(unique)} PRs{times}, {out['json_kib_per_pr']:.1f} KiB JSON per PR, "
        f"verdicts {dict(sorted(verdicts.items()))}"
    )
    for kind, times in (("cold", cold), ("warm", warm)):
        o = min(times) / n * 1e3
        ratio = o / b
        met = ratio <= GOAL
        print(
            f"  {kind}: ours {o:.3f} ms/PR vs baseline json.loads {b:.3f} ms/PR -> ratio {ratio:.1f} "
            f"(goal <= {GOAL:g}: {'met' if met else 'NOT met'})"
        )
        out[kind] = {"ours_ms_per_pr": round(o, 4), "ratio": round(ratio, 2), "met": met}
    o = min(fill) / n * 1e3
    print(
        f"  fill (first run with the memo): ours {o:.3f} ms/PR -> ratio {o / b:.1f}, "
        f"memo overhead {o - out['cold']['ours_ms_per_pr']:+.3f} ms/PR over cold"
    )
    out["fill"] = {"ours_ms_per_pr": round(o, 4), "ratio": round(o / b, 2)}
    out["stages_us_per_pr"] = _stages(unique, conv, known, b * 1e3)
    return out


# The stages `heuristics.analyze` calls, in the order it calls them (names in workbench.analysis.pipeline).
STAGES = (
    "parse_files",
    "read_description",
    "Concat",
    "scan_themes",
    "scan_symbols",
    "scan_defaults",
    "scan_deps",
    "description_signals",
    "text_theme_evidence",
    "theme_signals",
    "read_discussion",
    "cross_refs",
    "decide",
    "effort_and_minutes",
    "named_paths",
    "rank_files",
    "pick_key_symbols",
    "open_items_of",
)


def _stages(records: list[PRRecord], conv, known, base_us: float) -> dict:
    """µs per PR in each stage (best of 3 passes), the rest of `analyze` as "assembly"."""
    import workbench.analysis.pipeline as H

    spent = dict.fromkeys(STAGES, 0.0)
    originals = {name: getattr(H, name) for name in STAGES}

    def timed(name, fn):
        def call(*a, **k):
            t = time.perf_counter()
            try:
                return fn(*a, **k)
            finally:
                spent[name] += time.perf_counter() - t

        return call

    best = None
    try:
        for name, fn in originals.items():
            setattr(H, name, timed(name, fn))
        for _ in range(3):
            spent.update(dict.fromkeys(STAGES, 0.0))
            t = time.perf_counter()
            for r in records:
                H.analyze(r, conventions=conv, known_prs=known)
            total = time.perf_counter() - t
            if best is None or total < best[0]:
                best = (total, dict(spent))
    finally:
        for name, fn in originals.items():
            setattr(H, name, fn)
    total, by_stage = best
    n = len(records)
    us = {k: round(v / n * 1e6, 1) for k, v in sorted(by_stage.items(), key=lambda kv: -kv[1]) if v}
    us["assembly"] = round((total - sum(by_stage.values())) / n * 1e6, 1)
    top = ", ".join(f"{k} {v:g} ({v / base_us:.1f}x)" for k, v in list(us.items())[:6])
    print(f"  where the time goes (us/PR, x json.loads): {top}; assembly {us['assembly']:g}")
    return us


def main() -> dict:
    if not CORPUS.exists():
        print(f"skipped: {CORPUS} is absent")
        return {"skipped": True}
    print(
        f"heuristics per PR vs json.loads of the same records (goal <= {GOAL:g}x); "
        "cold = analyze from scratch, warm = unchanged PR served by the analysis memo"
    )
    rows = _records_from_corpus()
    conv = load_conventions("verl-project/verl")
    known = {d["number"]: (d["title"], "merged") for d in rows}
    results = {}
    try:
        results.update(_from_sample())
    except Exception as e:  # the sample loader is another part's code: report, do not fail this benchmark
        print(f"bundled sample: skipped ({type(e).__name__}: {e})")
    results["corpus_no_patches"] = _measure(
        "verl corpus (no patches)", [_record(d) for d in rows], conv, known
    )
    synth = [_record(d) for d in _with_patches(rows)]
    results["synthetic_with_patches"] = _measure("3,000 PRs with patches", synth, conv, known)
    try:
        results["clone_backfill"] = _from_backfill()
    except Exception as e:  # the backfill is another part's code: report, do not fail this benchmark
        print(f"clone backfill: skipped ({type(e).__name__}: {e})")
    clone = os.environ.get("WORKBENCH_BENCH_CLONE")
    if clone:
        results["real_history"] = _from_real_clone(Path(clone).expanduser())
    else:
        print(
            "real history: skipped (set WORKBENCH_BENCH_CLONE to a local clone of a squash-merging project)"
        )
    results["sample_vs_cache_read"] = _vs_cache_read()
    return results


def _vs_cache_read() -> dict:
    """A second, looser baseline, reported beside the strict one: what reading each record out of the
    cache costs (`Store.pr`: SQL + decoding the stored raw JSON of the PR and its children)."""
    import tempfile

    from workbench.sources.sample import load_sample
    from workbench.store import Store

    repo = "example-org/minirl"
    with tempfile.TemporaryDirectory() as tmp, Store(Path(tmp) / "cache") as store:
        load_sample(store, include_verl=False)
        numbers = [int(n) for n in store.prs(repo)["number"]]
        conv, known = load_conventions(repo), store.known_prs(repo)
        records = [store.pr(repo, n) for n in numbers]
        read, cold = [], []
        for _ in range(15):
            t0 = time.perf_counter()
            for n in numbers:
                store.pr(repo, n)
            t1 = time.perf_counter()
            for r in records:
                analyze(r, conventions=conv, known_prs=known)
            t2 = time.perf_counter()
            read.append((t1 - t0) / len(numbers))
            cold.append((t2 - t1) / len(numbers))
    read_ms, cold_ms = statistics.median(read) * 1000, statistics.median(cold) * 1000
    print(
        f"sample example-org/minirl vs reading each record from the cache (Store.pr): cold ours "
        f"{cold_ms:.3f} ms/PR vs baseline {read_ms:.3f} ms/PR -> ratio {cold_ms / read_ms:.1f} (looser baseline; "
        f"the goal above is judged on json.loads)"
    )
    return {"cold_ms": round(cold_ms, 4), "read_ms": round(read_ms, 4), "ratio": round(cold_ms / read_ms, 2)}


def _from_sample() -> dict:
    """Every PR of the bundled sample (`workbench sample`): example-org/minirl with patches, and the verl
    facts records built from workbench/sample/verl_pr_facts.csv (stats only)."""
    from workbench.sources.sample import facts_records, sample_records

    minirl = sample_records()
    verl = facts_records()
    return {
        "sample_minirl": _measure(
            "sample example-org/minirl (with patches)",
            minirl,
            load_conventions("example-org/minirl"),
            {r.number: (r.title, r.state) for r in minirl},
            repeat=max(1, 2000 // max(1, len(minirl))),
        ),
        "sample_verl_facts": _measure(
            "sample verl facts records (stats only)",
            verl,
            load_conventions("verl-project/verl"),
            {r.number: (r.title, r.state) for r in verl},
        ),
    }


def _from_backfill() -> dict:
    import importlib.util
    import tempfile

    from workbench.sources.git import backfill
    from workbench.store import Store

    spec = importlib.util.spec_from_file_location("bench_store", Path(__file__).with_name("bench_store.py"))
    bench_store = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench_store)
    with tempfile.TemporaryDirectory() as tmp:
        clone = Path(tmp) / "history"
        bench_store.build_history(clone)
        with Store(Path(tmp) / "cache") as store:
            backfill(store, "bench/history", clone, progress=False)
            records = list(store.records("bench/history"))
            known = store.known_prs("bench/history")
    return _measure("3,000 PRs from a clone backfill", records, load_conventions("bench/history"), known)


def _from_real_clone(path: Path) -> dict:
    import tempfile

    from workbench.sources.git import backfill
    from workbench.store import Store

    repo = "bench/real-history"
    with tempfile.TemporaryDirectory() as tmp, Store(Path(tmp) / "cache") as store:
        result = backfill(store, repo, path, progress=False)
        records = list(store.records(repo))
        known = store.known_prs(repo)
    # verl's conventions when the clone is verl (its title tags and areas), the defaults otherwise
    name = "verl-project/verl" if "verl" in path.resolve().as_posix().lower() else repo
    return _measure(
        f"{result.prs_written} PRs of a real history ({path})", records, load_conventions(name), known
    )


if __name__ == "__main__":
    main()
