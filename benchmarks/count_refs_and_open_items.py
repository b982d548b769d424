"""Counts of cross-references and open items over a cache, to judge them against a reading by eye.

Not a speed benchmark (run.py runs only bench_*.py): it prints how many PRs get cross-references, by
relation; how many get open items from the description and the discussion; how many PRs titled
"Revert ..." link what they revert; and, with --sample N, N PRs' open items and references to read.

    python benchmarks/count_refs_and_open_items.py --cache /tmp/verl-cache [--repo verl-project/verl] [--sample 20]
"""

from __future__ import annotations

import argparse
import random
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from workbench.analysis.conventions import load_conventions  # noqa: E402
from workbench.analysis.pipeline import analyze  # noqa: E402
from workbench.store import Store  # noqa: E402


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--cache", required=True)
    ap.add_argument("--repo", default="verl-project/verl")
    ap.add_argument("--sample", type=int, default=0, help="print this many PRs' open items and references")
    args = ap.parse_args(argv)
    with Store(args.cache, create=False) as store:
        known = store.known_prs(args.repo)
        conv = load_conventions(args.repo)
        analyses = [analyze(r, conventions=conv, known_prs=known) for r in store.records(args.repo)]
    relations = Counter(x.relation for a in analyses for x in a.cross_refs)
    with_refs = sum(1 for a in analyses if a.cross_refs)
    author = sum(1 for a in analyses if a.description.open_items)
    discussion = sum(
        1 for a in analyses if a.discussion.promises or a.discussion.deferred or a.discussion.unresolved
    )
    reverts = [a for a in analyses if (known.get(a.number, ("", ""))[0] or "").lower().startswith("revert")]
    linked = sum(1 for a in reverts if any(x.relation == "reverts" for x in a.cross_refs))
    print(
        f"{len(analyses)} PRs: {with_refs} with cross-references {dict(relations.most_common())}; "
        f"{author} with open items from the description, {discussion} from the discussion; "
        f"{linked} of {len(reverts)} PRs titled Revert link what they revert"
    )
    rng = random.Random(2026)
    pool = [a for a in analyses if a.description.open_items or a.cross_refs]
    for a in rng.sample(pool, min(args.sample, len(pool))):
        print(f"#{a.number} {known.get(a.number, ('', ''))[0][:80]}")
        for item in a.description.open_items[:3]:
            print(f"    open: {item[:160]}")
        for x in a.cross_refs[:4]:
            print(f"    {x.relation}: {x.name} {x.title or ''}"[:170])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
