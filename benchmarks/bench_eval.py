"""Judgement and analysis speed on a real verl cache (WORKBENCH_BENCH_VERL_CACHE), in one run:

eval     `workbench eval` of ../shared/labels/verl-expert-labels.csv against the cache: verdict
         agreement, audience, key files, risk precision/recall, reverts (goals of issue #10);
second   the same against benchmarks/labels/verl-second-review-144.csv (PRs the rules were not
         written against) and the fresh sets (random, drawn after them), and how far a
         second reviewer agrees with the expert on 24 of the expert's PRs (benchmarks/labels/README.md);
history  the verdict distribution over every PR of the cache (deep should be a minority).

Analysis speed is bench_heuristics.py's: interleaved rounds, CPU time, each stage on its own. A single
timed pass here once printed "met" when the cache read happened to be slow.

  python -m workbench.cli sync verl-project/verl --from-git <verl mirror> --cache /tmp/verl-cache
  WORKBENCH_BENCH_VERL_CACHE=/tmp/verl-cache python benchmarks/run.py eval
"""

from __future__ import annotations

import os
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from workbench.analysis.conventions import load_conventions  # noqa: E402
from workbench.analysis.pipeline import analyze  # noqa: E402
from workbench.cli.evaluate import run_evaluation  # noqa: E402
from workbench.evaluation import format_evaluation, parse_labels_csv  # noqa: E402
from workbench.store import Store  # noqa: E402

LABELS = ROOT.parent / "shared" / "labels" / "verl-expert-labels.csv"
SECOND_REVIEW = ROOT / "benchmarks" / "labels" / "verl-second-review-144.csv"
SECOND_OF_EXPERT = ROOT / "benchmarks" / "labels" / "verl-second-review-of-expert-24.csv"
# Random sets drawn after the rules of their day, each with what it said before the rules drawn from it.
FRESH_SETS = [
    ("fresh", ROOT / "benchmarks" / "labels" / "verl-second-review-fresh-36.csv", "17/36"),
    ("fresh2", ROOT / "benchmarks" / "labels" / "verl-second-review-fresh2-36.csv", "23/36"),
    ("fresh3", ROOT / "benchmarks" / "labels" / "verl-second-review-fresh3-36.csv", "29/36"),
    ("fresh4", ROOT / "benchmarks" / "labels" / "verl-second-review-fresh4-36.csv", "27/36"),
    ("fresh5", ROOT / "benchmarks" / "labels" / "verl-second-review-fresh5-36.csv", "30/36"),
    ("fresh6", ROOT / "benchmarks" / "labels" / "verl-second-review-fresh6-36.csv", "24/36"),
    ("fresh7", ROOT / "benchmarks" / "labels" / "verl-second-review-fresh7-36.csv", "24/36"),
    ("fresh8", ROOT / "benchmarks" / "labels" / "verl-second-review-fresh8-36.csv", "22/36"),
]
REPO = "verl-project/verl"


def main() -> dict:
    cache = os.environ.get("WORKBENCH_BENCH_VERL_CACHE")
    if not cache or not Path(cache).is_dir():
        print("skipped: set WORKBENCH_BENCH_VERL_CACHE to a verl cache (see this file's note)")
        return {"skipped": "no WORKBENCH_BENCH_VERL_CACHE"}
    store = Store(cache, create=False)
    conv = load_conventions(REPO)
    out: dict = {}
    if LABELS.is_file():
        ev = run_evaluation(parse_labels_csv(LABELS.read_text()), store, REPO, conv)
        for line in format_evaluation(ev):
            if not line.startswith("  #") and not line.startswith("misses"):
                print("  " + line)
        t = ev.risk_total
        out["eval"] = {
            "verdict": ev.verdict.value,
            "audience_named": ev.audience_named.value,
            "audience_match": ev.audience_match.value,
            "key_file_top3": ev.key_file_top3.value,
            "risk_precision": t.precision,
            "risk_recall": t.recall,
            "reverts_linked": ev.reverts_linked.value,
        }
    else:
        print(f"  eval skipped: {LABELS} is absent")
    out["second"] = _second_review(store, conv)
    numbers = [int(n) for n in store.prs(REPO)["number"]]
    known = store.known_prs(REPO)
    records = [store.pr(REPO, n) for n in numbers]
    verdicts = Counter(analyze(r, conventions=conv, known_prs=known).verdict for r in records)
    store.close()
    n = len(numbers)
    print(f"  history: {n} PRs: " + ", ".join(f"{v} {c} ({c / n:.0%})" for v, c in verdicts.most_common()))
    out["history"] = dict(verdicts)
    return out


def _second_review(store: Store, conv) -> dict:
    """The heuristics against the second reviewers' 144 PRs, and the second reviewers against the
    expert on 24 of the expert's PRs: how far two careful readers agree."""
    ev = run_evaluation(parse_labels_csv(SECOND_REVIEW.read_text()), store, REPO, conv)
    t = ev.risk_total
    print(
        f"  second review, {ev.analysed} PRs the rules were not written against: verdict {ev.verdict}, audience matching {ev.audience_match}, key file in top 3 "
        f"{ev.key_file_top3}, their key symbols among ours {ev.key_symbols_found}, risks precision "
        f"{_pct(t.precision)} recall {_pct(t.recall)}"
    )
    out = {"verdict": ev.verdict.value, "risk_precision": t.precision, "risk_recall": t.recall}
    for name, path, before in FRESH_SETS:
        fresh = run_evaluation(parse_labels_csv(path.read_text()), store, REPO, conv)
        print(
            f"  {name} set ({path.name}), {fresh.analysed} random PRs drawn after the rules of their day "
            f"({before} before the rules drawn from it): verdict {fresh.verdict}, audience matching "
            f"{fresh.audience_match}, key file in top 3 {fresh.key_file_top3}, their key symbols among "
            f"ours {fresh.key_symbols_found}, risks precision {_pct(fresh.risk_total.precision)} recall "
            f"{_pct(fresh.risk_total.recall)}"
        )
        out[f"{name}_verdict"] = fresh.verdict.value
    if LABELS.is_file():
        expert = {label.number: label for label in parse_labels_csv(LABELS.read_text())}
        second = parse_labels_csv(SECOND_OF_EXPERT.read_text())
        same = sum(label.verdict == expert[label.number].verdict for label in second)
        tp = fp = fn = 0
        for label in second:
            theirs, ours = set(expert[label.number].risks or []), set(label.risks or [])
            tp, fp, fn = tp + len(ours & theirs), fp + len(ours - theirs), fn + len(theirs - ours)
        print(
            f"  a second reviewer vs the expert, {len(second)} of the expert's PRs: verdict {same}/"
            f"{len(second)} = {same / len(second):.0%}, risks precision {_pct(tp / (tp + fp))} recall "
            f"{_pct(tp / (tp + fn))} (the expert taken as right)"
        )
        out["second_vs_expert_verdict"] = same / len(second)
    return out


def _pct(v: float | None) -> str:
    return "n/a" if v is None else f"{v:.0%}"


if __name__ == "__main__":
    main()
