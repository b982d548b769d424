"""The offline drafter: a complete brief from the heuristics and the PR's own text, no network.

Deterministic (same record and analysis, same brief) and marked as a draft. The headline leads
with what the analysis found (area, kind, the key file or symbol, the risk theme) and keeps the
author's subject after it; the rest quotes the author (root cause, numbers, follow-ups), names the
key files and symbols with the heuristics' reasons and risk evidence, and lists what the data says is
open. A section with nothing real in it stays empty: a reviewer deletes boilerplate, so none is
written. Cross-references come only from the analysis's list, and only those it could check (known
to the cache, linked by URL, or a fixes / revert / follow-up relation). A reviewer edits it rather
than writes it.
"""

from __future__ import annotations

import re
from typing import Any

from ..analysis.diff import is_generated_copy
from ..analysis.model import Analysis, Description, Discussion
from ..analysis.titles import parse_title
from ..brief import Brief, check_lang
from ..records import PRRecord

KIND_WORDS = {
    "zh": {
        "feat": "新增",
        "fix": "修复",
        "refactor": "重构",
        "perf": "性能优化",
        "doc": "文档",
        "ci": "CI",
        "test": "测试",
        "chore": "维护",
        "build": "构建",
        "revert": "回滚",
        "misc": "杂项",
        "style": "格式",
    },
    "en": {
        "feat": "Add",
        "fix": "Fix",
        "refactor": "Refactor",
        "perf": "Speed up",
        "doc": "Docs",
        "ci": "CI",
        "test": "Tests",
        "chore": "Chore",
        "build": "Build",
        "revert": "Revert",
        "misc": "Misc",
        "style": "Style",
    },
}
AUDIENCE_ZH = {
    "CI maintainers": "CI 维护者",
    "docs maintainers": "文档维护者",
    "build maintainers": "构建维护者",
    "test maintainers": "测试维护者",
    "everyone": "所有人",
    # the audience vocabulary of the shipped conventions (verl's labels, ruff's areas)
    "rollout maintainers": "rollout 维护者",
    "algorithm researchers": "算法研究者",
    "trainer maintainers": "trainer 维护者",
    "FSDP engine maintainers": "FSDP 引擎维护者",
    "Megatron engine maintainers": "Megatron 引擎维护者",
    "weight-sync maintainers": "权重同步维护者",
    "multi-turn agent maintainers": "多轮 agent 维护者",
    "reward maintainers": "reward 维护者",
    "data pipeline maintainers": "数据管线维护者",
    "build and dependency maintainers": "构建与依赖维护者",
    "Ascend NPU users": "昇腾 NPU 用户",
    "AMD ROCm users": "AMD ROCm 用户",
    "performance engineers": "性能工程师",
    "recipe authors": "recipe 作者",
}
STATE_ZH = {"merged": "已合并", "open": "未合并", "closed": "已关闭（未合并）"}
RELATION_ZH = {
    "fixes": "修复的问题",
    "follow-up": "前序/后续",
    "mentions": "提及",
    "reverts": "回滚",
    "reverted-by": "后来被回滚于",
    "relands": "重新合入",
    "relanded-in": "后来重新合入于",
    "depends-on": "依赖",
    "supersedes": "取代",
}


# The heuristics speak English; the most common labels read better in a zh draft. Unknown text stays as is.
_LABELS_ZH: tuple[tuple[str, str], ...] = (
    (r"no file list: judged from title and description", "没有文件列表：仅凭标题和描述判断"),
    (r"only generated, vendored or binary files", "只有生成、第三方或二进制文件"),
    (r"docs-only change", "仅文档改动"),
    (r"CI-only change", "仅 CI 改动"),
    (r"build/dependency-only change", "仅构建/依赖改动"),
    (r"revert of earlier work", "回滚先前的改动"),
    (r"tests-only change", "仅测试改动"),
    (
        r"changes only examples, benchmarks or recipes: for their users",
        "只改示例、基准或 recipe：由其用户阅读",
    ),
    (
        r"changes what runs report \(metrics, profiles, traces, logs\): for those who read them",
        "改动运行的上报内容（指标、性能剖析、追踪、日志）：由看这些报告的人阅读",
    ),
    (
        r"marked breaking, and a switch's default flips for every run",
        "标记为破坏性变更，且开关默认值对所有运行翻转",
    ),
    (r"signals add up to a close read", "多项信号叠加，值得精读"),
    (r"tiny change with nothing notable", "小改动，无明显风险"),
    (r"worth a skim", "值得浏览"),
    (r"very large change", "超大改动"),
    (r"large change", "大改动"),
    (r"medium change", "中等改动"),
    (r"tiny change", "小改动"),
    (r"(\d+) changed lines? in (\d+) files?", r"\2 个文件共 \1 行改动"),
    (r"no description beyond the template", "描述只有模板"),
    (
        r"concurrency: locks, threads, asyncio, sockets, ACKs, races",
        "并发：锁、线程、asyncio、socket、ACK、竞态",
    ),
    (
        r"memory and resources: empty_cache, gc, IPC handles, pinned/shared memory, buffers, leaks, unsafe",
        "内存与资源：empty_cache、gc、IPC 句柄、锁页/共享内存、缓冲区、泄漏、unsafe",
    ),
    (r"numerics: dtype, precision, overflow", "数值：dtype、精度、溢出"),
    (
        r"error handling: bare except, pass, swallowed errors, panics",
        "错误处理：裸 except、pass、被吞掉的异常、panic",
    ),
    (
        r"compatibility: code that branches on the versions of the libraries it runs with",
        "兼容性：代码按所用库的版本走不同分支",
    ),
    (
        r"new refusals: setups that ran before may now stop with an error",
        "新增报错：以前能跑的配置可能报错退出",
    ),
    (r"markers added: TODO / FIXME / HACK / XXX", "新增 TODO / FIXME / HACK / XXX 标记"),
    (
        r"security: eval/exec, pickle/yaml loads, remote code, disabled TLS checks",
        "安全：eval/exec、pickle/yaml 加载、远程代码、关闭 TLS 校验",
    ),
    (r"commands run through a shell", "经 shell 执行命令"),
    (r"CI or scripts install packages from a branch", "CI 或脚本从分支安装依赖包"),
    (r"secrets on command lines", "命令行中出现密钥"),
    (
        r"CI or scripts run unpinned downloads or with elevated rights",
        "CI 或脚本下载未锁定版本的内容或以高权限运行",
    ),
    (r"release (\S+): version set in (\d+) manifest\(s\)", r"发布 \1：\2 个清单文件设定了版本"),
    (r", (\d+) workspace member pin\(s\) moved with it", r"，\1 个工作区成员的版本锁定随之更新"),
    (r"mostly removes code: read by the users of what goes", "以删除代码为主：由被删功能的用户阅读"),
    (r"mostly removes code: a skim for the users of what goes", "以删除代码为主：被删功能的用户浏览即可"),
    (
        r"mostly moves code between files: a skim for where things now live",
        "以在文件间搬移代码为主：浏览新位置即可",
    ),
    (r"mostly moves code between files", "以在文件间搬移代码为主"),
    (r" ?\((\d+) added lines?\)", r"（新增 \1 行）"),
    (r" ?\(in the description\)", "（见描述）"),
    (r"code change comes with test changes", "代码改动附带测试改动"),
    (r" ?\((\d+) files?\)", r"（\1 个文件）"),
    (r"description explains the root cause", "描述说明了根因"),
    (r"description gives numbers \(measurements\)", "描述给出了测量数据"),
    (r"description has a test plan", "描述包含测试方案"),
    (r"description names follow-ups / things not addressed", "描述列出了后续或未处理事项"),
    (r"dependency versions changed", "依赖版本变更"),
    (r"patches another library's code at run time", "在运行时修补其他库的代码"),
    (r"marked as breaking", "标记为破坏性变更"),
    (r"reverts earlier work", "回滚先前的改动"),
    (r"title says (\w+)", lambda m: "标题类型：" + KIND_WORDS["zh"].get(m.group(1), m.group(1))),
    (r"public functions/classes removed or renamed", "删除或重命名了公开函数/类"),
    (r"Python modules removed or renamed", "删除或重命名了 Python 模块"),
    (r"public signatures changed", "公开函数签名有变"),
    (r"registers a new algorithm or backend", "注册了新的算法或后端"),
    (r"defaults changed only in the generated config", "默认值只在生成的配置中变化"),
    (r"default values changed in code", "代码中的默认值有变"),
    (r"values written into calls or signatures changed", "调用或函数签名中写死的取值有变"),
    (r"default values changed", "默认值有变"),
    (r"config keys changed", "配置项有变"),
    (r"new settings on by default", "新增配置项默认开启"),
    (r"settings of CI jobs or scripts changed", "CI 任务或脚本的设置有变"),
    (r"(\d+) lines of code changed, no test changed", r"改了 \1 行代码，没有改测试"),
    (r"changes requested by (.+?) \(still outstanding\)", r"\1 要求修改（仍未解决）"),
    (r"changes requested by (.+)", r"\1 要求修改"),
    (r"(\d+) unresolved review thread\(s\)", r"\1 个评审讨论未解决"),
    (r"(\d+) reviewers took part", r"\1 位评审者参与"),
    (r"the author promised follow-ups", "作者承诺了后续工作"),
    (r"(\d+) generated/vendored/lock file\(s\), not read", r"\1 个生成/第三方/锁文件（未阅读）"),
    (r"build/dependency files only", "仅构建/依赖文件"),
    (r"^tests only$", "仅测试"),
    (r"^docs-only$", "仅文档"),
    (r"^CI-only$", "仅 CI"),
)


def label_zh(text: str) -> str:
    for rx, repl in _LABELS_ZH:
        text = re.sub(rx, repl, text)
    return text


def _first(v: Any) -> str | None:
    if isinstance(v, list | tuple):
        return str(v[0]).strip() if v else None
    return str(v).strip() if v else None


def _items(v: Any) -> list[str]:
    if isinstance(v, list | tuple):
        return [str(x).strip() for x in v if str(x).strip()]
    return [str(v).strip()] if v else []


def _quote(s: str, n: int = 200) -> str:
    """A sentence from the PR, fit to quote: emphasis marks and a leading section label removed."""
    s = re.sub(r"\*\*|__", "", s)
    s = re.sub(r"^\s*#{1,6}\s*", "", s)
    s = re.sub(
        r"^\s*(?:root[- ]cause|cause|numbers?|results?|test plan|testing|why)\s*[:：]\s*", "", s, flags=re.I
    )
    return _one_line(s, n)


def _one_line(s: str, n: int = 200) -> str:
    s = " ".join(s.split())
    return s if len(s) <= n else s[: n - 1].rstrip() + "…"


def _code(name: str) -> str:
    return f"`{name.replace('`', '')}`"


# Risk themes as a reader reads them: the heuristics name them by identifier (a signal's `risk.memory`,
# a key file's reason "risk: refusal, numerics"), a brief by word.
THEME_WORDS = {
    "zh": {
        "concurrency": "并发",
        "memory": "内存",
        "numerics": "数值",
        "error_handling": "错误处理",
        "security": "安全",
        "markers": "TODO 标记",
        "compatibility": "版本兼容",
        "refusal": "新增报错",
        "defaults": "默认值",
        "values": "写死的取值",
    },
    "en": {
        "concurrency": "concurrency",
        "memory": "memory",
        "numerics": "numerics",
        "error_handling": "error handling",
        "security": "security",
        "markers": "TODO markers",
        "compatibility": "compatibility",
        "refusal": "new errors",
        "defaults": "changed defaults",
        "values": "hard-coded values",
    },
}
# The judged risks (Analysis.risks) as a brief names them, in the order a reader needs them: what changes
# for runs that set nothing first. A kind a theme also names takes the theme's word, so the two are said
# once.
RISK_WORDS = {
    "zh": {
        "config-default-change": "默认值",
        "behaviour-change": "行为变化",
        "breaking-api": "接口破坏",
        "security": "安全",
        "memory": "内存",
        "concurrency": "并发",
        "numerics": "数值",
        "compatibility": "版本兼容",
        "performance": "性能",
    },
    "en": {
        "config-default-change": "changed defaults",
        "behaviour-change": "behaviour change",
        "breaking-api": "breaking API",
        "security": "security",
        "memory": "memory",
        "concurrency": "concurrency",
        "numerics": "numerics",
        "compatibility": "compatibility",
        "performance": "performance",
    },
}
# The signals whose theme a headline names and a brief asks to verify, when lines of the diff show it. A
# changed default is what a reader most needs told (a run that never set it now behaves differently),
# whether a value changed or a new switch is on, and so is a value written into a call that no config
# overrides; a package a job installs from a branch changes with that branch.
RISK_THEME_OF_SIGNAL = {
    "risk.concurrency": "concurrency",
    "risk.memory": "memory",
    "risk.numerics": "numerics",
    "risk.error_handling": "error_handling",
    "risk.security": "security",
    "security.shell": "security",
    "security.ci_download": "security",
    "security.secret_cli": "security",
    "config.defaults": "defaults",
    "config.on_by_default": "defaults",
    "code.values": "values",
    "ci.branch_install": "compatibility",
}
HEAD_VERBS = {
    # (verb when the anchor file is new, verb otherwise) per title kind; other kinds "change" it
    "zh": {
        "feat": ("新增", "扩展"),
        "fix": ("修复", "修复"),
        "refactor": ("重构", "重构"),
        "perf": ("优化", "优化"),
    },
    "en": {
        "feat": ("adds", "extends"),
        "fix": ("fixes", "fixes"),
        "refactor": ("refactors", "refactors"),
        "perf": ("speeds up", "speeds up"),
    },
}
OTHER_VERB = {"zh": "改动", "en": "changes"}
# A PR that mostly deletes (a backend, a feature) removes what it names, whatever its title's kind says.
REMOVE_VERB = {"zh": "移除", "en": "removes"}
MOVE_VERB = {"zh": "迁移", "en": "moves"}


def _anchor(record: PRRecord, analysis: Analysis | None) -> tuple[str, str | None] | None:
    """(file name, its status) of the top key file when it is code or config: what a headline can
    name without claiming more than the analysis knows (a symbol in it may be touched, not new)."""
    for k in analysis.key_files[:1] if analysis else []:
        if k.role not in ("code", "config"):
            return None
        status = next((f.get("status") for f in record.files if f.get("filename") == k.filename), None)
        return _short_path(k.filename), status
    return None


# File names that many packages of a project have: a headline names their directory too.
_GENERIC_STEMS = frozenset(
    "__init__ utils util base config common core main helpers helper constants types mod lib index".split()
)


def _short_path(filename: str) -> str:
    """The file's name, with its directory when the name alone says nothing (`mindspeed/utils.py`,
    `fsdp/transformer_impl.py`)."""
    parts = filename.split("/")
    stem = parts[-1].split(".", 1)[0]
    if not (stem in _GENERIC_STEMS or stem.endswith("_impl")):
        return parts[-1]
    keep = 2
    while keep < len(parts) and parts[-keep] in ("src", "lib"):  # `ruff_db/src/lib.rs`: the crate names it
        keep += 1
    return "/".join(parts[-keep:])


def _themes(analysis: Analysis | None, lang: str) -> list[str]:
    """The risk themes lines of the diff show (a theme the description alone names is what the PR is
    about, not where it is risky), each once, at most two."""
    found = [
        THEME_WORDS[lang][RISK_THEME_OF_SIGNAL[s.name]]
        for s in (analysis.signals if analysis else [])
        if s.name in RISK_THEME_OF_SIGNAL and any(e.file for e in s.evidence)
    ]
    return list(dict.fromkeys(found))[:2]


def headline(record: PRRecord, lang: str, analysis: Analysis | None = None) -> str:
    """Area, kind and anchor from the analysis first, then the author's subject.

    Without an analysis (or one with nothing to anchor on) it restates the title's subject with its
    kind and scope, as before."""
    parts = parse_title(record.title)
    subject = (parts.subject or record.title or f"#{record.number}").strip().rstrip("。.")
    anchor = _anchor(record, analysis)
    themes = _themes(analysis, lang)
    scope = _as_written(parts.tags[0], record.title) if parts.tags else (_readers_area(analysis) or [""])[0]
    reverts = parts.kind == "revert" or record.title.lower().startswith("revert")
    if anchor and not reverts and parts.kind not in ("doc", "docs", "ci", "test", "chore", "build", "style"):
        name, status = anchor
        verbs = HEAD_VERBS[lang].get(parts.kind or "")
        verb = (verbs[0] if status == "added" else verbs[1]) if verbs else OTHER_VERB[lang]
        if status == "removed" or any(s.name == "removal" for s in analysis.signals):
            verb = REMOVE_VERB[lang]
        elif any(s.name == "move" for s in analysis.signals):
            verb = MOVE_VERB[lang]
        if lang == "zh":
            lead = f"{scope}：" if scope else ""
            risk = f"，涉及{'与'.join(themes)}" if themes else ""
            return f"{lead}{verb} {_code(name)}{risk}（{subject}）"
        lead = f"{scope}: " if scope else ""
        risk = f", touching {' and '.join(themes)}" if themes else ""
        subj = _sentence_case(subject) if not lead else subject
        return f"{lead}{subj} — {verb} {_code(name)}{risk}"
    kind = KIND_WORDS[lang].get(parts.kind or "", "")
    tags = ", ".join(_as_written(tag, record.title) for tag in parts.tags[:3])
    if lang == "zh":
        text = f"{kind}：{subject}" if kind else subject
        return f"{text}（{tags}）" if tags else text
    subject = _sentence_case(subject)
    # a subject that opens with the kind's verb says it already ("Fix the leak", not "Fix: Fix the leak");
    # the verb as a word ("Fixes", "Added"), not a longer word it begins ("Fixture", "Address")
    verb = re.escape(kind.removesuffix("s"))
    if kind and re.match(rf"{verb}(?:s|es|ed|d|ing)?\b", subject, re.I):
        kind = ""
    text = f"{kind}: {subject}" if kind else subject
    return f"{text} ({tags})" if tags else text


def _as_written(tag: str, title: str) -> str:
    """A title tag as the author cased it: tags are parsed lowercase ("distillationtrainer refactor"),
    the headline shows "DistillationTrainer refactor"."""
    written = re.search(rf"(?<!\w){re.escape(tag)}(?!\w)", title, re.I) if tag else None
    return written.group(0) if written else tag


def _sentence_case(subject: str) -> str:
    """The subject with a capital when it opens with a plain word: "fix the leak" -> "Fix the leak";
    a version, a name or code stays as written ("v1.9", "`vllm_rollout`")."""
    first = subject.split(maxsplit=1)[0] if subject.strip() else ""
    return subject[:1].upper() + subject[1:] if first.isalpha() and first.islower() else subject


def _readers_area(analysis: Analysis | None) -> list[str]:
    """Where an untagged PR belongs: its first audience's area (the code whose default it changes, not
    the longer migration guide beside it), else its largest area."""
    if analysis is None:
        return []
    if analysis.audience_key and analysis.audience_key != "everyone":
        return [analysis.audience_key]
    return analysis.areas[:1]


def _audience(analysis: Analysis | None, lang: str) -> str | None:
    aud = analysis.audience if analysis else None
    if aud and lang == "zh":
        return AUDIENCE_ZH.get(aud) or re.sub(r" maintainers$", " 维护者", aud)
    return aud


def _summary(record: PRRecord, a: Analysis | None, lang: str) -> str:
    d = a.description if a else Description()
    areas = ", ".join(a.areas[:3]) if a and a.areas else ""
    n = len(record.files)
    size = f"+{record.additions}/−{record.deletions}"
    cause = _first(d.root_cause)
    # a measurement, not a follow-up sentence that happens to hold a number
    taken = {cause, *d.open_items, _first(d.test_plan)}
    numbers = next((x for x in d.numbers if x not in taken), None)
    t = _SUMMARY[lang]
    parts = [t["changes"](n, size) + (t["areas"].format(areas) if areas else "") + t["stop"]]
    if a and a.deciding:
        labels = [label_zh(x) for x in a.deciding[:3]] if lang == "zh" else a.deciding[:3]
        labels = list(dict.fromkeys(labels))  # two signals can read the same in one language
        parts.append(t["deciding"].format(t["sep"].join(labels)))
    if cause:
        parts.append(t["cause"].format(_quote(cause)))
    if numbers and numbers != cause:
        parts.append(t["numbers"].format(_quote(numbers)))
    if not cause and not numbers and d.empty:
        parts.append(t["empty"])
    return "".join(parts)


# The summary's phrases per language; English sentences carry their own leading space.
_SUMMARY = {
    "zh": {
        "changes": lambda n, size: f"本 PR 改动 {n} 个文件（{size}）",
        "areas": "，集中在 {}",
        "stop": "。",
        "deciding": "判断依据：{}。",
        "sep": "；",
        "cause": "作者给出的根因：「{}」",
        "numbers": "作者给出的数据：「{}」",
        "empty": "PR 描述为空或只有模板，需要从代码读出意图。",
    },
    "en": {
        "changes": lambda n, size: f"Changes {n} file{'s' if n != 1 else ''} ({size})",
        "areas": ", mostly in {}",
        "stop": ".",
        "deciding": " Deciding signals: {}.",
        "sep": "; ",
        "cause": ' Root cause as the author puts it: "{}"',
        "numbers": ' Numbers given: "{}"',
        "empty": " The description is empty or template only: read the intent from the code.",
    },
}


_REASON_ZH = {
    "added": "新增文件",
    "removed": "删除文件",
    "code moved here": "代码迁入的新文件",
    "code moved out": "代码迁出后删除",
    "renamed": "重命名",
    "modified": "修改",
    "named in the title": "标题点名",
    "named in the description or review": "描述或评审中点名",
    "a changed default or dependency": "默认值或依赖有变",
}


def _reason(k, lang: str) -> str:
    """The heuristics' reason without what the item already says (role, size, symbols)."""
    parts = [p.strip() for p in k.reason.split(";") if p.strip()]
    parts = [p for p in parts if not re.match(r"^\w+, \+\d+/-\d+$", p) and not p.startswith("touches ")]
    themes = THEME_WORDS[lang]
    parts = [
        re.sub(r"[a-z_]+", lambda m: themes.get(m.group(0), m.group(0)), p) if p.startswith("risk: ") else p
        for p in parts
    ]
    if lang == "zh":
        parts = [
            _REASON_ZH.get(p, p).replace("risk: ", "风险：").replace("flags: ", "标记：").replace(", ", "、")
            for p in parts
        ]
        return "；".join(parts)
    return "; ".join(parts)


def _file_evidence(a: Analysis | None, filename: str) -> str:
    """The first risk evidence the heuristics found in this file: line number and the line itself."""
    for s in a.signals if a else []:
        if not s.name.startswith(("risk.", "security.")):
            continue
        for e in s.evidence:
            if e.file == filename:
                return f"{_where(e)} {_code(_one_line(e.text, 90))}"
    return ""


# Signals whose evidence says what a value became: in a config, a manifest, a CI job or a script, that
# is the change itself, and a brief that names the file should say it.
_VALUE_SIGNALS = ("config.defaults", "config.on_by_default", "settings.changed", "deps.bump")


def _file_changes(a: Analysis | None, filename: str, sep: str) -> str:
    """Up to two value changes read in this file ("timeout-minutes: 30 -> 40"), as code."""
    signals = a.signals if a else []
    texts = [e.text for s in signals if s.name in _VALUE_SIGNALS for e in s.evidence if e.file == filename]
    return sep.join(_code(_one_line(t, 90)) for t in texts[:2])


def _focus(record: PRRecord, a: Analysis | None, lang: str) -> list[str]:
    out: list[str] = []
    for k in (a.key_files if a else [])[:3]:
        sep = "、" if lang == "zh" else ", "
        syms = sep.join(_code(s) for s in k.symbols[:4])
        why = _one_line(_reason(k, lang), 160)
        if lang == "zh":
            item = f"{_code(k.filename)}（{k.role}，+{k.additions}/−{k.deletions}）" + (
                f"：{why}" if why else ""
            )
            item += f"；重点看 {syms}" if syms else ""
            item += f"；改动 {changes}" if (changes := _file_changes(a, k.filename, sep)) else ""
            item += f"；风险证据：{ev}。" if (ev := _file_evidence(a, k.filename)) else "。"
        else:
            item = f"{_code(k.filename)} ({k.role}, +{k.additions}/−{k.deletions})" + (
                f": {why}" if why else ""
            )
            item += f"; look at {syms}" if syms else ""
            item += f"; changes {changes}" if (changes := _file_changes(a, k.filename, sep)) else ""
            item += f"; risk evidence: {ev}." if (ev := _file_evidence(a, k.filename)) else "."
        out.append(item)
    d = a.description if a else Description()
    test_plan = _first(d.test_plan)
    if len(out) < 4 and test_plan:
        out.append(
            f"测试方案：「{_quote(test_plan)}」——核对它是否覆盖了改动的失败路径。"
            if lang == "zh"
            else f'Test plan: "{_quote(test_plan)}" — check it covers the failure paths the change touches.'
        )
    if len(out) < 2 and a:
        for s in a.signals:
            # evidence in a file, not the title quoted back (the title's kind is in the headline); a
            # missing test is an open item already
            if s.weight > 0 and s.evidence and s.evidence[0].file and s.name != "tests.missing":
                ev = s.evidence[0]
                where = f"{_code(ev.file)}" + (f":{ev.line}" if ev.line else "") if ev.file else ""
                out.append(
                    (
                        f"{label_zh(s.label)}：{where} {_one_line(ev.text, 120)}"
                        if lang == "zh"
                        else f"{s.label}: {where} {_one_line(ev.text, 120)}"
                    ).replace("  ", " ")
                )
            if len(out) >= 2:
                break
    if len(out) < 2:  # too little said: the files not named above (a one-file PR's file is named once)
        named = {k.filename for k in (a.key_files if a else [])[:3]}
        files = [f.get("filename") for f in record.files if f.get("filename") not in named][:3]
        names = ("、" if lang == "zh" else ", ").join(_code(f) for f in files if f)
        if names:
            out.append(
                f"逐个浏览改动文件 {names}，确认改动意图与描述一致。"
                if lang == "zh"
                else f"Walk through the changed files {names} and check the change matches the description."
            )
    return out[:4]


_NO_TESTS_ZH = "改了代码但没有测试："
_OPEN_ZH = (
    (r"^marker added in (\S+): ", r"\1 新增标记："),
    (r"^changed code without tests: ", _NO_TESTS_ZH),
    (r"^not supported yet, raised in (\S+): ", r"尚不支持（\1 处报错）："),
    (r"^author notes a follow-up / not addressed: ", "作者注明的遗留："),
    (r"^reviewer left for later: ", "评审留待后续："),
    (r"^unresolved review thread: ", "未解决的评审讨论："),
    (r"^changes still requested by ", "仍有评审要求修改："),
    (r"^data: ", "数据不全："),
)


def _where(e) -> str:
    if not e.file:
        return ""
    return _code(f"{e.file}:{e.line}" if e.line else e.file)


def _risk_items(a: Analysis | None, lang: str, taken: str) -> list[str]:
    """The risks to verify, each with its first line of the diff: the judged risks first (with why, in
    English), then the themes no judged risk names (error handling, a value written into a call).

    Markers are open items already; a line already quoted is not repeated. Only a line of the diff is
    something to verify: a risk the title or description alone shows ("fixes a crash") says what the
    PR is about, not where it is risky."""
    if a is None:
        return []
    out = []
    said: set[str] = set()

    def ask(word: str, e, why: str | None = None) -> None:
        nonlocal taken
        said.add(word)
        taken += " " + e.text
        line = f"{_where(e)} {_code(_one_line(e.text, 100))}".strip()
        if lang == "zh":
            out.append(f"{word}风险需核实：{line}")
        else:
            out.append(f"{word[:1].upper() + word[1:]} risk to verify: {line}" + (f" ({why})" if why else ""))

    order = list(RISK_WORDS["en"])
    for r in sorted(a.risks, key=lambda r: order.index(r.kind) if r.kind in order else len(order)):
        word = RISK_WORDS[lang].get(r.kind)
        # a generated copy of a config repeats its source's line: the source is the place to verify
        e = next(
            (e for e in r.evidence if e.file and not is_generated_copy(e.file) and e.text not in taken), None
        )
        if word and e and word not in said:
            ask(word, e, r.why)
    changed_defaults_first = sorted(
        a.signals, key=lambda s: not s.name.startswith(("config.", "code.values"))
    )
    for s in changed_defaults_first:
        word = THEME_WORDS[lang].get(RISK_THEME_OF_SIGNAL.get(s.name, ""))
        in_diff = [e for e in s.evidence if e.file]
        if word and word not in said and in_diff and in_diff[0].text not in taken:
            ask(word, in_diff[0])
    return out[:3]


def _checked(x) -> bool:
    """A cross-reference the analysis could check: known to the cache, linked by URL, or a relation
    the text states (fixes, revert, follow-up). A bare "#250" mentioned in passing may be a batch
    number, not a PR: it is not offered as a next step."""
    return bool(x.title or x.state or x.url) or x.relation in (
        "fixes",
        "reverts",
        "reverted-by",
        "relands",
        "relanded-in",
        "depends-on",
        "follow-up",
        "supersedes",
    )


def _open_items(record: PRRecord, a: Analysis | None, lang: str, shown: str = "") -> list[str]:
    """What the PR leaves open, and up to two risks to verify whose lines `shown` (the focus) does not
    quote already."""
    zh = lang == "zh"
    # the author's promises go to next steps; everything else the heuristics found stays here
    out = [
        _one_line(x, 220) for x in _items(a.open_items if a else []) if not x.startswith("author promised")
    ]
    if zh:
        for rx, repl in _OPEN_ZH:
            out = [re.sub(rx, repl, x) for x in out]
        # the heuristics' own label after this prefix (not the author's words after the others)
        out = [
            _NO_TESTS_ZH + label_zh(x[len(_NO_TESTS_ZH) :]) if x.startswith(_NO_TESTS_ZH) else x for x in out
        ]
    if not out:  # an analysis without open items of its own: read the description and discussion here
        d = a.description if a else Description()
        disc = a.discussion if a else Discussion()
        for who in disc.changes_requested_outstanding:
            out.append(
                f"@{who} 要求的修改仍未确认处理。"
                if zh
                else f"@{who}'s requested changes are still outstanding."
            )
        for t in disc.unresolved[:2]:
            out.append(
                f"未解决的评审讨论：{_one_line(t, 160)}"
                if zh
                else f"Unresolved review thread: {_one_line(t, 160)}"
            )
        for t in d.open_items[:2]:
            out.append(
                f"作者注明的遗留：「{_one_line(t, 160)}」"
                if zh
                else f'Left for later by the author: "{_one_line(t, 160)}"'
            )
        for t in (a.truncated if a else [])[:2]:
            out.append(f"数据不全：{t}" if zh else f"Incomplete data: {t}")
    out += _risk_items(a, lang, taken=" ".join([shown, *out]))
    # nothing found is said by saying nothing: "check test coverage" on every PR teaches the reader to skip it
    seen: set[str] = set()
    return [x for x in out if not (x in seen or seen.add(x))][:5]


def _next_steps(record: PRRecord, a: Analysis | None, lang: str) -> list[str]:
    zh = lang == "zh"
    out: list[str] = []
    for x in [x for x in (a.cross_refs if a else []) if _checked(x)][:3]:
        name = x.name
        title = _one_line(x.title, 80) if x.title else None
        state = STATE_ZH.get(x.state or "", x.state or "状态未知") if zh else x.state or "state unknown"
        if x.relation == "reverted-by":  # what the reader is about to study was taken back
            out.append(
                f"本 PR 后来被 {name} 回滚（{state}）：先看回滚的原因，再决定是否细读。"
                if zh
                else f"Reverted later by {name} ({state}): read why before studying it."
            )
        elif zh:
            rel = RELATION_ZH.get(x.relation, x.relation)
            out.append(f"关注相关 PR {name}（{rel}" + (f"：{title}" if title else "") + f"，{state}）。")
        else:
            out.append(f"Watch {name} ({x.relation}" + (f": {title}" if title else "") + f", {state}).")
    for p in (a.discussion.promises if a else [])[:2]:
        out.append(
            f"跟进作者承诺的后续工作：「{_one_line(p, 160)}」"
            if zh
            else f'Follow the promised follow-up: "{_one_line(p, 160)}"'
        )
    if record.state == "open":
        out.append(
            "PR 尚未合并：合并后再核对最终版本。"
            if zh
            else "Still open: re-check the final version once it merges."
        )
    return out[:4]


def draft_offline(record: PRRecord, analysis: Analysis | None, lang: str = "zh") -> Brief:
    """A brief from what the data holds, marked as an offline draft; empty sections stay empty."""
    lang = check_lang(lang)
    verdict = analysis.verdict if analysis and analysis.verdict in ("deep", "skim", "skip") else "skim"
    minutes = analysis.minutes if analysis and analysis.minutes else None
    text = headline(record, lang, analysis)
    focus = _focus(record, analysis, lang)
    return Brief(
        repo=record.repo,
        number=record.number,
        lang=lang,
        headline=re.sub(r"\s+", " ", text),
        verdict=verdict,
        minutes=minutes if verdict == "skim" else None,
        audience=_audience(analysis, lang),
        summary=_summary(record, analysis, lang),
        focus=focus,
        open_items=_open_items(record, analysis, lang, shown=" ".join(focus)),
        next_steps=_next_steps(record, analysis, lang),
        draft=True,
        source="offline",
    )
