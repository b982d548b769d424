"""Thrifty GitHub sync: PRs, diffs and discussion into the cache, with a real PyGithub client.

The pass, and why it is cheap:
- The repository is looked up once by name, then always as /repositories/{id}: a renamed repository
  keeps working, and PyGithub never meets a 301 on a URL with a query string (it would follow it
  without the query and silently list the wrong thing).
- PRs are listed 100 at a time newest-updated first and the pass stops below the watermark (the start
  of the last complete full-history pass minus a margin, on GitHub's clock from the Date header: never
  the largest updated_at seen, nor this machine's clock). Page 1 is asked conditionally: a 304 costs
  nothing and means nothing changed. A PR whose cached updated_at equals the listed one is skipped.
- The list shape already holds most of the detail; the rest (counts), issue comments, reviews, review
  threads and commits come from one GraphQL query per 25 PRs. Only patches need REST (/files), and
  not even that when the head SHA has not moved, or when a clone backfill holds the PR's merge commit.
- A cursor per scope (the full history, a --since date, a --state filter) is saved as the pass goes,
  so a stopped or killed pass resumes as what it was; only a completed full-history pass moves the
  watermark. Each PR is written in one transaction, whole or absent, with the run's progress.

And why it stays correct: a PR that keeps failing is recorded (sync_failures) and retried first by the
next pass while this one goes on; one writer per repository and cache (the run log is the lock,
store/runs.py); every run is logged from its first moment; arguments are checked before anything is
requested or written, and a new cache is created only once GitHub has confirmed the repository.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime

from github import Auth, Github

from .. import config
from ..config import WorkbenchError
from ..records import PRRecord
from ..store import Store, SyncBusy, iso_utc, utcnow
from ..store.runs import FULL_SCOPE
from ..store.schema import damaged_cache_as_error
from ..timespan import since_iso
from . import github_graphql as gq
from .github_files import fill_patches, split_diff
from .github_http import (
    NETWORK_ERRORS,
    HTTPStatusError,
    NotFound,
    RateLimitStop,
    TransientError,
    Transport,
    format_reset,
    sleep_with_bar,
)

PER_PAGE = 100
WATERMARK_MARGIN = timedelta(minutes=5)
FILES_CAP = 3000  # GitHub's /files stops at 3,000 files
BATCH_RETRIES = 1  # a GraphQL batch of several PRs is halved after its second failed attempt
# One PR failing is that PR's problem (recorded, retried next pass); this many in a row is GitHub's.
FAILURES_IN_A_ROW_STOP = 3
_PRIVATE = ("_etag_url", "_etag", "_detail")  # bookkeeping riding on an item, never stored


@dataclass
class SyncResult:
    prs_written: int = 0
    rest_requests: int = 0
    not_modified: int = 0
    graphql_points: int = 0
    stopped_reason: str | None = None  # None: the pass completed
    errors: list[str] = field(default_factory=list)
    run_id: int | None = None
    skipped_unchanged: int = 0
    repo: str | None = None
    reset_at: float | None = None  # when the primary limit resets, if it stopped us
    notes: list[str] = field(default_factory=list)  # limits met on the way (a refused .diff), not failures
    failed: dict[int, str] = field(default_factory=dict)  # PR number -> why it could not be synced
    resolved: bool = False  # the repository lookup answered (a stop before it wrote nothing)

    def summary(self) -> str:
        if not self.resolved:
            return (
                f"{self.repo}: stopped before the repository lookup: {self.stopped_reason}; nothing written"
            )
        s = (
            f"{self.repo}: {self.prs_written} PRs written, {self.skipped_unchanged} unchanged; "
            f"{self.rest_requests} REST requests, {self.not_modified} not modified (free), "
            f"{self.graphql_points} GraphQL points"
        )
        if self.stopped_reason:
            s += f"; stopped: {self.stopped_reason}"
        if self.failed:
            shown = ", ".join(f"#{n}" for n in sorted(self.failed)[:10])
            more = f" and {len(self.failed) - 10} more" if len(self.failed) > 10 else ""
            s += f"; {len(self.failed)} PRs failed ({shown}{more}): the next sync retries them first"
        other = len(self.errors) - len(self.failed)
        if other > 0:
            s += f"; {other} errors"
        return s


# ---- entry points ---------------------------------------------------------------------------------------------
def sync(repo: str, *, cache=None, **kw) -> SyncResult:
    """Notebook entry: `workbench.sync("owner/repo")`, with a widget progress bar."""
    from tqdm.auto import tqdm

    kw.setdefault("tqdm_cls", tqdm)
    return sync_repo(cache, repo, **kw)


def make_client(api_url: str | None = None, token: str | None = None, timeout: int = 30) -> Github:
    """A real PyGithub client with its own retries off (Transport retries properly) and no artificial
    pause between requests (0.25 s by default; GraphQL POSTs would wait 1 s as 'writes')."""
    token = token or config.github_token()
    return Github(
        base_url=config.check_api_url(config.github_api_url(api_url)).rstrip("/"),
        auth=Auth.Token(token) if token else None,
        retry=None,
        per_page=PER_PAGE,
        timeout=timeout,
        seconds_between_requests=0,
        seconds_between_writes=0,
    )


def check_sync_args(
    repo: str,
    *,
    state: str = "all",
    since: str | None = None,
    limit: int | None = None,
    numbers: list[int] | None = None,
) -> str | None:
    """Refuse bad arguments before anything is requested or written; returns `since` as UTC ISO."""
    if not re.fullmatch(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+", repo or ""):
        raise WorkbenchError(f"{repo!r} is not a repository name: use OWNER/REPO, e.g. verl-project/verl")
    if state not in ("open", "closed", "all"):
        raise WorkbenchError(f"state must be open, closed or all, not {state!r}")
    if limit is not None and (isinstance(limit, bool) or int(limit) < 1):
        raise WorkbenchError(f"--limit must be a positive number of PRs, not {limit!r}")
    bad = [n for n in numbers or [] if isinstance(n, bool) or int(n) < 1]
    if bad:
        raise WorkbenchError(f"--number takes PR numbers (1 or more), not {bad[0]!r}")
    if numbers and (since or limit):
        raise WorkbenchError("--number names the PRs itself: leave out --since and --limit")
    return since_iso(since)  # a date or a span like 7d, as every command takes it


def sync_repo(
    store: Store | str | os.PathLike | None,
    repo: str,
    *,
    state: str = "all",
    since: str | None = None,
    limit: int | None = None,
    numbers: list[int] | None = None,
    wait: bool = True,
    api_url: str | None = None,
    token: str | None = None,
    progress: bool = True,
    tqdm_cls=None,
    backoff_base: float = 1.0,
    client: Github | None = None,
    timeout: int = 30,
) -> SyncResult:
    """One pass over `repo` (see the module docstring) into `store`: an open Store, or a cache path
    (None: the default), opened only once there is something to write. `wait=False` stops at a spent
    rate limit instead of waiting (stopped_reason and reset_at say so; a rerun resumes). `numbers`
    syncs just those PRs. Raises WorkbenchError for bad input (bad arguments, unknown repository, bad
    token, unreachable server) before anything is written, and SyncBusy when another sync is writing
    this repository into this cache."""
    since = check_sync_args(repo, state=state, since=since, limit=limit, numbers=numbers)
    scope = PassScope(state, since, limit, tuple(int(n) for n in numbers or ()))
    if tqdm_cls is None:
        from tqdm import tqdm as tqdm_cls
    gh = client or make_client(api_url, token, timeout)
    cache = _Cache(store)
    try:
        with damaged_cache_as_error(cache.path):
            return _sync(cache, repo, scope, gh, wait=wait, backoff_base=backoff_base, progress=progress,
                         tqdm_cls=tqdm_cls)  # fmt: skip
    finally:
        cache.close()


class _Cache:
    """The cache, opened now if it exists (so the run is logged from its first moment), else created
    only once GitHub has confirmed the repository: a bad token, an unknown repository or an unreachable
    server leaves no new cache behind."""

    def __init__(self, store: Store | str | os.PathLike | None):
        self.owned = not isinstance(store, Store)
        if isinstance(store, Store):
            self.store: Store | None = store
            self.path = store.path
            return
        self.store, self.path = None, config.db_path(store)
        if self.path.parent.exists() and not self.path.parent.is_dir():
            raise WorkbenchError(
                f"--cache {self.path.parent} is a file, not a directory: give a directory (the cache is "
                f"{config.DB_FILENAME} inside it) or a path ending in .db"
            )
        if self.path.exists():
            self.store = Store(self.path)

    def open(self) -> Store:
        if self.store is None:
            self.store = Store(self.path)
        return self.store

    def close(self) -> None:
        if self.owned and self.store is not None:
            self.store.close()


@dataclass(frozen=True)
class PassScope:
    """Which PRs one pass covers: every one (the full history), or a part of them."""

    state: str = "all"
    since: str | None = None  # UTC ISO
    limit: int | None = None
    numbers: tuple[int, ...] = ()

    def label(self) -> str:
        """What the run covers, for the run log and `workbench status`: its first word is its class."""
        if self.numbers:
            label = "numbers " + " ".join(f"#{n}" for n in self.numbers[:20])
        elif self.since:
            label = f"since {self.since}" + ("" if self.state == "all" else f" state {self.state}")
        elif self.state != "all":
            label = f"state {self.state}"
        else:
            label = "full"
        return label + (f" limit {self.limit}" if self.limit else "")


def _sync(
    cache: _Cache,
    repo: str,
    scope: PassScope,
    gh: Github,
    *,
    wait: bool,
    backoff_base: float,
    progress: bool,
    tqdm_cls,
) -> SyncResult:
    result = SyncResult(repo=repo)
    log = _RunLog(cache, result, scope.label())
    transport = Transport(
        gh,
        wait=wait,
        backoff_base=backoff_base,
        wait_bar=sleep_with_bar(tqdm_cls) if progress else None,
        on_pause=log.waiting,
    )
    log.transport = transport
    log.begin(repo)  # only if the cache exists: refuses when another sync holds the repository
    try:
        full_name, repo_id, raw, etag = _resolve_repo(transport, cache.store, repo)
    except RateLimitStop as e:
        result.stopped_reason, result.reset_at = (
            f"rate limit spent, resets at {format_reset(e.reset_at)}",
            e.reset_at,
        )
        log.finish("stopped")
        return result
    except TransientError as e:
        result.errors.append(str(e))
        log.finish("failed")
        raise WorkbenchError(
            f"GitHub did not answer properly ({e}); nothing was written, try again later"
        ) from None
    except BaseException as e:
        result.errors.append(config.redact(f"{type(e).__name__}: {e}"))
        log.finish("stopped" if isinstance(e, KeyboardInterrupt) else "failed")
        raise
    # Only now, with the repository known to exist, does anything reach the cache.
    store = cache.open()
    result.repo, result.resolved = full_name, True
    repo_pk = store.upsert_repo(full_name, repo_id, raw)
    log.attach(repo_pk)  # the run claims the repository (SyncBusy if another sync holds it)
    if etag:
        store.set_validator(f"/repositories/{repo_id}", etag, None)
    bar = tqdm_cls(
        desc=f"sync {full_name}",
        unit="PR",
        total=scope.limit or (len(scope.numbers) if scope.numbers else None),
        disable=not progress,
        leave=progress,
    )
    has_token = gh.requester.auth is not None
    job = _Pass(store, transport, repo_pk, repo_id, full_name, result, bar, has_token=has_token, log=log)
    status = "ok"
    try:
        if scope.numbers:
            job.run_numbers(list(scope.numbers))
        else:
            job.retry_failed()
            job.run_listing(state=scope.state, since=scope.since, limit=scope.limit)
    except RateLimitStop as e:
        status = "stopped"
        result.reset_at = e.reset_at
        result.stopped_reason = f"rate limit spent, resets at {format_reset(e.reset_at)}"
    except TransientError as e:
        status = "failed"
        result.errors.append(str(e))
        result.stopped_reason = "GitHub kept failing"
    except BaseException as e:
        result.errors.append(config.redact(f"{type(e).__name__}: {e}"))
        log.finish("stopped" if isinstance(e, KeyboardInterrupt) else "failed")
        raise
    finally:
        bar.close()
    if status == "ok" and result.failed:
        status = "partial"  # the pass went through, but some PRs are owed to the next one
    log.finish(status)
    if status == "failed":
        raise WorkbenchError(
            f"sync of {full_name} stopped: {result.errors[-1]}; what was written is kept, a rerun resumes"
        )
    return result


class _RunLog:
    """The run's row in sync_runs, kept current as the run goes: a killed run shows what it did, and a
    run that stops before the repository lookup is logged too (when the cache already exists)."""

    def __init__(self, cache: _Cache, result: SyncResult, scope: str):
        self.cache, self.result, self.scope = cache, result, scope
        self.run_id: int | None = None
        self.started = utcnow()
        self.transport: Transport | None = None

    def begin(self, repo: str) -> None:
        if self.cache.store is not None:
            self.run_id = self.cache.store.start_run(None, "api", repo_name=repo, scope=self.scope)
            self.result.run_id = self.run_id

    def attach(self, repo_pk: int) -> None:
        store = self.cache.open()
        if self.run_id is None:  # a new cache: the run is logged from here, claiming the repository
            self.run_id = store.start_run(repo_pk, "api", repo_name=self.result.repo, scope=self.scope)
            self.result.run_id = self.run_id
        else:
            try:
                store.attach_run(self.run_id, repo_pk)
            except SyncBusy:
                self.finish("refused")
                raise
        self.update()

    def counters(self) -> dict:
        if self.transport is not None:
            _copy_counters(self.result, self.transport)
        r = self.result
        return dict(
            rest_requests=r.rest_requests,
            not_modified=r.not_modified,
            graphql_points=r.graphql_points,
            prs_written=r.prs_written,
            failed_prs=len(r.failed),
        )

    def update(self, note: str | None = None) -> None:
        if self.run_id is not None and self.cache.store is not None:
            self.cache.store.update_run(self.run_id, **self.counters(), note=note)

    def waiting(self, seconds: float, why: str) -> None:
        """Before a long pause: the row says the run is waiting, and what it has spent so far."""
        self.update(note=f"waiting {seconds:.0f} s: {why}")

    def finish(self, status: str) -> None:
        if self.run_id is None or self.cache.store is None:
            return
        counts = self.counters()
        notes = [self.result.stopped_reason, *self.result.notes]
        if self.transport is not None:
            notes += self.transport.counters.notes
        self.cache.store.finish_run(
            self.run_id,
            status,
            **counts,
            errors=[config.redact(e) for e in self.result.errors],
            note="; ".join(x for x in notes if x) or None,
        )


def _copy_counters(result: SyncResult, t: Transport) -> None:
    result.rest_requests = t.counters.rest_requests
    result.not_modified = t.counters.not_modified
    result.graphql_points = t.counters.graphql_points


def _resolve_repo(t: Transport, store: Store | None, repo: str) -> tuple[str, int, dict | None, str | None]:
    """(full_name, id, raw JSON or None when unchanged, ETag). By id when we know it: renames follow."""
    known = store.repo_state(repo) if store is not None else None
    if known is not None and known.github_id:
        url = f"/repositories/{known.github_id}"
        try:
            r = t.get(url, etag=store.validator(url)[0])
        except NotFound:
            raise WorkbenchError(
                f"repository {repo} (id {known.github_id}) is gone or not visible with this token"
            ) from None
        if r.status == 304:
            return known.full_name, int(known.github_id), None, None
        return r.data["full_name"], int(r.data["id"]), r.data, r.headers.get("etag")
    try:
        # A renamed repository answers 301 to /repositories/{id}; PyGithub follows it (no query here to lose).
        r = t.get(f"/repos/{repo}")
    except NotFound:
        raise WorkbenchError(
            f"unknown repository {repo}: GitHub answered 404 (check the spelling; a private repository needs "
            "GITHUB_TOKEN)"
        ) from None
    except NETWORK_ERRORS as e:
        raise WorkbenchError(f"cannot reach GitHub: {type(e).__name__}") from None
    return r.data["full_name"], int(r.data["id"]), r.data, r.headers.get("etag")


def _server_time(t: Transport) -> datetime:
    """GitHub's clock, from the Date header of the pass's first answer: a watermark from the local
    clock would skip PRs updated in between when this machine runs ahead (VMs, WSL2), and the page-1
    ETag would then hide the loss for good. The local clock only when the server sent no Date."""
    if t.server_date:
        try:
            return parsedate_to_datetime(t.server_date).astimezone(UTC)
        except (TypeError, ValueError):
            pass
    return datetime.now(UTC)


class _Pass:
    def __init__(
        self,
        store: Store,
        t: Transport,
        repo_pk: int,
        repo_id: int,
        full_name: str,
        result: SyncResult,
        bar,
        has_token: bool = True,
        log: _RunLog | None = None,
    ):
        self.store, self.t, self.pk, self.id, self.full_name = store, t, repo_pk, repo_id, full_name
        self.result, self.bar, self.log = result, bar, log
        self.owner, self.name = full_name.split("/", 1)
        # GitHub's GraphQL API refuses anonymous callers: without a token, everything goes over REST.
        self.rest_only = not has_token
        self.failures_in_a_row = 0
        self.retrying = False

    # ---- which PRs --------------------------------------------------------------------------------------
    def run_listing(self, *, state: str, since: str | None, limit: int | None) -> None:
        """List newest-updated first down to the floor. Each scope (the full history, a state filter,
        a --since date) has its own cursor: an interrupted pass is resumed only by a pass of the same
        scope, and only a completed full-history pass moves the watermark."""
        scope = state if since is None else f"{state} since {since}"
        repo_state = self.store.repo_state(self.full_name)
        cursor = repo_state.cursors.get(scope) if repo_state else None
        watermark = repo_state.watermark if repo_state else None
        floor = since or (cursor or {}).get("floor", watermark if scope == FULL_SCOPE else None)
        started_at = (cursor or {}).get("started_at") or iso_utc(_server_time(self.t))
        first_url = (
            f"/repositories/{self.id}/pulls?state={state}&sort=updated&direction=desc&per_page={PER_PAGE}"
        )
        url = (cursor or {}).get("page_url") or first_url
        # Page 1 unchanged since the last complete pass means no PR was updated: a free 304 ends the pass.
        conditional = url == first_url and scope == FULL_SCOPE and watermark is not None
        written_before = self.result.prs_written
        complete, page1_etag = False, None
        while url:
            self.store.set_cursor(
                self.pk, {"state": state, "floor": floor, "started_at": started_at, "page_url": url}, scope
            )
            etag = self.store.validator(url)[0] if conditional and url == first_url else None
            page = self.t.get(url, etag=etag)
            if page.status == 304:
                complete = True
                break
            pending, stop = [], False
            for item in page.data or []:
                updated = iso_utc(item.get("updated_at"))
                if floor and updated and updated < floor:
                    stop = complete = True
                    break
                if limit and self.result.prs_written - written_before + len(pending) >= limit:
                    stop = True
                    self.result.stopped_reason = f"--limit {limit} reached; a rerun continues"
                    break
                if int(item["number"]) in self.result.failed:
                    continue  # failed once in this pass already (as an owed PR): it stays owed
                if self.store.pr_updated_at(self.pk, int(item["number"])) == updated:
                    self.result.skipped_unchanged += 1
                    continue
                pending.append(item)
                if len(pending) == gq.BATCH_SIZE:
                    self._write_batch(pending)
                    pending = []
            self._write_batch(pending)
            if url == first_url:
                page1_etag = page.headers.get("etag")
            if stop:
                break
            url = page.next_url
            complete = url is None
        if complete:
            self.store.set_cursor(self.pk, None, scope)
            if scope == FULL_SCOPE:
                # Everything a narrower pass (--since, --state) left unfinished is covered now.
                self.store.clear_cursors(self.pk)
                # PRs that failed on the way are in sync_failures, retried first by the next pass, so the
                # watermark may move: a page-1 304 later cannot hide them.
                start = datetime.fromisoformat(started_at.replace("Z", "+00:00")) - WATERMARK_MARGIN
                self.store.set_watermark(self.pk, iso_utc(start))
                if page1_etag:
                    self.store.set_validator(first_url, page1_etag, None)

    def retry_failed(self) -> None:
        """PRs an earlier pass could not sync go first, whatever this pass's scope."""
        owed = [n for n, _ in self.store.failures(self.pk)]
        if owed:
            self.retrying = True
            try:
                self.run_numbers(owed, retry=True)
            finally:
                self.retrying = False

    def run_numbers(self, numbers: list[int], retry: bool = False) -> None:
        """Just these PRs; leaves the watermark and cursor alone. The detail ETag makes an unchanged PR
        free (not for a retry: the PR is owed whatever its ETag says)."""
        pending = []
        for n in numbers:
            url = f"/repositories/{self.id}/pulls/{n}"
            cached = self.store.pr_updated_at(self.pk, n)
            try:
                r = self.t.get(url, etag=self.store.validator(url)[0] if cached and not retry else None)
            except NotFound:
                if retry:  # deleted or hidden since it failed: nothing is owed any more
                    self.store.clear_failure(self.pk, n)
                    self.result.notes.append(f"#{n}: gone from {self.full_name} (404); no longer retried")
                else:
                    self.result.errors.append(f"#{n}: no such pull request in {self.full_name}")
                continue
            if r.status == 304 or (cached == iso_utc(r.data.get("updated_at")) and not retry):
                self.result.skipped_unchanged += 1
                continue
            r.data["_etag_url"], r.data["_etag"], r.data["_detail"] = url, r.headers.get("etag"), True
            pending.append(r.data)
            if len(pending) == gq.BATCH_SIZE:
                self._write_batch(pending)
                pending = []
        self._write_batch(pending)

    # ---- fetching and writing ---------------------------------------------------------------------------
    def _write_batch(self, items: list[dict]) -> None:
        if not items:
            return
        if self.rest_only:
            for item in items:
                self._write_one(item, lambda it=item: self._record_rest(it))
            return
        try:
            data, errors = self.t.graphql(
                gq.batch_query([int(i["number"]) for i in items]),
                {"owner": self.owner, "name": self.name},
                # A batch that times out twice is too heavy for GitHub to resolve in time: splitting
                # it is the cure, more retries at full size are not (a lone PR gets every retry).
                max_retries=BATCH_RETRIES if len(items) > 1 else None,
            )
        except (NotFound, HTTPStatusError) as e:
            # A server without GraphQL (404/501: some GitHub Enterprise proxies and compatible
            # servers) or a token GraphQL refuses: REST still works, at a few requests per PR.
            self.rest_only = True
            what = f"HTTP {e.status}" if isinstance(e, HTTPStatusError) else "HTTP 404"
            self.result.notes.append(
                f"GraphQL unavailable ({what}); discussion fetched over REST for the rest of this pass"
            )
            return self._write_batch(items)
        except TransientError as e:
            if len(items) == 1:  # a lone PR whose query keeps failing: that PR's failure, not the pass's
                return self._failed(int(items[0]["number"]), str(e))
            # GitHub times out (502) on queries that are heavy to resolve: halve the batch and go on.
            half = len(items) // 2
            self._write_batch(items[:half])
            return self._write_batch(items[half:])
        repo_node = data.get("repository") or {}
        why = {}
        for e in errors:
            path = e.get("path") or []
            why[path[1] if len(path) > 1 else "*"] = e.get("message", "error")
        for item in items:
            n = int(item["number"])
            node = repo_node.get(f"p{n}")
            if not node:
                self._failed(n, f"GraphQL gave no data ({why.get(f'p{n}') or why.get('*') or 'no reason'})")
                continue
            self._write_one(item, lambda it=item, nd=node: self._record(it, nd))

    def _failed(self, n: int, why: str) -> None:
        """Record PR n as failed (with the error) and go on; the next pass retries it first. Several PRs
        failing in a row is GitHub failing, not one PR: the pass then stops (a rerun resumes)."""
        why = config.redact(why)
        self.result.failed[n] = why
        self.result.errors.append(f"#{n}: {why}")
        self.store.record_failure(self.pk, n, why)
        if self.retrying:
            return  # owed PRs failing again is expected; it says nothing about GitHub as a whole
        self.failures_in_a_row += 1
        if self.failures_in_a_row >= FAILURES_IN_A_ROW_STOP:
            raise TransientError(f"{self.failures_in_a_row} PRs in a row failed, the last #{n}: {why}")

    def _write_one(self, item: dict, build) -> None:
        meta = {k: item.pop(k) for k in _PRIVATE if k in item}
        n = int(item["number"])
        try:
            record = build()
        except NotFound as e:  # the PR vanished (or became invisible) between listing and fetching
            self._failed(n, f"{e} answered 404")
            return
        except (TransientError, ValueError) as e:  # retries ran out on this PR alone, or bad data
            self._failed(n, str(e))
            return
        except HTTPStatusError as e:
            if e.status == 401:  # the token, not this PR: every other PR would fail the same way
                raise
            self._failed(n, str(e))  # e.g. a 422 GitHub gives for this PR alone
            return
        self.result.failed.pop(n, None)
        # In --number mode the item is the detail shape; only a listing's item is stored as the list shape.
        # One transaction: the PR, its failure cleared, and the run's count of PRs written.
        with self.store.transaction():
            self.store.write_pr(self.pk, record, list_json=None if meta.get("_detail") else item)
            self.store.clear_failure(self.pk, n)
            if meta.get("_etag_url"):
                self.store.set_validator(meta["_etag_url"], meta.get("_etag"), None)
            self.result.prs_written += 1
            if self.log is not None:
                self.log.update()
        self.failures_in_a_row = 0
        self.bar.update(1)
        self.bar.set_postfix(
            rest=self.t.counters.rest_requests, gql=self.t.counters.graphql_points, refresh=False
        )

    def _record_rest(self, item: dict) -> PRRecord:
        """REST only (no token: GitHub's GraphQL needs one). Child lists whose count is zero are skipped."""
        n = int(item["number"])
        base = f"/repositories/{self.id}/pulls/{n}"
        detail = dict(item) if "changed_files" in item else dict(self.t.get(base).data)
        comments = (
            self._rest_list(f"/repositories/{self.id}/issues/{n}/comments") if detail.get("comments") else []
        )
        review_comments = self._rest_list(f"{base}/comments") if detail.get("review_comments") else []
        reviews = self._rest_list(f"{base}/reviews")  # no count in the detail: always asked
        commits = self._rest_list(f"{base}/commits", cap=gq.COMMITS_CAP) if detail.get("commits") else []
        return self._assemble(
            n, detail, comments, reviews, review_comments, commits, detail.get("commits") or 0
        )

    def _record(self, item: dict, node: dict) -> PRRecord:
        n = int(item["number"])
        comments = self._complete(n, node, "comments")
        reviews = self._complete(n, node, "reviews")
        threads = self._complete(n, node, "reviewThreads")
        commits_nodes = self._complete(n, node, "commits", cap=gq.COMMITS_CAP)
        review_comments, incomplete = gq.review_comments_from_threads(threads)
        # A thread longer than a batch page: REST has every comment, GraphQL says which are resolved.
        if incomplete:
            resolved = gq.resolved_by_root(threads)
            review_comments = self._rest_list(f"/repositories/{self.id}/pulls/{n}/comments")
            for c in review_comments:
                c["thread_resolved"] = resolved.get(c.get("in_reply_to_id") or c["id"])
        detail = dict(item)
        detail.update(gq.detail_fields(node))
        detail["review_comments"] = len(review_comments)
        commits_total = (node.get("commits") or {}).get("totalCount") or len(commits_nodes)
        return self._assemble(
            n,
            detail,
            [gq.issue_comment(x) for x in comments],
            [gq.review(x) for x in reviews],
            review_comments,
            [gq.commit(x) for x in commits_nodes[: gq.COMMITS_CAP]],
            commits_total,
        )

    def _assemble(
        self,
        n: int,
        detail: dict,
        comments: list[dict],
        reviews: list[dict],
        review_comments: list[dict],
        commits: list[dict],
        commits_total: int,
    ) -> PRRecord:
        """The record of PR `n` from its REST-shaped parts, whichever API gave them; files come here."""
        files, files_truncated, files_source = self._files(n, detail)
        return PRRecord(
            repo=self.full_name,
            number=n,
            pr=detail,
            files=files,
            issue_comments=comments,
            reviews=reviews,
            review_comments=review_comments,
            commits=commits[: gq.COMMITS_CAP],
            source="api",
            files_truncated=files_truncated,
            commits_truncated=commits_total > gq.COMMITS_CAP,
            field_sources={"files": files_source} if files_source else {},
        )

    def _complete(self, n: int, node: dict, name: str, cap: int | None = None) -> list[dict]:
        """All nodes of one connection: the batch's first page, then this PR's further pages."""
        conn = node.get(name) or {}
        nodes = list(conn.get("nodes") or [])
        info = conn.get("pageInfo") or {}
        while info.get("hasNextPage") and (cap is None or len(nodes) < cap):
            data, errors = self.t.graphql(
                gq.page_query(n, name),
                {"owner": self.owner, "name": self.name, "after": info.get("endCursor")},
            )
            conn = ((data.get("repository") or {}).get("pullRequest") or {}).get(name)
            if not conn:
                raise TransientError(f"#{n}: could not page {name}: {errors[:1]}")
            nodes.extend(conn.get("nodes") or [])
            info = conn.get("pageInfo") or {}
        return nodes

    def _rest_list(self, url: str, cap: int | None = None) -> list[dict]:
        out: list[dict] = []
        next_url: str | None = f"{url}?per_page={PER_PAGE}"
        while next_url and (cap is None or len(out) < cap):
            r = self.t.get(next_url)
            out.extend(r.data or [])
            next_url = r.next_url
        return out

    def _files(self, n: int, detail: dict) -> tuple[list[dict], bool, str | None]:
        """(files to write, truncated, where they come from: "api", "git", or None when unchanged).
        /files is the one per-PR REST request of a sync, so it is asked only when nothing cached
        answers: not when the API's files for this head are cached, and not for a merged PR whose merge
        commit a clone backfill holds (the squash or merge commit's diff is the PR's diff)."""
        head = (detail.get("head") or {}).get("sha")
        cached, truncated = self.store.api_files_cached(self.pk, n, head)
        if cached:
            return [], truncated, None  # same head, same files: the store keeps them under the head SHA
        merged = bool(detail.get("merged") or detail.get("merged_at"))
        if merged:
            from_clone, truncated = self.store.clone_files(self.pk, n, detail.get("merge_commit_sha"))
            if from_clone:
                return [], truncated, "git"
        if detail.get("changed_files") == 0:
            return [], False, None
        files = self._rest_list(f"/repositories/{self.id}/pulls/{n}/files", cap=FILES_CAP)
        truncated = (detail.get("changed_files") or 0) > len(files)
        note = fill_patches(self.t, f"/repositories/{self.id}/pulls/{n}", detail, files)
        if note:
            self.result.notes.append(f"#{n}: {note}")
        return files, truncated, "api"


__all__ = [
    "sync",
    "sync_repo",
    "check_sync_args",
    "SyncResult",
    "make_client",
    "split_diff",
]
