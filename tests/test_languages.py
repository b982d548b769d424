"""Roles, symbols, titles and releases for repositories that are not Python: Rust, Go, TypeScript,
Java/Kotlin and C/C++ conventions, read from small real-looking patches."""

from __future__ import annotations

import pytest
from heuristics_helpers import file, hunk, record

from workbench.analysis.config_changes import scan_deps
from workbench.analysis.conventions import Conventions, load_conventions
from workbench.analysis.diff import file_role, is_snapshot, parse_files
from workbench.analysis.patchscan import is_noise_symbol, section_symbol
from workbench.analysis.pipeline import analyze
from workbench.analysis.signals import CodeFacts
from workbench.analysis.symbols import scan_symbols
from workbench.analysis.titles import parse_title
from workbench.config import WorkbenchError


@pytest.mark.parametrize(
    "name, role",
    [
        # Rust
        ("crates/ruff_linter/src/rules/pylint/rules/too_many_args.rs", "code"),
        ("crates/ruff_linter/src/rules/pylint/tests.rs", "test"),
        ("crates/ruff_python_parser/tests/fixtures.rs", "test"),
        ("crates/ty_solver/src/constraints.rs", "code"),  # not a pip constraints file
        ("crates/ruff/Cargo.toml", "build"),
        ("crates/ruff/build.rs", "build"),
        ("rust-toolchain.toml", "build"),
        ("Cargo.lock", "generated"),
        ("crates/ruff_linter/src/snapshots/ruff_linter__rules__E501.snap", "test"),
        ("crates/ruff_linter/src/snapshots/ruff_linter__rules__E501.snap.new", "test"),
        ("crates/ty_python_semantic/resources/mdtest/call/constructor.md", "test"),
        # Go
        ("internal/server/handler.go", "code"),
        ("internal/server/handler_test.go", "test"),
        ("internal/server/testdata/request.json", "test"),
        ("internal/render/testdata/page.golden", "test"),
        ("api/v1/service.pb.go", "generated"),
        ("pkg/apis/zz_generated.deepcopy.go", "generated"),
        ("go.mod", "build"),
        ("go.sum", "generated"),
        # TypeScript / JavaScript
        ("src/components/Button.tsx", "code"),
        ("src/components/Button.test.tsx", "test"),
        ("src/components/__tests__/Button.tsx", "test"),
        ("src/components/__snapshots__/Button.test.tsx.snap", "test"),
        ("e2e/login.spec.ts", "test"),
        ("package.json", "build"),
        ("pnpm-lock.yaml", "generated"),
        ("tsconfig.json", "build"),
        # Java / Kotlin
        ("core/src/main/java/org/acme/Parser.java", "code"),
        ("core/src/test/java/org/acme/ParserTest.java", "test"),
        ("app/src/main/kotlin/acme/HttpClientTests.kt", "test"),
        ("build.gradle.kts", "build"),
        ("pom.xml", "build"),
        # C / C++
        ("src/tokenizer.cc", "code"),
        ("src/tokenizer_unittest.cc", "test"),
        ("src/tokenizer_test.cpp", "test"),
        ("CMakeLists.txt", "build"),
        ("cmake/FindCUDA.cmake", "build"),
        # Python manifests by whole name
        ("requirements-dev.txt", "build"),
        ("requirements/test.in", "build"),
        ("constraints.txt", "build"),
        ("constraints_solver.py", "code"),
        ("requirements_parser.py", "code"),
        # prose by name, but only as prose
        ("LICENSE-MIT", "docs"),
        ("crates/ruff/src/changelog_parser.rs", "code"),
    ],
)
def test_roles_across_languages(name, role):
    assert file_role(name) == role


def test_snapshots_are_tests_but_flagged():
    fds = parse_files(
        [
            file("src/snapshots/x__y.snap", hunk(1, ["+---", "+source: x", "+expression: y"])),
            file("src/lib.rs", hunk(1, ["+pub fn y() {}"])),
        ]
    )
    assert [(f.role, f.snapshot) for f in fds] == [("test", True), ("code", False)]
    assert is_snapshot("web/__snapshots__/App.test.js.snap") and not is_snapshot("src/snapshot.rs")


def test_repository_role_rules_come_first_and_are_checked(tmp_path):
    conv = Conventions(roles=[("docs/generated/**", "generated"), ("crates/*/resources/**", "test")])
    assert conv.role_of("docs/generated/api.md") == "generated"
    assert conv.role_of("crates/ruff_python_parser/resources/valid/expr.py") == "test"
    assert conv.role_of("docs/intro.md") == "docs"  # no rule: the built-in conventions
    bad = tmp_path / "bad.toml"
    bad.write_text('[[roles]]\nglob = "x/**"\nrole = "tests"\n')
    with pytest.raises(WorkbenchError, match="unknown role"):
        load_conventions("a/b", bad)


RUST_PATCH = "\n".join(
    [
        hunk(
            40,
            [
                "     }",
                " ",
                "+pub(crate) fn too_many_arguments(checker: &mut Checker, function_def: &ast::StmtFunctionDef) {",
                "+    let num_arguments = function_def.parameters.len();",
                "+    if num_arguments <= checker.settings.pylint.max_args {",
                "+        return;",
                "+    }",
                "+}",
            ],
            section="impl<'a> Visitor<'a> for Checker<'a> {",
        ),
        hunk(
            90,
            [
                "-pub fn max_args_default() -> usize {",
                "+pub fn max_args_default(preview: bool) -> usize {",
                "     5",
                " }",
            ],
            section="pub(crate) struct Settings {",
        ),
        hunk(
            120,
            [
                " impl Display for TooManyArguments {",
                "+    fn fmt(&self, f: &mut Formatter) -> fmt::Result {",
                '+        write!(f, "too many arguments")',
                "+    }",
                "+",
                "+#[cfg(test)]",
                "+mod tests {",
                "+    #[test]",
                "+    fn f() {}",
                "+}",
            ],
            section="impl Display for TooManyArguments {",
        ),
    ]
)

GO_PATCH = hunk(
    12,
    [
        "+func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {",
        "+\ts.mu.Lock()",
        "+\tdefer s.mu.Unlock()",
        "+}",
        "+",
        "+type routeTable struct {",
        "+\troutes map[string]http.Handler",
        "+}",
    ],
    section="func NewServer(cfg Config) *Server {",
)

TS_PATCH = hunk(
    3,
    [
        "+export async function fetchProfile(userId: string): Promise<Profile> {",
        "+  const res = await fetch(`/api/users/${userId}`);",
        "+  return res.json();",
        "+}",
        "+export const useProfile = (id: string) => useQuery(['profile', id], () => fetchProfile(id));",
        "+function foo() {}",
    ],
    section="export default class ProfilePage extends React.Component {",
)


def _symbols(files):
    facts = CodeFacts()
    sigs = scan_symbols(parse_files(files), facts, Conventions())
    return facts, sigs


def test_rust_symbols_name_types_and_functions_never_keywords():
    facts, sigs = _symbols([file("crates/ruff_linter/src/rules/pylint/rules/too_many_args.rs", RUST_PATCH)])
    names = set(facts.symbols)
    assert {"Checker", "Settings", "TooManyArguments", "too_many_arguments", "max_args_default"} <= names
    assert not names & {"pub", "impl", "Display", "fmt", "tests", "f", "crate", "mod"}
    (sig,) = [s for s in sigs if s.name == "api.signature"]  # a `pub fn` changed its parameters
    assert "max_args_default" in sig.evidence[0].text


def test_go_symbols_read_receivers_and_types():
    facts, _ = _symbols([file("internal/server/server.go", GO_PATCH)])
    assert {"ServeHTTP", "routeTable", "NewServer"} <= set(facts.symbols)
    assert "func" not in facts.symbols and "s" not in facts.symbols


def test_typescript_symbols_and_placeholders():
    facts, _ = _symbols([file("src/profile.ts", TS_PATCH)])
    assert {"fetchProfile", "ProfilePage"} <= set(facts.symbols)
    assert "foo" not in facts.symbols and "export" not in facts.symbols


@pytest.mark.parametrize(
    "header, name",
    [
        ("pub(crate) struct Checker<'a> {", "Checker"),
        ("impl<T: Clone> From<T> for Wrapper<T> {", "Wrapper"),
        ("func (s *Server) Serve(l net.Listener) error {", "Serve"),
        ("export const useThing = () => {", "useThing"),
        ("static int parse_args(int argc, char **argv)", "parse_args"),
        ("public static void main(String[] args) {", "main"),
        ("if (ready) {", None),
        # a statement the header happens to show is no definition: a method call, an assigned call
        ("logger = logging.getLogger(__file__)", None),
        ("    return torch.cat(parts, dim=0)", None),
        ("x = compute(y)", None),
        ("## Basic usage", None),
        ("class A:", None),
    ],
)
def test_hunk_header_symbols(header, name):
    assert section_symbol(header) == name


def test_noise_symbols():
    for word in (
        "pub",
        "impl",
        "fn",
        "func",
        "export",
        "self",
        "foo",
        "bar",
        "A",
        "x",
        "f",
        "Display",
        "fmt",
        "and",  # "class and ..." in a docstring's prose reads like a definition line
        "not",
        "vllm0.12",  # a version's last part
        "12",
        "CANN基础镜像版本",  # prose in a page's inline code
    ):
        assert is_noise_symbol(word), word
    for word in ("Checker", "ServeHTTP", "fetchProfile", "too_many_arguments", "timeout-minutes", "_ack"):
        assert not is_noise_symbol(word), word
    a = analyze(
        record(
            [file("verl/rollout/server.py", hunk(3, ["+    pass"], section="def serve():"))],
            title="[vllm] fix: compatible to vllm0.12",
        )
    )
    assert a.key_symbols == ["serve"]


def test_snapshot_is_never_a_key_file_and_counts_as_a_test():
    big_snapshot = hunk(
        1,
        ["+---", "+source: crates/ruff_linter/src/rules/pylint/mod.rs"] + [f"+line {i}" for i in range(400)],
    )
    a = analyze(
        record(
            [
                file("crates/ruff_linter/src/rules/pylint/rules/too_many_args.rs", RUST_PATCH),
                file("crates/ruff_linter/src/rules/pylint/snapshots/ruff_linter__PLR0913.snap", big_snapshot),
            ],
            title="[`pylint`] Implement `too-many-arguments` (`PLR0913`)",
        ),
        conventions=Conventions(),
    )
    assert all(not k.filename.endswith(".snap") for k in a.key_files)
    assert a.signal("tests.missing") is None and a.signal("tests.added") is not None
    assert not any(is_noise_symbol(s) for s in a.key_symbols)
    assert a.kind == "feat" and "pylint" in a.areas


def test_inline_rust_tests_count_as_test_changes():
    lines = [f"+    let x{i} = {i};" for i in range(30)] + [
        "+#[cfg(test)]",
        "+mod tests {",
        "+    #[test]",
        "+    fn parses() {}",
        "+}",
    ]
    a = analyze(
        record([file("src/parser.rs", hunk(1, lines))], title="Fix parser"), conventions=Conventions()
    )
    assert a.signal("tests.missing") is None and a.signal("tests.added") is not None


@pytest.mark.parametrize(
    "title, tags, kind",
    [
        ("[ty] Avoid panic on recursive protocols", ["ty"], "fix"),
        ("[`pylint`] Fix `PLR0913` false positive", ["pylint"], "fix"),
        ("`[flake8-bandit]` Don't flag `BaseLoader` as unsafe", ["flake8-bandit"], "fix"),
        ("[`flake8-pyi`] Implement `PYI061`", ["flake8-pyi"], "feat"),
        ("parser: handle trailing commas in subscripts", ["parser"], "fix"),
        ("`ruff server`: Support tildes in `logFile`", ["ruff server"], "feat"),
        ("feat(lsp)!: drop the legacy protocol", ["lsp"], "feat"),
        ("Bump tokio from 1.37 to 1.38", ["deps"], "chore"),
        ("Update Rust crate similar to v3.1.2", ["deps"], "chore"),  # a lock-only PR still gets an area
        ("Bump version to 0.5.1", ["release"], "chore"),
        ("Update the parser to handle walrus targets", [], "chore"),
        ("Refactor the import resolver", [], "refactor"),
        ('Revert "Add caching"', [], "revert"),
        ("Update docs for the formatter", [], "doc"),
        ("Delete the deprecated `--format` flag", [], "refactor"),
        ("Remove a stale lock before retrying", [], "fix"),  # verl's authors call most removals fixes
        ("Correctly handle nested f-strings", [], "fix"),
        ("Reachability analysis", [], None),
    ],
)
def test_titles_in_any_style(title, tags, kind):
    p = parse_title(title)
    assert (p.tags, p.kind) == (tags, kind)


def test_kind_from_verb_agrees_with_authors_on_verl():
    """On verl's titles that state their kind (`[x] fix: ...`), the verb of the subject alone must give
    the author's kind as often as a fair one-verb-one-kind map can (the best such map fitted on these
    very titles reaches 66%)."""
    import gzip
    import json
    from pathlib import Path

    from workbench.analysis.titles import kind_from_verb

    corpus = Path(__file__).resolve().parents[1].parent / "shared" / "corpus" / "verl_prs_meta.jsonl.gz"
    if not corpus.is_file():
        pytest.skip(f"{corpus} is absent: the verl corpus lives in ../shared")
    answered = agree = 0
    with gzip.open(corpus, "rt") as fh:
        for line in fh:
            title = json.loads(line).get("title") or ""
            p = parse_title(title)
            if not p.kind or ":" not in title:  # the author's own kind, from a `kind:` prefix
                continue
            verb_kind = kind_from_verb(p.subject)
            if verb_kind is not None:
                answered += 1
                agree += verb_kind == p.kind
    assert answered > 1500 and agree / answered >= 0.55, (agree, answered)


def test_repository_kind_verbs(tmp_path):
    own = tmp_path / "own.toml"
    own.write_text('[kind_verbs]\nperf = ["shrink"]\n')
    conv = load_conventions("a/b", own)
    assert conv.parse_title("[ty] Shrink callable types").kind == "perf"
    assert conv.parse_title("[ty] Fix x").kind == "fix"  # the default verbs stay


def _manifest(name: str, old: str, new: str) -> dict:
    return file(name, hunk(1, [" [package]", ' name = "x"', f'-version = "{old}"', f'+version = "{new}"']))


def test_workspace_version_bump_reads_as_one_release():
    files = parse_files(
        [_manifest(f"crates/c{i}/Cargo.toml", "0.5.0", "0.5.1") for i in range(30)]
        + [_manifest("pyproject.toml", "0.5.0", "0.5.1")]
        + [file("Cargo.toml", hunk(10, ['-tokio = "1.37"', '+tokio = "1.38"']))]
    )
    sigs = {s.name: s for s in scan_deps(files, "Bump version to 0.5.1", Conventions())}
    assert "0.5.1" in sigs["release"].label and "31 manifest" in sigs["release"].label
    assert sigs["deps.bump"].label == "dependency versions changed (1)"  # tokio, the one real dependency


def test_one_manifest_version_alone_is_not_a_release():
    files = parse_files([_manifest("package.json", "1.0.0", "1.1.0")])
    names = [s.name for s in scan_deps(files, "Add a widget", Conventions())]
    assert names == ["deps.bump"]


def test_shipped_ruff_conventions():
    conv = load_conventions("astral-sh/ruff")
    assert any(s.endswith("astral-sh-ruff.toml") for s in conv.sources)
    assert conv.role_of("crates/ty_python_semantic/resources/mdtest/narrow/isinstance.md") == "test"
    assert conv.role_of("crates/ruff_python_ast/src/generated.rs") == "generated"
    assert conv.area_of("crates/ty_ide/src/completion.rs") == "ty"
    assert conv.area_of("crates/ruff_linter/src/rules/pylint/mod.rs") == "linter"
    assert conv.parse_title("[red-knot] Fix x").tags == ["ty"]
    for area in ("ty", "linter", "formatter", "parser", "server"):
        assert area in conv.audiences
