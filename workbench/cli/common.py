"""What several commands share: the common options, opening the cache, progress and empty selections."""

from __future__ import annotations

import argparse
import sys

from ..timespan import ACCEPTED

# Progress bars: only for long runs, and only on a terminal unless the run is very long (a log file
# then still shows that something is happening).
PROGRESS_TTY = 50
PROGRESS_ALWAYS = 200


def add_cache(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--cache",
        metavar="DIR",
        default=argparse.SUPPRESS,
        help="cache directory (default: $WORKBENCH_CACHE, else cache/ in the checkout, else the user cache dir)",
    )


def add_repo(p: argparse.ArgumentParser) -> None:
    p.add_argument("repo", metavar="OWNER/REPO")


def add_since(p: argparse.ArgumentParser, what: str = "only PRs updated since") -> None:
    p.add_argument("--since", metavar="WHEN", help=f"{what} WHEN: {ACCEPTED}")


def add_selection(p: argparse.ArgumentParser, what: str = "only PRs updated since") -> None:
    add_repo(p)
    add_since(p, what)
    p.add_argument("--number", "-n", metavar="N", type=positive_int, nargs="+", help="only these PR numbers")


def positive_int(text: str) -> int:
    """An argparse type: a whole number of 1 or more (a PR number, a limit)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not a positive number (1 or more)")
    return value


def add_jobs(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--jobs",
        "-j",
        metavar="N",
        type=positive_int,
        help="processes that share the PRs the analysis memo lacks, when there are hundreds "
        "(default: one per core)",
    )


def jobs_arg(args: argparse.Namespace) -> int:
    """How many processes may analyse: --jobs, else one per core this process may use."""
    from ..analysis.stored import available_cores

    return getattr(args, "jobs", None) or available_cores()


def cache_arg(args: argparse.Namespace) -> str | None:
    return getattr(args, "cache", None)


def want_progress(total: int) -> bool:
    return total > PROGRESS_ALWAYS or (total > PROGRESS_TTY and sys.stderr.isatty())


def tqdm_progress(desc: str):
    """A `progress(iterable, total)` wrapper for library functions that take one."""

    def wrap(iterable, total):
        if not want_progress(total):
            return iterable
        from tqdm import tqdm

        return tqdm(iterable, total=total, desc=desc, unit="PR", file=sys.stderr)

    return wrap


def note(command: str, text: str) -> None:
    print(f"workbench {command}: {text}", file=sys.stderr)


def nothing_selected(command: str, selection) -> int:
    """Say why a window selected nothing (naming the newest cached PR) and return the exit code 1."""
    note(command, selection.why_empty())
    return 1
