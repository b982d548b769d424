"""Per-repository reading conventions: areas by path, title tags, weights, thresholds, bots, language.

Looked up in order: an explicit path; `<cache>/conventions/<owner>-<repo>.toml`; a file shipped in
`workbench/conventions/`; then only the defaults (`workbench/conventions/default.toml`). A repository's
file overrides keys of the defaults; its area rules are tried before the default ones.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..config import WorkbenchError, cache_dir
from .diff import ROLES, file_role
from .titles import DEFAULT_KIND_VERBS, TitleParts, parse_title

PACKAGE_CONVENTIONS = Path(__file__).resolve().parent.parent / "conventions"


def glob_to_regex(glob: str) -> re.Pattern[str]:
    """'*' stays inside one directory, '**' crosses directories, '?' is one character."""
    out, i = [], 0
    while i < len(glob):
        c = glob[i]
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif glob.startswith("**", i):
            out.append(".*")
            i += 2
        elif c == "*":
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(c))
            i += 1
    return re.compile("".join(out) + r"\Z", re.IGNORECASE)


@dataclass
class Conventions:
    repo: str | None = None
    lang: str = "zh"
    title_style: str = "auto"
    areas: list[tuple[str, str]] = field(default_factory=list)  # (glob, area), first match wins
    # (glob, role): a repository's own file roles (ruff's mdtest suites are tests), tried before the
    # built-in conventions of diff.file_role; first match wins
    roles: list[tuple[str, str]] = field(default_factory=list)
    # title verb -> kind, for titles with no conventional-commit prefix ("Fix ..." -> fix)
    kind_verbs: dict[str, str] = field(default_factory=lambda: dict(DEFAULT_KIND_VERBS))
    audiences: dict[str, str] = field(default_factory=dict)  # audience name -> how a brief names it
    # (glob or "tag:NAME", audience name): who reads a file or a title tag; all matches count, in order
    audience_rules: list[tuple[str, str]] = field(default_factory=list)
    bots: list[str] = field(default_factory=list)
    weights: dict[str, float] = field(default_factory=dict)
    thresholds: dict[str, float] = field(default_factory=dict)
    minutes: dict[str, list[int]] = field(default_factory=dict)
    drop_headings: list[str] = field(default_factory=list)
    drop_phrases: list[str] = field(default_factory=list)
    tag_aliases: dict[str, str] = field(default_factory=dict)
    # the project's registration decorators or calls (`register_policy_loss`): a new entry adds an
    # algorithm, a backend or a plugin that its readers study
    registries: list[str] = field(default_factory=list)
    # areas whose code only its own users run (examples, benchmarks, a project's recipes): a change
    # that stays in them is read by those users, not by everyone who builds on the library
    satellite_areas: list[str] = field(default_factory=list)
    # areas of samples people copy and run by hand (examples, benchmarks), never imported: what a line
    # there does is met by whoever runs that sample, not by a run of the project
    sample_areas: list[str] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)  # which files were read, for the record
    _compiled: list[tuple[re.Pattern[str], str]] = field(default_factory=list, repr=False)
    _area_cache: dict[str, str] = field(default_factory=dict, repr=False)
    _role_cache: dict[str, str] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self._compiled = [(glob_to_regex(g), a) for g, a in self.areas]
        self._compiled_roles = [(glob_to_regex(g), r) for g, r in self.roles]
        self._audience_paths = [
            (glob_to_regex(g), a) for g, a in self.audience_rules if not g.startswith(("tag:", "word:"))
        ]
        self._audience_cache: dict[str, list[str]] = {}
        self._audience_tags: dict[str, list[str]] = {}
        self._audience_words: list[tuple[re.Pattern[str], str]] = []
        for g, a in self.audience_rules:
            if g.startswith("tag:"):
                self._audience_tags.setdefault(g[4:].lower(), []).append(a)
            elif g.startswith("word:"):  # `torch-npu` holds the word "npu"; `npus` does not
                self._audience_words.append((re.compile(rf"\b{re.escape(g[5:])}\b", re.I), a))
        self._drop_phrases_lower = [p.lower() for p in self.drop_phrases]
        self._bots = {b.lower() for b in self.bots}
        # describe.strip_template's memory of the template sections it cleaned: they repeat in every
        # PR of a repository. Per instance, as what counts as template depends on the conventions.
        self.template_memo: dict[str, str] = {}

    def weight(self, name: str, default: float = 0.0) -> float:
        return float(self.weights.get(name, default))

    def threshold(self, name: str, default: float = 0.0) -> float:
        return float(self.thresholds.get(name, default))

    def in_satellite(self, filename: str) -> bool:
        """Whether the file lives in an area only its own users run (`satellite_areas`)."""
        return self.area_of(filename) in self.satellite_areas

    def in_sample(self, filename: str) -> bool:
        """Whether the file is a sample people run by hand (`sample_areas`)."""
        return self.area_of(filename) in self.sample_areas

    def area_of(self, filename: str) -> str:
        """The first rule that matches; else a name from the path (`pkg/sub/x.py` -> `sub`)."""
        hit = self._area_cache.get(filename)
        if hit is not None:
            return hit
        area = next((a for rx, a in self._compiled if rx.match(filename)), None)
        if area is None:
            parts = filename.split("/")
            if parts[0] == "src" and len(parts) > 2:
                parts = parts[1:]
            area = parts[1] if len(parts) >= 3 else (parts[0] if len(parts) == 2 else "root")
            area = area.rsplit(".", 1)[0].lower() or "root"
        if len(self._area_cache) < 100_000:
            self._area_cache[filename] = area
        return area

    def role_of(self, filename: str) -> str:
        """The repository's role rule for this path, else the built-in conventions (`file_role`)."""
        if not self._compiled_roles:
            return file_role(filename)
        hit = self._role_cache.get(filename)
        if hit is None:
            hit = next((r for rx, r in self._compiled_roles if rx.match(filename)), None) or file_role(
                filename
            )
            if len(self._role_cache) < 100_000:
                self._role_cache[filename] = hit
        return hit

    def audiences_of_path(self, filename: str) -> list[str]:
        """Every audience rule's name whose glob matches the file, in rule order (kept per file name:
        the same files recur in many PRs)."""
        hit = self._audience_cache.get(filename)
        if hit is None:
            hit = [a for rx, a in self._audience_paths if rx.match(filename)]
            if len(self._audience_cache) < 100_000:
                self._audience_cache[filename] = hit
        return hit

    @property
    def curates_paths(self) -> bool:
        """Whether the repository says who reads which paths (else a code area names its audience)."""
        return bool(self._audience_paths)

    def audiences_of_tag(self, tag: str) -> list[str]:
        return self._audience_tags.get(tag.lower(), [])

    def audiences_of_words(self, title: str) -> list[str]:
        """The audiences a title's words name (a platform: "... on Ascend NPU"), in rule order."""
        return [a for pattern, a in self._audience_words if pattern.search(title)]

    def audience_text(self, name: str) -> str:
        """How a brief names an audience: the vocabulary's words, else the maintainers of the area or tag
        it is named after (a brief says "trainer maintainers should skim", not "trainer should")."""
        return self.audiences.get(name) or f"{name} {_MAINTAINERS}"

    def audience_name(self, text: str) -> str:
        """The audience name a brief's words stand for (`audience_text` read back)."""
        low = text.strip().lower()
        for name, shown in self.audiences.items():
            if shown.lower() == low:
                return name
        return low.removesuffix(f" {_MAINTAINERS}")

    def is_bot(self, login: str | None) -> bool:
        if not login:
            return False
        low = login.lower()
        return low.endswith("[bot]") or low.endswith("-bot") or low in self._bots

    def parse_title(self, title: str) -> TitleParts:
        parts = parse_title(title, self.kind_verbs)
        if self.tag_aliases and parts.tags:
            tags = [self.tag_aliases.get(t, t) for t in parts.tags]
            parts = TitleParts(tags, parts.kind, parts.breaking, parts.revert, parts.subject)
        return parts

    def is_boilerplate(self, text: str) -> bool:
        low = text.lower()
        for p in self._drop_phrases_lower:  # a loop, not any(<generator>): called per section
            if p in low:
                return True
        return False


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except tomllib.TOMLDecodeError as e:
        raise WorkbenchError(f"conventions file {path} is not valid TOML ({e}): fix it or remove it") from e
    except OSError as e:
        raise WorkbenchError(f"cannot read conventions file {path}: {e}") from e


_MAINTAINERS = "maintainers"


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in over.items():
        if key in ("areas", "roles", "audience_rules"):
            out[key] = list(value) + list(base.get(key, []))  # the repository's rules first
        elif isinstance(value, dict) and isinstance(base.get(key), dict):
            out[key] = _merge(base[key], value)
        else:
            out[key] = value
    return out


def _from_dict(d: dict[str, Any], repo: str | None, sources: list[str]) -> Conventions:
    audience_rules = []
    for rule in d.get("audience_rules", []):
        kinds = [k for k in ("glob", "tag", "word") if k in rule] if isinstance(rule, dict) else []
        if not isinstance(rule, dict) or "audience" not in rule or len(kinds) != 1:
            raise WorkbenchError(
                f"conventions: audience rule {rule!r} needs 'audience' and one of 'glob', 'tag' or 'word'"
            )
        where = str(rule["glob"]) if kinds == ["glob"] else f"{kinds[0]}:{rule[kinds[0]]}"
        audience_rules.append((where, str(rule["audience"])))
    areas = []
    for rule in d.get("areas", []):
        if not isinstance(rule, dict) or "glob" not in rule or "area" not in rule:
            raise WorkbenchError(f"conventions: area rule {rule!r} needs both 'glob' and 'area'")
        areas.append((str(rule["glob"]), str(rule["area"])))
    roles = []
    for rule in d.get("roles", []):
        if not isinstance(rule, dict) or "glob" not in rule or "role" not in rule:
            raise WorkbenchError(f"conventions: role rule {rule!r} needs both 'glob' and 'role'")
        if rule["role"] not in ROLES:
            raise WorkbenchError(
                f"conventions: role rule {rule!r} names an unknown role; use one of {', '.join(ROLES)}"
            )
        roles.append((str(rule["glob"]), str(rule["role"])))
    kind_verbs = dict(DEFAULT_KIND_VERBS)
    for kind, verbs in (d.get("kind_verbs") or {}).items():
        if not isinstance(verbs, list):
            raise WorkbenchError(f"conventions: kind_verbs.{kind} should be a list of verbs, not {verbs!r}")
        kind_verbs.update({str(v).lower(): str(kind).lower() for v in verbs})
    lang = str(d.get("lang", "zh"))
    if lang not in ("zh", "en"):
        raise WorkbenchError(f"conventions: lang must be 'zh' or 'en', not {lang!r}")
    template = d.get("template", {}) or {}
    try:
        return Conventions(
            repo=repo,
            lang=lang,
            title_style=str(d.get("title_style", "auto")),
            areas=areas,
            roles=roles,
            kind_verbs=kind_verbs,
            audiences={str(k): str(v) for k, v in (d.get("audiences") or {}).items()},
            audience_rules=audience_rules,
            bots=[str(b) for b in d.get("bots", [])],
            weights={str(k): float(v) for k, v in (d.get("weights") or {}).items()},
            thresholds={str(k): float(v) for k, v in (d.get("thresholds") or {}).items()},
            minutes={str(k): [int(x) for x in v] for k, v in (d.get("minutes") or {}).items()},
            drop_headings=[str(h).lower() for h in template.get("drop_headings", [])],
            drop_phrases=[str(p) for p in template.get("drop_phrases", [])],
            tag_aliases={str(k).lower(): str(v).lower() for k, v in (d.get("tag_aliases") or {}).items()},
            registries=[str(r) for r in d.get("registries", [])],
            satellite_areas=[str(a) for a in d.get("satellite_areas", [])],
            sample_areas=[str(a) for a in d.get("sample_areas", [])],
            sources=sources,
        )
    except (TypeError, ValueError) as e:
        raise WorkbenchError(
            f"conventions: a weight, threshold or minutes value is not a number ({e})"
        ) from e


_DEFAULTS: dict[str, Any] | None = None


def _defaults() -> dict[str, Any]:
    global _DEFAULTS
    if _DEFAULTS is None:
        _DEFAULTS = _read_toml(PACKAGE_CONVENTIONS / "default.toml")
    return _DEFAULTS


def load_conventions(
    repo: str | None = None, path: str | Path | None = None, *, cache: Any = None
) -> Conventions:
    """The conventions in force for `repo` (see the module note for the lookup order)."""
    data = _defaults()
    sources = ["default.toml"]
    candidates: list[Path] = []
    if path is not None:
        p = Path(path).expanduser()
        if not p.is_file():
            raise WorkbenchError(f"conventions file {p} does not exist: pass an existing TOML file")
        candidates.append(p)
    elif repo:
        slug = repo.replace("/", "-")
        candidates += [
            cache_dir(cache) / "conventions" / f"{slug}.toml",
            PACKAGE_CONVENTIONS / f"{slug}.toml",
        ]
    for cand in candidates:
        if cand.is_file():
            data = _merge(data, _read_toml(cand))
            sources.append(str(cand))
            break
    return _from_dict(data, repo, sources)


_DEFAULT_CONVENTIONS: dict[str | None, Conventions] = {}


def default_conventions(repo: str | None = None) -> Conventions:
    """Cached per repository: analysis of thousands of PRs must not re-read TOML for each one."""
    if repo not in _DEFAULT_CONVENTIONS:
        _DEFAULT_CONVENTIONS[repo] = load_conventions(repo)
    return _DEFAULT_CONVENTIONS[repo]
