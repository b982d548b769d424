"""`workbench draft` and `workbench digest`: reading briefs, and the Markdown digest of a window."""

from __future__ import annotations

import sys

from .common import add_cache, add_selection, cache_arg, note, nothing_selected, want_progress

# A digest is for the PRs of a reading round, not the whole history: without --since, --number or
# --all it covers this window.
DIGEST_WINDOW = "7d"


def register(sub) -> None:
    p = sub.add_parser(
        "draft",
        help="draft reading briefs (offline, or with an LLM)",
        description="Draft a brief per PR. Never overwrites a brief a person edited.",
    )
    add_cache(p)
    add_selection(p)
    p.add_argument(
        "--llm",
        action="store_true",
        help="use the OpenAI-compatible model (OPENAI_BASE_URL, WORKBENCH_MODEL)",
    )
    p.add_argument("--model", help="model name (default: $WORKBENCH_MODEL or the repository config)")
    p.add_argument(
        "--lang",
        choices=["zh", "en"],
        help="brief language (default: the repository's conventions, e.g. verl: zh; without a file: zh)",
    )
    p.add_argument(
        "--budget", type=int, metavar="TOKENS", help="input token budget for the LLM context (default 16000)"
    )
    p.add_argument(
        "--show-context",
        action="store_true",
        help="print the exact messages and their token count; call no model",
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="redraft machine drafts even if one exists (human edits are still kept)",
    )
    p.add_argument(
        "--concurrency",
        type=int,
        metavar="N",
        help="PRs sent to the model at once (default: $WORKBENCH_LLM_CONCURRENCY or 3)",
    )
    p.add_argument(
        "--seed",
        type=int,
        metavar="N",
        help="with --show-context: a fixed fence tag, so two runs print the same text (golden files)",
    )
    p.set_defaults(run=run_draft)

    p = sub.add_parser(
        "digest",
        help="write the Markdown digest of a window's briefs (default: the last 7 days)",
        description="One Markdown file: the repository's name, then one section per PR of the window "
        f"(default: PRs updated in the last {DIGEST_WINDOW[:-1]} days; --since, --number or --all widen it).",
    )
    add_cache(p)
    add_selection(p, f"PRs updated since (default: {DIGEST_WINDOW})")
    p.add_argument("--all", action="store_true", help="every cached PR of the repository, not a window")
    p.add_argument(
        "-o", "--output", metavar="FILE", help="output file (default: ./exports/<owner>-<repo>-digest.md)"
    )
    p.add_argument(
        "--lang",
        choices=["zh", "en"],
        help="digest language (default: the repository's conventions); briefs written in another "
        "language keep theirs, and the command names them",
    )
    p.add_argument("--state", choices=["open", "closed", "merged", "all"], default="all")
    p.set_defaults(run=run_digest)


def run_draft(args) -> int:
    from ..config import WorkbenchError, llm_settings
    from ..drafting.batch import draft_many
    from ..selection import select_prs
    from ..store import open_cache

    store = open_cache(cache_arg(args))
    try:
        selection = select_prs(store, args.repo, since=args.since, numbers=args.number)
        if selection.empty:
            return nothing_selected("draft", selection)
        settings = llm_settings(args.model) if args.llm else None
        if args.concurrency is not None and args.concurrency < 1:
            raise WorkbenchError(f"--concurrency must be 1 or more, not {args.concurrency}")
        summary = draft_many(
            store,
            args.repo,
            selection.numbers,
            llm=args.llm,
            lang=args.lang,
            budget=args.budget,
            force=args.force,
            settings=settings,
            show_context=args.show_context,
            progress=not args.show_context and want_progress(len(selection.numbers)),
            concurrency=args.concurrency,
            seed=args.seed,
        )
    finally:
        store.close()
    if args.show_context:
        for p in summary.prs:
            print(f"########## {args.repo}#{p.number}")
            print(p.context)
        return 0
    for p in summary.prs:
        if p.error:
            print(f"#{p.number}: {p.error}", file=sys.stderr)
    print(f"{args.repo}: {summary.line()}")
    return 1 if summary.fell_back else 0  # a script must see that the model did not write every brief


def run_digest(args) -> int:
    from ..export import write_digest
    from ..selection import select_prs
    from ..store import open_cache

    since = args.since
    if since is None and not args.number and not args.all:
        since = DIGEST_WINDOW
    store = open_cache(cache_arg(args))
    try:
        state = None if args.state == "all" else args.state
        selection = select_prs(store, args.repo, since=since, numbers=args.number, state=state)
        if selection.empty:  # an empty digest would read as "nothing happened": say why instead
            return nothing_selected("digest", selection)
        result = write_digest(store, args.repo, selection.numbers, lang=args.lang, output=args.output)
    finally:
        store.close()
    window = f"since {selection.since[:10]}" if selection.since else "selected"
    print(f"digest: {result.path} ({len(result.numbers)} PRs {window})")
    if result.other_lang:
        by_lang: dict[str, list[int]] = {}
        for n, lang in result.other_lang.items():
            by_lang.setdefault(lang, []).append(n)
        for lang, nums in by_lang.items():
            shown = ", ".join(f"#{n}" for n in nums[:10]) + (" …" if len(nums) > 10 else "")
            note(
                "digest",
                f"{len(nums)} brief(s) are written in {lang}, not {result.lang} ({shown}): their sections stay "
                f"in {lang}; to have them in {result.lang}, run `workbench draft {args.repo} --lang "
                f"{result.lang} --force --number ...` (briefs a person edited are kept as written)",
            )
    return 0
