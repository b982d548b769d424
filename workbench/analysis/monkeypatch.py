"""Code that patches another library at run time: a class's method or a module's function replaced
(`TopKRouter.__init__ = patched_init`), a fake module put in `sys.modules`, a function's closure or
globals read from outside. Such code depends on the library's internals staying as they are: a
compatibility risk that no version check in the diff shows. Pure."""

from __future__ import annotations

import re
import sys

from .codelines import is_program
from .conventions import Conventions
from .diff import FileDiff
from .model import Signal
from .patchscan import Concat
from .signals import Find, counted_signals

# `Name.attr = replacement` on an added line: a name (not a literal) put in place of what was there.
# Matched from the newline before the line (the patches are joined by newlines, each starts "@@"): a
# literal to look for, where `^` in MULTILINE mode is tried at every position, at four times the cost.
# Possessive: a line that fails is given up at once.
_REPLACED = re.compile(
    r"\n\+[ \t]*+(?!self\.|cls\.)([A-Za-z_]\w*+)(?:\.[A-Za-z_]\w*+)++[ \t]*+=[ \t]*+([A-Za-z_][\w.]*+)"
    r"[ \t]*+(?:#[^\n]*+)?(?=\n|$)"
)
# What reaching into internals needs on its line, looked for before the pattern is tried.
_INTERNALS_WORDS = ("sys.modules[", ".__closure__", ".__globals__")
# a module faked in `sys.modules` (not a package putting its own lazy module there, `[__name__]`), or a
# function's internals read from outside it; the whole line is the evidence
_INTERNALS = re.compile(
    r"^\+[^#\n]*(?:sys\.modules\[(?!__name__\])[^\]\n]+\][ \t]*=[^=]|\.__closure__\b|\.__globals__\b)[^\n]*",
    re.M,
)
# a module loaded from a file (a user's reward function, a tool's code) is registered, nothing patched
_LOADS_A_FILE = "module_from_spec("
_IMPORT = re.compile(
    r"^[+ ][ \t]*(?:import[ \t]+([\w.]+)(?:[ \t]+as[ \t]+(\w+))?|from[ \t]+(\w[\w.]*)[ \t]+import[ \t]+\(?([^)#\n]*))",
    re.M,
)
_NOT_REPLACEMENTS = frozenset({"True", "False", "None"})


def scan_patches(cat: Concat, conv: Conventions) -> list[Signal]:
    """compat.patches: added program lines that replace another library's attributes or reach into its
    functions' internals, in the PR's joined patches. The PR's own packages (the top folders of the
    files it changes, relative imports) and the standard library are not another library; a patch is
    seen only where the hunk shows the import of what it patches."""
    own = {fd.filename.split("/", 1)[0] for fd in cat.files}
    finds: list[Find] = []
    imports: dict[str, dict[str, str]] = {}  # file -> its patch's imported names, read when needed
    for m in _REPLACED.finditer(cat.text):
        if m.group(2) in _NOT_REPLACEMENTS:
            continue
        fd, local = cat.locate(m.start() + 1)
        if not _python_program(fd):
            continue
        if fd.filename not in imports:
            imports[fd.filename] = _imported_roots(fd.patch or "")
        root = imports[fd.filename].get(m.group(1))
        if root and root not in own and root not in sys.stdlib_module_names:
            finds.append((fd.filename, fd.patch, local, m.group(0)[2:].strip()[:200]))
    if any(word in cat.text for word in _INTERNALS_WORDS):
        for fd in cat.files:
            p = fd.patch or ""
            if _python_program(fd) and any(word in p for word in _INTERNALS_WORDS):
                finds += _internals_in(fd, p)
    # in each file's order, files in the PR's order
    order = {fd.filename: i for i, fd in enumerate(cat.files)}
    finds.sort(key=lambda find: (order[find[0]], find[2]))
    return counted_signals("compat.patches", "patches another library's code at run time", finds, conv)


def _python_program(fd: FileDiff) -> bool:
    return fd.language == "Python" and is_program(fd)


def _internals_in(fd: FileDiff, p: str) -> list[Find]:
    # where the patch loads a module from a file, what it puts in sys.modules is that module registered:
    # only the internals it reads count
    registers = _LOADS_A_FILE in p
    return [
        (fd.filename, p, m.start(), m.group(0)[1:].strip()[:200])
        for m in _INTERNALS.finditer(p)
        if not (registers and "sys.modules[" in m.group(0))
    ]


def _imported_roots(patch: str) -> dict[str, str]:
    """name -> the top package it is imported from, for the imports the patch shows (relative imports
    are the project's own: left out)."""
    names: dict[str, str] = {}
    for m in _IMPORT.finditer(patch):
        module, alias, source, listed = m.groups()
        if module:
            root = module.split(".", 1)[0]
            names[alias or root] = root
        else:
            root = source.split(".", 1)[0]
            for part in re.split(r"[,\s]+", listed):
                if part.isidentifier() and part != "as":
                    names[part] = root
    return names
