"""WordFinder: every place of every word, as character offsets of the text, whatever the text holds."""

from __future__ import annotations

from workbench.analysis.words import WordFinder


def _expected(words: list[str], text: str) -> list[tuple[int, int, int]]:
    """Every occurrence of every word (overlapping ones too), found one word at a time."""
    found = []
    for wid, w in enumerate(words):
        at = text.find(w)
        while at >= 0:
            found.append((wid, at, at + len(w)))
            at = text.find(w, at + 1)
    return sorted(found, key=lambda p: (p[2], p[0]))


def _places(finder: WordFinder, text: str) -> list[tuple[int, int, int]]:
    return sorted(finder.places(text), key=lambda p: (p[2], p[0]))


def test_places_are_character_offsets_in_a_text_with_other_characters() -> None:
    # a patch whose comments hold an arrow, CJK and an emoji before the words
    words = ["lock", "threading", "acquire"]
    text = "+# 加锁 → lock 😀\n+    self._lock = threading.Lock()\n+    self._lock.acquire()  # ×2\n"
    places = _places(WordFinder(words), text)
    assert places == _expected(words, text)
    assert [text[s:e] for _w, s, e in places] == ["lock", "lock", "threading", "lock", "acquire"]


def test_no_word_matches_across_a_replaced_character() -> None:
    # "lo→ck" is no "lock", and no "?" in the text is a word's "?"
    finder = WordFinder(["lock", "a?b"])
    assert finder.places("lo→ck a→b") == []
    text = "a?b → lock"
    assert _places(finder, text) == _expected(["lock", "a?b"], text) == [(1, 0, 3), (0, 6, 10)]


def test_words_beyond_ascii_are_found_too() -> None:
    words = ["root cause", "根因", "测试"]
    text = "根因: the root cause is a race. 测试: pytest → ok"
    places = _places(WordFinder(words), text)
    assert places == _expected(words, text)
    assert [text[s:e] for _w, s, e in places] == ["根因", "root cause", "测试"]


def test_ascii_text_unchanged() -> None:
    words = ["def ", "class ", "ass"]
    text = "+class A:\n+    def f(self): pass\n"
    assert _places(WordFinder(words), text) == _expected(words, text)
