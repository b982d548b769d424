"""A loopback GitHub for the sync tests and benchmark: REST v3 and a small GraphQL, in one thread pool.

It holds an in-memory model of repositories and PRs, serves the endpoints the sync and a plain PyGithub
loop use (Link pagination, per_page, ETag/If-None-Match -> 304, rate-limit headers on every answer),
computes GraphQL cost with GitHub's published formula, counts requests by kind, and injects faults on
demand: primary limit (403 + reset), secondary limit (Retry-After), 5xx bursts, a connection dropped
mid-body, a truncated JSON body with status 200, a 301 for a renamed repository, and GraphQL errors.

    with FakeGitHub() as gh:
        repo = gh.add_repo("octo/widgets")
        generate_prs(repo, 50)
        gh.inject("503", kind="pulls", times=3)
        ... Github(base_url=gh.url) ...
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import socket
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlparse

from loopback_server import LoopbackHTTPServer

FAKE_TOKEN = "ghp_test_token_for_the_fake"  # GraphQL needs a token; the fake takes any

FILES_CAP = 3000
COMMITS_CAP = 250


def iso(dt: datetime) -> str:
    return dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# ---- the model ----------------------------------------------------------------------------------------------
@dataclass
class FakePR:
    number: int
    title: str
    body: str | None
    user: str | None  # None: a deleted account (user: null)
    created_at: str
    updated_at: str
    state: str = "open"  # open | closed
    merged_at: str | None = None
    closed_at: str | None = None
    head_sha: str = ""
    base_ref: str = "main"
    draft: bool = False
    labels: list[str] = field(default_factory=list)
    files: list[dict] = field(
        default_factory=list
    )  # REST file dicts; "_omit_patch": keep patch out of /files
    issue_comments: list[dict] = field(default_factory=list)
    reviews: list[dict] = field(default_factory=list)
    threads: list[dict] = field(default_factory=list)  # {"resolved": bool, "comments": [REST review comment]}
    commits: list[dict] = field(default_factory=list)
    diff_status: int = 200  # 406: GitHub refuses the .diff (too large)
    merge_sha: str = ""  # the merge (or squash) commit once merged; make_pr derives one, a clone may set it
    files_status: int = 200  # 5xx: /files of this PR always fails (GitHub documents such answers)

    @property
    def review_comments(self) -> list[dict]:
        return [c for t in self.threads for c in t["comments"]]


@dataclass
class FakeRepo:
    id: int
    full_name: str
    prs: dict[int, FakePR] = field(default_factory=dict)
    old_names: set[str] = field(default_factory=set)
    private: bool = False
    _ids: Any = None

    def next_id(self) -> int:
        self._ids = (self._ids or self.id * 1_000_000) + 1
        return self._ids


class Conn(list):
    """A GraphQL connection: the executor pages it by first/after."""


class GraphQLError(Exception):
    pass


# ---- the server -----------------------------------------------------------------------------------------------
class FakeGitHub:
    def __init__(self, *, token: str | None = None, rate_limit: int = 5000):
        self.token = token  # when set, a request with another token gets 401 (no token: anonymous is fine)
        self.repos: dict[int, FakeRepo] = {}
        self.counts: Counter = Counter()
        self.faults: list[dict] = []
        self.lock = threading.RLock()
        self.rate_limit = rate_limit
        self.core_used = 0
        self.graphql_used = 0
        self.reset_at = int(time.time()) + 3600
        self.log: list[tuple[str, str, int]] = []  # (method, path+query, status)
        self.graphql_enabled = True  # False: a server without GraphQL, like some Enterprise setups
        self.graphql_missing_status = 404  # what such a server answers on /graphql (404, or 501)
        self.latency = 0.0  # seconds added to every answer (the crash test needs a slow server)
        # GitHub's clock minus this machine's: the Date header and the times of new activity follow it
        # (a client whose clock runs ahead, as VMs and WSL2 do, is a negative offset).
        self.clock_offset = 0.0
        self.server = LoopbackHTTPServer(("127.0.0.1", 0), _make_handler(self))
        self.port = self.server.server_address[1]
        self.root = f"http://127.0.0.1:{self.port}"
        self.url = (
            f"{self.root}/api/v3"  # PyGithub base_url (GitHub Enterprise style); GraphQL at /api/graphql
        )
        self._thread: threading.Thread | None = None

    # lifecycle
    def start(self) -> FakeGitHub:
        self._thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> FakeGitHub:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # model
    def add_repo(self, full_name: str, repo_id: int | None = None) -> FakeRepo:
        repo_id = repo_id or 1000 + len(self.repos) + 1
        repo = FakeRepo(repo_id, full_name)
        self.repos[repo_id] = repo
        return repo

    def rename(self, repo: FakeRepo, new_full_name: str) -> None:
        with self.lock:
            repo.old_names.add(repo.full_name.lower())
            repo.full_name = new_full_name

    def find(self, full_name: str) -> tuple[FakeRepo | None, bool]:
        """(repo, moved): moved when full_name is an old name."""
        for r in self.repos.values():
            if r.full_name.lower() == full_name.lower():
                return r, False
        for r in self.repos.values():
            if full_name.lower() in r.old_names:
                return r, True
        return None, False

    def touch(self, repo: FakeRepo, number: int, *, comment: bool = False, commit: bool = False) -> None:
        """Someone commented or pushed: updated_at moves to now (and strictly forward)."""
        with self.lock:
            pr = repo.prs[number]
            server_now = datetime.now(UTC) + timedelta(seconds=self.clock_offset)
            now = max(server_now, _parse(pr.updated_at) + timedelta(seconds=1))
            pr.updated_at = iso(now)
            if comment:
                pr.issue_comments.append(
                    _comment(repo, "late-reviewer", "One more thought after merging.", now)
                )
            if commit:
                sha = _sha(f"{repo.id}-{number}-{now.isoformat()}")
                pr.commits.append(_commit(sha, "fixup: address review", pr.user, now))
                pr.head_sha = sha
                pr.files.append(
                    _file(
                        f"src/extra_{len(pr.files)}.py",
                        "added",
                        3,
                        0,
                        "@@ -0,0 +1,3 @@\n+def extra():\n+    return 1\n+",
                    )
                )

    # faults
    def inject(self, fault: str, *, kind: str | None = None, times: int = 1, **kw: Any) -> None:
        """fault: primary | secondary | secondary429 | 502 | 503 | 504 | drop | truncate | graphql_error |
        graphql_rate_limited | stall (seconds=S before answering).
        kind: the request kind it hits (pulls, pull, files, graphql, ...), any when None.
        after=K lets K matching requests through first; retry_after=S (None: no header) for secondary limits;
        reset_in=S for the primary limit; alias="pN" picks the PR a graphql_error removes."""
        with self.lock:
            self.faults.append({"fault": fault, "kind": kind, "times": times, **kw})

    def _take_fault(self, kind: str) -> dict | None:
        with self.lock:
            for f in self.faults:
                if f["times"] > 0 and (f["kind"] is None or f["kind"] == kind):
                    if f.get("after", 0) > 0:  # let this many matching requests through first
                        f["after"] -= 1
                        return None
                    f["times"] -= 1
                    return f
        return None

    # costs
    @property
    def rest_charged(self) -> int:
        """REST requests the rate limit is charged for: everything but 304s and GraphQL."""
        return sum(v for k, v in self.counts.items() if k not in ("304", "graphql", "graphql_points"))

    @property
    def graphql_points(self) -> int:
        return self.counts["graphql_points"]

    @property
    def rate_limited_requests(self) -> int:
        return self.rest_charged + self.graphql_points

    def reset_counts(self) -> None:
        with self.lock:
            self.counts.clear()
            self.log.clear()


# ---- HTTP -------------------------------------------------------------------------------------------------------
def _make_handler(gh: FakeGitHub):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):  # quiet
            pass

        def date_time_string(self, timestamp=None):  # the Date header, on the server's clock
            return super().date_time_string((timestamp or time.time()) + gh.clock_offset)

        def setup(self):
            super().setup()
            # Headers and body go out in separate writes; without NODELAY each answer waits ~40 ms for a delayed ACK.
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def do_GET(self):
            self._handle("GET")

        def do_POST(self):
            self._handle("POST")

        def _handle(self, method: str) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            try:
                _Request(gh, self, method, body).serve()
            except (BrokenPipeError, ConnectionResetError):
                pass

    return Handler


class _Request:
    def __init__(self, gh: FakeGitHub, h: BaseHTTPRequestHandler, method: str, body: bytes):
        self.gh, self.h, self.method, self.body = gh, h, method, body
        u = urlparse(h.path)
        self.path = u.path
        self.query = {k: v[-1] for k, v in parse_qs(u.query).items()}
        self.raw_query = u.query

    # ---- dispatch
    def serve(self) -> None:
        gh = self.gh
        if gh.latency:
            time.sleep(gh.latency)
        auth = self.h.headers.get("Authorization")
        if auth and gh.token and auth.split(" ", 1)[-1] != gh.token:
            return self._send(
                401,
                {"message": "Bad credentials", "documentation_url": "https://docs.github.com/rest"},
                kind="auth",
            )
        path = self.path
        if self.method == "POST" and path in ("/api/graphql", "/graphql"):
            if not gh.graphql_enabled:
                status = gh.graphql_missing_status
                return self._send(
                    status, {"message": "Not Found" if status == 404 else "Not Implemented"}, kind="other"
                )
            if not auth:  # GitHub's GraphQL API has no anonymous access
                return self._send(
                    401, {"message": "This endpoint requires you to be authenticated."}, kind="auth"
                )
            return self._graphql()
        if path.startswith("/api/v3"):
            path = path[len("/api/v3") :]
        m = re.fullmatch(r"/repos/([^/]+/[^/]+)(/.*)?", path)
        if m:
            repo, moved = gh.find(m.group(1))
            if repo is None:
                return self._send(404, {"message": "Not Found"}, kind="repo")
            if moved:  # GitHub: 301 to the id URL, query kept; PyGithub follows it without the query
                loc = f"{gh.url}/repositories/{repo.id}{m.group(2) or ''}" + (
                    f"?{self.raw_query}" if self.raw_query else ""
                )
                return self._send(
                    301,
                    {"message": "Moved Permanently", "url": loc},
                    kind="redirect",
                    headers={"Location": loc},
                )
            return self._route(repo, m.group(2) or "")
        m = re.fullmatch(r"/repositories/(\d+)(/.*)?", path)
        if m:
            repo = gh.repos.get(int(m.group(1)))
            if repo is None:
                return self._send(404, {"message": "Not Found"}, kind="repo")
            return self._route(repo, m.group(2) or "")
        if path == "/rate_limit":
            return self._send(
                200,
                {
                    "resources": {
                        "core": {
                            "limit": gh.rate_limit,
                            "remaining": gh.rate_limit - gh.core_used,
                            "reset": gh.reset_at,
                        }
                    }
                },
                kind="rate_limit_free",
            )
        return self._send(404, {"message": "Not Found"}, kind="other")

    def _route(self, repo: FakeRepo, rest: str) -> None:
        gh = self.gh
        if rest == "":
            return self._send(200, _repo_json(gh, repo), kind="repo")
        if rest == "/pulls":
            return self._pulls(repo)
        m = re.fullmatch(r"/pulls/(\d+)(/files|/comments|/reviews|/commits)?", rest)
        if m:
            pr = repo.prs.get(int(m.group(1)))
            if pr is None:
                return self._send(404, {"message": "Not Found"}, kind="pull")
            sub = m.group(2)
            if sub is None:
                if "diff" in (self.h.headers.get("Accept") or ""):
                    return self._diff(repo, pr)
                return self._send(200, _pr_json(gh, repo, pr, detail=True), kind="pull")
            if sub == "/files":
                if pr.files_status != 200:  # this PR's /files keeps failing (GitHub documents such 5xx)
                    return self._send(pr.files_status, {"message": "Server Error"}, kind="error")
                files = [
                    {
                        k: v
                        for k, v in f.items()
                        if k != "_omit_patch" and not (k == "patch" and f.get("_omit_patch"))
                    }
                    for f in pr.files[:FILES_CAP]
                ]
                return self._paged(files, "files")
            if sub == "/comments":
                return self._paged(pr.review_comments, "review_comments")
            if sub == "/reviews":
                return self._paged(pr.reviews, "reviews")
            return self._paged(pr.commits[:COMMITS_CAP], "commits")
        m = re.fullmatch(r"/issues/(\d+)/comments", rest)
        if m:
            pr = repo.prs.get(int(m.group(1)))
            return self._paged(pr.issue_comments if pr else [], "issue_comments")
        return self._send(404, {"message": "Not Found"}, kind="other")

    def _pulls(self, repo: FakeRepo) -> None:
        state = self.query.get("state", "open")
        prs = [p for p in repo.prs.values() if state == "all" or p.state == state]
        key = {"updated": lambda p: p.updated_at, "created": lambda p: p.created_at}.get(
            self.query.get("sort", "created")
        )
        prs.sort(key=lambda p: (key(p), p.number), reverse=self.query.get("direction", "desc") == "desc")
        with self.gh.lock:
            items = [_pr_json(self.gh, repo, p) for p in prs]
        return self._paged(items, "pulls")

    def _paged(self, items: list, kind: str) -> None:
        per_page = min(100, int(self.query.get("per_page", 30)))
        page = max(1, int(self.query.get("page", 1)))
        chunk = items[(page - 1) * per_page : page * per_page]
        links = []
        last = max(1, -(-len(items) // per_page))
        base = f"{self.gh.root}{self.path}"
        if page < last:
            links.append(f'<{base}?{urlencode({**self.query, "page": page + 1})}>; rel="next"')
            links.append(f'<{base}?{urlencode({**self.query, "page": last})}>; rel="last"')
        if page > 1:
            links.append(f'<{base}?{urlencode({**self.query, "page": 1})}>; rel="first"')
        return self._send(200, chunk, kind=kind, headers={"Link": ", ".join(links)} if links else None)

    def _diff(self, repo: FakeRepo, pr: FakePR) -> None:
        if pr.diff_status != 200:
            return self._send(
                pr.diff_status,
                {"message": "Sorry, the diff exceeded the maximum number of files"},
                kind="diff",
            )
        return self._send(200, _diff_text(pr), kind="diff", content_type="text/plain; charset=utf-8")

    # ---- GraphQL
    def _graphql(self) -> None:
        gh = self.gh
        fault = gh._take_fault("graphql")
        if (
            fault and fault["fault"] == "graphql_rate_limited"
        ):  # GitHub's GraphQL way: 200 with a RATE_LIMITED error
            reset = int(time.time()) + int(fault.get("reset_in", 3600))
            return self._send(
                200,
                {"errors": [{"type": "RATE_LIMITED", "message": "API rate limit exceeded"}]},
                kind=None,
                headers={"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": str(reset)},
                rate_headers=False,
            )
        if fault and fault["fault"] not in ("graphql_error",):
            return self._fault(fault, "graphql")
        try:
            req = json.loads(self.body or b"{}")
            doc = parse_graphql(req.get("query", ""))
            cost = graphql_cost(doc, req.get("variables") or {})
            with gh.lock:
                gh.graphql_used += cost
                gh.counts["graphql_points"] += cost
                gh.counts["graphql"] += 1
                errors: list[dict] = []
                data = _execute(doc, _QueryRoot(gh, cost, errors), req.get("variables") or {}, [], errors)
            if fault:  # graphql_error: one aliased PR fails, the rest still answers
                alias = fault.get("alias")
                repo_data = data.get("repository") or {}
                victims = [alias] if alias in repo_data else list(repo_data)[:1]
                for a in victims:
                    repo_data[a] = None
                    errors.append(
                        {"type": "INTERNAL", "path": ["repository", a], "message": "Something went wrong"}
                    )
            payload = {"data": data}
            if errors:
                payload["errors"] = errors
            return self._send(200, payload, kind=None, resource="graphql")
        except GraphQLError as e:
            return self._send(200, {"errors": [{"message": str(e)}]}, kind=None, resource="graphql")

    # ---- sending
    def _fault(self, fault: dict, kind: str) -> None:
        gh, f = self.gh, fault["fault"]
        if f == "primary":
            reset = int(time.time()) + int(fault.get("reset_in", 3600))
            return self._send(
                403,
                {
                    "message": "API rate limit exceeded for 127.0.0.1. (But here's the good news: ...)",
                    "documentation_url": "https://docs.github.com/rest/rate-limit",
                },
                kind="limited",
                headers={"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": str(reset)},
                rate_headers=False,
            )
        if f in ("secondary", "secondary429"):
            headers = (
                {"Retry-After": str(fault.get("retry_after", 7))}
                if fault.get("retry_after", 7) is not None
                else {}
            )
            return self._send(
                403 if f == "secondary" else 429,
                {
                    "message": "You have exceeded a secondary rate limit. Please wait a few minutes before you try again."
                },
                kind="limited",
                headers=headers,
            )
        if f in ("502", "503", "504"):
            return self._send(int(f), {"message": "Server Error"}, kind="error")
        if f in ("drop", "truncate"):
            gh.counts[kind] += 1
            data = json.dumps([{"number": 1, "title": "x" * 400}] * 20).encode()
            cut = data[: len(data) // 2]
            self.h.send_response(200)
            self.h.send_header("Content-Type", "application/json; charset=utf-8")
            self.h.send_header("Content-Length", str(len(data) if f == "drop" else len(cut)))
            if f == "drop":
                self.h.send_header("Connection", "close")
            self.h.end_headers()
            self.h.wfile.write(cut)
            self.h.wfile.flush()
            if f == "drop":
                self.h.close_connection = True
                try:
                    self.h.connection.shutdown(2)
                except OSError:
                    pass
            return None
        raise ValueError(f"unknown fault {f}")

    def _send(
        self,
        status: int,
        payload: Any,
        *,
        kind: str | None,
        headers: dict | None = None,
        content_type: str = "application/json; charset=utf-8",
        resource: str = "core",
        rate_headers: bool = True,
    ) -> None:
        gh = self.gh
        if kind is not None and status < 400 and kind not in ("redirect",):
            fault = gh._take_fault(kind)
            if fault and fault["fault"] == "stall":  # answer, but only after the client has given up
                time.sleep(fault.get("seconds", 2.0))
            elif fault:
                return self._fault(fault, kind)
        if isinstance(payload, str):
            data = payload.encode("utf-8", "surrogateescape")
        else:
            # surrogateescape: lone surrogates in a patch go out as the raw non-UTF-8 bytes they stand for
            data = json.dumps(payload, ensure_ascii=False).encode("utf-8", "surrogateescape")
        etag = 'W/"' + hashlib.sha1(data).hexdigest() + '"'
        with gh.lock:
            if self.method == "GET" and status == 200 and self.h.headers.get("If-None-Match") == etag:
                status, data = 304, b""
                gh.counts["304"] += 1
            elif kind is not None:
                gh.counts[kind] += 1
                if kind != "rate_limit_free":
                    gh.core_used += 1
            gh.log.append((self.method, self.h.path, status))
        self.h.send_response(status)
        self.h.send_header("Content-Type", content_type)
        self.h.send_header("Content-Length", str(len(data)))
        self.h.send_header("ETag", etag)
        if rate_headers:
            used = gh.graphql_used if resource == "graphql" else gh.core_used
            self.h.send_header("X-RateLimit-Limit", str(gh.rate_limit))
            self.h.send_header("X-RateLimit-Remaining", str(max(0, gh.rate_limit - used)))
            self.h.send_header("X-RateLimit-Reset", str(gh.reset_at))
            self.h.send_header("X-RateLimit-Used", str(used))
            self.h.send_header("X-RateLimit-Resource", resource)
        for k, v in (headers or {}).items():
            self.h.send_header(k, v)
        self.h.end_headers()
        if data:
            self.h.wfile.write(data)


# ---- JSON shapes ----------------------------------------------------------------------------------------------------
def _user_json(gh: FakeGitHub, login: str | None) -> dict | None:
    if login is None:
        return None
    return {
        "login": login,
        "id": abs(hash(login)) % 10_000_000,
        "type": "User",
        "url": f"{gh.url}/users/{login}",
        "html_url": f"https://github.com/{login}",
    }


def _repo_json(gh: FakeGitHub, repo: FakeRepo) -> dict:
    owner, name = repo.full_name.split("/")
    return {
        "id": repo.id,
        "node_id": f"R_{repo.id}",
        "name": name,
        "full_name": repo.full_name,
        "owner": _user_json(gh, owner),
        "private": repo.private,
        "default_branch": "main",
        "html_url": f"https://github.com/{repo.full_name}",
        "url": f"{gh.url}/repos/{repo.full_name}",
    }


def _pr_json(gh: FakeGitHub, repo: FakeRepo, pr: FakePR, detail: bool = False) -> dict:
    url = f"{gh.url}/repos/{repo.full_name}/pulls/{pr.number}"
    d = {
        "url": url,
        "id": repo.id * 100_000 + pr.number,
        "node_id": f"PR_{repo.id}_{pr.number}",
        "html_url": f"https://github.com/{repo.full_name}/pull/{pr.number}",
        "diff_url": f"https://github.com/{repo.full_name}/pull/{pr.number}.diff",
        "issue_url": f"{gh.url}/repos/{repo.full_name}/issues/{pr.number}",
        "number": pr.number,
        "state": pr.state,
        "locked": False,
        "title": pr.title,
        "user": _user_json(gh, pr.user),
        "body": pr.body,
        "labels": [{"name": x, "color": "ededed"} for x in pr.labels],
        "created_at": pr.created_at,
        "updated_at": pr.updated_at,
        "closed_at": pr.closed_at,
        "merged_at": pr.merged_at,
        "merge_commit_sha": (pr.merge_sha or _sha(f"merge-{pr.number}")) if pr.merged_at else None,
        "draft": pr.draft,
        "head": {"label": f"fork:{pr.number}", "ref": f"feature-{pr.number}", "sha": pr.head_sha},
        "base": {
            "label": "main",
            "ref": pr.base_ref,
            "sha": _sha(f"base-{pr.number}"),
            "repo": {"id": repo.id, "full_name": repo.full_name},
        },
        "author_association": "CONTRIBUTOR",
        "requested_reviewers": [],
        "assignees": [],
        "milestone": None,
        "review_comments_url": f"{url}/comments",
        "commits_url": f"{url}/commits",
        "comments_url": f"{gh.url}/repos/{repo.full_name}/issues/{pr.number}/comments",
    }
    if detail:
        d.update(
            {
                "merged": pr.merged_at is not None,
                "mergeable": None,
                "merged_by": _user_json(gh, "maintainer") if pr.merged_at else None,
                "comments": len(pr.issue_comments),
                "review_comments": len(pr.review_comments),
                "commits": len(pr.commits),
                "additions": sum(f["additions"] for f in pr.files),
                "deletions": sum(f["deletions"] for f in pr.files),
                "changed_files": len(pr.files),
            }
        )
    return d


def _diff_text(pr: FakePR) -> str:
    out = []
    for f in pr.files:
        old = f.get("previous_filename") or f["filename"]
        out.append(f"diff --git a/{old} b/{f['filename']}")
        if f["status"] == "renamed":
            out += ["similarity index 90%", f"rename from {old}", f"rename to {f['filename']}"]
        if f.get("_binary"):
            out.append(f"Binary files a/{old} and b/{f['filename']} differ")
            continue
        if f.get("patch"):
            out += ["index 1111111..2222222 100644", f"--- a/{old}", f"+++ b/{f['filename']}", f["patch"]]
    return "\n".join(out) + "\n"


# ---- GraphQL: a parser for the subset we send, an executor, and GitHub's cost formula ------------------------------------
@dataclass
class GField:
    alias: str | None
    name: str
    args: dict
    selections: list[GField] | None


_TOKEN = re.compile(
    r'\s+|,|#[^\n]*|("(?:[^"\\]|\\.)*")|(\.\.\.|[{}():!$=\[\]@])|(-?\d+)|([_A-Za-z][_0-9A-Za-z]*)'
)


def _tokens(src: str) -> list[str]:
    out, pos = [], 0
    while pos < len(src):
        m = _TOKEN.match(src, pos)
        if not m:
            raise GraphQLError(f"Parse error at {pos}")
        pos = m.end()
        if m.lastindex:
            out.append(m.group(m.lastindex))
    return out


def parse_graphql(src: str) -> list[GField]:
    toks = _tokens(src)
    i = 0

    def expect(t: str) -> None:
        nonlocal i
        if i >= len(toks) or toks[i] != t:
            raise GraphQLError(f"expected {t!r} at token {i}")
        i += 1

    def value() -> Any:
        nonlocal i
        t = toks[i]
        i += 1
        if t == "$":
            name = toks[i]
            i += 1
            return ("$", name)
        if t.startswith('"'):
            return json.loads(t)
        if re.fullmatch(r"-?\d+", t):
            return int(t)
        return {"true": True, "false": False, "null": None}.get(t, t)

    def selection_set() -> list[GField]:
        nonlocal i
        expect("{")
        fields = []
        while toks[i] != "}":
            name, alias = toks[i], None
            i += 1
            if toks[i] == ":":
                i += 1
                alias, name = name, toks[i]
                i += 1
            args = {}
            if toks[i] == "(":
                i += 1
                while toks[i] != ")":
                    k = toks[i]
                    i += 1
                    expect(":")
                    args[k] = value()
                i += 1
            sel = selection_set() if toks[i] == "{" else None
            fields.append(GField(alias, name, args, sel))
        i += 1
        return fields

    if toks and toks[0] in ("query",):
        i = 1
        if toks[i] not in ("(", "{"):
            i += 1  # operation name
        if toks[i] == "(":
            depth = 0
            while True:
                depth += toks[i] == "("
                depth -= toks[i] == ")"
                i += 1
                if depth == 0:
                    break
    return selection_set()


def _arg(v: Any, variables: dict) -> Any:
    return variables.get(v[1]) if isinstance(v, tuple) else v


def graphql_cost(doc: list[GField], variables: dict) -> int:
    """GitHub: each connection needs as many requests as its parents' first/last allow; sum, / 100, >= 1."""
    total = 0

    def walk(fields: list[GField], mult: int) -> None:
        nonlocal total
        for f in fields:
            first = _arg(f.args.get("first", f.args.get("last")), variables)
            child = mult
            if isinstance(first, int):
                total += mult
                child = mult * first
            if f.selections:
                walk(f.selections, child)

    walk(doc, 1)
    return max(1, round(total / 100))


def _execute(fields: list[GField], obj: Any, variables: dict, path: list, errors: list) -> Any:
    if obj is None:
        return None
    out = {}
    for f in fields:
        key = f.alias or f.name
        args = {k: _arg(v, variables) for k, v in f.args.items()}
        v = obj.resolve(f.name, args, path + [key], errors) if hasattr(obj, "resolve") else obj.get(f.name)
        if isinstance(v, Conn):
            v = _page(v, args)
        if f.selections is not None and v is not None:
            if isinstance(v, list):
                v = [_execute(f.selections, x, variables, path + [key], errors) for x in v]
            else:
                v = _execute(f.selections, v, variables, path + [key], errors)
        out[key] = v
    return out


def _page(conn: Conn, args: dict) -> dict:
    start = int(args["after"].split(":")[1]) if args.get("after") else 0
    first = int(args.get("first") or 100)
    if first > 100:
        raise GraphQLError("first must be <= 100")
    nodes = conn[start : start + first]
    end = start + len(nodes)
    return {
        "totalCount": len(conn),
        "nodes": nodes,
        "pageInfo": {"hasNextPage": end < len(conn), "endCursor": f"c:{end}" if nodes else None},
    }


class _QueryRoot:
    def __init__(self, gh: FakeGitHub, cost: int, errors: list):
        self.gh, self.cost = gh, cost

    def resolve(self, name: str, args: dict, path: list, errors: list) -> Any:
        if name == "rateLimit":
            return {
                "cost": self.cost,
                "limit": self.gh.rate_limit,
                "remaining": self.gh.rate_limit - self.gh.graphql_used,
                "resetAt": iso(datetime.fromtimestamp(self.gh.reset_at, UTC)),
            }
        if name == "repository":
            repo, _ = self.gh.find(f"{args.get('owner')}/{args.get('name')}")
            if repo is None:
                errors.append(
                    {"type": "NOT_FOUND", "path": path, "message": "Could not resolve to a Repository"}
                )
                return None
            return _RepoNode(self.gh, repo)
        raise GraphQLError(f"Field '{name}' doesn't exist on type 'Query'")


class _RepoNode:
    def __init__(self, gh: FakeGitHub, repo: FakeRepo):
        self.gh, self.repo = gh, repo

    def resolve(self, name: str, args: dict, path: list, errors: list) -> Any:
        if name == "pullRequest":
            pr = self.repo.prs.get(int(args["number"]))
            if pr is None:
                errors.append(
                    {
                        "type": "NOT_FOUND",
                        "path": path,
                        "message": f"Could not resolve to a PullRequest with the number of {args['number']}.",
                    }
                )
                return None
            return _gql_pr(pr)
        if name in ("id", "databaseId"):
            return self.repo.id
        if name == "nameWithOwner":
            return self.repo.full_name
        raise GraphQLError(f"Field '{name}' doesn't exist on type 'Repository'")


def _author(user: dict | None) -> dict | None:
    """A REST user as GitHub's GraphQL shows it: a Bot's login without the "[bot]" REST adds."""
    if not user:
        return None
    is_bot = user.get("type") == "Bot" or user["login"].endswith("[bot]")
    login = user["login"].removesuffix("[bot]") if is_bot else user["login"]
    return {"login": login, "__typename": "Bot" if is_bot else "User"}


def _ids(rest_id: int | None) -> dict:
    """fullDatabaseId is a BigInt, sent as a string; the deprecated databaseId is an Int, null past 2^31."""
    if rest_id is None:
        return {"fullDatabaseId": None, "databaseId": None}
    return {"fullDatabaseId": str(rest_id), "databaseId": rest_id if rest_id < 2**31 else None}


def _gql_pr(pr: FakePR) -> dict:
    def comment(c: dict) -> dict:
        return {
            **_ids(c["id"]),
            "author": _author(c.get("user")),
            "body": c["body"],
            "createdAt": c["created_at"],
            "updatedAt": c["updated_at"],
            "url": c.get("html_url"),
            "authorAssociation": "CONTRIBUTOR",
        }

    def review(r: dict) -> dict:
        return {
            **_ids(r["id"]),
            "author": _author(r.get("user")),
            "state": r["state"],
            "body": r["body"],
            "submittedAt": r["submitted_at"],
            "url": r.get("html_url"),
            "authorAssociation": "MEMBER",
            "commit": {"oid": r.get("commit_id")},
        }

    def thread_comment(c: dict) -> dict:
        return {
            **_ids(c["id"]),
            "author": _author(c.get("user")),
            "body": c["body"],
            "path": c["path"],
            "line": c.get("line"),
            "originalLine": c.get("original_line"),
            "diffHunk": c.get("diff_hunk"),
            "createdAt": c["created_at"],
            "updatedAt": c["updated_at"],
            "url": c.get("html_url"),
            "authorAssociation": "MEMBER",
            "replyTo": _ids(c["in_reply_to_id"]) if c.get("in_reply_to_id") else None,
            "commit": {"oid": c.get("commit_id")},
            "originalCommit": {"oid": c.get("original_commit_id")},
            "pullRequestReview": _ids(c.get("pull_request_review_id")),
        }

    def commit(c: dict) -> dict:
        a = c["commit"]["author"]
        return {
            "commit": {
                "oid": c["sha"],
                "message": c["commit"]["message"],
                "authoredDate": a["date"],
                "committedDate": a["date"],
                "author": {
                    "name": a["name"],
                    "email": a["email"],
                    "date": a["date"],
                    "user": _author(c.get("author")),
                },
                "committer": {
                    "name": a["name"],
                    "email": a["email"],
                    "date": a["date"],
                    "user": _author(c.get("author")),
                },
            }
        }

    return {
        "number": pr.number,
        **_ids(pr.number),
        "title": pr.title,
        "additions": sum(f["additions"] for f in pr.files),
        "deletions": sum(f["deletions"] for f in pr.files),
        "changedFiles": len(pr.files),
        "merged": pr.merged_at is not None,
        "mergedBy": {"login": "maintainer", "__typename": "User"} if pr.merged_at else None,
        "mergeCommit": {"oid": pr.merge_sha or _sha(f"merge-{pr.number}")} if pr.merged_at else None,
        "comments": Conn(comment(c) for c in pr.issue_comments),
        "reviews": Conn(review(r) for r in pr.reviews),
        "reviewThreads": Conn(
            {
                "isResolved": t["resolved"],
                "isOutdated": False,
                "comments": Conn(thread_comment(c) for c in t["comments"]),
            }
            for t in pr.threads
        ),
        "commits": Conn(commit(c) for c in pr.commits),
    }


# ---- realistic data -------------------------------------------------------------------------------------------------
def _sha(seed: str) -> str:
    return hashlib.sha1(seed.encode()).hexdigest()


def _parse(s: str) -> datetime:
    return datetime.fromisoformat(s.replace("Z", "+00:00"))


def _comment(repo: FakeRepo, login: str | None, body: str, when: datetime) -> dict:
    cid = repo.next_id()
    return {
        "id": cid,
        "user": {"login": login} if login else None,
        "body": body,
        "created_at": iso(when),
        "updated_at": iso(when),
        "html_url": f"https://github.com/{repo.full_name}/issues/x#issuecomment-{cid}",
        "author_association": "CONTRIBUTOR",
    }


def _commit(sha: str, message: str, login: str | None, when: datetime) -> dict:
    return {
        "sha": sha,
        "commit": {
            "message": message,
            "author": {"name": login or "ghost", "email": f"{login}@example.com", "date": iso(when)},
            "committer": {"name": login or "ghost", "email": f"{login}@example.com", "date": iso(when)},
        },
        "author": {"login": login} if login else None,
        "committer": {"login": login} if login else None,
    }


def _file(name: str, status: str, adds: int, dels: int, patch: str | None, **kw: Any) -> dict:
    f = {
        "sha": _sha(name),
        "filename": name,
        "status": status,
        "additions": adds,
        "deletions": dels,
        "changes": adds + dels,
        "blob_url": f"https://github.com/x/blob/{name}",
    }
    if patch is not None:
        f["patch"] = patch
    f.update(kw)
    return f


def make_patch(rng: random.Random, func: str, adds: int, dels: int) -> str:
    start = rng.randint(1, 400)
    lines = [f"@@ -{start},{dels + 3} +{start},{adds + 3} @@ def {func}(self):", "     context = setup()"]
    lines += [f"-    old_value_{i} = compute({i})" for i in range(dels)]
    lines += [f"+    new_value_{i} = compute({i}, fast=True)" for i in range(adds)]
    lines += ["     return context", " "]
    return "\n".join(lines)


AREAS = ["rollout", "trainer", "vllm", "sglang", "megatron", "fsdp", "ci", "docs", "data", "reward"]
KINDS = ["fix", "feat", "refactor", "perf", "chore", "doc"]
PEOPLE = ["alice", "bob", "chen-wei", "dmitri", "eve", "farah", "gao", "hiro", "ines", "jun"]


def make_pr(
    repo: FakeRepo,
    number: int,
    rng: random.Random,
    when: datetime,
    *,
    n_files: int | None = None,
    user: str | None | bool = True,
) -> FakePR:
    login = rng.choice(PEOPLE) if user is True else user
    area, kind = rng.choice(AREAS), rng.choice(KINDS)
    created = when
    updated = when + timedelta(hours=rng.randint(1, 72))
    roll = rng.random()
    state, merged_at, closed_at = "open", None, None
    if roll < 0.7:
        state, merged_at, closed_at = "closed", iso(updated), iso(updated)
    elif roll < 0.8:
        state, closed_at = "closed", iso(updated)
    pr = FakePR(
        number=number,
        title=f"[{area}] {kind}: improve {area} handling of batch {number}",
        body=f"## What\nThis changes how {area} handles batches.\n\n## Why\nFixes #{max(1, number - 7)}: "
        f"a race between the {area} worker and the trainer.\n\n## Test\n`pytest tests/{area}`",
        user=login,
        created_at=iso(created),
        updated_at=iso(updated),
        state=state,
        merged_at=merged_at,
        closed_at=closed_at,
        head_sha=_sha(f"head-{repo.id}-{number}"),
        labels=[area],
        draft=state == "open" and rng.random() < 0.1,
    )
    nf = n_files if n_files is not None else rng.choice([1, 1, 2, 3, 3, 4, 5, 6, 8, 12])
    for i in range(nf):
        adds, dels = rng.randint(1, 40), rng.randint(0, 15)
        path = f"verl/{area}/module_{number}_{i}.py" if i else f"verl/{area}/{area}_worker.py"
        pr.files.append(
            _file(
                path,
                rng.choice(["modified", "modified", "added"]),
                adds,
                dels,
                make_patch(rng, f"step_{i}", adds, dels),
            )
        )
    t = created
    for i in range(rng.randint(1, 6)):
        t += timedelta(minutes=rng.randint(5, 200))
        pr.commits.append(_commit(_sha(f"c-{repo.id}-{number}-{i}"), f"{kind}({area}): step {i}", login, t))
    if pr.commits:
        pr.head_sha = pr.commits[-1]["sha"]
    if rng.random() < 0.85:
        for _ in range(rng.randint(1, 5)):
            t += timedelta(minutes=rng.randint(5, 300))
            pr.issue_comments.append(
                _comment(repo, rng.choice(PEOPLE), f"Looks reasonable; did you check {area} on 8 GPUs?", t)
            )
    if rng.random() < 0.85:
        for _ in range(rng.randint(1, 3)):
            t += timedelta(minutes=rng.randint(5, 300))
            rid = repo.next_id()
            reviewer = rng.choice(PEOPLE)
            pr.reviews.append(
                {
                    "id": rid,
                    "user": {"login": reviewer},
                    "body": "A few comments inline.",
                    "state": rng.choice(["COMMENTED", "APPROVED", "CHANGES_REQUESTED"]),
                    "submitted_at": iso(t),
                    "commit_id": pr.head_sha,
                    "html_url": f"https://github.com/{repo.full_name}/pull/{number}#pullrequestreview-{rid}",
                }
            )
            for _ in range(rng.randint(0, 3)):
                fname = rng.choice(pr.files)["filename"] if pr.files else "src/a.py"
                root = _review_comment(
                    repo, reviewer, fname, "Could this leak the buffer on error?", t, rid, pr.head_sha
                )
                thread = {"resolved": rng.random() < 0.6, "comments": [root]}
                if rng.random() < 0.5:
                    reply = _review_comment(
                        repo, login, fname, "Good catch, fixed.", t + timedelta(minutes=9), rid, pr.head_sha
                    )
                    reply["in_reply_to_id"] = root["id"]
                    thread["comments"].append(reply)
                pr.threads.append(thread)
    repo.prs[number] = pr
    return pr


def _review_comment(
    repo: FakeRepo, login: str | None, path: str, body: str, when: datetime, review_id: int, sha: str
) -> dict:
    cid = repo.next_id()
    return {
        "id": cid,
        "pull_request_review_id": review_id,
        "user": {"login": login} if login else None,
        "body": body,
        "path": path,
        "line": 12,
        "original_line": 12,
        "diff_hunk": "@@ -1,3 +1,4 @@\n context",
        "created_at": iso(when),
        "updated_at": iso(when),
        "commit_id": sha,
        "original_commit_id": sha,
        "html_url": f"https://github.com/{repo.full_name}/pull/x#discussion_r{cid}",
    }


def generate_prs(repo: FakeRepo, n: int, *, seed: int = 7, start: int = 1) -> list[FakePR]:
    """n PRs numbered from `start`, spread over the past year, most with reviews and comments."""
    rng = random.Random(seed)
    base = datetime(2025, 1, 1, tzinfo=UTC)
    return [
        make_pr(repo, start + i, rng, base + timedelta(hours=20 * i + rng.randint(0, 10))) for i in range(n)
    ]


def add_edge_prs(repo: FakeRepo, start: int) -> dict[str, int]:
    """PRs that exercise the odd corners; returns {name: number}."""
    rng = random.Random(99)
    base = datetime(2026, 1, 1, tzinfo=UTC)
    out = {}
    pr = make_pr(repo, start, rng, base, n_files=0, user=None)  # deleted author
    pr.files = [_file("src/a.py", "modified", 2, 1, "@@ -1,2 +1,3 @@\n-x = 1\n+x = 2\n+y = 3\n z")]
    out["null_user"] = start
    pr = make_pr(repo, start + 1, rng, base + timedelta(hours=1), n_files=0)
    big = "@@ -1,0 +1,400 @@\n" + "\n".join(f"+line {i}" for i in range(400))
    pr.files = [
        _file(
            "docs/new_name.md",
            "renamed",
            1,
            1,
            "@@ -1 +1 @@\n-old title\n+new title",
            previous_filename="docs/old_name.md",
        ),
        _file("assets/logo.png", "added", 0, 0, None, _binary=True),
        _file(
            "data/huge.json", "added", 400, 0, big, _omit_patch=True
        ),  # /files leaves it out; the .diff has it
        _file(
            "src/latin1.py", "modified", 1, 1, "@@ -1 +1 @@\n-name = 'caf\udce9'\n+name = 'caf\udce9 au lait'"
        ),
    ]
    out["odd_files"] = start + 1
    pr = make_pr(repo, start + 2, rng, base + timedelta(hours=2), n_files=0)
    pr.files = [
        _file(f"gen/file_{i:05d}.py", "added", 1, 0, f"@@ -0,0 +1 @@\n+VALUE = {i}") for i in range(3100)
    ]
    t = base
    pr.commits = [
        _commit(_sha(f"many-{i}"), f"step {i}", pr.user, t + timedelta(minutes=i)) for i in range(260)
    ]
    pr.head_sha = pr.commits[-1]["sha"]
    out["huge"] = start + 2
    pr = make_pr(repo, start + 3, rng, base + timedelta(hours=3), n_files=0)
    pr.files = [_file("data/enormous.json", "added", 3000, 0, None, _omit_patch=True)]
    pr.diff_status = 406
    out["diff_refused"] = start + 3
    return out


def make_clone(repo: FakeRepo, path) -> Path:
    """A squash-merged git history of the repository's merged PRs (subject "title (#N)", one commit per
    PR touching its files), in merge order, written with one `git fast-import`; each merged PR's
    merge_sha becomes its commit, as GitHub's merge_commit_sha names the squash commit."""
    import subprocess

    path = Path(path)
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(path)], check=True)
    merged = sorted((p for p in repo.prs.values() if p.merged_at), key=lambda p: (p.merged_at, p.number))
    out: list[bytes] = []
    for mark, pr in enumerate(merged, start=1):
        when = int(_parse(pr.merged_at).timestamp())
        who = f"{pr.user or 'ghost'} <{pr.user or 'ghost'}@users.noreply.github.com> {when} +0000"
        msg = f"{pr.title} (#{pr.number})\n\n{pr.body or ''}\n".encode()
        out += [b"commit refs/heads/main\n", f"mark :{mark}\n".encode(), f"author {who}\n".encode(),
                f"committer {who}\n".encode(), f"data {len(msg)}\n".encode(), msg]  # fmt: skip
        if mark > 1:
            out.append(f"from :{mark - 1}\n".encode())
        for f in pr.files:
            body = "".join(f"# #{pr.number} line {i}\n" for i in range(int(f["additions"]) or 1)).encode()
            out += [
                f"M 100644 inline {f['filename']}\n".encode(),
                f"data {len(body)}\n".encode(),
                body,
                b"\n",
            ]
        out.append(b"\n")
    marks = path / "marks.txt"
    subprocess.run(["git", "-C", str(path), "fast-import", "--quiet", f"--export-marks={marks}"],
                   input=b"".join(out), check=True)  # fmt: skip
    shas = dict(line.split() for line in marks.read_text().splitlines())
    for mark, pr in enumerate(merged, start=1):
        pr.merge_sha = shas[f":{mark}"]
    marks.unlink()
    return path


__all__ = [
    "make_clone",
    "FakeGitHub",
    "FakeRepo",
    "FakePR",
    "generate_prs",
    "add_edge_prs",
    "make_pr",
    "parse_graphql",
    "graphql_cost",
    "assert_whole",
]


# ---- test helpers ---------------------------------------------------------------------------------------------------
def assert_whole(store, repo_name: str, repo: FakeRepo, number: int) -> None:
    """The cached PR has exactly what the fake holds (files up to GitHub's cap, every comment, commits up to 250)."""
    fake = repo.prs[number]
    rec = store.pr(repo_name, number)
    assert rec.number == number and rec.title == fake.title
    assert len(rec.files) == min(len(fake.files), FILES_CAP), (number, len(rec.files), len(fake.files))
    assert len(rec.issue_comments) == len(fake.issue_comments), number
    assert len(rec.reviews) == len(fake.reviews), number
    assert len(rec.review_comments) == len(fake.review_comments), number
    assert len(rec.commits) == min(len(fake.commits), COMMITS_CAP), number
    assert rec.pr["head"]["sha"] == fake.head_sha
