"""Title conventions: tags, kind and breaking marks parsed from a PR title.

Styles seen upstream, all read here:
- verl's `[rollout, vllm] fix: ...` (and `[BREAKING][trainer] feat: ...`);
- ruff's `[ty] Avoid a panic ...` and `` [`pylint`] Fix ... `` (backticks are stripped from tags);
- a `tag:` prefix, `parser: handle ...`;
- conventional commits `fix(scope)!: ...`.
With no conventional prefix, the kind comes from the title's verb (`Fix ...` -> fix, `Add ...` -> feat);
per-repository verbs live in the conventions TOML (`[kind_verbs]`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..records import quoted_title

KINDS = (
    "feat",
    "fix",
    "refactor",
    "chore",
    "test",
    "doc",
    "docs",
    "ci",
    "perf",
    "misc",
    "build",
    "style",
    "revert",
)
# Conventional-commit spellings that name one of KINDS.
_KIND_ALIASES = {"docs": "doc", "feature": "feat", "bugfix": "fix", "hotfix": "fix", "tests": "test"}

# The first word (or two) of a title without a conventional prefix -> its kind. Measured on verl's
# titles that carry both a kind and a verb (`fix: fix ...`, `feat: add ...`) and on ruff's verb-led
# titles; a repository adds or overrides verbs in its conventions (`[kind_verbs] fix = ["squash"]`).
_VERBS = {
    "fix": "fix fixes fixed fixing avoid prevent handle correct resolve repair respect preserve "
    "restore guard don't dont do+not stop patch workaround ensure retain recover propagate ignore "
    "skip omit exclude suppress deduplicate dedupe only consider treat keep mitigate tolerate mark exempt "
    "limit restrict pass fixup return filter sort match gate adjust fallback fall+back invert catch "
    "silence exit raise bind disambiguate distinguish relax truncate wrap tweak "
    # on verl's titles that state their kind, these lead fixes more often than anything else
    "remove removes use make set change modify",
    "feat": "add adds added adding implement implements support supports introduce introduces allow "
    "allows enable enables expose new create infer recognize recognise detect extend emit improve "
    "improves enhance stabilize stabilise narrow validate show include check synthesize expand "
    "model render ban disallow diagnose track derive accept require reject report warn flag better "
    "more apply display offer provide understand teach generalize generalise port format parenthesize "
    "enforce refine generate insert error complete initial print autofix promote parse tell log "
    "collect list write visit autocomplete annotate represent default",
    "refactor": "refactor refactors refactoring move rename simplify clean cleanup clean+up extract "
    "split inline reorganize reorganise restructure consolidate unify replace migrate "
    "delete deletes drop drops deprecate merge reuse share separate store normalize normalise prefer "
    "convert switch tidy rework rewrite combine pull isolate group flatten trim "
    "centralize centralise factor reimplement reclassify box batch",
    "perf": "optimize optimise speed speed+up cache reduce accelerate compact lazily defer memoize "
    "parallelize avoid+allocating faster",
    "doc": "document documents docs doc update+docs update+documentation update+readme "
    "update+changelog clarify fix+typo fix+typos typo typos link redirect",
    "test": "test tests add+test add+tests add+a+test add+tests+for add+test+for",
    "chore": "bump upgrade pin unpin update sync release prepare chore vendor increase run disable "
    "configure regenerate minor misc small publish re-enable auto-generate lock ecosystem",
    "revert": "revert reverts",
    "ci": "ci",
    "build": "build",
}
DEFAULT_KIND_VERBS: dict[str, str] = {
    verb.replace("+", " "): kind for kind, verbs in _VERBS.items() for verb in verbs.split()
}

_BRACKETS = re.compile(r"^\s*`?((?:\[[^\]]*\]`?\s*)+)")
_GROUP = re.compile(r"\[([^\]]*)\]")
_TAG_SEPARATORS = re.compile(r"[,;/]")
_CONVENTIONAL = re.compile(r"^\s*(?P<kind>[a-zA-Z]+)(?:\((?P<scope>[^)]*)\))?(?P<bang>!)?\s*:\s*")
# `tag: subject`: one word (dots, dashes and slashes allowed) followed by a colon and a space, or
# `` `ruff server`: subject `` (a code span may hold a blank) too.
_TAG_PREFIX = re.compile(r"^\s*(?:`(?P<code>[^`\n]{1,40})`|(?P<tag>[A-Za-z][\w.\-/]{0,30}))\s*:\s+")
_NOT_TAGS = frozenset({"wip", "draft", "rfc", "poc", "nit", "todo", "note", "http", "https"})
# A part of a series ("[4/n]", "[2/N]", "[1/3]", "[Part 2]"): where the PR stands, not what it touches.
_SERIES = re.compile(r"\s*(?:part\s*)?\d+\s*(?:/\s*(?:\d+|n))?\s*", re.I)
# Dependency-update titles of people and bots (Dependabot's "Bump x from 1 to 2", Renovate's "Update Rust
# crate x to v2" / "Update dependency x to v2" / "Update NPM Development dependencies"): tagged "deps",
# so a lock-file-only PR still has an area.
_DEPS_TITLE = re.compile(
    r"^(?:bump|update|upgrade|pin|lock)\b.*?(?:\bfrom\b\S*\s+\S+\s+to\b|\b(?:crate|dependency|dependencies|"
    r"deps|lockfile|lock file|action|image)\b|\bto\s+v?\d)",
    re.I,
)
# A release's own title: "Bump version to 0.5.1", "Release 0.15.8", "Prepare for 0.15.1".
_RELEASE_TITLE = re.compile(
    r"^(?:(?:bump|update|set)\s+(?:the\s+)?version\b|release\b|prepare\s+(?:for\s+)?(?:release|v?\d))", re.I
)
_REVERT = re.compile(r"^\s*(revert\b|\[revert\])", re.IGNORECASE)
_WORDS = re.compile(r"[A-Za-z][\w'\-]*")
_KINDS = frozenset(KINDS)
_ADVERBS = frozenset("also always further never now once still then".split())


@dataclass(frozen=True)
class TitleParts:
    tags: list[str] = field(default_factory=list)
    kind: str | None = None
    breaking: bool = False
    revert: bool = False
    subject: str = ""


def _split_tags(group: str) -> list[str]:
    # most groups hold a single tag: the regex split is for those that hold several
    if "," in group or ";" in group or "/" in group:
        return _TAG_SEPARATORS.split(group)
    return [group]


def _clean_tag(tag: str) -> str:
    return tag.strip().strip("`'\"").strip().lower()


def kind_from_verb(subject: str, verbs: dict[str, str] | None = None) -> str | None:
    """The kind a title's leading verb implies (two-word verbs first: "update docs" before "update")."""
    verbs = DEFAULT_KIND_VERBS if verbs is None else verbs
    words = _WORDS.findall(subject[:80])
    if not words:
        return None
    # an adverb before the verb ("Always parenthesize", "Correctly handle", "Also check") says nothing
    while (
        len(words) > 1
        and words[0].lower() not in verbs
        and (words[0].lower() in _ADVERBS or words[0].lower().endswith("ly"))
    ):
        words = words[1:]
    first = words[0].lower()
    if first in ("do", "does") and len(words) > 1 and words[1].lower() == "not":
        return verbs.get("do not")
    for n in (3, 2):
        if len(words) >= n:
            kind = verbs.get(" ".join(w.lower() for w in words[:n]))
            if kind:
                return kind
    kind = verbs.get(first)
    if kind is None and len(first) > 4:  # "Handles", "Implemented", "Fixed": the verb's stem
        for end in ("es", "ed", "s", "d"):
            if first.endswith(end) and first[: -len(end)] in verbs:
                return verbs[first[: -len(end)]]
    return kind


def parse_title(title: str, verbs: dict[str, str] | None = None) -> TitleParts:
    title = title or ""
    rest = title
    tags: list[str] = []
    breaking = False
    m = _BRACKETS.match(title) if "[" in title else None
    if m:
        for group in _GROUP.findall(m.group(1)):
            if _SERIES.fullmatch(group):
                continue
            for tag in _split_tags(group):
                tag = _clean_tag(tag)
                if not tag or tag in _NOT_TAGS:
                    continue
                if tag == "breaking":
                    breaking = True
                else:
                    tags.append(tag)
        rest = title[m.end() :]
    kind = None
    for _ in range(2):  # `ty: fix: ...` is a tag, then a conventional kind
        c = _CONVENTIONAL.match(rest) if ":" in rest else None
        word = c.group("kind").lower() if c else ""
        if c and (word in _KINDS or word in _KIND_ALIASES):
            kind = _KIND_ALIASES.get(word, word)
            if c.group("scope"):
                tags.extend(t for t in map(_clean_tag, _split_tags(c.group("scope"))) if t)
            breaking = breaking or bool(c.group("bang"))
            rest = rest[c.end() :]
            break
        t = _TAG_PREFIX.match(rest) if ":" in rest else None
        if not t:
            break
        tag = _clean_tag(t.group("code") or t.group("tag"))
        if tag == "breaking":
            breaking = True
        elif tag not in _NOT_TAGS:
            tags.append(tag)
        rest = rest[t.end() :]
    if kind is None:
        kind = kind_from_verb(rest, verbs)
    if kind in (None, "chore", "build") and not tags:  # a bot's or release's title: give it an area
        subject = rest.strip()
        if _RELEASE_TITLE.match(subject):
            tags.append("release")
        elif _DEPS_TITLE.match(subject):
            tags.append("deps")
    # `[ty] Revert "title"`: the revert button's title behind the project's tags
    revert = (
        bool(_REVERT.match(title)) or kind == "revert" or "revert" in tags or quoted_title(title) is not None
    )
    uniq = list(dict.fromkeys(tags)) if len(tags) > 1 else tags  # first mention kept, in order
    return TitleParts(tags=uniq, kind=kind, breaking=breaking, revert=revert, subject=rest.strip())


# What runs report rather than what they compute: metrics, profilers, traces, loggers, monitors. A title
# that also names what is computed from them (a loss, a reward, an advantage, gradients) is about that.
_REPORTS = re.compile(
    r"\b(?:metrics?|profil(?:er|ers|ing)|trac(?:e|es|ing)|logg(?:er|ing)|monitor(?:s|ing)?|wandb|tensorboard)\b",
    re.I,
)
_COMPUTED = re.compile(r"\b(?:loss(?:es)?|rewards?|advantages?|kl|grad(?:ient)?s?)\b", re.I)


def reports_on(subject: str) -> bool:
    """Whether a title's subject says the PR changes what runs report ("log rollout MoE load-balance
    metrics", "support partial-token window profiling"), not what they compute."""
    return _REPORTS.search(subject) is not None and _COMPUTED.search(subject) is None
