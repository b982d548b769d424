"""Headless drafting: `workbench draft` / `workbench digest`, and `draft_many` for notebooks.

The one rule that matters: a re-run never overwrites a brief a person edited. A brief whose latest
version was saved by a person (source "human") or marked final is left alone, whatever the flags;
a machine draft is redrafted only with --force (or when --llm replaces an offline draft). Saves name
the version they replace (`base_version`), so an edit made meanwhile in a notebook wins.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import Any

from ..brief import check_lang, render_brief
from ..config import WorkbenchError, llm_settings
from ..store import StaleEditError, Store
from ..timespan import since_iso
from .context import DEFAULT_BUDGET, Example, build_context
from .offline import draft_offline


def _conventions(repo: str, store: Store):
    try:
        from ..analysis.conventions import load_conventions

        return load_conventions(repo, cache=store.path.parent)
    except WorkbenchError:
        raise
    except Exception:  # a repository without conventions drafts with the defaults
        return None


def _analyze(record, conv, known):
    from ..analysis.pipeline import analyze

    return analyze(record, conventions=conv, known_prs=known)


def final_examples(store: Store, repo: str, conv=None, *, limit: int = 20) -> list[Example]:
    """The team's final briefs as few-shot examples, with the areas of the PR each one describes."""
    try:
        df = store.briefs(repo)
    except WorkbenchError:
        return []
    out: list[Example] = []
    for n in sorted((int(x) for x in df[df["is_final"] == 1]["number"]), reverse=True):
        latest = store.latest_brief(repo, n)
        if latest is None or not latest.is_final:
            continue
        areas = latest.meta.get("areas")
        if areas is None:
            try:
                areas = _analyze(store.pr(repo, n), conv, None).areas
            except WorkbenchError:
                areas = []
        out.append(Example(number=n, text=latest.text, areas=list(areas), repo=repo))
        if len(out) >= limit:
            break
    return out


def _selection(store: Store, repo: str, numbers: Iterable[int] | None, since: str | None) -> list[int]:
    df = store.prs(repo, numbers=list(numbers) if numbers else None, since=since)
    found = [int(x) for x in df["number"]]
    if numbers:
        missing = sorted(set(int(n) for n in numbers) - set(found))
        if missing and not since:
            raise WorkbenchError(
                f"{repo}: PR(s) {', '.join('#' + str(n) for n in missing)} not in the cache: "
                f"run `workbench sync {repo} --number {' '.join(map(str, missing))}`"
            )
        order = {int(n): i for i, n in enumerate(numbers)}
        found.sort(key=lambda n: order.get(n, 0))
    return found


def draft_many(
    store: Store,
    repo: str,
    numbers: Iterable[int] | None = None,
    *,
    since: str | None = None,
    llm: bool = False,
    lang: str | None = None,
    budget: int | None = None,
    force: bool = False,
    progress: bool = True,
    settings=None,
    show_context: bool = False,
    drafter=None,
) -> list[dict[str, Any]]:
    """Draft briefs for a selection of cached PRs; one result dict per PR (number, action, version, error;
    with show_context: the rendered messages as "context", and their tokens, instead of a draft)."""
    from tqdm.auto import tqdm

    since = since_iso(since)
    nums = _selection(store, repo, numbers, since)
    conv = _conventions(repo, store)
    lang = check_lang(lang or getattr(conv, "lang", None) or "zh")
    budget = int(budget or DEFAULT_BUDGET)
    known = store.known_prs(repo)
    examples = final_examples(store, repo, conv) if (llm or show_context) else []
    if llm and drafter is None:
        from .llm import LLMDrafter

        settings = settings or llm_settings()
        if not settings.configured:
            raise WorkbenchError(f"--llm: {settings.why_not()}")
        drafter = LLMDrafter(settings, budget=budget, examples=examples)

    results: list[dict[str, Any]] = []
    bar = tqdm(nums, desc=f"draft {repo}", unit="PR", disable=not progress or show_context, file=sys.stderr)
    for n in bar:
        rec = store.pr(repo, n)
        analysis = _analyze(rec, conv, known)
        if show_context:
            ctx = build_context(rec, analysis, lang=lang, budget=budget, examples=examples)
            results.append(
                {"number": n, "action": "shown", "tokens": ctx.tokens, "left_out": ctx.left_out,
                 "context": ctx.render(), "error": None}
            )  # fmt: skip
            continue
        latest = store.latest_brief(repo, n)
        row: dict[str, Any] = {
            "number": n,
            "action": None,
            "version": latest.version if latest else None,
            "error": None,
        }
        results.append(row)
        if latest is not None and (latest.source == "human" or latest.is_final):
            row["action"] = "kept: edited by a person" if latest.source == "human" else "kept: final"
            continue
        if latest is not None and not force and not (llm and latest.source == "offline"):
            row["action"] = "kept: a draft exists (use --force to redraft)"
            continue
        meta: dict[str, Any] = {"areas": analysis.areas, "verdict": analysis.verdict}
        if llm:
            res = drafter.draft(rec, analysis, lang=lang)
            meta.update(res.meta)
            if res.brief is None:
                row["error"] = res.error
                if latest is not None:
                    row["action"] = "kept: the model failed, the existing draft stays"
                    continue
                brief = res.offline or draft_offline(rec, analysis, lang)
                meta["llm_error"] = res.error
            else:
                brief = res.brief
        else:
            brief = draft_offline(rec, analysis, lang)
        try:
            row["version"] = store.save_brief(
                repo,
                n,
                render_brief(brief),
                source=brief.source,
                base_version=latest.version if latest else None,
                brief=brief.to_dict(),
                lang=lang,
                meta=meta,
            )
            row["action"] = f"drafted ({brief.source})"
        except (
            StaleEditError
        ) as e:  # a person saved meanwhile: their text wins, ours is kept as a conflict copy
            row["action"] = "kept: edited meanwhile"
            row["error"] = str(e)
    return results
