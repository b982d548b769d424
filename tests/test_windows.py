"""Windows: a digest covers a window, not the whole history; a window that selects nothing says so and
names the newest cached PR (analyze, draft, digest, report); a digest never mixes languages silently.

Runs on the bundled sample (its PRs are dated 2026-09 to 2026-11), through the command layer's main.
"""

from __future__ import annotations

import re

import pytest

from workbench.cli import main
from workbench.config import WorkbenchError
from workbench.selection import select_prs
from workbench.sources.sample import SAMPLE_REPO, load_sample
from workbench.store import Store
from workbench.timespan import since_iso


@pytest.fixture
def cache(tmp_path, monkeypatch):
    path = tmp_path / "cache"
    store = Store(path)
    load_sample(store, include_verl=False)
    store.close()
    monkeypatch.chdir(tmp_path)  # exports land in ./exports of the working directory
    monkeypatch.delenv("WORKBENCH_EXPORTS", raising=False)
    return path


def _newest(cache) -> tuple[int, str]:
    with Store(cache) as s:
        df = s.prs(SAMPLE_REPO)
    when = df["updated_at"].fillna(df["merged_at"]).fillna(df["created_at"])
    i = when.idxmax()
    return int(df.loc[i, "number"]), when.loc[i].strftime("%Y-%m-%d")


@pytest.mark.parametrize("command", ["analyze", "draft", "digest", "report"])
def test_an_empty_window_says_so_and_names_the_newest_cached_pr(cache, tmp_path, capsys, command):
    number, day = _newest(cache)
    out = tmp_path / f"{command}.out"
    extra = ["-o", str(out)] if command in ("digest", "report") else []
    assert main(["--cache", str(cache), command, SAMPLE_REPO, "--since", "2099-01-01", *extra]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert f"no PR of {SAMPLE_REPO} updated since 2099-01-01" in err
    assert f"the newest cached PR, #{number}, was updated {day}" in err
    assert not out.exists(), "nothing is written for an empty window"


def test_the_digest_covers_the_last_seven_days_by_default(cache, capsys):
    with Store(cache) as s:
        week = s.pr_numbers(SAMPLE_REPO, since=since_iso("7d"))
        everything = s.pr_numbers(SAMPLE_REPO)
    code = main(["--cache", str(cache), "digest", SAMPLE_REPO, "-o", "d.md"])
    if not week:  # the sample has aged past the window: the command says so instead of an empty file
        assert code == 1 and "newest cached PR" in capsys.readouterr().err
        return
    assert code == 0
    linked = [int(n) for n in re.findall(r"^\[#(\d+) ", open("d.md", encoding="utf-8").read(), re.M)]
    assert linked == week and len(linked) < len(everything)


def test_since_number_and_all_widen_the_digest(cache):
    with Store(cache) as s:
        everything = s.pr_numbers(SAMPLE_REPO)
        since_oct = s.pr_numbers(SAMPLE_REPO, since="2026-10-15")
    assert main(["--cache", str(cache), "digest", SAMPLE_REPO, "--all", "-o", "all.md"]) == 0
    assert main(["--cache", str(cache), "digest", SAMPLE_REPO, "--since", "2026-10-15", "-o", "oct.md"]) == 0
    assert main(["--cache", str(cache), "digest", SAMPLE_REPO, "-n", "190", "183", "-o", "two.md"]) == 0

    def linked(name):
        return [int(n) for n in re.findall(r"^\[#(\d+) ", open(name, encoding="utf-8").read(), re.M)]

    assert linked("all.md") == everything
    assert linked("oct.md") == since_oct and 0 < len(since_oct) < len(everything)
    assert linked("two.md") == [190, 183]


def test_a_digest_in_another_language_names_the_briefs_it_keeps_and_mixes_no_section(cache, capsys):
    assert main(["--cache", str(cache), "draft", SAMPLE_REPO, "-n", "183", "185", "--lang", "zh"]) == 0
    assert main(["--cache", str(cache), "draft", SAMPLE_REPO, "-n", "186", "--lang", "en"]) == 0
    capsys.readouterr()
    args = ["--cache", str(cache), "digest", SAMPLE_REPO, "-n", "183", "185", "186", "188"]
    assert main([*args, "--lang", "en", "-o", "en.md"]) == 0
    err = capsys.readouterr().err
    assert "2 brief(s) are written in zh, not en (#183, #185)" in err
    sections = {
        int(re.search(r"^\[#(\d+) ", sec, re.M).group(1)): sec
        for sec in re.split(r"(?m)^## ", open("en.md", encoding="utf-8").read())[1:]
    }
    cjk = re.compile(r"[\u4e00-\u9fff]")
    for n in (183, 185):  # zh briefs: the link line and the body in zh
        assert "个文件" in sections[n] and not re.search(r"\d+ files?\b", sections[n])
    for n in (186, 188):  # an en brief, and a PR without a brief: English throughout
        assert not cjk.search(sections[n].replace(sections[n].split("\n", 1)[0], "")), sections[n]
    assert "Analysis not generated yet." in sections[188]
    # the same digest in the briefs' own language mentions nothing
    assert main([*args[:-3], "183", "185", "--lang", "zh", "-o", "zh.md"]) == 0
    assert "written in" not in capsys.readouterr().err


def test_select_prs_keeps_the_asked_order_and_refuses_unknown_numbers(cache):
    with Store(cache) as s:
        assert select_prs(s, SAMPLE_REPO, numbers=[183, 190]).numbers == [183, 190]
        with pytest.raises(WorkbenchError, match="#99999 not in the cache"):
            select_prs(s, SAMPLE_REPO, numbers=[183, 99999])
        with pytest.raises(WorkbenchError, match="not in the cache: run `workbench sync"):
            select_prs(s, "nobody/nothing")
        window = select_prs(s, SAMPLE_REPO, since="2026-11-01")
        assert window.numbers and window.why_empty() is None and window.since == "2026-11-01T00:00:00Z"
