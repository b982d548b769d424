"""Markdown exports: one PR's brief, or the digest of a repository (the reference layout).

The stored text is what the reviewer wrote, so it is parsed back (keeping their extra text) and
rendered with every untrusted field neutralised: a title like `<script>` must not become live HTML
wherever the Markdown is published.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from .brief import DigestEntry, check_lang, parse_brief, render_digest, render_section
from .config import WorkbenchError, exports_dir
from .store import Store
from .timespan import since_iso


def default_lang(repo: str) -> str:
    try:
        from .analysis.conventions import load_conventions

        return check_lang(getattr(load_conventions(repo), "lang", None) or "zh")
    except WorkbenchError:
        raise
    except Exception:  # conventions are optional: a repository without a file gets zh
        return "zh"


def _slug(repo: str) -> str:
    return repo.replace("/", "-")


def digest_entries(store: Store, repo: str, numbers: Iterable[int], lang: str) -> list[DigestEntry]:
    entries = []
    for n in numbers:
        rec = store.pr(repo, int(n))
        latest = store.latest_brief(repo, int(n))
        brief = None
        if latest is not None and latest.text.strip():
            brief = parse_brief(latest.text, repo=repo, number=int(n), lang=latest.lang or lang)
        entries.append(
            DigestEntry(
                number=rec.number,
                title=rec.title,
                url=rec.url,
                author=rec.author,
                state=rec.state,
                additions=rec.additions,
                deletions=rec.deletions,
                changed_files=int(rec.pr.get("changed_files") or len(rec.files)),
                brief=brief,
            )
        )
    return entries


@dataclass(frozen=True)
class DigestResult:
    path: Path
    numbers: list[int]  # the PRs in the digest, in its order
    lang: str  # the digest's language: its title line and the sections without a brief
    # PRs whose brief is written in another language: number -> that language. Their sections keep
    # the brief's language throughout (link line included), so no section mixes two languages.
    other_lang: dict[int, str] = field(default_factory=dict)


def write_digest(
    store: Store,
    repo: str,
    numbers: Iterable[int] | None = None,
    *,
    lang: str | None = None,
    output: str | Path | None = None,
    out_dir: str | Path | None = None,
    since: str | None = None,
    state: str | None = None,
) -> DigestResult:
    """Write the digest: `# owner/repo`, then one section per PR (the given order, else newest first).
    `since` (any form workbench.timespan takes) and `state` narrow the PRs; none of them: all cached PRs."""
    lang = check_lang(lang or default_lang(repo))
    start = since_iso(since)
    if numbers is None:
        nums = [int(x) for x in store.prs(repo, state=state, since=start)["number"]]
    else:
        nums = [int(x) for x in numbers]
        if start or (state and state != "all"):
            keep = set(int(x) for x in store.prs(repo, state=state, since=start, numbers=nums)["number"])
            nums = [n for n in nums if n in keep]
    entries = digest_entries(store, repo, nums, lang)
    other = {e.number: e.brief.lang for e in entries if e.brief is not None and e.brief.lang != lang}
    sections = [render_section(e, e.brief.lang if e.brief is not None else lang) for e in entries]
    text = "\n".join([render_digest(repo, [], lang), *sections])  # the title line, then the sections
    path = Path(output) if output else exports_dir(out_dir) / f"{_slug(repo)}-digest.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return DigestResult(path=path, numbers=nums, lang=lang, other_lang=other)


def export_digest(
    store: Store,
    repo: str,
    numbers: Iterable[int] | None = None,
    out_dir: str | Path | None = None,
    lang: str | None = None,
    output: str | Path | None = None,
    *,
    since: str | None = None,
    state: str | None = None,
) -> Path:
    """write_digest, for callers that want only the file's path."""
    return write_digest(
        store, repo, numbers, lang=lang, output=output, out_dir=out_dir, since=since, state=state
    ).path


def export_pr(
    store: Store, repo: str, number: int, out_dir: str | Path | None = None, lang: str | None = None
) -> Path:
    """One PR's brief as its own Markdown file (same section layout as the digest)."""
    lang = check_lang(lang or default_lang(repo))
    text = render_digest(repo, digest_entries(store, repo, [number], lang), lang)
    path = exports_dir(out_dir) / f"{_slug(repo)}-{int(number)}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path
