"""A memo of analyses, so re-analysing an unchanged PR costs about as much as decoding it.

Analysis itself stays pure (`pipeline.analyze`); only orchestration (the `workbench analyze` CLI, the
review app's queue and the trends) keeps this memo, one file per repository beside the SQLite cache:
`<cache>/analysis-memo/<owner>-<repo>.pickle`, holding per PR number its fingerprint, the pickled
Analysis, the store's stamp of the PR it was computed from, and its verdict, audience and minutes.

Two ways to find an entry:
- by the record's fingerprint (`AnalysisMemo.analyze(record)`), for a record in hand;
- by the store's stamp of the PR (`Store.pr_stamps`, read from the PR rows alone, changed by every
  write of the PR), for PRs in the cache (stored.py): an unchanged PR is then neither read nor
  re-hashed, and the trends take verdicts from the entry without unpickling it.

The fingerprint covers every input `analyze` reads (title, body, author, file list with patch digests,
comments, reviews, review comments, truncation flags), plus head sha and updated_at, the conventions'
content, and the heuristics version (a constant plus a digest of the analysis modules' source, so any
code change invalidates old entries without anyone remembering to bump it). `known_prs` is the one input
left out: what analysis takes from it (cross-references' titles and states, the PR a revert names by
commit or title, re-landings) is resolved again on every hit.

The memo is only a cache: an unreadable, foreign or stale file is ignored and rewritten.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import pickle
import sys
import tempfile
import weakref
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from ..records import PRRecord
from .conventions import Conventions, default_conventions
from .discussion import resolve_refs, reverted_pr
from .model import Analysis
from .pipeline import analyze

# Bump by hand for a change in meaning the source digest would not see (e.g. a data file the heuristics read).
HEURISTICS_VERSION = "1"
# /2: entries carry the store's stamp and the verdict summary beside the fingerprint and the Analysis.
_MAGIC = "workbench-analysis-memo/2"
_version: str | None = None


def analysis_sources() -> list[Path]:
    """Every module of this package, and records.py (its accessors are part of what analysis reads)."""
    here = Path(__file__).resolve().parent
    return [here.parent / "records.py", *sorted(here.glob("*.py"))]


def heuristics_version() -> str:
    """HEURISTICS_VERSION + Python minor version + pygments version + digest of the analysis modules."""
    global _version
    if _version is None:
        h = hashlib.blake2b(digest_size=12)
        h.update(f"{HEURISTICS_VERSION}|py{sys.version_info[0]}.{sys.version_info[1]}|".encode())
        try:
            import pygments

            h.update(f"pygments {pygments.__version__}|".encode())  # lexer names decide languages/roles
        except ImportError:
            h.update(b"no pygments|")
        for path in analysis_sources():
            try:
                h.update(path.read_bytes())
            except OSError:  # a zipped or stripped install: fall back on the constant alone
                h.update(path.name.encode())
        _version = h.hexdigest()
    return _version


# Conventions are plain mutable dataclasses; their digest is computed once per object (treat loaded
# conventions as read-only: the CLI, UI and trends load them once per run).
_CONV_VERSIONS: dict[int, tuple[weakref.ref, str]] = {}
# Every field a rule can read: all public ones (a field added later is covered without a change
# here), not `sources`, which only records which files were read.
_CONV_FIELDS = tuple(
    f.name for f in fields(Conventions) if not f.name.startswith("_") and f.name != "sources"
)


def conventions_version(conv: Conventions) -> str:
    hit = _CONV_VERSIONS.get(id(conv))
    if hit is not None and hit[0]() is conv:
        return hit[1]
    data = {k: getattr(conv, k, None) for k in _CONV_FIELDS}
    digest = hashlib.blake2b(
        json.dumps(data, sort_keys=True, default=str, ensure_ascii=False).encode(), digest_size=12
    ).hexdigest()
    if len(_CONV_VERSIONS) > 1000:  # ids of collected objects are reused: drop the dead ones
        for k in [k for k, (ref, _v) in _CONV_VERSIONS.items() if ref() is None]:
            del _CONV_VERSIONS[k]
    _CONV_VERSIONS[id(conv)] = (weakref.ref(conv), digest)
    return digest


def _login(obj: Any) -> str:
    if not isinstance(obj, dict):
        return ""
    user = obj.get("user")
    if isinstance(user, dict):
        return str(user.get("login") or "")
    return str(obj.get("author") or "")


def _text(v: Any) -> str:
    return v if isinstance(v, str) else "" if v is None else str(v)


def analysis_fingerprint(record: PRRecord, conventions: Conventions | None = None) -> str:
    """A digest of everything `analyze(record, conventions=...)` reads, plus the heuristics version.

    Pure: the same record and conventions give the same fingerprint in any process. The texts (title,
    body, patches, comments) go through one CRC-32 pass at C speed, their lengths and every small field
    through BLAKE2b: two versions of one PR collide only if they keep every length and a 1-in-2**32 CRC.
    """
    conv = conventions or default_conventions(record.repo)
    pr = record.pr if isinstance(record.pr, dict) else {}
    head = pr.get("head")
    files = record.files or []
    texts = [_text(pr.get("title")), _text(pr.get("body"))]
    meta: list[str] = [
        heuristics_version(),
        conventions_version(conv),
        str(record.repo),
        str(record.number),
        str(pr.get("updated_at") or ""),
        str(head.get("sha") or "") if isinstance(head, dict) else "",
        _login(pr),
        f"{int(bool(record.files_truncated))}{int(bool(record.commits_truncated))}{len(files)}",
    ]
    # Each file dict as repr (one C call per file) with its patch replaced by the patch's length; the
    # patch text itself goes to the CRC with the other texts. Keys analysis does not read (REST URLs,
    # blob shas) only ever cause a needless miss, never a stale hit.
    light: list[Any] = []
    for f in files:
        if isinstance(f, dict) and "patch" in f:
            patch = _text(f["patch"])
            texts.append(patch)
            f = {k: (len(patch) if k == "patch" else v) for k, v in f.items()}
        light.append(f)
    meta.append(repr(light))
    for c in record.issue_comments or []:
        body = _text(c.get("body")) if isinstance(c, dict) else _text(c)
        texts.append(body)
        meta.append(f"i\x1f{_login(c)}\x1f{len(body)}")
    for r in record.reviews or []:
        if isinstance(r, dict):
            body = _text(r.get("body"))
            texts.append(body)
            meta.append(f"r\x1f{_login(r)}\x1f{r.get('state')}\x1f{len(body)}")
    for c in record.review_comments or []:
        if isinstance(c, dict):
            body = _text(c.get("body"))
            texts.append(body)
            meta.append(
                f"c\x1f{_login(c)}\x1f{c.get('id')}\x1f{c.get('in_reply_to_id')}\x1f{c.get('thread_resolved')}"
                f"\x1f{c.get('path')}\x1f{c.get('line')}\x1f{c.get('original_line')}\x1f{len(body)}"
            )
    blob = "\x1e".join(texts).encode("utf-8", "surrogatepass")
    meta.append(f"{len(texts[0])}\x1f{len(texts[1])}\x1f{len(blob)}\x1f{zlib.crc32(blob):x}")
    return hashlib.blake2b("\x1e".join(meta).encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def refresh_cross_refs(analysis: Analysis, known_prs: dict | None) -> Analysis:
    """The cross-references resolved against the current `known_prs`, exactly as `analyze` resolves
    them: titles and states, the PR a revert names by commit or quoted title, re-landings."""
    analysis.cross_refs = resolve_refs(
        analysis.cross_refs, analysis.number, known_prs, analysis.revert_commit, analysis.revert_title
    )
    analysis.reverts = reverted_pr(analysis.cross_refs)
    return analysis


# What a memo file may name when unpickled: the analysis dataclasses and nothing else, so a file planted
# in the cache directory cannot run code (pickle would otherwise import and call any global it names).
_ALLOWED = {
    ("workbench.analysis.model", n)
    for n in ("Analysis", "Signal", "Evidence", "KeyFile", "CrossRef", "Risk", "Description", "Discussion")
}


class _Unpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in _ALLOWED:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"analysis memo: {module}.{name} is not allowed")


def _loads(blob: bytes) -> Any:
    return _Unpickler(io.BytesIO(blob)).load()


def memo_path(repo: str, cache: Any = None) -> Path:
    from ..config import db_path

    slug = repo.replace("/", "-")
    return db_path(cache).parent / "analysis-memo" / f"{slug}.pickle"


@dataclass(frozen=True)
class VerdictSummary:
    """What the trends chart from a PR's analysis, kept with its memo entry: read without unpickling."""

    number: int
    verdict: str
    audience: str | None
    minutes: int | None


def _summary(a: Analysis) -> tuple:
    return (a.verdict, a.audience, a.minutes)


class AnalysisMemo:
    """Per PR number: (fingerprint, pickled Analysis, stamp key or None, (verdict, audience, minutes)),
    for one repository and one set of conventions.

    memo = AnalysisMemo.for_repo(repo, conv, cache)   # reads the file once
    a = memo.analyze(record, known_prs=known)         # a hit unpickles a fresh copy; a miss analyses
    memo.save()                                       # writes only when something changed
    """

    def __init__(self, path: str | os.PathLike | None, conventions: Conventions | None = None):
        self.path = Path(path) if path is not None else None
        self.conventions = conventions
        self.entries: dict[int, tuple] = {}
        self.hits = self.misses = 0
        self._dirty = False
        if self.path is not None and self.path.is_file():
            self._load()

    @classmethod
    def for_repo(cls, repo: str, conventions: Conventions | None = None, cache: Any = None) -> AnalysisMemo:
        return cls(memo_path(repo, cache), conventions)

    def _load(self) -> None:
        try:
            # Written by `save` below; read with the allow-list above, and anything unexpected is
            # dropped whole, never half-used.
            with open(self.path, "rb") as fh:
                magic, version, entries = _Unpickler(fh).load()
            if magic == _MAGIC and version == heuristics_version() and isinstance(entries, dict):
                self.entries = entries
        except Exception:  # noqa: BLE001 - a corrupt or foreign memo is only a cold start
            self.entries = {}

    def _stamp_key(self, stamp: tuple, repo: str) -> tuple:
        """The store's stamp says the PR is unchanged; the conventions must be unchanged too (the
        heuristics version is checked for the whole file). Without conventions, analysis uses the
        repository's defaults, and so does this key."""
        return (conventions_version(self.conventions or default_conventions(repo)), *stamp)

    def load_entry(self, entry: tuple) -> Analysis | None:
        """The Analysis an entry holds (a fresh copy), or None when its pickle is unreadable."""
        try:
            return _loads(entry[1])
        except Exception:  # noqa: BLE001
            return None

    def get(self, record: PRRecord, fingerprint: str | None = None) -> Analysis | None:
        entry = self.entries.get(record.number)
        if entry is None:
            return None
        fp = fingerprint or analysis_fingerprint(record, self.conventions)
        if entry[0] != fp:
            return None
        return self.load_entry(entry)

    def put(
        self, record: PRRecord, analysis: Analysis, fingerprint: str | None = None, stamp: tuple | None = None
    ) -> None:
        fp = fingerprint or analysis_fingerprint(record, self.conventions)
        blob = pickle.dumps(analysis, protocol=pickle.HIGHEST_PROTOCOL)
        key = self._stamp_key(stamp, record.repo) if stamp is not None else None
        self.entries[record.number] = (fp, blob, key, _summary(analysis))
        self._dirty = True

    def analyze(
        self, record: PRRecord, *, known_prs: dict | None = None, stamp: tuple | None = None
    ) -> Analysis:
        """The memo's Analysis of `record`, or a fresh one (remembered). `stamp`: the store's stamp of
        the PR the record was read from, so the next stored read finds the entry without the record."""
        fp = analysis_fingerprint(record, self.conventions)
        a = self.get(record, fp)
        if a is not None:
            self.hits += 1
            entry = self.entries[record.number]
            key = self._stamp_key(stamp, record.repo) if stamp is not None else None
            if key is not None and (len(entry) < 4 or entry[2] != key):
                self.entries[record.number] = (entry[0], entry[1], key, _summary(a))
                self._dirty = True
            return refresh_cross_refs(a, known_prs)
        self.misses += 1
        a = analyze(record, conventions=self.conventions, known_prs=known_prs)
        self.put(record, a, fp, stamp)
        return a

    def adopt(self, entries: dict[int, tuple]) -> None:
        """Entries computed elsewhere with the same conventions (another process: stored.py), as if
        analysed here."""
        self.entries.update(entries)
        self.misses += len(entries)
        self._dirty = True

    def stamped(self, repo: str, stamps: dict[int, tuple]) -> dict[int, tuple]:
        """number -> entry, for the PRs whose entry was computed from the stored PR of this stamp."""
        conv = conventions_version(self.conventions or default_conventions(repo))
        out = {}
        for n, stamp in stamps.items():
            entry = self.entries.get(n)
            if entry is not None and len(entry) == 4 and entry[2] == (conv, *stamp):
                out[n] = entry
        return out

    def save(self) -> None:
        if not self._dirty or self.path is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".memo-", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as fh:
                pickle.dump(
                    (_MAGIC, heuristics_version(), self.entries), fh, protocol=pickle.HIGHEST_PROTOCOL
                )
            os.replace(tmp, self.path)  # atomic: a reader sees the old or the new memo, never half
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
        self._dirty = False

    @contextlib.contextmanager
    def kept_if_interrupted(self) -> Iterator[AnalysisMemo]:
        """Saves what was analysed when the user interrupts (Ctrl-C): a rerun resumes after it."""
        try:
            yield self
        except KeyboardInterrupt:
            with contextlib.suppress(OSError):
                self.save()
            raise

    def __enter__(self) -> AnalysisMemo:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.save()


__all__ = [
    "HEURISTICS_VERSION",
    "AnalysisMemo",
    "VerdictSummary",
    "analysis_fingerprint",
    "conventions_version",
    "heuristics_version",
    "memo_path",
    "refresh_cross_refs",
]
