"""Where things live and which settings are in force.

Every environment variable the workbench reads is named here, so there is one place to look.
Secrets (GitHub and LLM tokens) are read here and handed to clients; they are never stored.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
# The source checkout, when the package is run from one (an editable install or PYTHONPATH); a wheel
# installed into site-packages has none, and then nothing may be written beside the package.
PROJECT_DIR = PACKAGE_DIR.parent
DB_FILENAME = "workbench.db"
DIST_NAME = "pr-workbench"


class WorkbenchError(Exception):
    """An error the user can act on: the message says what was wrong and what to do.

    The CLI prints it as one line and exits non-zero; notebooks show it in the app.
    """


def checkout_dir() -> Path | None:
    """The checkout the package runs from, or None for an installed wheel."""
    pyproject = PROJECT_DIR / "pyproject.toml"
    try:
        if pyproject.is_file() and f'name = "{DIST_NAME}"' in pyproject.read_text(encoding="utf-8"):
            return PROJECT_DIR
    except OSError:
        pass
    return None


def cache_dir(path: str | os.PathLike | None = None) -> Path:
    """The cache directory: an explicit path, else $WORKBENCH_CACHE, else `cache/` in the checkout when
    run from one, else the user's cache directory (~/.cache/pr-workbench on Linux)."""
    if path is None:
        path = os.environ.get("WORKBENCH_CACHE")
    if not path:
        checkout = checkout_dir()
        if checkout is not None:
            path = checkout / "cache"
        else:
            from platformdirs import user_cache_dir

            path = user_cache_dir(DIST_NAME, appauthor=False)
    return Path(path).expanduser()


def db_path(path: str | os.PathLike | None = None) -> Path:
    """The SQLite file. `path` may name the directory or the .db file itself."""
    p = cache_dir(path)
    if p.suffix in (".db", ".sqlite", ".sqlite3"):
        return p
    return p / DB_FILENAME


def exports_dir(path: str | os.PathLike | None = None) -> Path:
    """Where exports go: an explicit path, else $WORKBENCH_EXPORTS, else ./exports of the working
    directory (where the user runs the command, not where the package is installed)."""
    return Path(path or os.environ.get("WORKBENCH_EXPORTS") or (Path.cwd() / "exports")).expanduser()


def sample_dir() -> Path:
    """The bundled sample: package data, so an installed wheel has it too."""
    return PACKAGE_DIR / "sample"


def notebooks_dir() -> Path:
    """The review and trends notebooks: the checkout's notebooks/, else the copy `pip install` put under
    <prefix>/share/pr-workbench/notebooks (pyproject's data-files)."""
    checkout = checkout_dir()
    if checkout is not None and (checkout / "notebooks").is_dir():
        return checkout / "notebooks"
    return Path(sys.prefix) / "share" / DIST_NAME / "notebooks"


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
