"""HTML for the header, heuristics, brief preview and text-diff panels. Pure functions of plain data.

Every string that came from GitHub or from the reviewer is escaped here; links are emitted only for
http(s) URLs, and the Markdown preview is an escape-first renderer (no raw HTML can pass through).
"""

from __future__ import annotations

import difflib
import html
import re
from dataclasses import asdict
from typing import Any

from ..analysis.titles import parse_title

_SAFE_URL = re.compile(r"^https?://[^\s\"'<>]+$", re.IGNORECASE)
VERDICT_COLORS = {"deep": "#b42318", "skim": "#b35c00", "skip": "#667085"}


def e(value: Any) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def safe_link(url: str | None, text: str | None = None) -> str:
    """An <a> only for http(s) URLs; anything else (javascript:, data:, relative) is shown as text."""
    label = e(text if text is not None else url)
    if url and _SAFE_URL.match(url.strip()):
        return f'<a href="{e(url.strip())}" target="_blank" rel="noopener noreferrer">{label}</a>'
    return label


def _date(value: Any) -> str:
    if value in (None, ""):
        return "—"
    return str(value).replace("T", " ").replace("Z", "")[:16]


def header_html(record: Any) -> str:
    pr = record.pr
    tags = parse_title(record.title).tags
    labels = [
        x for x in record.labels if x and x.lower() not in tags
    ]  # a label repeating a title tag adds nothing
    chips = "".join(f'<span class="wb-chip">{e(t)}</span>' for t in tags) + "".join(
        f'<span class="wb-chip wb-label">{e(t)}</span>' for t in labels
    )
    state = record.state + (" (draft)" if pr.get("draft") else "")
    n_files = pr.get("changed_files") or len(record.files)
    trunc = " · file list truncated at 3,000" if record.files_truncated else ""
    return (
        '<div class="wb-header">'
        f'<div class="wb-title"><b>#{int(record.number)}</b> {e(record.title)}</div>'
        f'<div class="wb-meta">{e(record.repo)} · by <b>{e(record.author or "(deleted user)")}</b> · '
        f'<span class="wb-state wb-state-{e(record.state)}">{e(state)}</span> · '
        f"created {e(_date(pr.get('created_at')))} · updated {e(_date(pr.get('updated_at')))} · "
        f"merged {e(_date(pr.get('merged_at')))}</div>"
        f'<div class="wb-meta">+{int(record.additions)} −{int(record.deletions)} in {int(n_files or 0)} files{e(trunc)} · '
        f"{safe_link(record.url, 'open on GitHub')} · source: {e(record.source)}</div>"
        f"<div>{chips}</div></div>"
    )


def verdict_line(analysis: Any | None) -> str:
    """One line for the header: the recommendation at a glance (details in the Heuristics tab)."""
    if analysis is None:
        return ""
    a = analysis
    color = VERDICT_COLORS.get(a.verdict, "#444")
    why = "; ".join(e(x) for x in a.deciding[:2])
    who = f" · for {e(a.audience)}" if a.audience else ""
    return (
        f'<div class="wb-meta"><span class="wb-badge" style="background:{color}">{e(a.verdict)}</span>'
        f"effort {int(a.effort)}/5 · ~{int(a.minutes)} min{who} · {why}{_revert_note(a)}</div>"
    )


def _revert_note(a: Any) -> str:
    """A revert, or a PR a later one took back, says so at a glance: the other PR is read first."""
    for c in a.cross_refs:
        if c.repo is None and c.relation in ("reverted-by", "reverts"):
            verb = "reverted later by" if c.relation == "reverted-by" else "reverts"
            return f" · <b>{verb} #{int(c.number)}</b>" + (f" ({e(c.state)})" if c.state else "")
    return ""


def _evidence(ev: Any) -> str:
    where = ""
    if ev.file:
        where = f"<code>{e(ev.file)}{':' + str(int(ev.line)) if ev.line else ''}</code> "
    return f"<li>{where}{e(ev.text)}</li>"


def heuristics_html(analysis: Any | None, *, unavailable: str | None = None) -> str:
    if analysis is None:
        return f'<div class="wb-note">{e(unavailable or "heuristics unavailable")}</div>'
    a = analysis
    color = VERDICT_COLORS.get(a.verdict, "#444")
    out = [
        f'<div class="wb-verdict"><span class="wb-badge" style="background:{color}">{e(a.verdict)}</span>'
        f" effort {int(a.effort)}/5 · ~{int(a.minutes)} min"
        + (f" · for {e(a.audience)}" if a.audience else "")
        + "</div>"
    ]
    if a.deciding:
        out.append("<div><b>Deciding:</b> " + "; ".join(e(x) for x in a.deciding) + "</div>")
    if a.risks:  # the judged risks, each with why it is one and the lines that show it
        out.append("<details open><summary><b>Risks</b></summary><ul>")
        for r in a.risks:
            out.append(f"<li><b>{e(r.kind)}</b>: {e(r.why)}")
            if r.evidence:
                out.append("<ul>" + "".join(_evidence(x) for x in r.evidence[:3]) + "</ul>")
            out.append("</li>")
        out.append("</ul></details>")
    if a.discussion:
        out.append(
            "<details open><summary><b>Discussion</b></summary>"
            + _plain_dict(asdict(a.discussion))
            + "</details>"
        )
    risks = [s for s in a.signals if s.weight > 0 or s.evidence]
    if risks:
        out.append("<details open><summary><b>Signals</b></summary><ul>")
        for s in risks:
            out.append(f"<li>{e(s.label)} <span class='wb-dim'>({s.weight:+.1f})</span>")
            if s.evidence:
                out.append("<ul>" + "".join(_evidence(x) for x in s.evidence[:5]) + "</ul>")
            out.append("</li>")
        out.append("</ul></details>")
    if a.key_files:
        out.append("<details open><summary><b>Key files</b></summary><ul>")
        for k in a.key_files:
            syms = ", ".join(f"<code>{e(s)}</code>" for s in k.symbols[:6])
            out.append(
                f"<li><code>{e(k.filename)}</code> <span class='wb-dim'>[{e(k.role)}] +{int(k.additions)} "
                f"−{int(k.deletions)}</span> — {e(k.reason)}{' · ' + syms if syms else ''}</li>"
            )
        out.append("</ul></details>")
    if a.key_symbols:
        out.append(
            "<div><b>Symbols:</b> " + ", ".join(f"<code>{e(s)}</code>" for s in a.key_symbols[:12]) + "</div>"
        )
    if a.cross_refs:
        out.append("<details open><summary><b>Cross-references</b></summary><ul>")
        for c in a.cross_refs:
            title = e(c.title) if c.title else "<i>not in the cache</i>"
            out.append(
                f"<li>{e(c.relation)} {safe_link(c.url, c.name) if c.url else e(c.name)} "
                f"{title}{' · ' + e(c.state) if c.state else ''}</li>"
            )
        out.append("</ul></details>")
    if a.open_items:
        out.append(
            "<details open><summary><b>Open items</b></summary><ul>"
            + "".join(f"<li>{e(x)}</li>" for x in a.open_items)
            + "</ul></details>"
        )
    if a.truncated:
        out.append('<div class="wb-note">Not seen: ' + "; ".join(e(x) for x in a.truncated) + "</div>")
    return "".join(out)


def _plain_dict(d: dict) -> str:
    """Discussion highlights come as a dict of lists/values whose keys the heuristics own: show them generically."""
    items = []
    for k, v in d.items():
        if v in (None, "", [], {}, 0, False):
            continue
        label = e(str(k).replace("_", " "))
        if isinstance(v, list):
            inner = "".join(f"<li>{e(_short(x))}</li>" for x in v[:8])
            more = f"<li class='wb-dim'>… {len(v) - 8} more</li>" if len(v) > 8 else ""
            items.append(f"<li>{label}:<ul>{inner}{more}</ul></li>")
        else:
            items.append(f"<li>{label}: {e(_short(v))}</li>")
    return "<ul>" + "".join(items) + "</ul>" if items else "<div class='wb-dim'>nothing notable</div>"


def _short(x: Any, n: int = 240) -> str:
    if isinstance(x, dict):
        x = " · ".join(f"{k}: {v}" for k, v in x.items() if v not in (None, ""))
    s = str(x)
    return s if len(s) <= n else s[: n - 1] + "…"


# ---- Markdown preview: escape first, then a small safe subset ----------------------------------------
_INLINE_CODE = re.compile(r"`([^`]+)`")
_BOLD = re.compile(r"\*\*(.+?)\*\*")
_LINK = re.compile(r"\[([^\]]+)\]\(([^)\s]+)\)")


def _link_or_text(m: re.Match) -> str:
    url = html.unescape(m.group(2))
    if _SAFE_URL.match(url):
        return safe_link(url, html.unescape(m.group(1)))
    return m.group(0)  # not http(s): keep the Markdown as (already escaped) text


def _inline(text: str) -> str:
    # Code spans are cut out first so ** and [] inside them stay literal.
    parts = _INLINE_CODE.split(text)
    out = []
    for i, part in enumerate(parts):
        if i % 2:
            out.append(f"<code>{html.escape(part)}</code>")
            continue
        s = html.escape(part, quote=False)
        s = _BOLD.sub(r"<b>\1</b>", s)
        s = _LINK.sub(_link_or_text, s)
        out.append(s)
    return "".join(out)


def markdown_html(text: str) -> str:
    """Headings, bullet and numbered lists, bold, code spans, fenced code and http(s) links; all else is text."""
    out: list[str] = []
    in_list: str | None = None
    in_code = False
    code: list[str] = []
    para: list[str] = []

    def flush_para():
        if para:
            out.append("<p>" + "<br>".join(_inline(x) for x in para) + "</p>")
            para.clear()

    def close_list():
        nonlocal in_list
        if in_list:
            out.append(f"</{in_list}>")
            in_list = None

    for line in (text or "").splitlines():
        if line.strip().startswith("```"):
            if in_code:
                out.append("<pre>" + html.escape("\n".join(code)) + "</pre>")
                code, in_code = [], False
            else:
                flush_para()
                close_list()
                in_code = True
            continue
        if in_code:
            code.append(line)
            continue
        m = re.match(r"^(#{1,6})\s+(.*)$", line)
        b = re.match(r"^\s*[-*+]\s+(.*)$", line)
        o = re.match(r"^\s*\d+[.)]\s+(.*)$", line)
        if m:
            flush_para()
            close_list()
            level = len(m.group(1))
            out.append(f"<h{level}>{_inline(m.group(2))}</h{level}>")
        elif b or o:
            flush_para()
            kind = "ul" if b else "ol"
            if in_list != kind:
                close_list()
                out.append(f"<{kind}>")
                in_list = kind
            out.append(f"<li>{_inline((b or o).group(1))}</li>")
        elif not line.strip():
            flush_para()
            close_list()
        else:
            close_list()
            para.append(line)
    if in_code:
        out.append("<pre>" + html.escape("\n".join(code)) + "</pre>")
    flush_para()
    close_list()
    return '<div class="wb-preview">' + "".join(out) + "</div>"


def text_diff_html(old: str, new: str, *, old_label: str = "draft", new_label: str = "edited") -> str:
    """A unified diff between two texts, escaped, with added/removed lines coloured."""
    lines = list(
        difflib.unified_diff(
            (old or "").splitlines(),
            (new or "").splitlines(),
            fromfile=old_label,
            tofile=new_label,
            lineterm="",
            n=2,
        )
    )
    if not lines:
        return '<div class="wb-note">no differences</div>'
    rows = []
    for x in lines:
        cls = (
            "wb-add"
            if x.startswith("+") and not x.startswith("+++")
            else (
                "wb-del"
                if x.startswith("-") and not x.startswith("---")
                else ("wb-hunk" if x.startswith("@@") else "")
            )
        )
        rows.append(f'<tr class="{cls}"><td class="wb-code">{html.escape(x)}</td></tr>')
    return '<table class="wb-diff">' + "".join(rows) + "</table>"


def version_label(v: Any) -> str:
    final = " · final" if v.is_final else ""
    when = _date(v.created_at)
    return f"v{v.version} · {when} · {v.source}{final}"


APP_CSS = """
.wb-app { outline: none; }
.wb-header .wb-title { font-size: 15px; margin-bottom: 2px; }
.wb-meta { color: #57606a; font-size: 12px; }
.wb-chip { display: inline-block; background: #eef2f6; border-radius: 8px; padding: 0 6px; margin: 2px 3px 0 0; font-size: 11px; }
.wb-chip.wb-label { background: #fff4d6; }
.wb-dim { color: #888; }
.wb-status-ok { color: #1a7f37; } .wb-status-err { color: #b42318; font-weight: bold; } .wb-status-warn { color: #9a6700; }
.wb-preview { border-left: 3px solid #d0d7de; padding-left: 8px; }
.wb-panel ul { margin: 2px 0 2px 0; padding-left: 18px; }
"""
