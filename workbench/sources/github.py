"""Thrifty GitHub sync: PRs, diffs and discussion into the cache, with a real PyGithub client.

The pass, and why it is cheap:
- The repository is looked up once by name, then always as /repositories/{id}: a renamed repository
  keeps working, and PyGithub never meets a 301 on a URL with a query string (it would follow it
  without the query and silently list the wrong thing).
- PRs are listed 100 at a time newest-updated first and the pass stops below the watermark (the start
  of the last complete pass minus a margin, never the largest updated_at seen: a PR updated mid-crawl
  jumps to page 1 and would be missed). Page 1 is asked conditionally: a 304 costs nothing and means
  nothing changed. A PR whose cached updated_at equals the listed one is skipped.
- The list shape already holds most of the detail; the rest (counts), issue comments, reviews, review
  threads and commits come from one GraphQL query per 25 PRs. Only patches need REST (/files),
  and not even that when the head SHA has not moved.
- A cursor (the list page being worked on, and the pass's start time) is saved as the pass goes, so a
  stopped or killed pass resumes; each PR is written in one transaction, whole or absent.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from github import Auth, Github

from .. import config
from ..config import WorkbenchError
from ..records import PRRecord
from ..store import Store, iso_utc, utcnow
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

    def summary(self) -> str:
        s = (
            f"{self.repo}: {self.prs_written} PRs written, {self.skipped_unchanged} unchanged; "
            f"{self.rest_requests} REST requests, {self.not_modified} not modified (free), "
            f"{self.graphql_points} GraphQL points"
        )
        if self.stopped_reason:
            s += f"; stopped: {self.stopped_reason}"
        if self.errors:
            s += f"; {len(self.errors)} errors"
        return s


# ---- entry points ---------------------------------------------------------------------------------------------
def sync(repo: str, *, cache=None, **kw) -> SyncResult:
    """Notebook entry: `workbench.sync("owner/repo")`, with a widget progress bar."""
    from tqdm.auto import tqdm

    kw.setdefault("tqdm_cls", tqdm)
    store = Store(cache)
    try:
        return sync_repo(store, repo, **kw)
    finally:
        store.close()


def make_client(api_url: str | None = None, token: str | None = None, timeout: int = 30) -> Github:
    """A real PyGithub client with its own retries off (Transport retries properly) and no artificial
    pause between requests (0.25 s by default; GraphQL POSTs would wait 1 s as 'writes')."""
    token = token or config.github_token()
    return Github(
        base_url=config.github_api_url(api_url).rstrip("/"),
        auth=Auth.Token(token) if token else None,
        retry=None,
        per_page=PER_PAGE,
        timeout=timeout,
        seconds_between_requests=0,
        seconds_between_writes=0,
    )


def sync_repo(
    store: Store,
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
    """One pass over `repo` (see the module docstring). `wait=False` stops at a spent rate limit instead
    of waiting (stopped_reason and reset_at say so; a rerun resumes). `numbers` syncs just those PRs.
    Raises WorkbenchError for bad input (unknown repository, bad token, unreachable server) before
    anything is written."""
    if state not in ("open", "closed", "all"):
        raise WorkbenchError(f"state must be open, closed or all, not {state!r}")
    since = since_iso(since)  # a date or a span like 7d, as every command takes it
    if tqdm_cls is None:
        from tqdm import tqdm as tqdm_cls
    gh = client or make_client(api_url, token, timeout)
    transport = Transport(
        gh, wait=wait, backoff_base=backoff_base, wait_bar=sleep_with_bar(tqdm_cls) if progress else None
    )
    result = SyncResult()
    try:
        full_name, repo_id, raw, etag = _resolve_repo(transport, store, repo)
    except RateLimitStop as e:
        result.stopped_reason, result.reset_at = (
            f"rate limit spent, resets at {format_reset(e.reset_at)}",
            e.reset_at,
        )
        _copy_counters(result, transport)
        return result
    except TransientError as e:
        raise WorkbenchError(
            f"GitHub did not answer properly ({e}); nothing was written, try again later"
        ) from None
    # Only now, with the repository known to exist, does anything reach the cache.
    repo_pk = store.upsert_repo(full_name, repo_id, raw)
    if etag:
        store.set_validator(f"/repositories/{repo_id}", etag, None)
    result.repo = full_name
    result.run_id = store.start_run(repo_pk, "api")
    bar = tqdm_cls(
        desc=f"sync {full_name}",
        unit="PR",
        total=limit or (len(numbers) if numbers else None),
        disable=not progress,
        leave=progress,
    )
    has_token = gh.requester.auth is not None
    job = _Pass(store, transport, repo_pk, repo_id, full_name, result, bar, has_token=has_token)
    status = "ok"
    try:
        if numbers:
            job.run_numbers([int(n) for n in numbers])
        else:
            job.run_listing(state=state, since=since, limit=limit)
    except RateLimitStop as e:
        status = "stopped"
        result.reset_at = e.reset_at
        result.stopped_reason = f"rate limit spent, resets at {format_reset(e.reset_at)}"
    except TransientError as e:
        status = "failed"
        result.errors.append(str(e))
        result.stopped_reason = "GitHub kept failing"
    except BaseException as e:
        _copy_counters(result, transport)
        store.finish_run(
            result.run_id,
            "stopped" if isinstance(e, KeyboardInterrupt) else "failed",
            rest_requests=result.rest_requests,
            not_modified=result.not_modified,
            graphql_points=result.graphql_points,
            prs_written=result.prs_written,
            errors=result.errors + [config.redact(f"{type(e).__name__}: {e}")],
        )
        raise
    finally:
        bar.close()
    _copy_counters(result, transport)
    store.finish_run(
        result.run_id,
        status,
        rest_requests=result.rest_requests,
        not_modified=result.not_modified,
        graphql_points=result.graphql_points,
        prs_written=result.prs_written,
        errors=[config.redact(e) for e in result.errors],
        note="; ".join(x for x in [result.stopped_reason, *result.notes, *transport.counters.notes] if x)
        or None,
    )
    if status == "failed":
        raise WorkbenchError(
            f"sync of {full_name} stopped: {result.errors[-1]}; what was written is kept, a rerun resumes"
        )
    return result


def _copy_counters(result: SyncResult, t: Transport) -> None:
    result.rest_requests = t.counters.rest_requests
    result.not_modified = t.counters.not_modified
    result.graphql_points = t.counters.graphql_points


def _resolve_repo(t: Transport, store: Store, repo: str) -> tuple[str, int, dict | None, str | None]:
    """(full_name, id, raw JSON or None when unchanged, ETag). By id when we know it: renames follow."""
    known = store.repo_state(repo)
    if known.get("github_id"):
        url = f"/repositories/{known['github_id']}"
        try:
            r = t.get(url, etag=store.validator(url)[0])
        except NotFound:
            raise WorkbenchError(
                f"repository {repo} (id {known['github_id']}) is gone or not visible with this token"
            ) from None
        if r.status == 304:
            return known["full_name"], int(known["github_id"]), None, None
        return r.data["full_name"], int(r.data["id"]), r.data, r.headers.get("etag")
    if not re.fullmatch(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+", repo or ""):
        raise WorkbenchError(f"{repo!r} is not a repository name: use OWNER/REPO, e.g. verl-project/verl")
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
    ):
        self.store, self.t, self.pk, self.id, self.full_name = store, t, repo_pk, repo_id, full_name
        self.result, self.bar = result, bar
        self.owner, self.name = full_name.split("/", 1)
        # GitHub's GraphQL API refuses anonymous callers: without a token, everything goes over REST.
        self.rest_only = not has_token

    # ---- which PRs --------------------------------------------------------------------------------------
    def run_listing(self, *, state: str, since: str | None, limit: int | None) -> None:
        repo_state = self.store.repo_state(self.full_name)
        cursor = repo_state.get("cursor")
        if cursor and cursor.get("state") != state:
            cursor = None  # a pass over another state filter: start over rather than mix
        watermark = repo_state.get("watermark") if state == "all" else None
        floor = iso_utc(since) if since else (cursor or {}).get("floor", watermark)
        started_at = (cursor or {}).get("started_at") or utcnow()
        first_url = (
            f"/repositories/{self.id}/pulls?state={state}&sort=updated&direction=desc&per_page={PER_PAGE}"
        )
        url = (cursor or {}).get("page_url") or first_url
        # Page 1 unchanged since the last complete pass means no PR was updated: a free 304 ends the pass.
        conditional = url == first_url and not since and watermark is not None
        written_before = self.result.prs_written
        complete, page1_etag = False, None
        while url:
            self.store.set_cursor(
                self.pk, {"state": state, "floor": floor, "started_at": started_at, "page_url": url}
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
            self.store.set_cursor(self.pk, None)
            full_pass = state == "all" and (since is None or watermark is None or iso_utc(since) <= watermark)
            if full_pass and not self.result.errors:
                start = datetime.fromisoformat(started_at.replace("Z", "+00:00")) - WATERMARK_MARGIN
                self.store.set_watermark(self.pk, iso_utc(start))
                # Saved only now: a later 304 on page 1 must mean "everything listed is cached", and a PR
                # that failed deeper in this pass would otherwise be skipped for good.
                if page1_etag:
                    self.store.set_validator(first_url, page1_etag, None)

    def run_numbers(self, numbers: list[int]) -> None:
        """Just these PRs; leaves the watermark and cursor alone. The detail ETag makes an unchanged PR free."""
        pending = []
        for n in numbers:
            url = f"/repositories/{self.id}/pulls/{n}"
            cached = self.store.pr_updated_at(self.pk, n)
            try:
                r = self.t.get(url, etag=self.store.validator(url)[0] if cached else None)
            except NotFound:
                self.result.errors.append(f"#{n}: no such pull request in {self.full_name}")
                continue
            if r.status == 304 or cached == iso_utc(r.data.get("updated_at")):
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
                gq.batch_query([int(i["number"]) for i in items]), {"owner": self.owner, "name": self.name}
            )
        except (NotFound, HTTPStatusError) as e:
            # A server without GraphQL (some GitHub Enterprise setups) or a token GraphQL refuses:
            # REST still works, at a few requests per PR.
            self.rest_only = True
            self.result.notes.append(f"GraphQL unavailable ({e}); discussion fetched over REST")
            return self._write_batch(items)
        except TransientError:
            if len(items) == 1:
                raise
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
                self.result.errors.append(
                    f"#{n}: GraphQL gave no data ({why.get(f'p{n}') or why.get('*') or 'no reason'})"
                )
                continue
            self._write_one(item, lambda it=item, nd=node: self._record(it, nd))

    def _write_one(self, item: dict, build) -> None:
        meta = {k: item.pop(k) for k in _PRIVATE if k in item}
        try:
            record = build()
        except NotFound as e:  # the PR vanished (or became invisible) between listing and fetching
            self.result.errors.append(f"#{item['number']}: {e} answered 404")
            return
        # In --number mode the item is the detail shape; only a listing's item is stored as the list shape.
        self.store.write_pr(self.pk, record, list_json=None if meta.get("_detail") else item)
        if meta.get("_etag_url"):
            self.store.set_validator(meta["_etag_url"], meta.get("_etag"), None)
        self.result.prs_written += 1
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
        files, files_truncated = self._files(n, detail)
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

    def _files(self, n: int, detail: dict) -> tuple[list[dict], bool]:
        head = (detail.get("head") or {}).get("sha")
        cached, truncated = self.store.api_files_cached(self.pk, n, head)
        if cached:
            return [], truncated  # same head, same files: the store keeps them under the head SHA
        if detail.get("changed_files") == 0:
            return [], False
        files = self._rest_list(f"/repositories/{self.id}/pulls/{n}/files", cap=FILES_CAP)
        truncated = (detail.get("changed_files") or 0) > len(files)
        note = fill_patches(self.t, f"/repositories/{self.id}/pulls/{n}", detail, files)
        if note:
            self.result.notes.append(f"#{n}: {note}")
        return files, truncated


__all__ = ["sync", "sync_repo", "SyncResult", "make_client", "split_diff"]
