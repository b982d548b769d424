"""Judgement on a repository that is not a Python ML project: file roles, key files, symbols, kinds.

Set the caches to measure (each made by `workbench sync OWNER/REPO --from-git CLONE --cache DIR`):

    WORKBENCH_BENCH_RUFF_CACHE=/tmp/ruff-cache WORKBENCH_BENCH_VERL_CACHE=/tmp/verl-cache \\
        python benchmarks/run.py languages

Each cache is analysed twice, with the default conventions alone and with the repository's shipped
conventions, and prints (goals from issue 14):
- "tests missing" among PRs that change tests (<= 2%);
- PRs with a snapshot file among their top-3 key files (<= 1%);
- language-noise key symbols: keywords, visibility modifiers, single letters, placeholders (<= 2%);
- PRs with a kind (>= 90%), with an area, and with an audience.

"Changes tests" and "noise" are judged here by rules of their own, independent of the analysis:
a path naming tests/specs/snapshots/fixtures, or an added test function or attribute in any language.
Skipped when neither variable is set.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

# A PR changes tests when a file's path says so or its patch adds a test in any language.
_TEST_PATH = re.compile(
    r"(^|/)(tests?|testing|testdata|__tests__|spec|fixtures|mdtest)(/|$)|(^|/)test_[^/]*$|_test\.\w+$|"
    r"\.(test|spec)\.\w+$|(^|/)tests?\.rs$|\.snap(\.new)?$|__snapshots__/|[A-Za-z](Test|Tests|IT)\.(java|kt)$",
    re.I,
)
_TEST_ADDED = re.compile(
    r"\n\+\s*(#\[(tokio::)?test\]|#\[cfg\(test\)\]|func Test\w+\(|@Test\b|def test_\w+\(|"
    r"(it|test|describe)\(['\"`])"
)
_SNAPSHOT = re.compile(r"\.snap(\.new)?$|(^|/)__snapshots__/|\.golden$", re.I)
# Language noise: keywords and modifiers of Python, Rust, Go, TypeScript/JavaScript, Java/Kotlin and
# C/C++, trait and type names every file implements, and placeholder names.
_NOISE = frozenset(
    """pub crate self super mod use impl fn let mut const static struct enum trait type where unsafe async
    await move ref dyn extern return match loop while for if else in as break continue true false none
    def class lambda pass yield import from with try except finally raise global nonlocal assert del
    func package var go defer chan select interface map range switch case default fallthrough goto
    function export new this typeof instanceof void null undefined of readonly declare namespace abstract
    public private protected internal open override final sealed data object companion val fun
    int long short char float double bool boolean string str byte
    virtual inline template typename explicit friend operator sizeof struct union typedef
    foo bar baz qux quux spam ham eggs f g h x y z a b c d e i j k n t v placeholder dummy example
    from into display debug default clone drop deref eq hash fmt new tests test main init""".split()
)


def _is_noise(symbol: str) -> bool:
    short = symbol.rsplit(".", 1)[-1].rstrip("()")
    return len(short) <= 1 or short.lower() in _NOISE


def _changes_tests(record) -> bool:
    for f in record.files:
        name = f.get("filename") or ""
        if _TEST_PATH.search(name):
            return True
        patch = f.get("patch") or ""
        if patch and _TEST_ADDED.search("\n" + patch):
            return True
    return False


def measure(cache: str, repo: str, conv, label: str, limit: int | None) -> dict:
    from workbench.analysis.pipeline import analyze
    from workbench.store import Store

    store = Store(cache, create=False)
    try:
        numbers = store.prs(repo)["number"].tolist()
        if limit:
            numbers = numbers[:limit]
        known = store.known_prs(repo)
        n = with_tests = missing = snap_top3 = kinds = areas = audiences = 0
        symbols = noise = 0
        noisy: dict[str, int] = {}
        t0 = time.perf_counter()
        for record in store.records(repo, numbers):
            a = analyze(record, conventions=conv, known_prs=known)
            n += 1
            if _changes_tests(record):
                with_tests += 1
                missing += a.signal("tests.missing") is not None
            snap_top3 += any(_SNAPSHOT.search(k.filename) for k in a.key_files[:3])
            kinds += a.kind is not None
            areas += bool(a.areas)
            audiences += a.audience is not None
            for s in a.key_symbols:
                symbols += 1
                if _is_noise(s):
                    noise += 1
                    noisy[s] = noisy.get(s, 0) + 1
        seconds = time.perf_counter() - t0
    finally:
        store.close()
    pct = lambda k, d: round(100.0 * k / d, 2) if d else 0.0  # noqa: E731
    out = {
        "prs": n,
        "tests_missing_pct_of_prs_changing_tests": pct(missing, with_tests),
        "prs_changing_tests": with_tests,
        "snapshot_in_top3_pct": pct(snap_top3, n),
        "noise_symbols_pct": pct(noise, symbols),
        "symbols": symbols,
        "kind_pct": pct(kinds, n),
        "area_pct": pct(areas, n),
        "audience_pct": pct(audiences, n),
        "seconds": round(seconds, 1),
    }
    top_noise = sorted(noisy.items(), key=lambda kv: -kv[1])[:8]
    print(
        f"{repo} [{label}] {n} PRs in {seconds:.0f}s: tests missing {out['tests_missing_pct_of_prs_changing_tests']}%"
        f" of {with_tests} PRs changing tests (goal <= 2%); snapshot in top-3 key files "
        f"{out['snapshot_in_top3_pct']}% (<= 1%); noise symbols {out['noise_symbols_pct']}% of {symbols} (<= 2%)"
        f"{' ' + str(top_noise) if top_noise else ''}; kind {out['kind_pct']}% (>= 90%); area "
        f"{out['area_pct']}%; audience {out['audience_pct']}%",
        flush=True,
    )
    return out


def main() -> dict:
    from workbench.analysis.conventions import load_conventions

    limit = int(os.environ.get("WORKBENCH_BENCH_LIMIT", "0")) or None
    targets = [
        ("WORKBENCH_BENCH_RUFF_CACHE", "astral-sh/ruff"),
        ("WORKBENCH_BENCH_VERL_CACHE", "verl-project/verl"),
    ]
    results: dict = {}
    for var, repo in targets:
        cache = os.environ.get(var)
        if not cache:
            print(
                f"{repo}: skipped (set {var} to a cache made with `workbench sync {repo} --from-git CLONE`)"
            )
            continue
        defaults = load_conventions(None)  # default.toml alone
        defaults.repo = repo
        results[f"{repo} default"] = measure(cache, repo, defaults, "default conventions", limit)
        shipped = load_conventions(repo)
        if len(shipped.sources) > 1:
            results[f"{repo} shipped"] = measure(cache, repo, shipped, "shipped conventions", limit)
    return results


if __name__ == "__main__":  # imports the `workbench` on PYTHONPATH (run.py puts this checkout first)
    main()
