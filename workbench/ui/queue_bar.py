"""The two rows above the PR: the queue's filters (repository, state, since, verdict, brief) and the
navigation (Prev / position / Next, jump to a PR number, the j/k key listener). Widgets only: the app
wires the buttons to the queue."""

from __future__ import annotations

from collections.abc import Callable

import ipywidgets as w

from .panels import e
from .queue import BRIEFED, DATE_FIELDS, STATES, VERDICTS, Queue, QueueFilters
from .status import optional


class QueueBar:
    def __init__(self, on_key: Callable[[str], None], on_jump: Callable[[int], None] | None = None):
        lay = w.Layout
        self.w_repo = w.Dropdown(description="Repo", layout=lay(width="260px"))
        self.w_state = w.Dropdown(options=STATES, description="State", layout=lay(width="170px"))
        self.w_date_field = w.Dropdown(options=DATE_FIELDS, description="Since", layout=lay(width="170px"))
        self.w_since = w.Text(placeholder="2026-01-31 or 7d", layout=lay(width="130px"))
        self.w_verdict = w.Dropdown(options=VERDICTS, description="Verdict", layout=lay(width="170px"))
        self.w_briefed = w.Dropdown(options=BRIEFED, description="Brief", layout=lay(width="190px"))
        self.b_apply = w.Button(
            description="Apply filters",
            icon="filter",
            tooltip="rebuild the queue (also picks up a sync's new PRs)",
        )
        self.b_prev = w.Button(description="Prev", icon="arrow-left", tooltip="previous PR (k)")
        self.b_next = w.Button(description="Next", icon="arrow-right", tooltip="next PR (j)")
        self.w_pos = w.Label("0 / 0", layout=lay(min_width="70px"))
        self.w_jump = w.IntText(description="PR #", layout=lay(width="150px"))
        self.b_jump = w.Button(description="Go", layout=lay(width="50px"))
        # IntText sends its value on Enter (and when it loses focus), not per keystroke: a value the
        # reader typed is a jump, one the app shows (show_position) is not.
        self._showing = False
        self._on_jump = on_jump
        self.w_jump.observe(self._jump_typed, names="value")
        keys_mod, keys_err = optional("workbench.ui.keys")
        self.w_keys = keys_mod.KeyListener(on_key) if keys_mod else w.HTML(f"<i>{e(keys_err)}</i>")
        filters = [self.w_repo, self.w_state, self.w_date_field, self.w_since, self.w_verdict, self.w_briefed]
        self.widget = w.VBox(
            [
                w.HBox([*filters, self.b_apply], layout=lay(flex_flow="row wrap")),
                w.HBox(
                    [self.b_prev, self.w_pos, self.b_next, self.w_jump, self.b_jump, self.w_keys],
                    layout=lay(flex_flow="row wrap", align_items="center"),
                ),
            ]
        )

    def show_filters(self, repos: list[str], repo: str | None, f: QueueFilters) -> None:
        self.w_repo.options = repos
        self.w_repo.value = repo
        self.w_state.value = f.state
        self.w_since.value = f.since or ""
        self.w_date_field.value = f.date_field
        self.w_verdict.value = f.verdict
        self.w_briefed.value = f.briefed

    def set(self, **changes) -> None:
        """Set filter widgets by name (state=, since=, verdict=, briefed=, date_field=); None clears."""
        for name, value in changes.items():
            getattr(self, f"w_{name}").value = value if value is not None else ""

    def read_filters(self, repo: str | None) -> QueueFilters:
        """The filters as the widgets show them, checked (a bad `since` raises a WorkbenchError)."""
        f = QueueFilters(
            repo=repo,
            state=self.w_state.value,
            since=self.w_since.value.strip() or None,
            date_field=self.w_date_field.value,
            verdict=self.w_verdict.value,
            briefed=self.w_briefed.value,
        )
        f.check()
        return f

    def show_position(self, queue: Queue, number: int | None = None) -> None:
        self.w_pos.value = queue.label()
        self.b_prev.disabled = queue.at_start
        self.b_next.disabled = queue.at_end
        if number is not None:
            self._showing = True
            try:
                self.w_jump.value = number
            finally:
                self._showing = False

    def _jump_typed(self, change) -> None:
        if not self._showing and self._on_jump is not None and change["new"] is not None:
            self._on_jump(change["new"])
