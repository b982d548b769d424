"""The `workbench` command: argument parsing only. Each subcommand hands off to one library function,
named in COMMANDS below, so the shell and a notebook run the same code."""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from .config import WorkbenchError, redact

# subcommand -> "module:function(args)"; the function returns an exit code (or None for 0).
COMMANDS = {
    "sync": "workbench.sources.cli:run_sync",
    "status": "workbench.sources.cli:run_status",
    "sample": "workbench.sources.sample:run_cli",
    "analyze": "workbench.analysis.pipeline:run_cli",
    "eval": "workbench.evaluation_cli:run_cli",
    "draft": "workbench.drafting.batch:run_draft_cli",
    "digest": "workbench.drafting.batch:run_digest_cli",
    "report": "workbench.report:run_cli",
    "demo": "workbench.demo:run_cli",
}


def _add_cache(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--cache",
        metavar="DIR",
        default=argparse.SUPPRESS,
        help="cache directory (default: $WORKBENCH_CACHE or cache/ in the checkout)",
    )


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not a positive number (1 or more)")
    return value


def _api_url(text: str) -> str:
    from .config import check_api_url

    try:
        return check_api_url(text)
    except WorkbenchError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _add_selection(
    p: argparse.ArgumentParser, since_help: str = "only PRs updated since DATE or a span like 7d / 2w"
) -> None:
    p.add_argument("repo", metavar="OWNER/REPO")
    p.add_argument("--since", metavar="DATE", help=since_help)
    p.add_argument("--number", "-n", metavar="N", type=_positive_int, nargs="+", help="only these PR numbers")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="workbench",
        description="PR Workbench: cache PRs, analyse them, draft reading briefs, export digests and trend reports.",
    )
    _add_cache(parser)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    p = sub.add_parser(
        "sync",
        help="cache PRs from GitHub (PyGithub) or from a local clone",
        description="Sync PRs into the cache. Incremental: a re-run fetches only what changed. "
        "Token from GITHUB_TOKEN or GH_TOKEN (never stored).",
        epilog="One writer per repository and cache: while a sync (or --from-git backfill) of a repository "
        "is running, a second one for the same repository and cache refuses at once with a message naming "
        "the first (exit code 4) instead of doing the work twice; rerun it when the first has finished. "
        "Readers (notebooks, other commands) never wait. A PR that keeps failing is recorded, the pass goes "
        "on, and the next sync retries it first (exit code 1). Exit code 3: stopped at the rate limit "
        "(--no-wait). `workbench status OWNER/REPO` shows what the cache holds.",
    )
    _add_cache(p)
    _add_selection(
        p,
        "only PRs updated since DATE (a date, or a span like 7d); such a pass never counts as the full "
        "history (default: since the last full pass)",
    )
    p.add_argument("--state", choices=["open", "closed", "all"], default="all")
    p.add_argument(
        "--limit", type=_positive_int, metavar="N", help="at most N PRs this pass (a rerun continues)"
    )
    p.add_argument(
        "--no-wait",
        action="store_true",
        help="when the rate limit is spent, stop cleanly instead of waiting for the reset",
    )
    p.add_argument(
        "--api-url",
        metavar="URL",
        type=_api_url,
        help="GitHub Enterprise or compatible API root (default: $GITHUB_API_URL or api.github.com)",
    )
    p.add_argument(
        "--from-git",
        metavar="PATH",
        help="backfill merged PRs from a local clone (bare or not): zero API calls",
    )

    p = sub.add_parser(
        "status",
        help="what the cache holds for a repository and how it was synced",
        description="PRs by state and source, the oldest and newest, whether the full history has been "
        "synced, unfinished passes, PRs owed after a failure, and the last sync of each kind.",
    )
    _add_cache(p)
    p.add_argument("repo", metavar="OWNER/REPO")

    p = sub.add_parser(
        "sample",
        help="load the bundled sample (a made-up repository and verl's facts) into the cache",
        description="Load cache/sample/ into the cache: the made-up repository with diffs and discussion, "
        "and the real verl history as facts-only PRs for trends.",
    )
    _add_cache(p)
    p.add_argument("--no-verl", action="store_true", help="skip the 2,883 facts-only verl PRs")

    p = sub.add_parser(
        "analyze",
        help="recommend deep read / skim / skip for cached PRs",
        description="Run the heuristics over cached PRs; one row per PR.",
    )
    _add_cache(p)
    _add_selection(p)
    p.add_argument("--format", choices=["table", "csv", "json"], default="table")

    p = sub.add_parser(
        "eval",
        help="measure the analysis against labels (an expert's CSV, or a repository's final briefs)",
        description="Analyse labelled PRs and print verdict agreement (overall and per size), audience "
        "named and matching, the labels' first key file in our top 3, risk precision and recall per kind, "
        "reverts linked, and the misses one line each.",
    )
    _add_cache(p)
    p.add_argument("labels", nargs="?", metavar="LABELS.csv", help="labels CSV (columns: pr, verdict, ...)")
    p.add_argument(
        "--repo", metavar="OWNER/REPO", help="the labels' repository (default: the cache's only one)"
    )
    p.add_argument(
        "--from-final",
        metavar="OWNER/REPO",
        help="use the repository's final briefs as labels (their verdicts are the team's judgement)",
    )

    p = sub.add_parser(
        "draft",
        help="draft reading briefs (offline, or with an LLM)",
        description="Draft a brief per PR. Never overwrites a brief a person edited.",
    )
    _add_cache(p)
    _add_selection(p)
    p.add_argument(
        "--llm",
        action="store_true",
        help="use the OpenAI-compatible model (OPENAI_BASE_URL, WORKBENCH_MODEL)",
    )
    p.add_argument("--model", help="model name (default: $WORKBENCH_MODEL or the repository config)")
    p.add_argument(
        "--lang", choices=["zh", "en"], help="brief language (default: the repository config, else zh)"
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

    p = sub.add_parser(
        "digest",
        help="write the Markdown digest of a repository's briefs",
        description="One Markdown file: the repository's name, then one section per PR.",
    )
    _add_cache(p)
    _add_selection(p)
    p.add_argument(
        "-o", "--output", metavar="FILE", help="output file (default: exports/<owner>-<repo>-digest.md)"
    )
    p.add_argument("--lang", choices=["zh", "en"])
    p.add_argument("--state", choices=["open", "closed", "merged", "all"], default="all")

    p = sub.add_parser(
        "report",
        help="write the trends report: one HTML file that opens offline",
        description="Plotly charts on PR flow in one standalone HTML file (plotly.js embedded).",
    )
    _add_cache(p)
    p.add_argument("repo", metavar="OWNER/REPO")
    p.add_argument("--since", metavar="DATE")
    p.add_argument(
        "-o", "--output", metavar="FILE", help="output file (default: exports/<owner>-<repo>-report.html)"
    )
    p.add_argument("--png", metavar="DIR", help="also write static PNG images (kaleido + chromium)")

    p = sub.add_parser(
        "demo",
        help="the main job on the bundled sample: load it, draft briefs, write the digest, open JupyterLab",
        description="Load the sample, draft offline briefs, write the digest and the trends report, "
        "then open JupyterLab at the review notebook (or stop there with --headless).",
    )
    _add_cache(p)
    p.add_argument(
        "--headless", action="store_true", help="write the digest and report, do not start JupyterLab"
    )
    p.add_argument("-o", "--output", metavar="FILE", help="digest file (default: exports/sample-digest.md)")
    p.add_argument("--port", type=int, default=8888)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    args.cache = getattr(args, "cache", None)
    module_name, func_name = COMMANDS[args.command].split(":")
    try:
        func = getattr(importlib.import_module(module_name), func_name)
        return int(func(args) or 0)
    except WorkbenchError as e:
        print(f"workbench {args.command}: error: {redact(str(e))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(
            f"workbench {args.command}: interrupted; what was written is kept, a rerun resumes",
            file=sys.stderr,
        )
        return 130
    except Exception as e:  # a bug, not bad input: one line unless asked for the traceback
        if os.environ.get("WORKBENCH_DEBUG"):
            raise
        print(
            f"workbench {args.command}: internal error: {type(e).__name__}: {redact(str(e))} "
            f"(set WORKBENCH_DEBUG=1 for a traceback)",
            file=sys.stderr,
        )
        return 1


if __name__ == "__main__":
    sys.exit(main())
