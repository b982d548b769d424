"""How far the analysis is from a person's judgement: labels in, agreement and misses out.

Labels are either an expert's CSV (the columns of ../shared/labels/README.md: pr, verdict, audience,
key_files, risks, reverts_pr, lines_changed, ...) or a repository's final briefs (their verdict and
audience are the team's judgement; they name no key files or risks, so those figures are left out).

    labels = parse_labels_csv(text)                 # or labels_from_briefs(final briefs)
    ev = evaluate(labels, {n: analyze(record) ...})  # pure: no I/O
    ev.verdict_agreement, ev.risk_precision, ev.misses ...

The command layer (`workbench eval`) reads the files and the cache, runs the analysis and prints.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass, field

from .analysis.model import RISK_KINDS, Analysis
from .config import WorkbenchError

# Size buckets by changed lines (additions + deletions), as the expert labels were stratified.
SIZE_BUCKETS = (("small", 0, 49), ("medium", 50, 400), ("large", 401, None))


def size_bucket(lines: int | None) -> str:
    if lines is None:
        return "unknown"
    for name, lo, hi in SIZE_BUCKETS:
        if lines >= lo and (hi is None or lines <= hi):
            return name
    return "unknown"


@dataclass
class Label:
    """One PR as a person judged it. Empty lists / None: the label does not say."""

    number: int
    verdict: str
    audience: list[str] = field(default_factory=list)
    key_files: list[str] = field(default_factory=list)
    key_symbols: list[str] = field(default_factory=list)
    risks: list[str] | None = None  # None: not labelled; []: labelled "none"
    reverts: int | None = None
    is_revert: bool = False
    lines: int | None = None


def _split(v: str | None) -> list[str]:
    return [x.strip() for x in (v or "").split(";") if x.strip()]


_REQUIRED = ("pr", "verdict")


def parse_labels_csv(text: str, source: str = "labels") -> list[Label]:
    """The expert-label CSV's rows as Labels; a clear error for a file that is not one."""
    reader = csv.DictReader(io.StringIO(text))
    missing = [c for c in _REQUIRED if c not in (reader.fieldnames or [])]
    if missing:
        raise WorkbenchError(
            f"{source}: not a labels CSV (missing column(s) {', '.join(missing)}); "
            "it needs at least 'pr' and 'verdict' (see ../shared/labels/README.md for the columns)"
        )
    out = []
    for i, row in enumerate(reader, start=2):
        try:
            number = int(row["pr"])
        except (TypeError, ValueError):
            raise WorkbenchError(f"{source}, line {i}: 'pr' must be a PR number, not {row['pr']!r}") from None
        verdict = (row.get("verdict") or "").strip()
        if verdict not in ("deep", "skim", "skip"):
            raise WorkbenchError(f"{source}, line {i}: verdict must be deep, skim or skip, not {verdict!r}")
        risks = None
        if "risks" in row:
            risks = [r for r in _split(row["risks"]) if r != "none"]
            unknown = [r for r in risks if r not in RISK_KINDS]
            if unknown:
                raise WorkbenchError(
                    f"{source}, line {i}: unknown risk kind(s) {', '.join(unknown)}; "
                    f"use {', '.join(RISK_KINDS)} or none"
                )
        reverts = (row.get("reverts_pr") or "").strip()
        lines = (row.get("lines_changed") or "").strip()
        out.append(
            Label(
                number=number,
                verdict=verdict,
                audience=_split(row.get("audience")),
                key_files=_split(row.get("key_files")),
                key_symbols=_split(row.get("key_symbols")),
                risks=risks,
                reverts=int(reverts) if reverts.isdigit() else None,
                is_revert=(row.get("is_revert") or "").strip().lower() in ("y", "yes", "true", "1")
                or reverts.isdigit(),
                lines=int(lines) if lines.isdigit() else None,
            )
        )
    return out


def labels_from_briefs(briefs: list[tuple[int, str, str | None]]) -> list[Label]:
    """(number, verdict, audience text) of final briefs -> Labels (verdict and audience only)."""
    out = []
    for number, verdict, audience in briefs:
        if verdict not in ("deep", "skim", "skip"):
            continue
        names = [a.strip() for a in (audience or "").replace("、", ",").split(",") if a.strip()]
        out.append(Label(number=number, verdict=verdict, audience=names))
    return out


@dataclass
class Ratio:
    hit: int = 0
    total: int = 0

    @property
    def value(self) -> float | None:
        return self.hit / self.total if self.total else None

    def add(self, ok: bool) -> None:
        self.total += 1
        self.hit += bool(ok)

    def __str__(self) -> str:
        v = self.value
        return f"{self.hit}/{self.total} = {v:.0%}" if v is not None else "n/a"


@dataclass
class KindScore:
    tp: int = 0
    fp: int = 0
    fn: int = 0

    @property
    def precision(self) -> float | None:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else None

    @property
    def recall(self) -> float | None:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else None


@dataclass
class Miss:
    number: int
    what: str  # verdict | audience | key_file | risk | revert
    text: str  # one line: ours vs theirs


@dataclass
class Evaluation:
    labelled: int = 0
    analysed: int = 0  # labelled PRs found in the cache
    not_in_cache: list[int] = field(default_factory=list)
    verdict: Ratio = field(default_factory=Ratio)
    verdict_by_size: dict[str, Ratio] = field(default_factory=dict)
    confusion: dict[tuple[str, str], int] = field(default_factory=dict)  # (ours, theirs) -> count
    audience_named: Ratio = field(default_factory=Ratio)
    audience_match: Ratio = field(default_factory=Ratio)  # our first audience is one of theirs
    audience_overlap: Ratio = field(default_factory=Ratio)  # any of ours is one of theirs
    key_file_top3: Ratio = field(default_factory=Ratio)
    key_symbols_found: Ratio = field(default_factory=Ratio)  # each of their symbols among ours
    key_symbols_any: Ratio = field(default_factory=Ratio)  # PRs where we name one of theirs at least
    risks: dict[str, KindScore] = field(default_factory=dict)
    reverts_linked: Ratio = field(default_factory=Ratio)
    misses: list[Miss] = field(default_factory=list)

    @property
    def risk_total(self) -> KindScore:
        t = KindScore()
        for k in self.risks.values():
            t.tp, t.fp, t.fn = t.tp + k.tp, t.fp + k.fp, t.fn + k.fn
        return t


_SYMBOL = re.compile(r"[A-Za-z_][\w\-]*")  # `timeout-minutes`, a CI key, is one too


def _symbol(name: str) -> str | None:
    """A symbol as both sides can name it: the last part of a dotted name (`actor.router_replay.mode`
    and `mode` are one key), a special method by its class (`RayWorkerGroup.__init__` is read at
    `RayWorkerGroup`); a label that is no identifier (`mode=sync`, a cron line) names none."""
    parts = name.strip().rsplit(".", 2)
    last = parts[-1]
    if len(parts) > 1 and last.startswith("__") and last.endswith("__"):
        last = parts[-2]
    return last if _SYMBOL.fullmatch(last) else None


def _audience_names(a: Analysis) -> list[str]:
    return list(a.audiences) or ([a.audience] if a.audience else [])


def evaluate(labels: list[Label], analyses: dict[int, Analysis]) -> Evaluation:
    """Compare each label with the analysis of the same PR. Pure."""
    ev = Evaluation(labelled=len(labels))
    for lab in labels:
        a = analyses.get(lab.number)
        if a is None:
            ev.not_in_cache.append(lab.number)
            continue
        ev.analysed += 1
        n = lab.number
        ok = a.verdict == lab.verdict
        ev.verdict.add(ok)
        ev.verdict_by_size.setdefault(size_bucket(lab.lines), Ratio()).add(ok)
        ev.confusion[(a.verdict, lab.verdict)] = ev.confusion.get((a.verdict, lab.verdict), 0) + 1
        if not ok:
            why = "; ".join(a.deciding[:3])
            ev.misses.append(Miss(n, "verdict", f"ours {a.verdict}, theirs {lab.verdict} ({why})"))

        ours = _audience_names(a)
        ev.audience_named.add(bool(ours))
        if lab.audience:
            theirs = set(lab.audience)
            first_ok = bool(ours) and ours[0] in theirs
            ev.audience_match.add(first_ok)
            ev.audience_overlap.add(bool(theirs.intersection(ours)))
            if not first_ok:
                ev.misses.append(
                    Miss(n, "audience", f"ours {', '.join(ours) or '-'}, theirs {', '.join(lab.audience)}")
                )

        if lab.key_files:
            top3 = [k.filename for k in a.key_files[:3]]
            hit = lab.key_files[0] in top3
            ev.key_file_top3.add(hit)
            if not hit:
                ev.misses.append(
                    Miss(
                        n, "key_file", f"theirs first {lab.key_files[0]}; our top 3 {', '.join(top3) or '-'}"
                    )
                )

        theirs_sym = [x for x in map(_symbol, lab.key_symbols) if x]
        if theirs_sym:
            ours_sym = set(map(_symbol, a.key_symbols))
            for x in theirs_sym:
                ev.key_symbols_found.add(x in ours_sym)
            ev.key_symbols_any.add(not ours_sym.isdisjoint(theirs_sym))

        if lab.risks is not None:
            ours_k = {r.kind for r in a.risks}
            theirs_k = set(lab.risks)
            for kind in sorted(ours_k | theirs_k):  # misses in one order, whatever the hash seed
                score = ev.risks.setdefault(kind, KindScore())
                if kind in ours_k and kind in theirs_k:
                    score.tp += 1
                elif kind in ours_k:
                    score.fp += 1
                    r = next(r for r in a.risks if r.kind == kind)
                    e = r.evidence[0] if r.evidence else None
                    where = (
                        f" at {e.file}:{e.line}: {e.text[:80]}"
                        if e and e.file
                        else (f": {e.text[:80]}" if e else "")
                    )
                    ev.misses.append(Miss(n, "risk", f"false {kind}{where}"))
                else:
                    score.fn += 1
                    ev.misses.append(Miss(n, "risk", f"missed {kind}"))

        if lab.reverts is not None:
            linked = a.reverts == lab.reverts
            ev.reverts_linked.add(linked)
            if not linked:
                ev.misses.append(Miss(n, "revert", f"reverts #{lab.reverts}; ours {a.reverts}"))
    ev.risks = dict(sorted(ev.risks.items()))  # a stable order for reports
    return ev


def _pct(v: float | None) -> str:
    return "n/a" if v is None else f"{v:.0%}"


def format_evaluation(ev: Evaluation) -> list[str]:
    """The report lines `workbench eval` prints (plain text, no I/O here)."""
    lines = [f"labelled PRs: {ev.labelled}, analysed: {ev.analysed}"]
    if ev.not_in_cache:
        lines.append(
            f"not in the cache ({len(ev.not_in_cache)}): "
            + ", ".join(f"#{n}" for n in ev.not_in_cache[:20])
            + " (sync them first)"
        )
    lines.append(f"verdict agreement: {ev.verdict}")
    for name, _lo, _hi in (*SIZE_BUCKETS, ("unknown", 0, 0)):
        if name in ev.verdict_by_size:
            lines.append(f"  {name}: {ev.verdict_by_size[name]}")
    conf = ", ".join(f"{o}->{t}: {c}" for (o, t), c in sorted(ev.confusion.items()) if o != t)
    if conf:
        lines.append(f"  disagreements (ours->theirs): {conf}")
    lines.append(f"audience named: {ev.audience_named}")
    lines.append(f"audience matching (our first is one of theirs): {ev.audience_match}")
    lines.append(f"audience overlapping (any of ours is one of theirs): {ev.audience_overlap}")
    lines.append(f"their first key file in our top 3: {ev.key_file_top3}")
    if ev.key_symbols_found.total:
        lines.append(
            f"their key symbols among ours: {ev.key_symbols_found} (PRs with one at least: {ev.key_symbols_any})"
        )
    if ev.risks:
        t = ev.risk_total
        lines.append(
            f"risks: precision {_pct(t.precision)} ({t.tp}/{t.tp + t.fp}), recall {_pct(t.recall)} ({t.tp}/{t.tp + t.fn})"
        )
        for kind, k in ev.risks.items():
            lines.append(
                f"  {kind:<22} precision {_pct(k.precision):>4}  recall {_pct(k.recall):>4}  "
                f"(tp {k.tp}, fp {k.fp}, fn {k.fn})"
            )
    lines.append(f"reverts linked: {ev.reverts_linked}")
    if ev.misses:
        lines.append(f"misses ({len(ev.misses)}):")
        lines += [f"  #{m.number} {m.what}: {m.text}" for m in ev.misses]
    return lines
