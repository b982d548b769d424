"""Who should read a PR, most concerned first: the rule's role area, the title's tags, the files'
readers by changed lines. Pure functions."""

from __future__ import annotations

import re

from .conventions import Conventions
from .diff import FileDiff
from .verdicts import ROLE_AREAS, Facts, Rule


def audiences_of(f: Facts, rule: Rule, tags: list[str], conv: Conventions, title: str = "") -> list[str]:
    """Who should read it, most concerned first; never empty.

    The rule's role area first (a CI-only change is for CI maintainers), then the title's tags (the
    author's own naming of the module) with the platform it names before the first module, then the
    audiences of the files by changed lines; "everyone" for a breaking change and when nothing
    narrower applies."""
    names: list[str] = []

    def add(name: str | None) -> None:
        if name and name not in names:
            names.append(name)

    curated = conv.curates_paths
    roles = _role_audiences(conv)
    if rule.audience:
        # tests-only PRs hold CI's e2e scripts and nightly jobs too: tagged [ci] by their author, and not
        # titled as test work (`[ci] test: cover f`), they are CI maintainers' before test maintainers'
        if rule.audience == "tests" and f.kind != "test":
            for name in (n for t in tags for n in conv.audiences_of_tag(t.strip("`")) if n in roles):
                add(name)
        for name in conv.audiences_of_tag(rule.audience) or [rule.audience]:
            add(name)
    # uncurated, a one-word tag names a module; "[DistillationTrainer refactor]" names a project
    tagged = [
        name
        for tag in (t.strip("`") for t in tags)  # [`pylint`] names the area pylint
        for name in conv.audiences_of_tag(tag) or ([] if curated or " " in tag else [tag])
    ]
    # A removal of mostly program code is read by the users of what goes: a role area its title names
    # (`[ci]` beside the backend it removes) comes after the deleted files' audiences. Not when it updates
    # a dependency: the code it deletes is what the new version no longer needs.
    demoted = roles if _removes_program(f) and not f.has("deps.bump") else set()
    # The tags in the title's order, and the users of a platform the title names ("... on Ascend NPU")
    # before its first module tag: the platform narrows who is concerned, a module says where the change
    # lives. Role areas the title leads with ([ci]) stay first: their maintainers read it first.
    first_module = next((i for i, name in enumerate(tagged) if name not in roles), len(tagged))
    platform = conv.audiences_of_words(title)
    for name in tagged[:first_module] + platform + tagged[first_module:]:
        if name not in demoted:
            add(name)
    later = [name for name in tagged if name in demoted]
    votes: dict[str, float] = {}
    votes_after_code: dict[str, float] = {}
    # A test is read by whoever owns the code it tests: beside code, test maintainers (the role area
    # "tests") are no reader of it, while the code area a test lives in (a linter rule's fixtures) is.
    with_code = any(fd.role == "code" for fd in f.files)
    about_docs = f.kind == "doc" or _DOCS_WORDS.search(title) is not None
    for fd in f.files:
        if fd.role in ("generated", "binary"):
            continue
        weight = max(1, fd.changes) * (2 if fd.role == "code" else 1)
        found = conv.audiences_of_path(fd.filename)
        if not found and not curated:
            found = _area_audiences(fd, conv)
        if with_code and fd.role == "test":
            found = [name for name in found if name not in ROLE_AREAS]
        # Docs beside code are written for the code's readers: docs maintainers come after them, unless
        # the title says the PR is about its docs.
        ballot = votes_after_code if with_code and fd.role == "docs" and not about_docs else votes
        for name in found:
            ballot[name] = ballot.get(name, 0) + weight
    total = sum(votes.values()) + sum(votes_after_code.values())
    for ballot in (votes, votes_after_code):
        for name, v in sorted(ballot.items(), key=lambda kv: -kv[1]):
            if v >= 0.15 * total or not names:  # a file or two on the side does not make an audience
                add(name)
    for name in later:
        add(name)
    if f.has("api.breaking") and "everyone" in conv.audiences:
        add("everyone")
    if not names:
        names.append("everyone")
    return names[: int(conv.threshold("max_audiences", 3))]


_DOCS_WORDS = re.compile(r"\b(?:docs?|documentation|autodocs?|readme)\b", re.I)


def _area_audiences(fd: FileDiff, conv: Conventions) -> list[str]:
    """Default conventions: a code area names its own audience. A file at the top level has no area of
    its own ("root" names no reader): its role's audience reads it (pyproject.toml, build maintainers)."""
    area = conv.area_of(fd.filename)
    if area == "root":
        return [fd.role] if fd.role in conv.audiences else []
    return [area] if area not in ROLE_AREAS or area in conv.audiences else []


def _removes_program(f: Facts) -> bool:
    """A removal whose deleted lines are mostly program code and its configs (a backend, a feature)."""
    program = sum(fd.deletions for fd in f.files if fd.role in ("code", "config", "notebook"))
    return f.removal and 2 * program >= sum(fd.deletions for fd in f.files)


def _role_audiences(conv: Conventions) -> set[str]:
    """The audiences the role areas (ci, docs, tests, build, ...) name in these conventions."""
    return {name for area in ROLE_AREAS for name in conv.audiences_of_tag(area) or [area]}
