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
from .signals import Find, counted_signals

# `Name.attr = replacement` on an added line: a name (not a literal) put in place of what was there
_REPLACED = re.compile(
    r"^\+[ \t]*(?!self\.|cls\.)([A-Za-z_]\w*)(?:\.[A-Za-z_]\w*)+[ \t]*=[ \t]*([A-Za-z_][\w.]*)[ \t]*(?:#.*)?$",
    re.M,
)
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


def scan_patches(files: list[FileDiff], conv: Conventions) -> list[Signal]:
    """compat.patches: added program lines that replace another library's attributes or reach into its
    functions' internals. The PR's own packages (the top folders of the files it changes, relative
    imports) and the standard library are not another library; a patch is seen only where the hunk
    shows the import of what it patches."""
    own = {fd.filename.split("/", 1)[0] for fd in files}
    finds: list[Find] = []
    for fd in files:
        if fd.patch and fd.language == "Python" and is_program(fd):
            finds += sorted(_patches_in(fd, fd.patch, own), key=lambda find: find[2])  # in the file's order
    return counted_signals("compat.patches", "patches another library's code at run time", finds, conv)


def _patches_in(fd: FileDiff, p: str, own: set[str]) -> list[Find]:
    finds: list[Find] = []
    if "__" in p or "sys.modules[" in p:
        for m in _INTERNALS.finditer(p):
            if "sys.modules[" in m.group(0) and _LOADS_A_FILE in p:
                continue
            finds.append((fd.filename, p, m.start(), m.group(0)[1:].strip()[:200]))
    replaced = [m for m in _REPLACED.finditer(p) if m.group(2) not in _NOT_REPLACEMENTS]
    imported = _imported_roots(p) if replaced else {}
    for m in replaced:
        root = imported.get(m.group(1))
        if root and root not in own and root not in sys.stdlib_module_names:
            finds.append((fd.filename, p, m.start(), m.group(0)[1:].strip()[:200]))
    return finds


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
