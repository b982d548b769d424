"""Signal detectors that read words in a PR's diff: risk themes, objective arithmetic, what added code
says it does not support, and commands run through a shell, downloads and secrets.

Each detector returns Signals whose evidence is (file, new line number, the line). The words they need
are found by one pass over the PR's concatenated patches (`find_words`); each detector then checks the
lines holding its words (added? a whole identifier? program code?). The detectors that read
definitions (symbols.py) and key/value lines (config_changes.py) share `Find` and `counted_signals`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import islice

from .codelines import SCRIPT_LANGUAGES, in_docstring, in_program_code, is_program
from .conventions import Conventions
from .diff import Concat, FileDiff, new_line_at
from .model import Evidence, Signal
from .patchscan import (
    WordPlaces,
    new_python_definition,
)
from .words import WordFinder, counted

# needle modes: "i" = an identifier part (no letter right before or after; "_" counts as a boundary),
# "f" = a free call (not after ".", letter or "_"), "s" = any substring, "w" = a whole word.
# Needles are at least 3 characters: shorter ones would match inside most identifiers.


def _n(words: str, mode: str = "i") -> tuple[tuple[str, str], ...]:
    return tuple((w, mode) for w in words.split())


THEMES: dict[str, tuple[str, tuple[tuple[str, str], ...], tuple[str, ...]]] = {
    "risk.concurrency": (
        "concurrency: locks, threads, asyncio, sockets, ACKs, races",
        _n(
            "lock Lock RLock threading Thread Semaphore recv ack ACK race races deadlock asyncio "
            "mutex multiprocessing ThreadPoolExecutor Condition notify run_coroutine_threadsafe "
            "Mutex RwLock Arc AtomicBool AtomicUsize"
        )
        # whole words: not `walk_non_atomic_type`, `_get_or_create_task_pool`, `zmq_port`, `_get_zmq_handle`
        + _n("atomic create_task zmq", "w")
        + _n("socket.socket( thread::spawn tokio::spawn", "s"),
        ("race", "deadlock", "hang", "thread", "asyncio", "lock", "concurren", "竞态", "死锁"),
    ),
    "risk.memory": (
        "memory and resources: empty_cache, gc, IPC handles, pinned/shared memory, buffers, leaks, unsafe",
        _n(
            "empty_cache leak ipc_collect IPC OOM __del__ pin_memory share_memory mmap memory_allocated max_memory"
        )
        + _n("weakref", "w")  # not `weakref_name`
        # an uninitialised tensor is a buffer sized for a transfer or a cache, not a value computed
        + _n("SharedMemory torch.empty(", "s")
        + (("gc.collect", "s"), ("unsafe {", "s"), ("unsafe fn", "s"), ("unsafe impl", "s")),
        ("memory leak", "leak", "oom", "out of memory", "显存泄漏", "内存泄漏"),
    ),
    "risk.numerics": (
        "numerics: dtype, precision, overflow",
        # dtypes as whole words (a name like `apply_fp8_patches` is not arithmetic)
        _n("float16 bfloat16 bf16 fp16 fp32 fp8 float32 float64 int8 int32 f32 f64", "w")  # not uint8: bytes
        + _n("overflow underflow isnan isinf nan_to_num epsilon log_softmax logsumexp autocast finfo cumsum")
        # exponentials overflow where their input is not shifted first
        + _n(".exp( softmax(", "s"),
        # not "overflow": in prose it is mostly a stack or a buffer ("ty overflows the stack")
        tuple("precision numerical dtype bf16 fp16 fp8 fp32 精度".split()) + ("nan ",),
    ),
    "risk.error_handling": (
        "error handling: bare except, pass, swallowed errors, panics",
        (("suppress(", "s"), ("|| true", "s"), ('errors="ignore"', "s"), ("ignore_errors", "i"))
        + _n("panic!( .unwrap()", "s"),
        ("exception", "error handling", "swallow", "crash"),
    ),
    "risk.compatibility": (
        "compatibility: code that branches on the versions of the libraries it runs with",
        _n("is_version_ge version.parse parse_version __version__ packaging.version importlib.metadata", "s"),
        (),
    ),
    "risk.refusal": (
        "new refusals: setups that ran before may now stop with an error",
        # not a bare re-raise (nothing new is refused), nor NotImplementedError: what it names was never
        # built, so nothing ran there before; it is what the PR leaves open (scan_unsupported)
        tuple((f"raise {error}", "s") for error in ("ValueError", "RuntimeError", "TypeError")),
        (),
    ),
    "risk.markers": ("markers added: TODO / FIXME / HACK / XXX", _n("TODO FIXME HACK XXX", "w"), ()),
    "risk.security": (
        "security: eval/exec, pickle/yaml loads, remote code, disabled TLS checks",
        _n("eval( exec(", "f")
        + _n(
            # not `torch.load(`: what it loads is a checkpoint the run wrote itself; data from outside
            # (a socket, a dataset's field, a download) is unpickled with pickle
            "pickle.load yaml.load( yaml.unsafe_load trust_remote_code=True verify=False",
            "s",
        ),
        # "injection" alone is mostly a design word in descriptions (seed, GPU, dependency injection)
        ("security", "vulnerab", "cve-", "安全")
        + tuple(f"{kind} injection" for kind in ("shell", "command", "code", "sql", "template", "prompt")),
    ),
}
# Statements judged by where they stand on the line: a bare `pass`, `except:` / `except Exception`,
# `set +e`.
_STMT_WORDS = ("pass", "except", "set +e")
_STMT = re.compile(r"\+[ \t]*+(pass|except|set \+e)\b(.*)")  # possessive: see _DEF_LINE
# What code raises where it says a case is not built: Python's NotImplementedError, Rust's macros.
_UNSUPPORTED_WORDS = ("raise NotImplementedError(", "unimplemented!(", "todo!(")
# The names of a training objective's terms (see scan_loss_math).
_OBJECTIVE_WORDS = ("loss", "logprob", "log_prob", "advantage", "kl", "entropy", "grad")
# The words without which the command patterns cannot match, by the patterns that need them (see
# scan_commands): a pattern is tried only on the added lines holding one of its words. Most lines run no
# command and name no secret, and a pattern tried on every added line cost more than the rest of the
# detector.
_COMMAND_WORDS = {
    "shell": ("shell", "system(", "popen(", "Popen(", "subprocess", "eval ", "bash -c", "sh -c",
              '"-c"', "'-c'"),
    "secret": ("token", "TOKEN", "Token", "passw", "PASSW", "Passw", "secret", "SECRET", "Secret", "api_key",
               "api-key", "API_KEY", "apikey"),
    "ci": ("curl", "wget", "uses:", "privileged", "seccomp", "contents:", "pull_request_target",
           "trusted-host", "INSECURE_HOST", "unsafe-best-match", "extra-index-url", "verify"),
    "install": ("git+",),
}  # fmt: skip

# Every word the diff detectors look for (theme needles, statement, objective and command words) in one
# Aho-Corasick automaton (ahocorasick_rs, a DFA in Rust): one pass over a PR's patches finds every place
# of every word (`find_words`), where a pass per detector, or a str.find loop per needle, read each
# patch many times. The Python work that follows is per place found, and bounded.
_WORDS: list[str] = list(
    dict.fromkeys(
        [n for _l, needles, _w in THEMES.values() for n, _m in needles]
        + [*_STMT_WORDS, *_OBJECTIVE_WORDS, *_UNSUPPORTED_WORDS]
        + [w for words in _COMMAND_WORDS.values() for w in words]
    )
)
_WORD_ID = {w: i for i, w in enumerate(_WORDS)}
_FINDER = WordFinder(_WORDS)


def _ids(words) -> frozenset[int]:
    return frozenset(_WORD_ID[w] for w in words)


_STMT_IDS = _ids(_STMT_WORDS)
_OBJECTIVE_IDS = _ids(_OBJECTIVE_WORDS)
_UNSUPPORTED_IDS = _ids(_UNSUPPORTED_WORDS)
_COMMAND_IDS = {name: _ids(words) for name, words in _COMMAND_WORDS.items()}


def find_words(cat: Concat) -> WordPlaces:
    """Where every detector word occurs in `cat` (the patches of RISK_ROLES files)."""
    return WordPlaces(cat, _FINDER)


def _boundary_ok(text: str, start: int, pos: int, needle: str, mode: str) -> bool:
    if mode == "s":
        return True
    before = text[pos - 1] if pos > start else " "
    end = pos + len(needle)
    after = text[end] if end < len(text) else " "
    if mode == "i":
        return not before.isalpha() and (not needle[-1].isalnum() or not after.isalpha())
    if mode == "f":
        return not (before.isalnum() or before in "_.")
    return not (before.isalnum() or before == "_") and (
        not needle[-1].isalnum() or not (after.isalnum() or after == "_")
    )


@dataclass
class Hit:
    file: FileDiff
    pos: int  # where the line starts in the file's patch; the line number is worked out only if shown
    text: str
    _line: int | None = None

    @property
    def line(self) -> int | None:
        if self._line is None and self.file.patch:
            self._line = new_line_at(self.file.patch, self.pos)
        return self._line


@dataclass
class CodeFacts:
    """Per-PR results the later stages reuse: hits per theme, symbols, risk counts per file."""

    theme_hits: dict[str, list[Hit]] = field(default_factory=dict)
    risk_per_file: dict[str, int] = field(default_factory=dict)
    symbols: dict[str, float] = field(default_factory=dict)  # name -> weight
    file_symbols: dict[str, list[str]] = field(default_factory=dict)
    unsupported: list[Hit] = field(default_factory=list)  # what added code says it does not do (its text)


# A detector's find before it becomes evidence: (file name, its patch, position of the line or None, text).
# Signals show only the first few finds and count the rest, so the line number (a scan back to the hunk
# header) is worked out only for the ones shown.
Find = tuple[str | None, str | None, int | None, str]


def _shown(finds: list[Find], n: int) -> list[Evidence]:
    return [
        Evidence(f, new_line_at(p, pos) if p is not None and pos is not None else None, t)
        for f, p, pos, t in finds[:n]
    ]


def counted_signals(name: str, label: str, finds: list[Find], conv: Conventions) -> list[Signal]:
    """The signal `name` for a detector's finds, counted in its label with the first few shown; none
    for no finds."""
    if not finds:
        return []
    n_ev = int(conv.threshold("max_evidence", 3))
    return [Signal(name, f"{label} ({len(finds)})", conv.weight(name), _shown(finds, n_ev))]


RISK_ROLES = frozenset(
    {"code", "ci", "build", "notebook", "config"}
)  # a test exercising a lock is not a risky lock

# Themes about what a program does: found only in program code. In shell scripts, CI, build and config
# files their words are settings ("param_offload=True", "pip install pytest-asyncio", "dtype: bf16"), and
# on a real verl history such lines were the largest source of memory and concurrency hits.
PROGRAM_THEMES = frozenset(
    {
        "risk.concurrency",
        "risk.memory",
        "risk.numerics",
        "risk.security",
        "risk.compatibility",
        "risk.refusal",
    }
)


# Themes whose needles are one language's words: a Rust docstring quoting `raise ValueError` is not one.
THEME_LANGUAGES = {"risk.refusal": frozenset({"Python"})}
# Themes about what changes for code that already ran: the errors of a new file, or of a function or
# class the PR adds, refuse nothing that worked before.
CHANGED_CODE_THEMES = frozenset({"risk.refusal"})


# A needle defused by what stands on the same line: `yaml.load(..., Loader=SafeLoader)` builds no
# objects, Ray's cloudpickle carries the job's own objects; asking how many cores there are or
# which thread runs, or catching asyncio's errors, starts, shares and waits for nothing; memory that is
# not pinned is the default.
_DEFUSED = {
    "yaml.load(": ("SafeLoader",),
    # Ray passing a job's own objects between its actors
    "pickle.load": ("ray.cloudpickle",),
    "multiprocessing": ("cpu_count",),
    "threading": ("current_thread", "main_thread", "get_ident"),
    # asking for the loop, or whether something is a coroutine, runs nothing; catching its errors neither
    "asyncio": (
        "iscoroutinefunction",
        "iscoroutine(",
        "except ",
        "= asyncio.get_running_loop()",
        "= asyncio.get_event_loop()",
    ),
    "pin_memory": ("pin_memory=False",),
}
# Integer bookkeeping: counts, lengths and positions in an integer dtype, or summed up into offsets
# (cu_seqlens, position_ids from a mask), and a mask cast to int8 to find a position (argmax, argsort)
# are index arithmetic, not a numerically sensitive operation; a running sum of rewards or weights is
# one, and so is quantizing values to int8. A tensor made in an integer dtype (`torch.tensor([1],
# dtype=torch.int8)` as a signal, `torch.ones(b, t, dtype=torch.int32)` as a mask) holds counts too.
_INDEX_NEEDLES = frozenset({"int8", "int32", "cumsum"})
_COUNTED = re.compile(
    r"len|size|count|num_|idx|ind(?:ex|ices)|offset|position|mask|shard|bin|bucket|arg(?:max|min|sort)|nonzero",
    re.I,
)
# A tensor made or converted in full precision (`torch.zeros_like(mask, dtype=torch.float32)`,
# `torch.tensor(scores, dtype=torch.float32)`) loses nothing: only low precision is numerically sensitive.
_FULL_PRECISION = frozenset({"fp32", "float32", "float64", "f32", "f64"})
_ALLOCATES = re.compile(
    r"\b(?:torch|np|numpy)\.(?:empty|zeros|ones|full|arange|tensor|as_tensor|asarray|array)(?:_like)?\("
)

_VALUED = re.compile(
    r"reward|returns|score|weight|log_?p|prob|loss|value|advantage|entropy|\bkl\b|grad", re.I
)


# (theme, [(word id, needle, mode)]) in the table's order, which is the order evidence is listed in.
_THEME_PLAN = [
    (name, _ids(n for n, _m in needles), [(_WORD_ID[n], n, m) for n, m in needles])
    for name, (_label, needles, _words) in THEMES.items()
]


def _in_new_code_only(cat: Concat, fd: FileDiff, local: int) -> bool:
    """Whether the line at `local` in `fd`'s patch stands in a function or class the PR adds and only
    new code calls: what it refuses, nothing reached before. A definition the PR removes under the same
    name elsewhere was moved, not added; a new helper that an old function now calls refuses what that
    function ran before."""
    name = _added_definition(cat, fd, local)
    if name is None:
        return False
    text, call = cat.text, name + "("
    at, callers = text.find(call), 0
    while at >= 0:
        start = text.rfind("\n", 0, at) + 1
        whole_name = not (text[at - 1].isalnum() or text[at - 1] == "_")
        # an added line calling it, other than its own definition
        if whole_name and text[start] == "+" and not _PY_DEF_OF.match(text, start + 1):
            callers += 1
            if callers > _MAX_CALLERS:
                return False  # called all over: read as reaching old code, and the risk stays
            caller, local = cat.locate(start)
            if caller.status != "added" and _added_definition(cat, caller, local) is None:
                return False
        at = text.find(call, at + 1)
    return True


def _added_definition(cat: Concat, fd: FileDiff, local: int) -> str | None:
    """The function or class the PR adds in which the line at `local` of `fd`'s patch stands; None for
    old code, and for one the PR removes elsewhere under the same name (moved, not added)."""
    name = new_python_definition(fd.patch, local)
    return None if name is None or name in cat.removed_definitions() else name


# Callers of a new function looked at before its code counts as reached from old code (each is walked up
# to its definition: a PR calling one helper thousands of times must not cost thousands of walks).
_MAX_CALLERS = 50
_PY_DEF_OF = re.compile(r"[ \t]*(?:async[ \t]+)?(?:def|class)[ \t]")


def _lines_above(text: str, start: int) -> Iterator[str]:
    """The lines above the one that starts at `start`, nearest first."""
    end = start - 1  # the newline that ends the line above
    while end > 0:
        begin = text.rfind("\n", 0, end) + 1
        yield text[begin:end]
        end = begin - 1


# An item of a parenthesised Python import, and the line that opens one
_IMPORT_ITEM = re.compile(r"[+ -]\s*[\w.]+(?:\s+as\s+\w+)?\s*,?\s*(?:#.*)?")
_IMPORT_OPEN = re.compile(r"[+ -]\s*from\s+[\w.]+\s+import\s*\(\s*(?:#.*)?")


# An annotated declaration, `name: type` or `name: type = value`: a dataclass field, a setting.
_DECLARATION = re.compile(r"[ \t]*(\w+)[ \t]*:[^=\n]*(?:=|$)")


def _names_a_field(line: str, at: int, needle: str) -> bool:
    """Whether the needle at `at` stands only inside the longer name a line declares
    (`torch_empty_cache_steps: int | None = field(`): the name of a setting about it, not an operation;
    its value may still hold one. A field named the needle itself (`bf16: bool = field(`) is the switch."""
    m = _DECLARATION.match(line)
    return (
        m is not None
        and m.start(1) <= at < m.end(1)
        and len(m.group(1)) > len(needle)
        and needle not in line[m.end(1) :]
    )


def _in_import_list(text: str, start: int) -> bool:
    """Whether the line at `start` is a name in a `from pkg import (...)` list: imported, not run."""
    end = text.find("\n", start)
    if not _IMPORT_ITEM.fullmatch(text, start, end if end >= 0 else len(text)):
        return False
    for line in _lines_above(text, start):
        if line.startswith("-"):
            continue  # not in the new file
        if _IMPORT_OPEN.fullmatch(line):
            return True
        if not _IMPORT_ITEM.fullmatch(line):
            return False
    return False


def _replaced_lines(text: str, start: int) -> str:
    """The removed lines that the added line at `start` replaces, "" if none: in a diff a changed line is
    removed, then added, so the removed run right above the added run is what it was."""
    removed = []
    for line in islice(_lines_above(text, start), _REPLACED_LINES):
        if line.startswith("-"):
            removed.append(line[1:])
        elif not line.startswith("+") or removed:
            break  # context, a hunk header, or the added run before another change
    return "\n".join(removed)


# How far up a changed line's old version is looked for: a re-wrapped call spans a few lines.
_REPLACED_LINES = 16


def _new_parts(line: str, replaced: str) -> str:
    """What an added line says that the lines it replaces did not: its parts (split at blanks and commas
    outside brackets) less those the old lines hold. `from_config(cfg, torch_dtype=torch.bfloat16)`
    re-wrapped to take `trust_remote_code` adds `trust_remote_code=...` only; `tl.exp(logits - m)` made
    `tl.exp(logits_for_lse - m)` is a new call whole."""
    parts, depth, cut = [], 0, 0
    for i, ch in enumerate(line):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif depth <= 0 and ch in " \t,":
            parts.append(line[cut:i])
            cut = i + 1
    parts.append(line[cut:])
    return " ".join(p for p in parts if p.strip(":") not in replaced)


def scan_themes(words: WordPlaces, facts: CodeFacts, per_theme: int = 8) -> None:
    """Risk themes in program code, from the places of their needles."""
    cat, places = words.cat, words.places
    text = cat.text
    if not text:
        return
    per_file = facts.risk_per_file
    for name, theme_ids, needles in _THEME_PLAN:
        if theme_ids.isdisjoint(places):  # most PRs touch few themes: skip the others' needle lists
            continue
        hits: list[Hit] = []
        seen: set[int] = set()
        program_only = name in PROGRAM_THEMES
        for nid, needle, mode in needles:
            found = places.get(nid)
            if not found:
                continue
            # The first 80 lines holding the needle, of which at most per_theme added ones are looked at;
            # in each line, the needle's first place that stands as a word of its own counts
            # (`self.zmq_context.socket(zmq.REQ)`: the second).
            i, n_found = 0, len(found)
            looked = scanned = 0
            while i < n_found and looked < per_theme and scanned < 80:
                at = found[i]
                scanned += 1
                start = text.rfind("\n", 0, at) + 1
                end = text.find("\n", at)
                if end < 0:
                    end = len(text)
                first = i
                i += 1
                while i < n_found and found[i] < end:  # later places in the same line
                    i += 1
                if text[start] != "+" or text.startswith("+++ ", start):
                    continue
                fd, local = cat.locate(start)
                if (
                    program_only
                    and not is_program(fd)
                    or fd.language not in THEME_LANGUAGES.get(name, (fd.language,))
                    or name in CHANGED_CODE_THEMES
                    and (fd.status == "added" or _in_new_code_only(cat, fd, local))
                ):
                    continue  # a setting, not behaviour: does not use up the lines looked at
                looked += 1
                pos = next((q for q in found[first:i] if _boundary_ok(text, start, q, needle, mode)), None)
                if start in seen or pos is None:
                    continue
                line = text[start + 1 : end]
                if name != "risk.markers" and not (
                    in_program_code(line, pos - start - 1, fd.language)
                    and not in_docstring(fd, local)
                    and not _in_import_list(text, start)
                ):
                    continue  # a comment, a string, a docstring or an import names it; nothing runs it
                if fd.language == "Python" and _names_a_field(line, pos - start - 1, needle):
                    continue
                if needle in _DEFUSED and any(d in line for d in _DEFUSED[needle]):
                    continue
                counts = needle in _INDEX_NEEDLES and (_COUNTED.search(line) or _ALLOCATES.search(line))
                if counts and not _VALUED.search(line):
                    continue
                if needle in _FULL_PRECISION and _ALLOCATES.search(line):
                    continue
                replaced = _replaced_lines(text, start)
                if replaced and needle not in _new_parts(line, replaced):
                    continue  # a call re-wrapped or given one more argument keeps what it had
                seen.add(start)
                # a refusal's message is why it refuses; it often stands on the lines below
                shown = _with_lines_below(fd, local, line.strip()) if name == "risk.refusal" else line.strip()
                hits.append(Hit(fd, local, shown[:200]))
                per_file[fd.filename] = per_file.get(fd.filename, 0) + 1
                if len(hits) >= per_theme:
                    break
            if len(hits) >= per_theme:
                break
        if hits:
            facts.theme_hits[name] = hits
    # statements judged by where they stand: a `pass` under an except, `except:` / `except Exception`,
    # `set +e`
    for fd, local, line in words.lines_holding(_STMT_IDS):
        m = _STMT.match(line)
        if not m:
            continue
        word, rest = m.group(1), m.group(2).strip()
        if word != "set +e" and fd.language != "Python":
            continue  # Python's statements, in a Rust test's embedded snippet or a doc, run nothing here
        if word == "pass":
            clause = None if rest else _except_before(fd.patch, local)
            if clause is None:
                continue  # an empty method, class or branch: nothing is swallowed
            line = f"+{clause} pass"  # what is swallowed, as a reader needs it
        if word == "except" and not rest.startswith((":", "Exception", "BaseException")):
            continue
        hits = facts.theme_hits.setdefault("risk.error_handling", [])
        if len(hits) >= per_theme:
            break
        hits.append(Hit(fd, local, line[1:].strip()[:200]))
        facts.risk_per_file[fd.filename] = facts.risk_per_file.get(fd.filename, 0) + 1


# `except ImportError: pass` is how code makes a dependency optional, not an error it hides.
_OPTIONAL_IMPORT = re.compile(r"except\s*\(?\s*(?:ImportError|ModuleNotFoundError)\s*\)?\s*:")


def _except_before(patch: str, line_start: int) -> str | None:
    """The `except` clause that is the code line before the one at `line_start` in the new file, if it
    is one: a `pass` there swallows that error. After a `def`, a docstring or an `if` it fills a block."""
    for line in _lines_above(patch, line_start):
        if line.startswith("@@"):
            return None  # the hunk starts here: what the block belongs to is not shown
        code = line[1:].strip()
        # a removed line, "\ No newline", a blank or a comment is not the line before in the new file
        if code and not code.startswith("#") and not line.startswith(("-", "\\")):
            return code if code.startswith("except") and not _OPTIONAL_IMPORT.match(code) else None
    return None


# The arithmetic of a training objective: a changed or removed line that computes a loss, log-prob,
# advantage, KL, entropy or gradient with a division, product, reduction or exp/log/clamp. Such a line
# decides what is optimised; a reader checks its scale and masking.
_OBJECTIVE_NAME = re.compile(r"\b\w*(?:loss|logprob|log_prob|advantage|kl|entropy|grad)\w*\b")
_ARITHMETIC = re.compile(r"\s[/*]\s|\.sum\(|\.mean\(|torch\.(?:exp|log|clamp|where|sum|mean)\(")
# `logprobs + [0.0] * pad` repeats a list literal to pad it: a length, not arithmetic (`w[i] * x` is)
_LIST_REPEAT = re.compile(r"(?<![\w\])])\[[^\[\]]*\]\s*\*\s*\w+")


def scan_loss_math(words: WordPlaces, facts: CodeFacts, per_theme: int = 8) -> None:
    """Add hits of objective arithmetic to the numerics theme: each line holding an objective's name
    is looked at once (added or removed, in program code, with arithmetic after the name)."""
    hits = facts.theme_hits.get("risk.numerics", [])
    for fd, local, line in words.lines_holding(_OBJECTIVE_IDS):
        if len(hits) >= per_theme:
            break
        if fd.role != "code" or fd.language != "Python" or line[:1] not in ("+", "-"):
            continue
        if line.startswith(("+++", "---")):
            continue
        line = line[1:]
        name = _OBJECTIVE_NAME.search(line)
        if not name:
            continue
        # padding blanked out, each character by a space: the positions found still index `line`
        math = _LIST_REPEAT.sub(lambda m: " " * len(m.group()), line)
        arithmetic = _ARITHMETIC.search(math, name.end())
        if not arithmetic:
            continue
        # both in code: `entropy = f(logits)  # (nnz / sp)` computes nothing from the division it notes
        in_code = in_program_code(line, name.start(), fd.language) and in_program_code(
            line, arithmetic.start(), fd.language
        )
        if not in_code or in_docstring(fd, local):
            continue
        hits.append(Hit(fd, local, line.strip()[:200]))
        facts.risk_per_file[fd.filename] = facts.risk_per_file.get(fd.filename, 0) + 1
    if hits:
        facts.theme_hits["risk.numerics"] = hits


# The message of a raise: its first string literal and those right after it ("..." "..." is one
# string in Python); a prefix like f or r is not part of it.
# A backslash is taken only with the character it escapes: one way to read each string, so an unclosed
# one full of backslashes fails at once instead of trying every split.
_LITERAL = re.compile(r"""\s*[rRfFbBuU]{0,2}("|')((?:\\.|(?!\1)[^\\])+)\1""")
_PLACEHOLDER = re.compile(r"\{[^{}]*\}")
_MESSAGE_LINES = 4  # a message standing on the lines after `raise NotImplementedError(`
_MESSAGE_WINDOW = 2000  # characters read for those lines


def _message(call: str) -> str | None:
    """The text of the first string a call holds, or None when it says nothing without its
    placeholders (`f"{name}: {MSG}"`)."""
    first = _LITERAL.search(call)
    if not first:
        return None
    parts, end = [first.group(2)], first.end()
    while m := _LITERAL.match(call, end):
        parts.append(m.group(2))
        end = m.end()
    # as the message reads: a newline the source spells "\\n" is a blank in a one-line item
    text = "".join(parts).replace("\\n", " ").replace('\\"', '"').replace("\\'", "'")
    text = " ".join(text.split()).rstrip(" :,.")
    if len(re.findall(r"[^\W\d_]{3,}", _PLACEHOLDER.sub("", text))) < 2:
        return None
    return text if len(text) <= 120 else text[: text.rfind(" ", 0, 120)] + " …"


def _with_lines_below(fd: FileDiff, local: int, call: str) -> str:
    """`call`, from the added line at `local`, with the added lines below that continue it when it ends
    with "(": a message often stands there, up to the closing ")"."""
    if call.rstrip().endswith("("):
        window = fd.patch[local : local + _MESSAGE_WINDOW]  # the lines below, not the rest of the patch
        for below in window.split("\n", _MESSAGE_LINES + 1)[1 : _MESSAGE_LINES + 1]:
            if not below.startswith("+") or below[1:].lstrip().startswith(")"):
                break
            call += " " + below[1:].strip()
    return call


def scan_unsupported(words: WordPlaces, facts: CodeFacts, per_pr: int = 8) -> None:
    """What the added code says it does not do: the messages of `raise NotImplementedError("...")`
    (Rust: `unimplemented!("...")`, `todo!("...")`) in program code. A case nobody built refuses
    nothing that ran before: it is an open item of the PR, not a risk. A bare one, an abstract
    method's body, says nothing."""
    for fd, local, line in words.lines_holding(_UNSUPPORTED_IDS):
        if len(facts.unsupported) >= per_pr:
            break
        if not line.startswith("+") or line.startswith("+++") or not is_program(fd):
            continue
        at = max(line.find(w) for w in _UNSUPPORTED_WORDS)
        if not in_program_code(line[1:], at - 1, fd.language) or in_docstring(fd, local):
            continue  # a docstring's example raises nothing
        told = _message(_with_lines_below(fd, local, line[at:]))
        if told:
            facts.unsupported.append(Hit(fd, local, told))


# Every theme's words in one WordFinder: one pass over a text finds them all, where a str.find per word
# read each text some thirty times.
_THEME_WORDS: list[str] = list(dict.fromkeys(w for _l, _n, words in THEMES.values() for w in words))
_THEME_WORD_FINDER = WordFinder(_THEME_WORDS)


# A word that runs on into an identifier names a thing, not a theme: `PrecisionDebugger`, `lock_timeout`
# (searched from the word's last letter: "NaN" is no identifier, "precision_aware" is one).
_IDENTIFIER_REST = re.compile(r"\w*")
_NAMED = re.compile(r"_|[a-z][A-Z]")
# "threads the config through the engine": passing a value along, not a thread
_THREADED_THROUGH = re.compile(r"thread(?:s|ed|ing)?\b[^.\n]{0,80}?\bthrough\b")


def _word_starts(text: str, low: str) -> dict[str, int]:
    """Where each theme word first occurs at a word start in `low` (`text` lowercased) as a word of
    prose: "race" is not in "trace", "hang" is not in "change", "precision" is not in
    `PrecisionDebugger`, "lock" is not in `uv.lock`. Chinese words have no word boundaries and count
    anywhere."""
    first: dict[str, int] = {}
    for wid, at, _end in _THEME_WORD_FINDER.places(low):
        word = _THEME_WORDS[wid]
        if word in first:
            continue
        if not word.isascii():
            first[word] = at
            continue
        if at and (low[at - 1].isalnum() or low[at - 1] == "_"):
            continue
        if at > 1 and low[at - 1] == "." and low[at - 2].isalnum():
            continue  # a file's extension or an attribute: `uv.lock`, `Cargo.lock`, `self.lock`
        token = text[at : _IDENTIFIER_REST.match(text, at).end()]  # "NaN" is the word itself
        if _NAMED.search(token, len(word) - 1) or (word == "thread" and _THREADED_THROUGH.match(low, at)):
            continue
        first[word] = at
    return first


def text_theme_evidence(texts: list[str]) -> dict[str, list[Evidence]]:
    """Themes named in the title and description (no file): 'fix memory leak in ...', with the
    sentence that names each."""
    out: dict[str, list[Evidence]] = {}
    lowered = [(t, t.lower()) for t in texts if t]
    found = [(text, low, _word_starts(text, low)) for text, low in lowered]
    for name, (_label, _needles, words) in THEMES.items():
        for text, low, starts in found:
            hit = next((starts[w] for w in words if w in starts), -1)
            if hit >= 0:
                a = max(low.rfind("\n", 0, hit), low.rfind(". ", 0, hit) + 1, hit - 120, 0)
                ends = [x for x in (low.find("\n", hit), low.find(". ", hit)) if x >= 0]
                sentence = text[a : min(ends + [hit + 160])].strip(" .\n")
                out.setdefault(name, []).append(Evidence(None, None, sentence))
    return out


def theme_signals(facts: CodeFacts, text_ev: dict[str, list[Evidence]], conv: Conventions) -> list[Signal]:
    if not facts.theme_hits and not text_ev:
        return []
    n_ev = int(conv.threshold("max_evidence", 3))
    described = conv.threshold("described_theme_share", 0.25)
    sigs = []
    for name, (label, _n, _w) in THEMES.items():
        hits = facts.theme_hits.get(name, [])
        tev = text_ev.get(name, []) if name != "risk.markers" else []
        if not hits and not tev:
            continue
        # the project's own lines before a sample's, from which only security is raised (risks.py)
        shown = sorted(hits, key=lambda h: conv.in_sample(h.file.filename))[:n_ev]
        ev = [Evidence(h.file.filename, h.line, h.text) for h in shown] + tev[:1]
        weight = conv.weight(name) * (1.0 if hits else described)
        sigs.append(
            Signal(
                name,
                label + (f" ({counted(len(hits), 'added line')})" if hits else " (in the description)"),
                weight,
                ev,
            )
        )
    return sigs


# ---- commands, downloads and secrets ----------------------------------------------------------------
# A command string run through a shell: subprocess with shell=True, os.system/os.popen, an asyncio shell,
# a subprocess call whose command is built from a string (f-string, format, concatenation), or an argv
# that hands a shell a command it does not spell out (`["/bin/sh", "-c", cmd]`).
_SHELL_CALL = re.compile(
    r"\bshell\s*=\s*True\b|\bos\.(?:system|popen)\(|create_subprocess_shell\(|"
    r"\bsubprocess\.\w+\(\s*(?:f[\"']|[\"'][^\"']*[\"']\s*(?:\.format\(|%|\+))|"
    r"\bPopen\(\s*(?:f[\"']|[\w.]*(?:cmd|command)\w*\s*[,)])|"
    r"[\"'](?:/(?:usr/)?bin/)?(?:ba|z|da)?sh[\"']\s*,\s*[\"']-\w*c[\"']\s*,\s*+(?![\"'])"
)
# A script that evaluates a variable's text. A command's output (`eval "$(conda shell.bash hook)"`) is
# that tool's own setup code, not input; one that downloads what it runs is an unpinned download.
_SHELL_EVAL = re.compile(r"^\s*(?:eval|bash\s+-c|sh\s+-c)\s+[\"']?\$(?!\()")
# CI that fetches code it then runs, without a version or digest pinning what it gets
_PIPE_TO_SHELL = re.compile(
    r"\b(?:curl|wget)\b[^|\n]*\|\s*(?:sudo\s+)?(?:ba|z)?sh\b|"
    r"(?:\beval|\b(?:ba|z)?sh\s+-c)\s+[\"']?\$\(\s*(?:curl|wget)\b"
)
# a URL that names one release in its path (`/releases/download/v0.14.0/`, `/ruff/0.5.0/`): pinned to it
_RELEASE_URL = re.compile(r"https?://\S*/v?\d+\.\d+[\w.-]*/")
_UNPINNED_ACTION = re.compile(r"\buses:\s*[\w.-]+/[\w./-]+@(?:main|master|latest|HEAD)\b")
# a package installed from a repository (`pip install git+https://github.com/o/r.git@main`): with no ref,
# or a branch's, it is that branch on the day the job runs; a commit or a release tag (`@4f2a9c1`,
# `@v0.5.2`, both with a digit) pins it, and so does a build argument (`@${TE_VERSION}`). scan_deps reads
# the same URLs for the ref a build file moves.
GIT_INSTALL = re.compile(r"\bgit\+\w+://(?P<url>[^\s\"'@]+)(?:@(?P<ref>[^\s\"'#]+))?")
# CI given more power than reading needs, or packages from hosts it cannot verify
_CI_ELEVATED = re.compile(
    r"--privileged\b|seccomp[=:]unconfined|\bcontents:\s*write\b|\bpull_request_target\b|"
    r"--trusted-host\b|INSECURE_HOST|unsafe-best-match|--extra-index-url\s+http://|\bverify\s*=\s*false\b",
    re.I,
)
# a secret written into a command (visible in logs and `ps`), not passed through the environment
_SECRET_FLAG = re.compile(
    r"--?(?:token|password|passwd|api[-_]?key|secret|hf[-_]token)(?:=|\s+)(?!\s*$)[\"']?[^\s\"'-]", re.I
)
_SECRET_IN_RUN = re.compile(r"\$\{\{\s*secrets\.\w+\s*\}\}")
_ENV_MAPPING = re.compile(r"^\s*-?\s*[\w-]+\s*:\s*[\"']?\$\{\{\s*secrets\.")


def _installs_a_branch(code: str) -> bool:
    """Whether a line installs a package from a repository's branch: a `git+` URL with no ref, or one
    with neither a digit nor a variable in it."""
    refs = [m.group("ref") or "" for m in GIT_INSTALL.finditer(code)]
    return any(not any(c.isdigit() or c == "$" for c in ref) for ref in refs)


def _added_code(line: str) -> str | None:
    """An added line's code without its sign and blanks; None for other lines and `#` comments."""
    if not line.startswith("+") or line.startswith("+++ "):
        return None
    code = line[1:].strip()
    return None if code.startswith("#") else code


def _is_script(fd: FileDiff) -> bool:
    return fd.role in ("ci", "build") or fd.language in SCRIPT_LANGUAGES or fd.filename.endswith(".sh")


def scan_commands(words: WordPlaces, conv: Conventions) -> list[Signal]:
    """Commands run through a shell (security.shell), secrets on command lines (security.secret_cli),
    CI and scripts that fetch and run code without pinning it (`curl | sh`, an action at @main) or
    that run with more power than they need or trust unverified package hosts (security.ci_download),
    and ones that install a package from a repository's branch (ci.branch_install)."""
    shell: list[Find] = []
    secrets: list[Find] = []
    downloads: list[Find] = []
    installs: list[Find] = []
    for fd, pos, line in words.lines_holding(_COMMAND_IDS["shell"]):
        code = _added_code(line)
        if not code or code.startswith("//"):
            continue
        if _is_script(fd):
            hit = _SHELL_EVAL.search(code)
        else:
            unsigned = line[1:]
            hit = _SHELL_CALL.search(unsigned)
            if hit and not in_program_code(unsigned, hit.start(), fd.language):
                hit = None
        if hit:
            shell.append((fd.filename, fd.patch, pos, code[:200]))
    for fd, pos, line in words.lines_holding(_COMMAND_IDS["secret"]):
        code = _added_code(line)
        if not code or code.startswith("//") or not (_is_script(fd) or fd.role == "ci"):
            continue
        if _SECRET_FLAG.search(code) or _SECRET_IN_RUN.search(code) and not _ENV_MAPPING.match(code):
            secrets.append((fd.filename, fd.patch, pos, code[:200]))
    for fd, pos, line in words.lines_holding(_COMMAND_IDS["ci"]):
        code = _added_code(line)
        if not code or not _is_script(fd):
            continue
        unpinned_run = _PIPE_TO_SHELL.search(code) and not _RELEASE_URL.search(code)
        if unpinned_run or _UNPINNED_ACTION.search(code) or _CI_ELEVATED.search(code):
            downloads.append((fd.filename, fd.patch, pos, code[:200]))
    for fd, pos, line in words.lines_holding(_COMMAND_IDS["install"]):
        code = _added_code(line)
        if code and _is_script(fd) and _installs_a_branch(code):
            installs.append((fd.filename, fd.patch, pos, code[:200]))
    return (
        counted_signals("security.shell", "commands run through a shell", shell, conv)
        + counted_signals("security.secret_cli", "secrets on command lines", secrets, conv)
        + counted_signals(
            "security.ci_download",
            "CI or scripts run unpinned downloads or with elevated rights",
            downloads,
            conv,
        )
        + counted_signals("ci.branch_install", "CI or scripts install packages from a branch", installs, conv)
    )
