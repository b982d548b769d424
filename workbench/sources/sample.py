"""The bundled sample: everything works on a fresh machine with no token and no network.

Two parts, both under workbench/sample/:
- example-org-minirl.jsonl: a made-up repository's PRs in GitHub REST shape (diffs, discussion),
  written by build_sample.py; loaded as source "sample".
- verl_pr_facts.csv: the real verl history as facts-only PRs (figures and tags, no text), loaded as
  source "facts" for the trends charts. Its titles are synthesised from tags and kind.

Loading is idempotent: a file already loaded (same SHA-256, recorded in sync_runs) is skipped, and
a forced reload upserts the same rows.
"""

from __future__ import annotations

import csv
import hashlib
import json
import time
from dataclasses import dataclass
from pathlib import Path

from ..analysis.titles import KINDS
from ..config import WorkbenchError, sample_dir
from ..records import PRRecord
from ..store import Store, iso_utc

SAMPLE_REPO = "example-org/minirl"
VERL_REPO = "verl-project/verl"
SAMPLE_FILE = "example-org-minirl.jsonl"
FACTS_FILE = "verl_pr_facts.csv"


@dataclass
class LoadResult:
    repo: str
    prs: int
    skipped: bool  # already loaded from the same file
    seconds: float
    what: str

    def line(self) -> str:
        state = "already loaded, unchanged" if self.skipped else f"loaded in {self.seconds:.2f}s"
        return f"{self.repo}: {self.prs} {self.what} ({state})"


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _require(path: Path) -> Path:
    if not path.is_file():
        raise WorkbenchError(
            f"sample file {path} is missing: the installation is incomplete (reinstall, or restore workbench/sample/ from git, "
            f"or regenerate the made-up repository with `python workbench/sample/build_sample.py`)"
        )
    return path


def sample_records(path: Path | None = None) -> list[PRRecord]:
    """The made-up repository's PRs as records (no store involved)."""
    path = _require(path or sample_dir() / SAMPLE_FILE)
    records = []
    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                d = json.loads(line)
                records.append(
                    PRRecord(
                        repo=SAMPLE_REPO,
                        number=int(d["pr"]["number"]),
                        pr=d["pr"],
                        files=d.get("files", []),
                        issue_comments=d.get("issue_comments", []),
                        reviews=d.get("reviews", []),
                        review_comments=d.get("review_comments", []),
                        commits=d.get("commits", []),
                        source="sample",
                    )  # fmt: skip
                )
            except (ValueError, KeyError, TypeError) as e:
                raise WorkbenchError(
                    f"{path}:{lineno}: not a sample PR record ({e}); regenerate it"
                ) from None
    return records


def _kind(raw: str) -> str | None:
    k = (raw or "").strip().lower()
    k = "doc" if k == "docs" else k
    return k if k in KINDS else None  # the CSV's kind column also holds stray words from odd titles


def _flag(raw: str) -> bool:
    return (raw or "").strip().lower() in ("true", "1", "yes")


def facts_title(tags: list[str], kind: str | None, breaking: bool, revert: bool) -> str:
    """The CSV has no titles; this is what the facts say, in verl's own title style."""
    head = ("[BREAKING]" if breaking else "") + (f"[{', '.join(tags)}]" if tags else "")
    title = " ".join(x for x in (head, kind) if x) or "(no title in the facts)"
    return f'Revert "{title}"' if revert else title


def facts_records(path: Path | None = None, repo: str = VERL_REPO) -> list[PRRecord]:
    """verl's merged PRs as facts-only records: figures and tags, no text."""
    path = _require(path or sample_dir() / FACTS_FILE)
    out = []
    with path.open(encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh)
        missing = {"number", "merged_at", "author_id", "tags", "kind"} - set(reader.fieldnames or [])
        if missing:
            raise WorkbenchError(f"{path} lacks columns {sorted(missing)}: is it verl_pr_facts.csv?")
        for row in reader:
            number = int(row["number"])
            tags = [t.strip().lower() for t in (row.get("tags") or "").split(";") if t.strip()]
            kind, breaking, revert = (
                _kind(row.get("kind")),
                _flag(row.get("breaking")),
                _flag(row.get("revert")),
            )
            merged_at = iso_utc(row["merged_at"])  # the CSV carries local offsets (+08:00, -07:00, ...)
            counts = {k: int(row[k]) for k in ("changed_files", "additions", "deletions") if row.get(k)}
            extra = {
                "title_tags": ";".join(tags), "kind": kind, "breaking": int(breaking), "revert": int(revert),
                **counts,
                **{k: int(row[k]) for k in ("test_files", "doc_files", "ci_files") if row.get(k)},
                "author_id": row["author_id"], "title_synthesised": True,
            }  # fmt: skip
            pr = {
                "number": number, "title": facts_title(tags, kind, breaking, revert), "body": None,
                "state": "closed", "merged": True, "merged_at": merged_at, "closed_at": merged_at,
                "user": {"login": row["author_id"]} if row.get("author_id") else None,
                "merge_commit_sha": row.get("merge_sha") or None,
                "html_url": f"https://github.com/{repo}/pull/{number}",
                "comments": None, "review_comments": None,  # unknown, not zero
                **counts, "_extra": extra,
            }  # fmt: skip
            out.append(PRRecord(repo=repo, number=number, pr=pr, source="facts"))
    return out


def _load_one(
    store: Store, repo: str, path: Path, records_fn, what: str, *, force: bool, progress: bool
) -> LoadResult:
    t0 = time.perf_counter()
    note = f"sample {path.name} sha256={_digest(_require(path))}"
    pk = store.repo_pk(repo)
    if (
        pk is not None and not force and store.has_finished_run(pk, "sample", note)
    ):  # read-only: nothing changes
        return LoadResult(repo, store.pr_count(pk), True, time.perf_counter() - t0, what)
    pk = store.upsert_repo(repo)
    records = records_fn(path)
    run = store.start_run(pk, "sample")
    try:
        if progress:
            from tqdm.auto import tqdm

            records = tqdm(records, desc=f"sample {repo}", unit="PR")
        n = store.write_prs(pk, records)
    except BaseException as e:
        store.finish_run(run, "failed", errors=[repr(e)], note=note)
        raise
    store.finish_run(run, "ok", prs_written=n, note=note)
    return LoadResult(repo, n, False, time.perf_counter() - t0, what)


def load(store: Store, include_verl: bool = True, *, progress: bool = False, force: bool = False,
         directory: Path | None = None) -> list[LoadResult]:  # fmt: skip
    base = Path(directory) if directory else sample_dir()
    results = [
        _load_one(store, SAMPLE_REPO, base / SAMPLE_FILE, sample_records, "PRs with diffs and discussion",
                  force=force, progress=progress)
    ]  # fmt: skip
    if include_verl:
        results.append(
            _load_one(store, VERL_REPO, base / FACTS_FILE, facts_records, "facts-only PRs (figures and tags)",
                      force=force, progress=progress)
        )  # fmt: skip
    return results


def load_sample(
    store: Store, include_verl: bool = True, *, progress: bool = False, force: bool = False
) -> list[str]:
    """Load the bundled sample into `store`; return the repositories it provides.

    Quiet by default (the demo calls it); `progress=True` shows a bar. Running it twice changes
    nothing; `force=True` rewrites the same rows (after editing the sample)."""
    return [r.repo for r in load(store, include_verl, progress=progress, force=force)]
