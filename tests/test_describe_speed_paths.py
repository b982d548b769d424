"""The fast paths of workbench/describe.py give what the plain ways give (positive and negative cases)."""

import random
import re

from workbench.analysis.conventions import Conventions
from workbench.analysis.description import (
    FOLLOWUP,
    ROOT_CAUSE,
    TEST_PLAN,
    _droppable_marks,
    _heading,
    _key_positions,
    _Sentences,
    read_description,
    strip_template,
)

# The Markdown heading rule as one regex: what `_heading` must agree with.
_MARKDOWN_HEADING = re.compile(r"\n[ ]{0,3}#{1,6}(?:[ \t]+([^\n]*?))?[ \t#]*(?=\n)")

LISTS = (ROOT_CAUSE, TEST_PLAN, FOLLOWUP)


def _random_text(rng: random.Random, n: int) -> str:
    words = [
        "the",
        "fix",
        "a",
        "x",
        ". ",
        "! ",
        "\n",
        "\n\n",
        "\n- ",
        "### ",
        "。",
        "İ",
        "unit test plan",
        "e2e2e",
    ]
    keys = [k for keys in LISTS for k in keys]
    return "".join(rng.choice(words + keys) + rng.choice(["", " "]) for _ in range(n))


def test_find_at_gives_what_find_gives():
    rng = random.Random(7)
    fell_back = 0
    for i in range(600):
        text = _random_text(rng, rng.randint(1, 300 if i % 4 == 0 else 40))
        low = text.lower()
        for keys, positions in zip(LISTS, _key_positions(low), strict=True):
            expected = _Sentences(text).find(low, keys)
            assert _Sentences(text).find_at(low, keys, positions) == expected
            fell_back += len(expected) == 8
    assert fell_back  # long texts reach the limit, where the order of the keys decides


def test_key_positions_overlapping_absent_and_chinese():
    text = "We ran the unit test plan. Nothing else here. Then e2e2e passed."
    low = text.lower()
    got = _Sentences(text).find_at(low, TEST_PLAN, _key_positions(low)[1])
    assert [s for _, s in got] == ["We ran the unit test plan.", "Then e2e2e passed."]
    assert _key_positions("nothing to see.") == [[], [], []]
    assert _key_positions("原因 测试 unit test") == [[0], [3, 6], []]


def test_heading_agrees_with_the_markdown_rule():
    lines = [
        "# a #",
        "####### x",
        "#######",
        "##\tfoo ## ",
        "   # indented",
        "#tag",
        "## ",
        "#",
        "## # foo",
        "## foo #\x0b",
        "###x y",
        "### Test plan",
    ]
    for line in lines:
        m = _MARKDOWN_HEADING.match("\n" + line + "\n")
        expected = None if m is None else (m.group(1) or "").strip()
        rest = re.match(r" {0,3}#{1,6}", line)
        got = _heading(line[rest.end() :]) if rest else None
        assert got == expected, line


def test_droppable_marks():
    for sec in ("- [ ] box", "- [x] done", "* [X] done", "```py\nx\n```", "> [!NOTE]\n> x"):
        assert _droppable_marks(sec)
    for sec in ("a [link](u)", "`code` only", "> quote", "a > b", "x>y", "plain text"):
        assert not _droppable_marks(sec)


def test_quoted_sections_keep_their_paragraphs_joined_by_one_blank_line():
    from workbench.analysis.description import _without_template

    conv = Conventions(drop_phrases=["Please describe"])
    assert _without_template("> q\n \nx\n\t\ny", conv) == "> q\n\nx\n\ny"
    assert _without_template("> Please describe it\n\nx", conv) == "x"
    assert _without_template("no quote\n \nx", conv) == "no quote\n \nx"  # nothing template-like


def test_template_memory_is_per_conventions_and_changes_nothing():
    body = (
        "### Why\n\n> Please describe the change.\n\nThe cache was stale.\n\n### Extra\n\nPlease describe it."
    )
    keeps = Conventions(drop_phrases=[])
    drops = Conventions(drop_phrases=["Please describe"])
    for _ in range(2):  # the second round reads from the memory
        assert strip_template(body, drops)[0] == "### Why\nThe cache was stale."
        assert strip_template(body, keeps)[0] == (
            "### Why\n> Please describe the change.\n\nThe cache was stale.\n\n### Extra\nPlease describe it."
        )
    assert drops.template_memo and not keeps.template_memo  # only sections that lost text are kept
    first = read_description("t", body, Conventions(drop_phrases=["Please describe"]))
    assert read_description("t", body, drops) == first


def test_title_tags_with_and_without_separators():
    from workbench.analysis.titles import parse_title

    p = parse_title("[rollout, vllm; fsdp/ BREAKING][ci] fix(trainer/ckpt)!: x")
    assert (p.tags, p.kind, p.breaking, p.subject) == (
        ["rollout", "vllm", "fsdp", "ci", "trainer", "ckpt"],
        "fix",
        True,
        "x",
    )
    p = parse_title("[rollout][rollout] feat: y")
    assert (p.tags, p.kind, p.breaking) == (["rollout"], "feat", False)
    p = parse_title("no brackets nor colon")
    assert (p.tags, p.kind, p.revert, p.subject) == ([], None, False, "no brackets nor colon")
    # "wip:" is neither a kind nor a tag; the kind then comes from the verb after it
    assert parse_title("Revert [x] thing").revert and parse_title("wip: [revert] y").kind == "revert"
    assert parse_title("wip: y").kind is None


# The number regex as it was written before the ASCII fast path: what `_number_starts` must agree with.
_PLAIN_NUMBER = re.compile(
    r"\d(?:,*+\d)*+(?:\.\d++)?+\s?+(?:%|[xX×](?!\w)|ms\b|s\b|sec\b|seconds|min\b|minutes|hours?|[MGK]i?B\b|"
    r"[MG]bps|tokens?/s|it/s|samples/s|TFLOPS|steps?/s|倍|秒|分钟)"
)


def test_number_starts_agree_with_the_plain_regex():
    from workbench.analysis.description import _number_starts

    rng = random.Random(3)
    pieces = [
        "1",
        "23",
        "4,5",
        ",",
        ".",
        "0.5",
        " ",
        "\t",
        "\x1c",
        "\x0b",
        "\n",
        "x",
        "X",
        "ms",
        "s",
        "sec",
        "min",
        "hour",
        "MiB",
        "GB",
        "Mbps",
        "tokens/s",
        "it/s",
        "TFLOPS",
        "step/s",
        "%",
        "a",
        "_",
        "b",
    ]
    wide = ["×", "倍", "秒", "分钟", "３", "٣", "\u00a0", "\u2009"]
    for i in range(3000):
        text = "".join(rng.choice(pieces + (wide if i % 2 else [])) for _ in range(rng.randint(1, 40)))
        assert list(_number_starts(text, 8000)) == [
            m.start() for m in _PLAIN_NUMBER.finditer(text, 0, 8000)
        ], text
        assert list(_number_starts(text, 7)) == [m.start() for m in _PLAIN_NUMBER.finditer(text, 0, 7)], text


def test_reference_relation_prefilter_never_hides_a_match():
    from workbench.analysis.discussion import (
        _FIXES_LAST,
        _FOLLOW_LAST,
        _REF_FIXES,
        _REF_FOLLOW,
        _last_word_char,
    )

    rng = random.Random(5)
    words = [
        "fix",
        "Fixes",
        "fiXed",
        "cloſes",
        "closed",
        "resolve",
        "RESOLVES",
        "follow-up",
        "follow up",
        "Followups",
        "part",
        "continuation",
        "builds",
        "based",
        "depends",
        "extends",
        "on  top",
        "to",
        "of",
        "on",
        "up on",
        "for",
        "x",
        "see",
        "prefix",
    ]
    seps = [" ", "", ":", " :", ": ", "\n", "\t", "\u00a0", "\x1c", ",", "  :  \n"]
    for _ in range(5000):
        before = "".join(rng.choice(words) + rng.choice(seps) for _ in range(rng.randint(0, 5)))
        last = _last_word_char(before)
        assert (last in _FIXES_LAST and bool(_REF_FIXES.search(before))) == bool(_REF_FIXES.search(before)), (
            before
        )
        assert (last in _FOLLOW_LAST and bool(_REF_FOLLOW.search(before))) == bool(
            _REF_FOLLOW.search(before)
        ), before


def test_headings_inside_code_blocks_are_code():
    body = "intro\n  ```sh\n# not a heading\n  ```\n## Real\nkept\n\t```\n### also code\n"
    text, sections = strip_template(body, Conventions())
    assert [h for h, _ in sections] == ["", "Real"]
    assert "# not a heading" in text and "### also code" in text


def test_from_to_agrees_with_the_plain_search():
    from workbench.analysis.description import _from_to, _from_to_searched

    rng = random.Random(13)
    pieces = [
        "from",
        "FROM",
        "From",
        "xfrom",
        "_from",
        " ",
        "\n",
        "1",
        "2.5",
        ",",
        "s",
        "to",
        "TO",
        "x",
        "İ",
        "ſ",
        "fr",
        "om",
    ]
    for _ in range(4000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 30)))
        for end in (8000, 12):
            assert list(_from_to(text, text.lower(), end)) == list(_from_to_searched(text, end)), text
    assert list(
        _from_to("went from 3 to 5, not xfrom 1 to 2", "went from 3 to 5, not xfrom 1 to 2", 8000)
    ) == [5]


# Sentence breaks as one regex: what `_sentence_ends` must agree with.
_ONE_BREAK_REGEX = re.compile(r"[\n.!?。](?:(?<=\n)(?=\n|[-*#>|] |\d+\. )|(?<=[.!?])(?= )|(?<=。))")


def test_sentence_ends_agree_with_one_regex():
    from workbench.analysis.description import _sentence_ends

    rng = random.Random(17)
    pieces = [
        "a",
        ".",
        "!",
        "?",
        "。",
        " ",
        "\n",
        "- ",
        "* ",
        "# ",
        "#",
        "> ",
        "| ",
        "12. ",
        "1.",
        "٣. ",
        "x.y",
        "?!",
    ]
    for _ in range(4000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 40)))
        assert _sentence_ends(text) == [m.end() for m in _ONE_BREAK_REGEX.finditer(text)], text
