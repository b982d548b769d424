"""`workbench eval`: the command around workbench/evaluation.py (reads the labels and the cache, runs the
analysis, prints). The measuring itself is `evaluation.evaluate`, pure."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..config import WorkbenchError
from .common import add_cache

if TYPE_CHECKING:  # the analysis loads with the command, not with `workbench --help`
    from ..evaluation import Evaluation, Label


def register(sub) -> None:
    p = sub.add_parser(
        "eval",
        help="measure the analysis against labels (an expert's CSV, or a repository's final briefs)",
        description="Analyse labelled PRs and print verdict agreement (overall and per size), audience "
        "named and matching, the labels' first key file in our top 3, risk precision and recall per kind, "
        "reverts linked, and the misses one line each.",
    )
    add_cache(p)
    p.add_argument("labels", nargs="?", metavar="LABELS.csv", help="labels CSV (columns: pr, verdict, ...)")
    p.add_argument(
        "--repo", metavar="OWNER/REPO", help="the labels' repository (default: the cache's only one)"
    )
    p.add_argument(
        "--from-final",
        metavar="OWNER/REPO",
        help="use the repository's final briefs as labels (their verdicts are the team's judgement)",
    )
    p.set_defaults(run=run_cli)


def _pick_repo(store: Any, repo: str | None) -> str:
    if repo:
        if "/" not in repo:
            raise WorkbenchError(f"{repo!r} is not OWNER/REPO: name the repository as on GitHub")
        if store.repo_pk(repo) is None:
            raise WorkbenchError(f"{repo} is not in the cache: run `workbench sync {repo}` first")
        return repo
    names = list(store.repos()["full_name"])
    if len(names) == 1:
        return names[0]
    if not names:
        raise WorkbenchError("the cache holds no repository: run `workbench sync OWNER/REPO` first")
    raise WorkbenchError(
        f"the cache holds {len(names)} repositories ({', '.join(names[:5])}): say which with --repo OWNER/REPO"
    )


def final_brief_labels(store: Any, repo: str, conventions: Any = None) -> list[Label]:
    """A repository's final briefs as labels: the team's verdict and audience (a brief names its
    audience as the conventions display it, "CI maintainers" or "CI 维护者": mapped back to the
    vocabulary's names)."""
    from ..analysis.conventions import load_conventions
    from ..drafting.offline import AUDIENCE_ZH
    from ..evaluation import labels_from_briefs

    conv = conventions or load_conventions(repo)
    english = {zh: en for en, zh in AUDIENCE_ZH.items()}

    def name_of(text: str) -> str:
        text = english.get(text.strip()) or re.sub(r"\s*维护者$", " maintainers", text.strip())
        return conv.audience_name(text)

    frame = store.briefs(repo)
    rows = []
    for number in frame.loc[frame["is_final"] == 1, "number"] if not frame.empty else []:
        final = [v for v in store.brief_versions(repo, int(number)) if v.is_final and v.brief]
        if final:
            b = final[-1].brief
            rows.append((int(number), b.get("verdict"), b.get("audience")))
    labels = labels_from_briefs(rows)
    for lab in labels:
        lab.audience = [name_of(a) for a in lab.audience]
    return labels


def run_evaluation(labels: list[Label], store: Any, repo: str, conventions: Any = None) -> Evaluation:
    """Analyse the labelled PRs that the cache holds and compare (no printing)."""
    from ..analysis.conventions import load_conventions
    from ..analysis.pipeline import analyze
    from ..evaluation import evaluate

    conv = conventions or load_conventions(repo)
    known = store.known_prs(repo)
    wanted = [lab.number for lab in labels if lab.number in known]
    analyses = {}
    for record in store.records(repo, wanted):
        analyses[record.number] = analyze(record, conventions=conv, known_prs=known)
        for lab in labels:  # a label without its size takes the PR's
            if lab.number == record.number and lab.lines is None:
                lab.lines = record.additions + record.deletions
    return evaluate(labels, analyses)


def run_cli(args: Any) -> int:
    """`workbench eval LABELS.csv [--repo OWNER/REPO]` or `workbench eval --from-final OWNER/REPO`."""
    from ..analysis.conventions import load_conventions
    from ..evaluation import format_evaluation, parse_labels_csv
    from ..store import Store

    if bool(args.labels) == bool(args.from_final):
        raise WorkbenchError("give either a labels CSV or --from-final OWNER/REPO (one of them)")
    store = Store(getattr(args, "cache", None), create=False)
    try:
        if args.from_final:
            repo = _pick_repo(store, args.from_final)
            conv = load_conventions(
                repo, getattr(args, "conventions", None), cache=getattr(args, "cache", None)
            )
            labels = final_brief_labels(store, repo, conv)
            if not labels:
                raise WorkbenchError(
                    f"{repo} has no final briefs yet: mark briefs final in the review app, or pass a labels CSV"
                )
        else:
            path = Path(args.labels).expanduser()
            try:
                text = path.read_text(encoding="utf-8")
            except OSError as e:
                raise WorkbenchError(f"cannot read labels file {path}: {e.strerror or e}") from e
            labels = parse_labels_csv(text, source=str(path))
            repo = _pick_repo(store, getattr(args, "repo", None))
        conv = load_conventions(repo, getattr(args, "conventions", None), cache=getattr(args, "cache", None))
        ev = run_evaluation(labels, store, repo, conv)
    finally:
        store.close()
    print(f"{repo}: " + "\n".join(format_evaluation(ev)))
    return 0
