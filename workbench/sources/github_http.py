"""HTTP to GitHub through PyGithub's requester, with the retries and rate-limit handling PyGithub lacks.

Why not PyGithub's own retry: its GithubRetry retries 10 times without backoff (a 504 burst is spent in
half a second), raises requests' RetryError instead of a GithubException, never retries a truncated
body or broken JSON, and ignores a 429 without Retry-After. So the client is built with retry=None and
every request goes through `Transport.request`, which retries what is worth retrying and counts what
the rate limit is charged for (REST responses other than 304, GraphQL points).
"""

from __future__ import annotations

import http.client
import json
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import requests
import urllib3

from ..config import WorkbenchError, redact

# Tests replace these to keep backoff instant; production sleeps for real.
_sleep: Callable[[float], None] = time.sleep
_now: Callable[[], float] = time.time
_jitter: Callable[[], float] = random.random  # in [0, 1): spreads the retries of many clients apart

# GitHub's guidance for a secondary limit that names no Retry-After: wait at least a minute, and wait
# exponentially longer while it keeps happening. The cap keeps one wait under a quarter of an hour.
SECONDARY_DEFAULT_WAIT = 60.0
SECONDARY_MAX_WAIT = 900.0
SECONDARY_JITTER = 0.25  # up to +25 % on top of each such wait
# A status that says the endpoint does not exist here, not that it is busy: never retried.
NOT_IMPLEMENTED = 501
NETWORK_ERRORS = (
    requests.exceptions.RequestException,
    http.client.HTTPException,
    urllib3.exceptions.HTTPError,
    OSError,
)


class RateLimitStop(Exception):
    """The primary limit is spent and the caller asked not to wait."""

    def __init__(self, reset_at: float):
        self.reset_at = reset_at
        super().__init__(f"GitHub rate limit spent; it resets at {format_reset(reset_at)}")


class NotFound(Exception):
    pass


class HTTPStatusError(WorkbenchError):
    """A 4xx GitHub meant (not a limit, not a retryable failure)."""

    def __init__(self, status: int, message: str):
        self.status = status
        super().__init__(message)


class TransientError(Exception):
    """Retries ran out on something that usually goes away (5xx, dropped connection, broken body)."""


def format_reset(reset_at: float) -> str:
    when = datetime.fromtimestamp(reset_at, UTC).strftime("%H:%M:%S UTC")
    minutes = max(0, round((reset_at - _now()) / 60))
    return f"{when} (in about {minutes} min)"


@dataclass
class Response:
    status: int
    headers: dict[str, str]
    text: str
    data: Any = None

    @property
    def next_url(self) -> str | None:
        """The rel="next" link of a paged listing."""
        for part in (self.headers.get("link") or "").split(","):
            if 'rel="next"' in part:
                return part.split(";")[0].strip().strip("<>")
        return None


@dataclass
class Counters:
    rest_requests: int = 0  # charged REST responses (every status but 304)
    not_modified: int = 0
    graphql_points: int = 0
    retries: int = 0
    waited_seconds: float = 0.0
    notes: list[str] = field(default_factory=list)


class Transport:
    """One place for every request: retries with exponential backoff, Retry-After, secondary limits,
    the primary limit (wait with a progress bar, or raise RateLimitStop), and the cost counters."""

    def __init__(
        self,
        gh,
        *,
        wait: bool = True,
        max_retries: int = 6,
        backoff_base: float = 1.0,
        backoff_cap: float = 60.0,
        wait_bar: Callable[[float, str], None] | None = None,
        on_pause: Callable[[float, str], None] | None = None,
    ):
        self.requester = gh.requester
        self.on_pause = on_pause  # told before each long pause (the run log shows the run is waiting)
        self.wait = wait
        self.max_retries = max_retries
        self.backoff_base = backoff_base
        self.backoff_cap = backoff_cap
        self.wait_bar = wait_bar
        self.counters = Counters()
        self._contacted = False  # before the first answer, a refused connection means a wrong URL
        self._secondary_streak = 0  # secondary limits met in a row without a good answer between
        self.server_date: str | None = None  # the Date header of the first answer (GitHub's clock)

    # ---- public -----------------------------------------------------------------------------------------
    def get(
        self,
        url: str,
        params: dict | None = None,
        *,
        etag: str | None = None,
        accept: str | None = None,
        as_json: bool = True,
    ) -> Response:
        headers = {}
        if etag:
            headers["If-None-Match"] = etag
        if accept:
            headers["Accept"] = accept
        return self.request("GET", url, params=params, headers=headers, as_json=as_json)

    def graphql(
        self, query: str, variables: dict | None = None, *, max_retries: int | None = None
    ) -> tuple[dict, list[dict]]:
        """POST to requester.graphql_url ourselves: PyGithub's graphql_query raises on any `errors`
        and drops the partial data, while one missing PR must not cost us the other 24.
        `max_retries` lowers the retries for a query the caller can split instead (a batch)."""
        resp = self.request(
            "POST",
            self.requester.graphql_url,
            body={"query": query, "variables": variables or {}},
            max_retries=max_retries,
        )
        payload = resp.data if isinstance(resp.data, dict) else {}
        data = payload.get("data") or {}
        errors = payload.get("errors") or []
        cost = ((data.get("rateLimit") or {}).get("cost")) if isinstance(data, dict) else None
        self.counters.graphql_points += int(cost) if cost else 1
        return data, errors

    # ---- the retry loop -------------------------------------------------------------------------------
    def request(
        self,
        verb: str,
        url: str,
        *,
        params: dict | None = None,
        headers: dict | None = None,
        body: Any = None,
        as_json: bool = True,
        max_retries: int | None = None,
    ) -> Response:
        retries = self.max_retries if max_retries is None else max_retries
        attempt = 0
        while True:
            attempt += 1
            try:
                status, hdrs, text = self.requester.requestJson(
                    verb, url, parameters=params, headers=dict(headers or {}), input=body
                )
            except NETWORK_ERRORS as e:
                if not self._contacted and attempt >= 2:
                    raise WorkbenchError(
                        f"cannot reach the GitHub API at {self.requester.base_url} ({type(e).__name__}); "
                        f"check the network or --api-url / GITHUB_API_URL"
                    ) from None
                self._backoff(attempt, f"{type(e).__name__} on {verb} {_path(url)}", retries)
                continue
            self._contacted = True
            hdrs = {k.lower(): v for k, v in hdrs.items()}
            if self.server_date is None and hdrs.get("date"):
                self.server_date = hdrs["date"]
            is_graphql = verb == "POST"
            if status == 304:
                self.counters.not_modified += 1
                return Response(304, hdrs, "")
            if not is_graphql:
                self.counters.rest_requests += 1
            if status in (403, 429) and self._rate_limited(status, hdrs, text, attempt):
                continue
            if status >= 500 and status != NOT_IMPLEMENTED:
                if hdrs.get("retry-after", "").isdigit() and attempt <= retries:
                    self._pause(float(hdrs["retry-after"]), f"GitHub answered {status}")
                    continue
                self._backoff(attempt, f"HTTP {status} on {verb} {_path(url)}", retries)
                continue
            self._secondary_streak = 0
            if status == 401:
                # An HTTPStatusError, so a caller can still fall back to REST when only GraphQL refuses.
                raise HTTPStatusError(
                    401,
                    "GitHub rejected the token (401 Bad credentials): check GITHUB_TOKEN / GH_TOKEN, or unset it "
                    "to read public repositories anonymously",
                )
            if status == 404:
                raise NotFound(_path(url))
            if status >= 400:
                raise HTTPStatusError(
                    status, f"GitHub answered {status} to {verb} {_path(url)}: {_message(text)}"
                )
            if not as_json:
                return Response(status, hdrs, text)
            try:
                data = json.loads(text) if text else None
            except ValueError:
                # A 200 with a cut-off body: the connection broke late or a proxy truncated it.
                self._backoff(attempt, f"invalid JSON in a {status} answer to {verb} {_path(url)}", retries)
                continue
            if is_graphql and isinstance(data, dict) and self._graphql_rate_limited(data, hdrs, attempt):
                continue
            return Response(status, hdrs, text, data)

    def _backoff(self, attempt: int, why: str, retries: int) -> None:
        if attempt > retries:
            raise TransientError(f"gave up after {attempt} attempts: {why}")
        self.counters.retries += 1
        delay = min(self.backoff_cap, self.backoff_base * 2 ** (attempt - 1))
        _sleep(delay)

    def _rate_limited(self, status: int, hdrs: dict, text: str, attempt: int) -> bool:
        """True when this 403/429 was a rate limit and we waited for it (so: retry)."""
        message = _message(text).lower()
        retry_after = hdrs.get("retry-after")
        if retry_after is not None:
            # Secondary limit (or any limit) with an explicit pause: honour it exactly.
            self._pause(float(retry_after), "secondary rate limit")
            return attempt <= self.max_retries + 4 or self._give_up(status, text)
        if hdrs.get("x-ratelimit-remaining") == "0" and "secondary" not in message:
            reset_at = float(hdrs.get("x-ratelimit-reset") or (_now() + 60))
            self._primary(reset_at)
            return True
        if "secondary rate limit" in message or status == 429:
            self._secondary_streak += 1
            self._pause(self.secondary_wait(self._secondary_streak), "secondary rate limit")
            return attempt <= self.max_retries or self._give_up(status, text)
        return False  # a plain 403: permissions, not a limit

    @staticmethod
    def secondary_wait(streak: int) -> float:
        """The pause before retry number `streak` of a secondary limit without Retry-After: a minute,
        doubling while the limit persists (capped), plus jitter so many clients do not return at once."""
        base = min(SECONDARY_MAX_WAIT, SECONDARY_DEFAULT_WAIT * 2 ** (streak - 1))
        return base * (1 + SECONDARY_JITTER * _jitter())

    def _graphql_rate_limited(self, data: dict, hdrs: dict, attempt: int) -> bool:
        if not any((e or {}).get("type") == "RATE_LIMITED" for e in data.get("errors") or []):
            return False
        reset_at = float(hdrs.get("x-ratelimit-reset") or (_now() + 60))
        self._primary(reset_at)
        return True

    def _primary(self, reset_at: float) -> None:
        if not self.wait:
            raise RateLimitStop(reset_at)
        seconds = max(1.0, reset_at - _now() + 1)
        self.counters.notes.append(f"rate limit spent; waited until {format_reset(reset_at)}")
        self._pause(seconds, f"rate limit spent, resets at {format_reset(reset_at)}")

    def _pause(self, seconds: float, why: str) -> None:
        self.counters.waited_seconds += seconds
        if self.on_pause is not None and seconds >= 2:
            self.on_pause(seconds, why)
        if self.wait_bar is not None and seconds >= 2:
            self.wait_bar(seconds, why)
        else:
            _sleep(seconds)

    @staticmethod
    def _give_up(status: int, text: str) -> bool:
        raise TransientError(f"still rate limited after many pauses ({status}: {_message(text)})")


def sleep_with_bar(tqdm_cls) -> Callable[[float, str], None]:
    """A wait the user can see: one tick per second (or part of one)."""

    def wait(seconds: float, why: str) -> None:
        with tqdm_cls(total=round(seconds), desc=why, unit="s", leave=False) as bar:
            left = seconds
            while left > 0:
                step = min(1.0, left)
                _sleep(step)
                left -= step
                bar.update(round(step))

    return wait


def _message(text: str) -> str:
    try:
        data = json.loads(text) if text else {}
    except ValueError:
        return redact(text[:120])
    return redact(str(data.get("message", ""))) if isinstance(data, dict) else ""


def _path(url: str) -> str:
    # Error messages name the path, never a query string or header that might carry a secret.
    return redact(url.split("?", 1)[0])
