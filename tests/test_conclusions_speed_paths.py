"""The fast paths in workbench/conclusions.py give what the plain formulas give.

Each reference below is the straightforward version the fast code replaced (Counter + most_common, a
sort with a lambda for every file list, min() for every bonus). The cases aim at the edges of the
shortcuts: ties (stable order), one and two files, zero bonuses (skipped additions), common symbol names
present or not, capped bonuses, effort already at 5.
"""

from __future__ import annotations

import itertools
import math
import random
from collections import Counter
from dataclasses import astuple

from workbench.analysis.conclusions import (
    ROLE_RANK,
    VERDICT_RULES,
    Facts,
    decide,
    effort_and_minutes,
    named_paths,
    pick_key_symbols,
    rank_files,
)
from workbench.analysis.conventions import default_conventions
from workbench.analysis.diff import parse_file
from workbench.analysis.model import Description, KeyFile, Signal
from workbench.analysis.signals import CodeFacts, Hit
from workbench.records import PRRecord

CONV = default_conventions()


# ---- references: the plain formulas -----------------------------------------------------------------


def ref_rank_files(files, facts, named, conv):
    scored = []
    for fd in files:
        risk = facts.risk_per_file.get(fd.filename, 0)
        syms = facts.file_symbols.get(fd.filename, [])
        score = (
            ROLE_RANK.get(fd.role, 0.5) * math.log2(2 + fd.changes)
            + min(risk, 5)
            + (1.5 if fd.filename in named else 0)
            + 0.3 * min(len(syms), 3)
        )
        scored.append((score, fd, syms))
    scored.sort(key=lambda x: -x[0])
    out = []
    for score, fd, syms in scored[: int(conv.threshold("max_key_files", 6))]:
        reason = [f"{fd.role}, +{fd.additions}/-{fd.deletions}"]
        if fd.status in ("added", "removed", "renamed"):
            reason.append(fd.status)
        themes = [
            n.split(".", 1)[1] for n, hits in facts.theme_hits.items() if any(h.file is fd for h in hits)
        ]
        if themes:
            reason.append("risk: " + ", ".join(themes))
        if fd.filename in named:
            reason.append("named in the description or review")
        if syms:
            reason.append("touches " + ", ".join(syms[:3]))
        if fd.flags and set(fd.flags) - {"empty"}:
            reason.append("flags: " + ", ".join(fd.flags))
        out.append(
            KeyFile(
                fd.filename, fd.role, "; ".join(reason), round(score, 2), fd.additions, fd.deletions, syms[:8]
            )
        )
    return out


def ref_pick_key_symbols(facts, desc, patch_text, conv):
    import re

    ident = re.compile(r"[A-Za-z_][\w.]*(?:\(\))?\Z")
    if not facts.symbols and not desc.code_spans:
        return []
    scores = Counter(facts.symbols)
    for span in desc.code_spans:
        name = span.rstrip("()")
        if ident.match(span) and ("_" in name or "." in name or any(c.isupper() for c in name[1:])):
            short = name.rsplit(".", 1)[-1]
            if short in scores:
                scores[short] += 2.0
            elif not patch_text or short in patch_text:
                scores[short] += 1.0 if patch_text else 0.5
    common = {"__init__", "main", "forward", "setUp", "tearDown", "test"}
    ranked = [n for n, _ in scores.most_common() if n not in common]
    return ranked[: int(conv.threshold("max_key_symbols", 8))]


def ref_risk_themes(signals):
    return sum(
        1 for s in signals if s.name.startswith("risk.") and s.name != "risk.markers" and s.weight >= 1
    )


def ref_decide(f, conv):
    rule = next(r for r in VERDICT_RULES if r.when(f, conv))
    verdict = rule.verdict(f, conv)
    pushing = [s for s in f.signals if (s.weight > 0) == (verdict == "deep") and s.weight != 0]
    pushing.sort(key=lambda s: -abs(s.weight))
    deciding = ([rule.label] if rule.name != "strong signals" else []) + [s.label for s in pushing]
    return verdict, deciding[:3]


# ---- helpers -------------------------------------------------------------------------------------------

NAMES = ["pkg/core/engine.py", "tests/test_engine.py", "docs/guide.md", "uv.lock", ".github/workflows/ci.yml"]


def make_files(rng: random.Random, n: int):
    files = []
    for i in range(n):
        base = NAMES[rng.randrange(len(NAMES))]
        name = base.replace(".", f"_{i}.", 1) if rng.random() < 0.8 else base  # some share a name
        adds, dels = rng.choice([(0, 0), (1, 0), (3, 1), (10, 10), (40, 2), (400, 100)])
        status = rng.choice(["modified", "modified", "added", "removed", "renamed"])
        d = {"filename": name, "status": status, "additions": adds, "deletions": dels}
        if rng.random() < 0.7 and (adds or dels):
            d["patch"] = "@@ -1,1 +1,2 @@\n x\n+y"
        fd = parse_file(d)
        if rng.random() < 0.2:  # flag lists the parser may not make: "empty" twice, "empty" with another
            fd.flags += rng.choice([["empty"], ["crlf"], ["empty", "large"]])
        files.append(fd)
    return files


def make_facts(rng: random.Random, files):
    facts = CodeFacts()
    for fd in files:
        if rng.random() < 0.4:
            facts.risk_per_file[fd.filename] = rng.choice([1, 2, 5, 6, 9])
        if rng.random() < 0.5:
            facts.file_symbols[fd.filename] = [f"f{j}" for j in range(rng.choice([0, 1, 3, 5, 9]))]
    for theme in ("risk.concurrency", "risk.memory", "risk.markers"):
        if files and rng.random() < 0.5:
            # with repeats: one file, many hits of a theme
            hit_files = [rng.choice(files) for _ in range(rng.randrange(1, 5))]
            facts.theme_hits[theme] = [Hit(fd, 0, "x") for fd in hit_files]
    return facts


def key_files(kfs):
    return [(*astuple(k), repr(k.score)) for k in kfs]


# ---- tests ---------------------------------------------------------------------------------------------


def test_rank_files_matches_the_plain_formula():
    rng = random.Random(7)
    for n in itertools.chain(range(0, 9), [12, 30]):
        for _ in range(60):
            files = make_files(rng, n)
            facts = make_facts(rng, files)
            named = {fd.filename for fd in files if rng.random() < 0.3}
            assert key_files(rank_files(files, facts, named, CONV)) == key_files(
                ref_rank_files(files, facts, named, CONV)
            )


def test_rank_files_ties_keep_file_order_and_two_files_swap_only_when_the_second_scores_higher():
    same = [parse_file({"filename": f"pkg/a/m{i}.py", "additions": 5, "deletions": 1}) for i in range(3)]

    def order(files, named=frozenset()):
        return [k.filename for k in rank_files(files, CodeFacts(), set(named), CONV)]

    for files in (same[:2], same):
        assert order(files) == [f.filename for f in files]
    small = parse_file({"filename": "pkg/a/small.py", "additions": 1})
    big = parse_file({"filename": "pkg/a/big.py", "additions": 300})
    assert order([small, big]) == order([big, small]) == ["pkg/a/big.py", "pkg/a/small.py"]
    # the bonuses can reorder two files: a named small file beats a larger one
    ranked = rank_files([big, small], CodeFacts(), {"pkg/a/small.py"}, CONV)
    assert key_files(ranked) == key_files(ref_rank_files([big, small], CodeFacts(), {"pkg/a/small.py"}, CONV))


def test_pick_key_symbols_matches_most_common():
    rng = random.Random(11)
    pool = ["load_model", "Trainer", "forward", "main", "step", "x.y.update_weights", "helper_fn", "Cfg()"]
    for _ in range(400):
        names = rng.sample(pool, rng.randrange(0, 7))
        symbols = Counter({n: rng.choice([1.0, 1.0, 2.0, 3.5]) for n in names})
        extra = ["update_weights", "not an ident", "lower", "xΩmega", "xǅ", "ñame", "aB"]
        spans = rng.sample(pool + extra, rng.randrange(0, 5))
        desc = Description(code_spans=spans if spans or rng.random() < 0.5 else [])
        patch_text = rng.choice(["", "def update_weights(): load_model Trainer lower xΩmega xǅ ñame aB"])
        before = Counter(symbols)
        facts = CodeFacts(symbols=symbols)
        want = ref_pick_key_symbols(facts, desc, patch_text, CONV)
        assert pick_key_symbols(facts, desc, patch_text, CONV) == want
        # the facts are left as they were
        assert facts.symbols == before and list(facts.symbols) == list(before)


def _facts(signals, *, scope=("code",), churn=40, score=None, files=("x",)):
    return Facts(
        list(files),
        {},
        frozenset(scope),
        churn,
        float(churn),
        sum(s.weight for s in signals) if score is None else score,
        signals,
        None,
        False,
        True,
        None,
    )


def test_deciding_labels_strongest_first_ties_in_signal_order():
    def sig(name, w):
        return Signal(name, f"{name} {w}", w)

    cases = [
        [sig("a", 1.0), sig("b", 2.0), sig("c", 2.0), sig("d", 1.0)],  # deep, ties
        [sig("a", -0.5), sig("b", -1.0), sig("c", -1.0), sig("d", 0.2)],  # skim/skip, ties
        [sig("a", 2.0), sig("b", -2.0), sig("c", 0.0), sig("d", 2.0), sig("e", -2.0)],
        [sig("a", -1.0)],
        [],
    ]
    for signals in cases:
        for churn, score in [(5, None), (40, None), (40, 0.0), (5, -3.0), (40, 9.0)]:
            f = _facts(signals, churn=churn, score=score)
            verdict, _aud, _key, deciding = decide(f, CONV)
            assert (verdict, deciding) == ref_decide(_facts(signals, churn=churn, score=score), CONV)


def test_risk_themes_counted_once_and_effort_stays_at_most_5():
    signals = [Signal("risk.memory", "m", 1.0), Signal("risk.concurrency", "c", 1.5)]
    signals += [
        Signal("risk.markers", "k", 2),
        Signal("risk.numerics", "n", 0.5),
        Signal("size.large", "s", 1.0),
    ]
    f = _facts(signals, churn=5000)
    assert f.risk_themes == ref_risk_themes(signals) == 2
    assert f.risk_themes == 2  # from the first count
    assert effort_and_minutes(f, "deep", CONV)[0] == 5
    small = _facts(signals, churn=5)
    assert effort_and_minutes(small, "skim", CONV)[0] == 2  # 1, plus one for two risk themes


def test_named_paths_short_text_and_short_names():
    names = ["pkg/abc", "pkg/abcd.py", "run", "pkg/io.py", "lib/abcd"]
    files = [{"filename": n} for n in names] + ["not a dict"]
    rec = PRRecord(repo="o/r", number=1, pr={}, files=files, review_comments=[{"path": "pkg/z.py"}, {}])
    named = {"pkg/abcd.py", "lib/abcd", "pkg/io.py", "pkg/z.py"}
    assert named_paths(Description(text="see abcd.py and io.py"), rec) == named
    assert named_paths(Description(text="abcd"), rec) == {
        "lib/abcd",
        "pkg/z.py",
    }  # the shortest text that can name
    assert named_paths(Description(text="abc"), rec) == {"pkg/z.py"}  # shorter than any name that counts
    assert named_paths(Description(text="abc run"), rec) == {"pkg/z.py"}  # 3-character names never count
    assert named_paths(Description(), PRRecord(repo="o/r", number=1, pr={}, files=files)) == set()
