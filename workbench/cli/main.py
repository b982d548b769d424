"""`workbench`: the top-level parser and the one place errors become one line and an exit code."""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from ..config import WorkbenchError, redact
from ..timespan import since_iso
from .common import add_cache

# Command groups, one module each (see __init__.py); the order is the order of `workbench --help`.
GROUPS = ("sync", "sample", "analyze", "evaluate", "draft", "report", "demo")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="workbench",
        description="PR Workbench: cache PRs, analyse them, draft reading briefs, export digests and trend reports.",
    )
    add_cache(parser)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for group in GROUPS:
        importlib.import_module(f"{__package__}.{group}").register(sub)
    return parser


def command_names() -> list[str]:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return list(sub.choices)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    args.cache = getattr(args, "cache", None)
    try:
        # Every command's window is checked before anything is opened, so a bad value is one line
        # naming the accepted forms whatever state the cache is in.
        since_iso(getattr(args, "since", None))
        return int(args.run(args) or 0)
    except WorkbenchError as e:
        print(f"workbench {args.command}: error: {redact(str(e))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(
            f"workbench {args.command}: interrupted; what was written is kept, a rerun resumes",
            file=sys.stderr,
        )
        return 130
    except BrokenPipeError:  # `workbench analyze ... | head`: the reader left, not an error
        sys.stderr.close()
        return 0
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
