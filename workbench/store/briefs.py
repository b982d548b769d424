"""Reading briefs: every save is a new version, and a save based on a stale version is kept as a
'conflict' copy and refused, so that neither side's words are lost."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # only annotations here; pandas loads with the first DataFrame read
    import pandas as pd

from ..config import WorkbenchError
from .base import StoreBase
from .values import dumps, utcnow


class StaleEditError(WorkbenchError):
    """A save based on an older version than the latest: refused so that neither text is lost."""

    def __init__(self, repo: str, number: int, base: int | None, latest: int):
        self.base, self.latest = base, latest
        super().__init__(
            f"{repo}#{number}: this text is based on version {base}, but version {latest} was saved since "
            f"(another notebook or tab?). Your text was kept as a conflict copy; reload to see both."
        )


@dataclass
class BriefVersion:
    repo: str
    number: int
    version: int
    text: str
    source: str
    lang: str | None
    is_final: bool
    created_at: str
    brief: dict | None
    meta: dict


class BriefsMixin(StoreBase):
    def save_brief(
        self,
        repo: str,
        number: int,
        text: str,
        *,
        source: str,
        base_version: int | None,
        brief: dict | None = None,
        lang: str | None = None,
        is_final: bool = False,
        meta: dict | None = None,
        force: bool = False,
    ) -> int:
        """Append a version. `base_version` is the version the text was edited from (None: new).
        A stale base is refused (StaleEditError) after keeping the text as a 'conflict' version,
        so no words are lost on either side."""
        pk = self._require_repo(repo)
        with self.transaction() as c:
            latest = (
                c.execute(
                    "SELECT max(version) FROM briefs WHERE repo_pk=? AND number=?", (pk, number)
                ).fetchone()[0]
                or 0
            )
            stale = not force and latest and base_version != latest
            version = latest + 1
            meta = dict(meta or {})
            if stale:
                meta["conflict_with"] = latest
                meta["based_on"] = base_version
            c.execute(
                "INSERT INTO briefs(repo_pk, number, version, text, brief_json, source, lang, is_final, created_at, meta_json) "
                "VALUES (?,?,?,?,?,?,?,?,?,?)",
                (
                    pk,
                    number,
                    version,
                    text,
                    dumps(brief),
                    "conflict" if stale else source,
                    lang,
                    int(is_final and not stale),
                    utcnow(),
                    dumps(meta),
                ),
            )
        if stale:
            raise StaleEditError(repo, number, base_version, latest)
        return version

    def brief_versions(self, repo: str, number: int) -> list[BriefVersion]:
        pk = self.repo_pk(repo)
        if pk is None:
            return []
        rows = self.conn.execute(
            "SELECT * FROM briefs WHERE repo_pk=? AND number=? ORDER BY version", (pk, number)
        ).fetchall()
        return [_brief_version(repo, r) for r in rows]

    def latest_brief(self, repo: str, number: int) -> BriefVersion | None:
        """The newest version that is not a refused conflict copy."""
        pk = self.repo_pk(repo)
        if pk is None:
            return None
        r = self.conn.execute(
            "SELECT * FROM briefs WHERE repo_pk=? AND number=? AND source<>'conflict' ORDER BY version DESC LIMIT 1",
            (pk, number),
        ).fetchone()
        return _brief_version(repo, r) if r else None

    def latest_version(self, repo: str, number: int) -> int:
        pk = self._require_repo(repo)
        return self.conn.execute(
            "SELECT coalesce(max(version),0) FROM briefs WHERE repo_pk=? AND number=?", (pk, number)
        ).fetchone()[0]

    def briefs(self, repo: str | None = None) -> pd.DataFrame:
        """Latest brief per PR: repo, number, version, source, is_final, human_edited, created_at."""
        where = "WHERE r.full_name=?" if repo else ""
        return self._frame(
            "SELECT r.full_name AS repo, b.number, max(b.version) AS version, "
            "max(CASE WHEN b.source='human' THEN 1 ELSE 0 END) AS human_edited, max(b.is_final) AS is_final, "
            "max(b.created_at) AS created_at FROM briefs b JOIN repos r ON r.pk=b.repo_pk "
            f"{where} GROUP BY b.repo_pk, b.number",
            (repo,) if repo else (),
        )


def _brief_version(repo: str, r: sqlite3.Row) -> BriefVersion:
    return BriefVersion(
        repo=repo,
        number=r["number"],
        version=r["version"],
        text=r["text"],
        source=r["source"],
        lang=r["lang"],
        is_final=bool(r["is_final"]),
        created_at=r["created_at"],
        brief=json.loads(r["brief_json"]) if r["brief_json"] else None,
        meta=json.loads(r["meta_json"] or "{}"),
    )
