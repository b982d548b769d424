"""Analysis: a PR record in, an Analysis out, pure (no network, no database).

The stages, in the order `pipeline.analyze` runs them:
  diff.py         patches -> files, hunks, roles, languages (unidiff)
  patchscan.py    the line-level scans of patches the signals share
  signals.py      signals from words in the diff: risk themes (program code only), shell commands, CI
                  downloads and secrets
  symbols.py      key symbols and API changes: definitions named, added, removed or re-signed
  config_changes.py  changed defaults, config keys, CI and script settings, dependencies and releases
  description.py  what the author wrote: root cause, numbers, test plan, follow-ups
  discussion.py   reviews, threads, cross-references
  verdicts.py     VERDICT_RULES (the one ordered table of verdict rules), effort and minutes
  audiences.py    who should read it, most concerned first
  risks.py        risks by kind, each with the lines that show it
  focus.py        where a reader starts: key files, key symbols, open items
  titles.py, conventions.py   per-repository reading conventions (areas, tags, weights, thresholds)
  model.py        the dataclasses the stages return
  memo.py         results of unchanged PRs kept beside the cache (used by orchestration, never by analyze)
  stored.py       analyses of the PRs in the cache: from the memo, else read and analysed (on several
                  cores when many are cold)
"""

from .model import Analysis, CrossRef, Evidence, KeyFile, Risk, Signal
from .pipeline import analyze

__all__ = ["Analysis", "CrossRef", "Evidence", "KeyFile", "Risk", "Signal", "analyze"]
