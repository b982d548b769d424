"""What the people said after the description: reviews, review threads and comments (who reviewed, what
is still requested or unresolved, what the author promised, what reviewers left for later), and the
cross-references to other PRs in all of that text. Pure functions over the record; evidence is the
sentence itself."""

from __future__ import annotations

import re
from typing import Any, NamedTuple

from ..records import KnownPRs, quoted_title, reverts_by_title
from .conventions import Conventions
from .description import FENCED_BLOCK, _clip, _sentences, open_work
from .model import CrossRef, Discussion, Evidence, Signal

# The author's words that put work after this PR, beyond what `open_work` reads ("I'll fix it later").
_LATER = re.compile(r"\b(?:later|afterwards|separately|in the future|next time)\b|后续|下一个 ?pr", re.I)
# the author committing to more work than the PR holds: "Will add it to the docs page", "I'll fix that"
_WILL = re.compile(
    r"^(?:i'll|i will|we'll|we will|will)\s+(?:add|fix|do|address|update|document|follow)\b", re.I
)


def read_discussion(record: Any, conv: Conventions) -> tuple[Discussion, list[Signal]]:
    """Reviews, unresolved threads, reviewers (not the author, not bots), the author's promises and what
    reviewers left for later."""
    disc = Discussion(comments=len(record.issue_comments or []) + len(record.review_comments or []))
    author = record.author
    latest: dict[str, str] = {}  # reviewer -> the state of their latest deciding review
    requested: list[Evidence] = []
    for rv in record.reviews or []:
        login = _login(rv)
        state = (rv.get("state") or "").upper()
        if not login or login == author or conv.is_bot(login) or state in ("", "PENDING"):
            continue
        if state != "COMMENTED" or login not in latest:  # a comment does not undo an approval
            latest[login] = state
        if state == "CHANGES_REQUESTED":
            requested.append(
                Evidence(None, None, f"{login}: {_clip(rv.get('body') or 'changes requested', 160)}")
            )
    reviewers = set(latest)
    threads: dict[Any, list[dict]] = {}
    for c in record.review_comments or []:
        login = _login(c)
        if login and login != author and not conv.is_bot(login):
            reviewers.add(login)
        threads.setdefault(c.get("in_reply_to_id") or c.get("id") or id(c), []).append(c)
    unresolved: list[Evidence] = []
    for comments in threads.values():
        if any(c.get("thread_resolved") is False for c in comments):
            root = comments[0]
            line = root.get("line") or root.get("original_line")
            unresolved.append(
                Evidence(
                    root.get("path"),
                    int(line) if line else None,
                    _clip(f"{_login(root) or '?'}: {root.get('body') or ''}", 200),
                )
            )
    promises, deferred = _left_for_later(record, author, conv)
    disc.reviewers = sorted(reviewers)
    disc.approved_by = sorted(u for u, s in latest.items() if s == "APPROVED")
    disc.changes_requested_by = sorted({e.text.split(":", 1)[0] for e in requested})
    disc.changes_requested_outstanding = sorted(u for u, s in latest.items() if s == "CHANGES_REQUESTED")
    disc.unresolved = [e.text for e in unresolved]
    disc.promises = [e.text for e in promises]
    disc.deferred = [e.text for e in deferred]
    return disc, _signals(disc, requested, unresolved, promises, deferred, conv)


def _left_for_later(
    record: Any, author: str | None, conv: Conventions
) -> tuple[list[Evidence], list[Evidence]]:
    """(the author's promises, what reviewers left for later), one sentence each."""
    texts = [(c, c.get("body") or "") for c in record.issue_comments or []]
    texts += [(c, c.get("body") or "") for c in record.review_comments or []]
    texts += [(r, r.get("body") or "") for r in record.reviews or []]
    promises: list[Evidence] = []
    deferred: list[Evidence] = []
    for obj, text in texts:
        login = _login(obj)
        if not login or not text or conv.is_bot(login):
            continue
        if login == author:
            for s in _sentences(text):
                if open_work(s) or _LATER.search(s) or _WILL.match(s):
                    promises.append(Evidence(None, None, _clip(s, 200)))
        else:
            for s in _sentences(text):
                if open_work(s):
                    deferred.append(Evidence(None, None, _clip(f"{login}: {s}", 200)))
    return promises, deferred


def _signals(
    disc: Discussion,
    requested: list[Evidence],
    unresolved: list[Evidence],
    promises: list[Evidence],
    deferred: list[Evidence],
    conv: Conventions,
) -> list[Signal]:
    n_ev = int(conv.threshold("max_evidence", 3))
    sigs = []
    if requested:
        outstanding = " (still outstanding)" if disc.changes_requested_outstanding else ""
        sigs.append(
            Signal(
                "discussion.changes_requested",
                f"changes requested by {', '.join(disc.changes_requested_by)}{outstanding}",
                conv.weight("discussion.changes_requested"),
                requested[:n_ev],
            )
        )
    if unresolved:
        sigs.append(
            Signal(
                "discussion.unresolved",
                f"{len(unresolved)} unresolved review thread(s)",
                conv.weight("discussion.unresolved"),
                unresolved[:n_ev],
            )
        )
    if len(disc.reviewers) >= 3:
        sigs.append(
            Signal(
                "discussion.reviewers",
                f"{len(disc.reviewers)} reviewers took part",
                conv.weight("discussion.reviewers"),
                [Evidence(None, None, ", ".join(disc.reviewers))],
            )
        )
    if promises:
        sigs.append(
            Signal(
                "discussion.promises",
                "the author promised follow-ups",
                conv.weight("discussion.promises"),
                promises[:n_ev],
            )
        )
    if deferred:
        sigs.append(
            Signal(
                "discussion.deferred",
                "reviewers left work for later",
                conv.weight("discussion.deferred"),
                deferred[:n_ev],
            )
        )
    return sigs


def _login(obj: dict) -> str | None:
    if not isinstance(obj, dict):
        return None
    user = obj.get("user")
    if isinstance(user, dict):
        return user.get("login")
    author = obj.get("author")
    return author if isinstance(author, str) else None


# ---- cross-references -------------------------------------------------------------------------------

# How one PR relates to another, strongest first: when a text names a PR twice, the stronger one wins.
RELATIONS = (
    "reverts",
    "reverted-by",
    "relanded-in",
    "relands",
    "fixes",
    "depends-on",
    "follow-up",
    "supersedes",
    "mentions",
)
_RANK = {r: i for i, r in enumerate(reversed(RELATIONS))}

# A reference: "#N" (not inside a word, a path or an HTML entity: checked on each hit), possibly written
# after "owner/name", or a PR/issue URL. Both regexes start with a literal the engine skips to fast.
_REF_NUM = re.compile(r"#(\d{1,7})\b")
_OWNER_NAME_BEFORE = re.compile(r"(?<![\w/.-])([\w-][\w.-]+)/([\w-][\w.-]+)\Z")
_REF_URL = re.compile(r"github\.com/([\w.-]+)/([\w.-]+)/(?:pull|issues)/(\d+)")
_CODE = re.compile(FENCED_BLOCK.pattern + r"|`[^`\n]*`", re.S)  # a fenced block or inline code
# What the words just before a reference say about it (each anchored at the reference).
_BEFORE = (
    # "Reverts #N", "This reverts the forwarding introduced in #N", "reverts the naming part of #N"; not
    # "was reverted in #N" (that one is the reverting PR)
    (
        "reverts",
        re.compile(
            r"\brevert(?:s|ing)?\s*(?:commit|pr|pull request)?\s*:?\s*\Z"
            r"|\brevert(?:s|ing)\s[^.]{0,60}?\b(?:(?:introduced|added|made)\s+(?:in|by)|parts?\s+of)\s*\Z",
            re.I,
        ),
    ),
    (
        "relands",
        re.compile(
            r"\b(?:re-?lands?|re-?landing|re-?appl(?:y|ies|ying)|redo(?:es)? of)\s*(?:of|pr)?\s*:?\s*\Z", re.I
        ),
    ),
    ("fixes", re.compile(r"\b(?:fix(?:es|ed)?|close[sd]?|resolve[sd]?)\s*(?:issue)?\s*:?\s*\Z", re.I)),
    (
        "depends-on",
        re.compile(
            r"\b(?:depends?\s+on|depending\s+on|requires?|blocked\s+by|stacked\s+on|on\s+top\s+of|needs)"
            r"\s*(?:pr)?\s*:?\s*\Z",
            re.I,
        ),
    ),
    (
        "follow-up",
        re.compile(
            r"\b(?:follow[- ]?ups?|continuation|builds?|based|extends|part)\s*(?:to|of|on|up\s+on|for)?\s*(?:pr)?\s*:?\s*\Z",
            re.I,
        ),
    ),
    ("supersedes", re.compile(r"\b(?:supersedes?|replaces?|in\s+favou?r\s+of)\s*(?:pr)?\s*:?\s*\Z", re.I)),
)
# A word of each pattern above: text before a reference holding none of them only mentions it.
_RELATION_WORDS = (
    "revert", "land", "appl", "redo", "fix", "clos", "resolv", "depend", "requir", "block", "stack", "top",
    "need", "follow", "continu", "build", "based", "extend", "part", "supersed", "replac", "favo",
)  # fmt: skip
# "mb #250", "step #3": a number that counts something, not a PR.
_COUNTED = re.compile(
    r"\b(?:mb|micro-?batch(?:es)?|batch(?:es)?|steps?|epochs?|iter(?:ation)?s?|runs?|trials?|samples?|ranks?"
    r"|gpus?|nodes?|layers?|workers?|replicas?|rows?|lines?|cases?|rounds?|attempts?|turns?|exp|seeds?"
    r")\s*\Z",
    re.I,
)
# A revert's title (records.quoted_title) quotes the reverted commit's title, which a squash merge
# ends with the PR's "(#N)".
_REVERT_TITLE_NUMBER = re.compile(r"\(#(\d+)\)\s*\Z")


# The revert line of a body: git's "This reverts commit <sha>." (or a person's "This partially reverts
# commit <sha>") or GitHub's "Reverts owner/name#N".
_REVERT_LINE = re.compile(
    r"This (?:partially )?reverts commit(?:\s+([0-9a-f]{7,40})\b)?|Reverts\s+[\w.-]+/[\w.-]+#\d+"
)


def revert_statement(body: str) -> re.Match | None:
    """The body's revert line (in its first 2,000 characters), when it is the PR's own. A squashed
    branch's message lists its commits as "* subject" items with their bodies under them: a revert line
    right under a `* Revert "..."` item reverts a commit of that branch, not a merged PR."""
    head = body[:2000]
    if "everts" not in head:  # most bodies revert nothing; the pattern has no prefix to skip ahead by
        return None
    for m in _REVERT_LINE.finditer(head):
        before = head[: m.start()].rstrip()
        if not before[before.rfind("\n") + 1 :].lstrip().startswith(("* Revert", "- Revert")):
            return m
    return None


class WrittenRefs(NamedTuple):
    """What the texts write: references, each once with its strongest relation; and, when nothing
    written numbers the PR a revert reverts, what names it that only the cache can resolve."""

    refs: list[CrossRef]
    revert_commit: str | None = None  # "This reverts commit <sha>": the PR merged as that commit
    revert_title: str | None = None  # `Revert "title"`: the PR of that title


def written_refs(repo: str, number: int, texts: list[str], revert_commit: str | None = None) -> WrittenRefs:
    """The references the texts (title first, then description and comments) write, and
    `revert_commit` (the commit the PR's own revert line names: `revert_statement`) when nothing
    stronger says what it reverts. Needs no cache: `resolve_refs` adds what does.

    Not references: a #N in code, one that counts ("mb #250"), a table row of numbered columns. A revert
    points at what it reverts: "Reverts owner/name#N", else the (#N) ending the title it quotes
    (`Revert "title (#N)"`), else the commit its description names, else the title it quotes."""
    repo_l = (repo or "").lower()
    name_l = repo_l.rsplit("/", 1)[-1]
    found: dict[tuple[str, int], CrossRef] = {}

    def add(target: str, num: int, rel: str, url: str | None, written: str) -> None:
        if target == repo_l and num == number:
            return
        old = found.get((target, num))
        if old is None:
            found[(target, num)] = CrossRef(num, rel, None, None, url, written if target != repo_l else None)
        elif _RANK[rel] > _RANK[old.relation]:
            old.relation = rel

    quoted = None
    for text in texts:
        if not text or len(found) >= 50:
            continue
        if quoted is None:
            quoted = quoted_title(text)
        for start, written, num, url in _references(text):
            written = written or repo  # a bare #N is this repository's
            target = written.lower()
            rel = _relation(text[max(0, start - 60) : start])
            if rel == "reverts" and target.rsplit("/", 1)[-1] == name_l:
                # GitHub's revert button names the reverted PR's repository as it was called then,
                # and a PR can only be reverted in its own repository: a renamed one keeps its numbers
                target, written = repo_l, repo
            add(target, num, rel, url, written)
    refs = list(found.values())
    if any(r.relation == "reverts" for r in refs):
        return WrittenRefs(refs)  # the "Reverts owner/name#M" line wins: a title can end in an issue's number
    m = _REVERT_TITLE_NUMBER.search(quoted) if quoted is not None else None
    if m is not None:
        return WrittenRefs(_reverting(refs, int(m.group(1)), number))
    return WrittenRefs(refs, revert_commit, quoted)


def _reverting(refs: list[CrossRef], reverted: int, number: int) -> list[CrossRef]:
    """`refs` led by "reverts #reverted" (which replaces any weaker reference to it)."""
    if reverted == number:
        return refs
    return [CrossRef(reverted, "reverts")] + [
        r for r in refs if not (r.repo is None and r.number == reverted)
    ]


def resolve_refs(
    refs: list[CrossRef],
    number: int,
    known_prs: dict | None,
    revert_commit: str | None = None,
    revert_title: str | None = None,
) -> list[CrossRef]:
    """`refs` completed from the cache's {number: (title, state)}: the titles and states of this
    repository's PRs, the PR a revert names by commit (when `known_prs` is a `KnownPRs`, which knows
    merge commits) or by title, the PR that landed a reverted one again, and the later PR that reverts
    this one. Depends only on the cache's PRs, so the analysis memo calls it again on every hit (its
    entry may have been computed with fewer, or none), on refs it resolved before."""
    known = known_prs if known_prs is not None else {}
    if revert_commit is not None or revert_title is not None:
        # what an earlier resolution found by commit or title is looked up again
        refs = [r for r in refs if not (r.relation == "reverts" and r.repo is None)]
        reverted = None
        if revert_commit is not None and isinstance(known, KnownPRs):
            reverted = known.merged_as(revert_commit)
        if reverted is None and revert_title is not None:
            reverted = _latest_titled(revert_title, number, known)
        if reverted is not None:
            refs = _reverting(refs, reverted, number)
    for ref in refs:
        if ref.repo is None:
            ref.title, ref.state = known.get(ref.number, (None, None))
    return link_reverted_by(link_relandings(refs, number, known), number, known)


def reverted_pr(refs: list[CrossRef]) -> int | None:
    """The PR this one reverts, wholly or in part, as the references found it (the revert line, the
    quoted title's (#N), the earlier PR of that title, "reverts ... introduced in #N")."""
    return next((r.number for r in refs if r.relation == "reverts" and r.repo is None), None)


def link_relandings(refs: list[CrossRef], number: int, known_prs: dict | None) -> list[CrossRef]:
    """`refs` with, for each PR this one reverts, the later PR in the cache that landed it again
    ("relanded-in"). Depends on the cache's PRs, so the analysis memo calls it again on every hit."""
    refs = [r for r in refs if r.relation != "relanded-in"]
    have = {r.number for r in refs if r.repo is None}
    for ref in [r for r in refs if r.relation == "reverts" and r.repo is None]:
        reland = _relanding(ref, number, known_prs)
        if reland is not None and reland not in have:
            title, state = known_prs[reland]
            refs.append(CrossRef(reland, "relanded-in", title, state, None, None))
            have.add(reland)
    return refs


def link_reverted_by(refs: list[CrossRef], number: int, known_prs: dict | None) -> list[CrossRef]:
    """`refs` led by the later PR in the cache that reverts this one ("reverted-by"), when one does: the
    change a reader is about to study was taken back, and the revert says why. Depends on the cache's
    PRs, so the analysis memo calls it again on every hit."""
    refs = [r for r in refs if r.relation != "reverted-by"]
    own = (known_prs or {}).get(number)
    by = _reverting_pr(number, own[0], known_prs) if own else None
    if by is None:
        return refs
    title, state = known_prs[by]
    return [CrossRef(by, "reverted-by", title, state, None, None)] + [
        r for r in refs if not (r.repo is None and r.number == by)
    ]


def _reverting_pr(number: int, title: str, known_prs: dict) -> int | None:
    """The first later PR titled as the revert of this one: `Revert "<this title>"` (GitHub's revert
    button), with no PR of the same title in between (that one is what it reverts), or
    `Revert "<this title> (#number)"` (git's revert of a squash-merged commit). Quoted titles are
    matched whole: a title's own (#N) may be an issue the reverted PR named."""
    title = (title or "").strip()
    if not title:
        return None
    reverts = known_prs.reverts if isinstance(known_prs, KnownPRs) else reverts_by_title(known_prs)
    found = [n for n in reverts.get(f"{title} (#{number})", ()) if n > number] + [
        n for n in reverts.get(title, ()) if n > number and _latest_titled(title, n, known_prs) == number
    ]
    return min(found, default=None)


def _references(text: str) -> list[tuple[int, str, int, str | None]]:
    """(where, owner/name as written, number, url) of each reference in `text` outside code; a bare #N
    is this repository's (owner/name "")."""
    hits = []
    if "#" in text:
        for m in _REF_NUM.finditer(text):
            start = m.start()
            before = text[start - 1 : start]
            if before == "/" or before == "&" or before == "#":
                continue  # a path's or URL's fragment, an HTML entity, "##"
            if before and (before.isalnum() or before == "_"):
                # "owner/name#N" is a reference to another repository's PR; "word#N" is not one
                owner = _OWNER_NAME_BEFORE.search(text, max(0, start - 140), start)
                if owner:
                    hits.append((owner.start(), f"{owner.group(1)}/{owner.group(2)}", int(m.group(1)), None))
                continue
            if _COUNTED.search(text, max(0, start - 20), start):
                continue
            if _in_link_text(text, start, m.end()):
                continue  # "[vLLM issue #N](url)": the link says whose #N it is, and is read as a URL
            hits.append((start, "", int(m.group(1)), None))
    if "github.com/" in text:
        for m in _REF_URL.finditer(text):
            hits.append((m.start(), f"{m.group(1)}/{m.group(2)}", int(m.group(3)), "https://" + m.group(0)))
    if not hits:
        return []
    hits.sort()
    code = [(m.start(), m.end()) for m in _CODE.finditer(text)] if "`" in text else []
    if code:
        hits = [h for h in hits if not any(a <= h[0] < b for a, b in code)]
    if "|" in text:
        hits = [h for h in hits if not _in_numbered_row(text, h[0])]
    return hits


def _in_link_text(text: str, start: int, end: int) -> bool:
    """Whether text[start:end] is inside the text of a Markdown link, "[ ... ](url)"."""
    opening = text.rfind("[", max(0, start - 100), start)
    if opening < 0 or "]" in text[opening:start]:
        return False
    closing = text.find("]", end, end + 100)
    return closing >= 0 and text.startswith("(", closing + 1) and "[" not in text[end:closing]


def _in_numbered_row(text: str, at: int) -> bool:
    """Whether `at` is in a Markdown table row whose filled cells each hold a #N: column numbers
    ("| mb #250 | #300 | #350 |"), not references."""
    start = text.rfind("\n", 0, at) + 1
    end = text.find("\n", at)
    line = text[start : end if end >= 0 else len(text)].strip()
    if not line.startswith("|"):
        return False
    cells = [c.strip() for c in line.strip("|").split("|") if c.strip()]
    return len(cells) >= 3 and all(_REF_NUM.search(c) for c in cells)


def _relation(before: str) -> str:
    """How the words just before a reference relate it ("Fixes", "follow-up to", "depends on")."""
    before = before.removesuffix("https://").removesuffix("http://")
    low = before.lower()
    if not any(w in low for w in _RELATION_WORDS):  # most references are plain mentions
        return "mentions"
    for rel, rx in _BEFORE:
        if rx.search(before):
            return rel
    return "mentions"


_TITLE_NOISE = re.compile(r"\(#\d+\)|\b(?:re-?land(?:ed|ing)?|re-?apply|revert(?:ed)?)\b|[\[\]():\"'`]", re.I)


def _relanding(ref: CrossRef, number: int, known_prs: dict | None) -> int | None:
    """The first later PR in the cache that lands the reverted PR's change again: the same title, or a
    title saying "reland" that names the reverted PR."""
    if not known_prs or not ref.title:
        return None
    want = _plain_title(ref.title)
    if not want:
        return None
    probe = max(want.split(), key=len)  # a title equal to the wanted one holds its longest word
    for n in sorted(k for k in known_prs if k > number):
        low = (known_prs[n][0] or "").lower()
        if low.startswith("revert") or (probe not in low and "land" not in low):
            continue
        if _plain_title(low) == want or ("reland" in low or "re-land" in low) and f"#{ref.number}" in low:
            return n
    return None


def _latest_titled(title: str, number: int, known_prs: dict | None) -> int | None:
    """The latest PR before `number` in the cache with exactly this title: what `Revert "title"` (git's
    and GitHub's revert message, beside "This reverts commit <sha>") reverts when no (#N) says it."""
    if not known_prs:
        return None
    want = title.strip()
    found = [n for n, (t, _state) in known_prs.items() if n < number and (t or "").strip() == want]
    return max(found) if found else None


def _plain_title(title: str) -> str:
    return " ".join(_TITLE_NOISE.sub(" ", title.lower()).split())
