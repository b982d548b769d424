"""Where things live and which settings are in force.

Every environment variable the workbench reads is named here, so there is one place to look.
Secrets (GitHub and LLM tokens) are read here and handed to clients; they are never stored.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
# The checkout's root when installed in editable mode; the bundled sample lives under it.
PROJECT_DIR = PACKAGE_DIR.parent
DB_FILENAME = "workbench.db"


class WorkbenchError(Exception):
    """An error the user can act on: the message says what was wrong and what to do.

    The CLI prints it as one line and exits non-zero; notebooks show it in the app.
    """


def cache_dir(path: str | os.PathLike | None = None) -> Path:
    """The cache directory: an explicit path, else $WORKBENCH_CACHE, else `cache/` in the checkout."""
    if path is None:
        path = os.environ.get("WORKBENCH_CACHE") or (PROJECT_DIR / "cache")
    return Path(path).expanduser()


def db_path(path: str | os.PathLike | None = None) -> Path:
    """The SQLite file. `path` may name the directory or the .db file itself."""
    p = cache_dir(path)
    if p.suffix in (".db", ".sqlite", ".sqlite3"):
        return p
    return p / DB_FILENAME


def exports_dir(path: str | os.PathLike | None = None) -> Path:
    return Path(path or os.environ.get("WORKBENCH_EXPORTS") or (PROJECT_DIR / "exports")).expanduser()


def sample_dir() -> Path:
    return PROJECT_DIR / "cache" / "sample"


def github_token() -> str | None:
    return os.environ.get("GITHUB_TOKEN") or os.environ.get("GH_TOKEN") or None


def github_api_url(explicit: str | None = None) -> str:
    return explicit or os.environ.get("GITHUB_API_URL") or "https://api.github.com"


def check_api_url(url: str) -> str:
    """The API root if it is an http(s) URL with a host; else a WorkbenchError saying what is expected."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url.strip())
        ok = parts.scheme in ("http", "https") and bool(parts.hostname) and parts.port != 0
    except ValueError:  # e.g. a port that is not a number
        ok = False
    if not ok:
        raise WorkbenchError(
            f"--api-url / GITHUB_API_URL {url!r} is not an http(s) URL: use e.g. https://api.github.com "
            "or https://ghe.example.com/api/v3"
        )
    return url.strip()


@dataclass(frozen=True)
class LLMSettings:
    """What the LLM drafter needs. api_key/base_url follow the openai SDK's own variables."""

    model: str | None
    base_url: str | None
    api_key: str | None
    timeout: float = 120.0  # seconds per request (a hung stream counts: no byte for this long)
    max_retries: int = 2  # retries per request after a timeout, 429, 5xx or dropped connection
    concurrency: int = 3  # PRs drafted at once by `workbench draft --llm`
    breaker: int = 3  # consecutive PRs the server failed before the batch stops calling it

    @property
    def configured(self) -> bool:
        return bool(self.model and (self.base_url or self.api_key))

    def why_not(self) -> str:
        if not self.model:
            return "no model configured: set WORKBENCH_MODEL (and OPENAI_BASE_URL / OPENAI_API_KEY)"
        if not (self.base_url or self.api_key):
            return (
                "no server configured: set OPENAI_BASE_URL (any OpenAI-compatible server) or OPENAI_API_KEY"
            )
        return ""

    def __repr__(self) -> str:  # never print the key
        return f"LLMSettings(model={self.model!r}, base_url={self.base_url!r}, api_key={'***' if self.api_key else None})"


def llm_settings(model: str | None = None) -> LLMSettings:
    return LLMSettings(
        model=model or os.environ.get("WORKBENCH_MODEL") or None,
        base_url=os.environ.get("OPENAI_BASE_URL") or None,
        api_key=os.environ.get("OPENAI_API_KEY") or None,
        timeout=float(os.environ.get("WORKBENCH_LLM_TIMEOUT", "120")),
        max_retries=int(os.environ.get("WORKBENCH_LLM_RETRIES", "2")),
        concurrency=max(1, int(os.environ.get("WORKBENCH_LLM_CONCURRENCY", "3"))),
        breaker=max(1, int(os.environ.get("WORKBENCH_LLM_BREAKER", "3"))),
    )


def redact(text: str) -> str:
    """Remove any configured secret from text bound for a log, an export or an error message."""
    for secret in (github_token(), os.environ.get("OPENAI_API_KEY")):
        if secret and len(secret) >= 4:
            text = text.replace(secret, "***")
    return text
