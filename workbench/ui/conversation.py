"""The Conversation tab's content, as GitHub's PR page shows it: the description, then the discussion in
time order (comments, reviews with their state, inline review threads with the hunk they point at and
whether they are resolved or outdated). Pure functions of a PRRecord: the pane (conversation_pane.py)
only decides how much of it to render.

The description's template boilerplate (checklists, guidance, HTML comments, unfilled sections) is
folded into <details>, where it was, not deleted: the analysis decides what is template
(`strip_template`), this module only shows its decision. Every string from GitHub goes through
markdown.render (Markdown) or html.escape (names, paths, hunks).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from . import markdown
from .panels import _date, e, safe_link

# ---- the description, split into what the author wrote and the folded template ----------------------

_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.S)
_HEADING = re.compile(r"^ {0,3}#{1,6}(?:[ \t]|$)")


@dataclass
class Segment:
    text: str  # Markdown source, as written
    template: bool  # folded away: the analysis counts it as template boilerplate


def _blocks(body: str) -> list[str]:
    """The description's blocks in order: paragraphs, each heading line on its own, and fenced code kept
    whole (a blank line inside a fence does not end it)."""
    blocks: list[str] = []
    cur: list[str] = []
    fence = False

    def close():
        if cur:
            blocks.append("\n".join(cur))
            cur.clear()

    for line in body.split("\n"):
        if line.lstrip().startswith(("```", "~~~")):
            if not fence:
                close()
            fence = not fence
            cur.append(line)
            if not fence:
                close()
            continue
        if fence:
            cur.append(line)
        elif not line.strip():
            close()
        elif _HEADING.match(line):
            close()
            blocks.append(line)
        else:
            cur.append(line)
    close()
    return blocks


def _norm(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.strip().split("\n"))


def split_description(body: str, conventions: Any | None) -> list[Segment]:
    """The description as segments in their original order, each either shown or folded as template.

    A block is shown when its text survives the analysis' `strip_template` (with `conventions`; without
    them only HTML comments fold); a heading is shown when something under it is. HTML comments are
    invisible on GitHub and are folded here. Adjacent segments of one kind are merged."""
    body = (body or "").replace("\r\n", "\n")
    if not body.strip():
        return []
    kept_text = None
    if conventions is not None:
        from ..analysis.description import strip_template

        kept_text = _norm(strip_template(body, conventions)[0])
    raw: list[Segment] = []
    for block in _blocks(body):
        comments = _COMMENT.findall(block)
        visible = _COMMENT.sub("", block).strip() if comments else block
        if comments:
            raw.append(Segment("\n".join(comments), True))
        if not visible:
            continue
        if _HEADING.match(visible):
            raw.append(Segment(visible, False))  # decided below, from its section
        else:
            shown = kept_text is None or _norm(visible) in kept_text
            raw.append(Segment(visible, not shown))
    # A heading folds with its section when nothing of the section is shown; an empty heading is the
    # template's own (strip_template drops it), unless there are no conventions to say so.
    for i, seg in enumerate(raw):
        if seg.template or not _HEADING.match(seg.text):
            continue
        j = i + 1
        while j < len(raw) and not _HEADING.match(raw[j].text):
            j += 1
        section = raw[i + 1 : j]
        seg.template = all(s.template for s in section) if section else kept_text is not None
    merged: list[Segment] = []
    for seg in raw:
        if merged and merged[-1].template == seg.template:
            merged[-1].text += "\n\n" + seg.text
        else:
            merged.append(Segment(seg.text, seg.template))
    return merged


def description_html(body: str, conventions: Any | None) -> str:
    segments = split_description(body, conventions)
    if not segments:
        return '<div class="wb-dim">No description.</div>'
    out = []
    for seg in segments:
        if seg.template:
            lines = seg.text.count("\n") + 1
            what = f"template text ({lines} line{'s' if lines > 1 else ''}), folded"
            out.append(
                f'<details class="wb-template"><summary>{what}</summary>'
                f'<div class="wb-md">{markdown.render(seg.text)}</div></details>'
            )
        else:
            out.append(f'<div class="wb-md">{markdown.render(seg.text)}</div>')
    return "".join(out)


# ---- the discussion, in time order ----------------------------------------------------------------------


@dataclass
class Post:
    author: str | None
    at: str | None
    body: str
    url: str | None = None


@dataclass
class Comment(Post):
    pass


@dataclass
class Review(Post):
    state: str = "COMMENTED"
    inline: int = 0  # inline comments submitted with this review (shown in their threads)


@dataclass
class Thread:
    path: str
    line: int | None
    diff_hunk: str
    resolved: bool | None  # None: unknown (the REST API does not say; GraphQL does)
    outdated: bool  # the code it points at has changed since
    posts: list[Post] = field(default_factory=list)

    @property
    def at(self) -> str | None:
        return self.posts[0].at if self.posts else None


Entry = Comment | Review | Thread


def _login(d: dict) -> str | None:
    user = d.get("user")
    return user.get("login") if isinstance(user, dict) else None


def _post(d: dict, at_key: str = "created_at") -> dict:
    return {"author": _login(d), "at": d.get(at_key), "body": d.get("body") or "", "url": d.get("html_url")}


def _outdated(c: dict) -> bool:
    """GitHub drops a review comment's current position (REST `position`, GraphQL `line`) once the lines
    it pointed at changed; a file-level comment has no line in the first place."""
    if c.get("subject_type") == "file":
        return False
    return c.get("line") is None and c.get("position") is None


def threads(review_comments: list[dict]) -> list[Thread]:
    """Review comments grouped into threads by their first comment (replies name it in in_reply_to_id)."""
    by_root: dict[Any, Thread] = {}
    for c in sorted(review_comments, key=lambda c: (c.get("created_at") or "", c.get("id") or 0)):
        root = c.get("in_reply_to_id") or c.get("id")
        t = by_root.get(root)
        if t is None:
            t = by_root[root] = Thread(
                path=c.get("path") or "",
                line=c.get("line") or c.get("original_line"),
                diff_hunk=c.get("diff_hunk") or "",
                resolved=c.get("thread_resolved"),
                outdated=_outdated(c),
            )
        elif t.resolved is None:
            t.resolved = c.get("thread_resolved")
        t.posts.append(Post(**_post(c)))
    return list(by_root.values())


def timeline(record: Any) -> list[Entry]:
    """Comments, reviews and review threads of a PR, oldest first (a thread sits at its first comment)."""
    inline: dict[Any, int] = {}
    for c in record.review_comments or []:
        rid = c.get("pull_request_review_id")
        inline[rid] = inline.get(rid, 0) + 1
    entries: list[Entry] = [Comment(**_post(c)) for c in record.issue_comments or []]
    for r in record.reviews or []:
        post = _post(r, "submitted_at")
        entries.append(Review(**post, state=r.get("state") or "COMMENTED", inline=inline.get(r.get("id"), 0)))
    entries.extend(threads(record.review_comments or []))
    # ISO-8601 UTC strings sort in time order; an entry without a time goes last. Stable: same-time
    # entries keep comments, reviews, threads order.
    return sorted(entries, key=lambda x: (x.at is None, x.at or ""))


@dataclass
class Counts:
    comments: int = 0
    reviews: dict[str, int] = field(default_factory=dict)
    threads: int = 0
    resolved: int = 0
    outdated: int = 0


def counts(entries: list[Entry]) -> Counts:
    c = Counts()
    for x in entries:
        if isinstance(x, Thread):
            c.threads += 1
            c.resolved += bool(x.resolved)
            c.outdated += x.outdated
        elif isinstance(x, Review):
            c.reviews[x.state] = c.reviews.get(x.state, 0) + 1
        else:
            c.comments += 1
    return c


# ---- HTML --------------------------------------------------------------------------------------------

REVIEW_STATES = {
    "APPROVED": ("approved", "#1a7f37"),
    "CHANGES_REQUESTED": ("requested changes", "#b42318"),
    "COMMENTED": ("reviewed", "#57606a"),
    "DISMISSED": ("review dismissed", "#9a6700"),
    "PENDING": ("review pending", "#9a6700"),
}
HUNK_TAIL = 8  # lines of a thread's hunk shown, as GitHub shows the end of the hunk the comment is on


def counts_html(c: Counts) -> str:
    parts = [f"{c.comments} comments"]
    if c.reviews:
        states = ", ".join(f"{n} {REVIEW_STATES.get(s, (s.lower(), ''))[0]}" for s, n in c.reviews.items())
        parts.append(f"{sum(c.reviews.values())} reviews ({states})")
    if c.threads:
        parts.append(f"{c.threads} review threads ({c.resolved} resolved, {c.outdated} outdated)")
    return f'<div class="wb-meta">{e(" · ".join(parts))}</div>'


def _head(p: Post, verb: str) -> str:
    link = f" · {safe_link(p.url, 'on GitHub')}" if p.url else ""
    return (
        f'<div class="wb-conv-head"><b>{e(p.author or "(deleted user)")}</b> {verb} '
        f'<span class="wb-dim">{e(_date(p.at))}</span>{link}</div>'
    )


def _body(text: str) -> str:
    if not text.strip():
        return ""
    return f'<div class="wb-md">{markdown.render(text)}</div>'


def hunk_html(hunk: str, tail: int = HUNK_TAIL) -> str:
    lines = hunk.split("\n") if hunk else []
    if not lines:
        return ""
    head, body = (lines[0], lines[1:]) if lines[0].startswith("@@") else ("", lines)
    cut = len(body) - tail
    rows = [f'<div class="wb-hunk-h">{e(head)}</div>'] if head else []
    if cut > 0:
        rows.append(f'<div class="wb-dim">… {cut} earlier lines</div>')
        body = body[cut:]
    for line in body:
        cls = "wb-add" if line.startswith("+") else "wb-del" if line.startswith("-") else ""
        rows.append(f'<div class="{cls}">{e(line) or "&nbsp;"}</div>')
    return '<div class="wb-conv-hunk">' + "".join(rows) + "</div>"


def entry_html(x: Entry) -> str:
    if isinstance(x, Thread):
        badges = []
        if x.resolved:
            badges.append('<span class="wb-conv-badge wb-resolved">resolved</span>')
        elif x.resolved is False:
            badges.append('<span class="wb-conv-badge wb-unresolved">unresolved</span>')
        if x.outdated:
            badges.append('<span class="wb-conv-badge wb-outdated">outdated</span>')
        where = f"{x.path}:{x.line}" if x.line else x.path
        posts = "".join(_head(p, "commented") + _body(p.body) for p in x.posts)
        return (
            f'<div class="wb-conv-item wb-conv-thread"><div class="wb-conv-head">review thread on '
            f"<code>{e(where)}</code> {''.join(badges)}</div>{hunk_html(x.diff_hunk)}{posts}</div>"
        )
    if isinstance(x, Review):
        label, color = REVIEW_STATES.get(x.state, (x.state.lower(), "#57606a"))
        inline = f' <span class="wb-dim">· {x.inline} inline comments</span>' if x.inline else ""
        verb = f'<span class="wb-conv-badge" style="background:{color}">{e(label)}</span>{inline}'
        return f'<div class="wb-conv-item wb-conv-review">{_head(x, verb)}{_body(x.body)}</div>'
    return f'<div class="wb-conv-item wb-conv-comment">{_head(x, "commented")}{_body(x.body)}</div>'


CONVERSATION_CSS = """
.wb-conv { font-size: 13px; }
/* ipywidgets' HTML content is a flex item as wide as its longest line, and line-spaced like a
   one-line widget: here it must shrink to the tab, wrap, and read as text */
.wb-conv > .widget-html-content { min-width: 0; width: 100%; line-height: 1.45; }
.wb-conv .wb-md { overflow-wrap: anywhere; }
.wb-conv .wb-md h1, .wb-conv .wb-md h2, .wb-conv .wb-md h3, .wb-conv .wb-md h4 { font-size: 14px; margin: 10px 0 4px; }
.wb-conv .wb-md pre { overflow-x: auto; background: #f6f8fa; padding: 4px; }
.wb-conv .wb-md table { border-collapse: collapse; } .wb-conv .wb-md td, .wb-conv .wb-md th { border: 1px solid #d0d7de; padding: 2px 6px; }
.wb-conv-desc { border: 1px solid #d0d7de; border-radius: 6px; padding: 4px 10px; margin-bottom: 8px; }
.wb-conv-item { border-left: 2px solid #d0d7de; padding: 2px 0 2px 10px; margin: 8px 0; }
.wb-conv-thread { border-left-color: #8c959f; }
.wb-conv-head { color: #57606a; font-size: 12px; }
.wb-conv-badge { display: inline-block; color: white; background: #57606a; border-radius: 8px; padding: 0 6px; font-size: 11px; }
.wb-conv-badge.wb-resolved { background: #8250df; } .wb-conv-badge.wb-unresolved { background: #9a6700; }
.wb-conv-badge.wb-outdated { background: #6e7781; }
.wb-conv-hunk { font-family: monospace; font-size: 11px; white-space: pre; overflow-x: auto; background: #f6f8fa; margin: 4px 0; }
.wb-conv-hunk .wb-add { background: #e6ffec; } .wb-conv-hunk .wb-del { background: #ffebe9; }
.wb-conv-hunk .wb-hunk-h { color: #0969da; }
.wb-template > summary { color: #6e7781; font-size: 12px; cursor: pointer; }
"""
