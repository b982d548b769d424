"""Words: many found in a text in one pass (every place of every word), and a count said in words.

An Aho-Corasick automaton (ahocorasick_rs, a DFA in Rust) reads the text once for all the words, where
a str.find loop per word reads it once per word. A word's id is its index in the list given.
"""

from __future__ import annotations

import ahocorasick_rs


class WordFinder:
    def __init__(self, words: list[str]) -> None:
        self.words = words
        standard, dfa = ahocorasick_rs.MatchKind.Standard, ahocorasick_rs.Implementation.DFA
        self._in_str = ahocorasick_rs.AhoCorasick(words, matchkind=standard, implementation=dfa)
        # A text is searched as bytes where it can be: there a byte offset is a character offset, and the
        # str API's conversion of every match's offsets costs as much as the search itself.
        self._replaceable = all(w.isascii() and "?" not in w for w in words)
        self._in_bytes = ahocorasick_rs.BytesAhoCorasick(
            [w.encode() for w in words], matchkind=standard, implementation=dfa
        )

    def places(self, text: str) -> list[tuple[int, int, int]]:
        """(word id, start, end) of every occurrence of every word, overlapping ones included."""
        if self._replaceable or text.isascii():
            # Each non-ASCII character becomes one "?", so offsets stay the text's, and no word (ASCII,
            # without "?") can match across one: a patch with one "→" in a comment is searched as bytes too.
            return self._in_bytes.find_matches_as_indexes(text.encode("ascii", "replace"), overlapping=True)
        return self._in_str.find_matches_as_indexes(text, overlapping=True)


def counted(n: int, noun: str) -> str:
    """A count as a signal's label says it: "1 file", "3 files"."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
