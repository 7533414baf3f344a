"""The context-budget panel: the product's signature, beside the chat.

It shows the whole in-memory history and, highlighted, the compacted copy each model call actually
sends. The panel listens to the turn's events (`CompactionReported` on every call, mid-turn included;
`Usage` when a real API reports it) and to the end of a turn, when it previews the *next* call. All
heavy lifting is incremental (see `budget_model`), so an update costs the same at 10,000 messages.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import Static

from tui_agent.core import events as ev
from tui_agent.ui.budget_model import HistoryIndex, Meter, OutboundView, fmt_k, spark
from tui_agent.ui.widgets.budget_meter import BudgetMeter
from tui_agent.ui.widgets.history_rows import BAR_CELLS, TOKENS_CELLS, HistoryRows

if TYPE_CHECKING:
    from tui_agent.core.compaction import CompactReport
    from tui_agent.core.session import Session

LEGEND = Content.assemble(
    ("▌", "$budget-bar"), " sent  ", ("dropped", "italic $budget-dropped"), " not sent  ",
    ("✂", "bold $budget-truncated"), " cut (chars)  ", ("◆", "$budget-protected"), " kept whole  ",
    ("≈", "bold"), " estimate",
)


class BudgetPanel(Vertical):
    """Meter, per-call sparkline, last compaction line, the history rows and a legend."""

    DEFAULT_CSS = """
    BudgetPanel { background: $surface; border-left: tall $panel; }
    BudgetPanel > .panel-title { padding: 0 1; text-style: bold; color: $text-primary; background: $panel; }
    BudgetPanel > #budget-spark { padding: 0 1; height: 1; }
    BudgetPanel > #budget-compaction { padding: 0 1; height: auto; color: $text-muted; }
    BudgetPanel > #budget-columns { padding: 0 0 0 1; height: 1; color: $text-muted; text-style: bold; }
    BudgetPanel > #budget-legend { padding: 0 1; height: auto; color: $text-muted; border-top: hkey $panel; }
    """

    def __init__(self, session: "Session", **kwargs) -> None:
        super().__init__(**kwargs)
        self.session = session
        self.index = HistoryIndex(workspace=session.workspace)
        self.calls: dict[int, int] = {}  # call number → outbound tokens (estimate, or API usage)
        self.exact_calls: set[int] = set()  # calls whose number came from the API's usage report
        self._meter_call: int | None = None
        self._last_compaction: str = ""

    def compose(self) -> ComposeResult:
        yield Static("Context budget", classes="panel-title", markup=False)
        yield BudgetMeter(id="budget-meter")
        yield Static("", id="budget-spark")
        yield Static("", id="budget-compaction")
        yield Static("", id="budget-columns", markup=False)
        yield HistoryRows(self.index, id="budget-rows")
        yield Static(LEGEND, id="budget-legend")

    def on_mount(self) -> None:
        self.sync_history()
        self._render_spark()
        self._render_compaction()

    def on_resize(self) -> None:
        self._render_columns()
        self._render_spark()

    @property
    def rows(self) -> HistoryRows:
        return self.query_one(HistoryRows)

    @property
    def meter(self) -> BudgetMeter:
        return self.query_one(BudgetMeter)

    # -- event entry points ----------------------------------------------------------------------
    def sync_history(self) -> None:
        """Pick up appended messages (cheap: only new ones are described and estimated)."""
        reset = self.index.sync(self.session.history)
        if reset:
            self.calls.clear()
            self.exact_calls.clear()
            self._meter_call = None
            self._last_compaction = ""
            self.rows.show_view(None)
            self.meter.meter = None
            self._render_spark()
            self._render_compaction()
        self.rows.rows_changed(reset)
        self._render_columns()
        self._update_sizes()

    def on_compaction(self, event: ev.CompactionReported) -> None:
        """A model call is about to go out: show exactly what it sends."""
        self.sync_history()
        report = event.report
        view = OutboundView.from_report(report, event.history_len, f"call #{event.call}")
        self.rows.show_view(view)
        self._meter_call = event.call
        self.meter.meter = self._meter(f"Call #{event.call}", report, event.system_tokens, event.tools_tokens)
        self.calls[event.call] = event.outbound_tokens
        if report.changed:
            self._last_compaction = f"call #{event.call}: {report.summary()}"
        self._update_sizes()
        self._render_spark()
        self._render_compaction()

    def on_usage(self, usage: ev.Usage) -> None:
        """The API's own count replaces the estimate for that call."""
        self.calls[usage.call] = usage.context_tokens
        self.exact_calls.add(usage.call)
        meter = self.meter.meter
        if meter is not None and usage.call == self._meter_call:
            from dataclasses import replace

            self.meter.meter = replace(meter, exact_total=usage.context_tokens, cache_read=usage.cache_read_input_tokens)
        self._render_spark()

    def show_next_call(self) -> None:
        """Between turns: preview what the next call would send (the same compaction, not yet run)."""
        self.sync_history()
        if not self.session.history:
            return
        result = self.session.preview_compaction()
        system, tools = self.session.baseline_tokens()
        self.rows.show_view(OutboundView.from_report(result.report, len(self.session.history), "next call"))
        self._meter_call = None
        self.meter.meter = self._meter("Next call", result.report, system, tools)
        self._update_sizes()

    # -- helpers ---------------------------------------------------------------------------------
    def _meter(self, label: str, report: "CompactReport", system: int, tools: int) -> Meter:
        provider = self.session.provider
        return Meter(label, provider.context_window, provider.max_output_tokens, system, tools, report.tokens_after)

    def _update_sizes(self) -> None:
        view = self.rows.view
        sent = view.history_len - view.first_kept - len(view.extra_dropped) if view is not None else 0
        self.meter.history = (self.index.total_tokens, len(self.index.rows), sent)

    def _render_columns(self) -> None:
        digits = max(3, len(str(max(len(self.index.rows) - 1, 0))))
        width = self.rows.scrollable_content_region.width or 40
        head = f" {'#':>{digits}} role what"
        tail = f"{'≈tok':>{TOKENS_CELLS}} {'size':<{BAR_CELLS}}"
        self.query_one("#budget-columns", Static).update(head.ljust(max(width - len(tail) - 1, len(head) + 1)) + tail)

    def _render_spark(self) -> None:
        values = [self.calls[k] for k in sorted(self.calls)]
        widget = self.query_one("#budget-spark", Static)
        if not values:
            widget.update(Content.styled("calls: none yet", "$text-muted"))
            return
        label = f"calls {len(values)} "
        peak = f" peak {fmt_k(max(values))}"
        last = max(self.calls)
        if last in self.exact_calls:  # the real number for the last call, beside the estimate of the next
            peak += f" · last {self.calls[last]:,} API"
        room = max(self.size.width - 2 - len(label) - len(peak), 4)
        widget.update(Content.assemble((label, "$text-muted"), (spark(values, room), "$budget-messages"),
                                       (peak, "$text-muted")))

    def _render_compaction(self) -> None:
        text = self._last_compaction or "no compaction yet: every message is sent whole"
        self.query_one("#budget-compaction", Static).update(Content(text))
