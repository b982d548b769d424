"""Markdown from GitHub (PR descriptions, comments, reviews) as inert HTML, through markdown-it-py.

Why markdown-it-py: descriptions are full CommonMark with GitHub tables and strikethrough, which a
hand-written subset (panels.markdown_html, enough for our own briefs) would get wrong; markdown-it-py is
a well-kept CommonMark-compliant port of markdown-it, and it can refuse raw HTML outright.

What keeps hostile text inert:
- `html: False`: raw HTML (<script>, <img onerror>, <details>, <iframe>) is escaped, never passed through;
- links are kept only for http(s) and mailto URLs (`validateLink`): javascript:, vbscript:, data:,
  file: and relative URLs (which would resolve against JupyterLab's own pages) stay text;
- images become links: an <img> would fetch from a third-party server when the PR is shown (a tracking
  pixel in the middle of an offline review), and a data: image is just as unwanted;
- every link opens in a new tab with rel="noopener noreferrer".
"""

from __future__ import annotations

import html
import re

from markdown_it import MarkdownIt

_SAFE = re.compile(r"^(?:https?://|mailto:)[^\s\"'<>`]+$", re.IGNORECASE)


def safe_url(url: str) -> bool:
    return bool(_SAFE.match(url.strip()))


def _link_open(self, tokens, idx, options, env):
    tokens[idx].attrSet("target", "_blank")
    tokens[idx].attrSet("rel", "noopener noreferrer")
    return self.renderToken(tokens, idx, options, env)


def _image(self, tokens, idx, options, env):
    token = tokens[idx]
    src = token.attrGet("src") or ""
    alt = self.renderInlineAsText(token.children or [], options, env) or "image"
    label = html.escape(f"[image: {alt}]")
    if not safe_url(src):
        return label
    return f'<a href="{html.escape(src)}" target="_blank" rel="noopener noreferrer">{label}</a>'


def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable(["table", "strikethrough"])
    md.validateLink = safe_url  # a refused link stays as its source text
    md.add_render_rule("link_open", _link_open)
    md.add_render_rule("image", _image)
    return md


_MD = _parser()


def render(text: str | None) -> str:
    """Markdown -> HTML safe to set as innerHTML (see the module note)."""
    return _MD.render(text or "")
