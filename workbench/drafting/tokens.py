"""Exact o200k token counts, offline.

tiktoken downloads its encodings on first use (no network here); `bpe-openai` ships o200k_base and
counts ~20k tokens in a few ms. The encoder takes ~0.2 s to build, so it is built once per process.
"""

from __future__ import annotations

from functools import lru_cache

ENCODING = "o200k_base"
# Chat framing per message (role, separators) and the reply priming, as OpenAI documents for its
# chat models; counting them keeps our total an upper bound of what the server bills.
PER_MESSAGE = 4
PER_REPLY = 3


@lru_cache(maxsize=1)
def encoder():
    import bpe_openai

    return bpe_openai.get_encoding(ENCODING)


# bpe-openai refuses a text of 1,000,000 characters or one that yields 200,000 tokens; longer text is
# encoded in pieces cut after a newline (a PR body or patch can be that large).
PIECE_CHARS = 40_000


def _pieces(text: str):
    start, n = 0, len(text)
    while start < n:
        end = min(n, start + PIECE_CHARS)
        if end < n:
            cut = text.rfind("\n", start + PIECE_CHARS // 2, end)
            end = cut + 1 if cut != -1 else end
        yield text[start:end]
        start = end


def encode(text: str) -> list[int]:
    if not text:
        return []
    enc = encoder()
    if len(text) <= PIECE_CHARS:
        return list(enc.encode_ordinary(text))
    out: list[int] = []
    for piece in _pieces(text):
        out.extend(enc.encode_ordinary(piece))
    return out


def count(text: str) -> int:
    return len(encode(text))


def count_messages(messages: list[dict]) -> int:
    return PER_REPLY + sum(
        PER_MESSAGE + count(m.get("role", "")) + count(m.get("content") or "") for m in messages
    )


def clip(text: str, max_tokens: int) -> tuple[str, bool]:
    """The longest prefix of `text` within `max_tokens`, cut at a line break when one is near."""
    if max_tokens <= 0:
        return "", bool(text)
    # only a prefix can matter: grow it until it holds more than max_tokens tokens or is the whole text
    size = max(1024, max_tokens * 8)
    while True:
        ids = encode(text[:size])
        if size >= len(text):
            if len(ids) <= max_tokens:
                return text, False
            break
        if len(ids) > max_tokens:
            break
        size *= 2
    head = encoder().decode(ids[:max_tokens])
    # a token boundary can split a multi-byte character; drop a trailing replacement char
    head = head.rstrip("\ufffd")
    cut = head.rfind("\n")
    if cut > len(head) * 0.6:
        head = head[:cut]
    while head and count(head) > max_tokens:  # decode/re-encode can merge differently at the edge
        head = head[:-1]
    return head, True
