"""The command layer: the only code that reads argparse namespaces, prints, picks output formats or
progress thresholds. Library functions take plain arguments and return data, so a notebook, a test and
the shell run the same code.

One module per command group (sync + status, sample, analyze, evaluate, draft + digest, report, demo + app); each has `register(sub)`,
which adds its sub-parsers and binds each to a `run(args) -> int` of the same module. To add a command,
write such a module and name it in main.GROUPS. Modules import only the standard library at the top,
so `workbench --help` answers before pandas or PyGithub would have loaded.
"""

from .main import build_parser, command_names, main

__all__ = ["build_parser", "command_names", "main"]
