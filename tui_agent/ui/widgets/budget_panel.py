"""The context-budget panel: the product's signature, beside the chat.

It shows the whole in-memory history and, highlighted, the compacted copy each model call actually
sends. The panel listens to the turn's events (`CompactionReported` on every call, mid-turn included;
`Usage` when a real API reports it) and to the end of a turn, when it previews the *next* call. All
heavy lifting is incremental (see `budget_model`), so an update costs the same at 10,000 messages.
Usage also feeds the running session cost (title line, and the header through `CostChanged`), shown
only when the model's price is known. `c` (or `/context`) asks the provider for an exact count of the
next call in a worker: estimates are cheap and always there, the exact number is a request away.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.widgets import Static

from tui_agent.core import events as ev
from tui_agent.core.providers.base import UsageInfo
from tui_agent.core.providers.models import cost_usd
from tui_agent.ui.budget_model import HistoryIndex, Meter, OutboundView, fmt_k, fmt_usd, spark
from tui_agent.ui.themes import MUTED
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

    # Esc leaves the panel: keys typed here would otherwise vanish while the user thinks they type a prompt.
    BINDINGS = [Binding("c", "count_exact", "Exact count"), Binding("escape", "screen.focus_prompt", "Back to prompt")]
    DEFAULT_CSS = """
    BudgetPanel { background: $surface; border-left: tall $panel; }
    BudgetPanel > .panel-title { padding: 0 1; color: $text-primary; background: $panel; }
    BudgetPanel > #budget-spark { padding: 0 1; height: 1; }
    BudgetPanel > #budget-compaction { padding: 0 1; height: auto; color: $foreground 78%; }
    BudgetPanel > #budget-columns { padding: 0 0 0 1; height: 1; color: $foreground 78%; text-style: bold; }
    BudgetPanel > #budget-legend { padding: 0 1; height: auto; color: $foreground 78%; border-top: hkey $panel; }
    """

    def __init__(self, session: "Session", **kwargs) -> None:
        super().__init__(**kwargs)
        self.session = session
        self.index = HistoryIndex(workspace=session.workspace)
        self.calls: dict[int, int] = {}  # call number → outbound tokens (estimate, or API usage)
        self.exact_calls: set[int] = set()  # calls whose number came from the API's usage report
        self._meter_call: int | None = None
        self._last_compaction: str = ""
        self.cost: float = 0.0  # USD over the calls that reported usage, at list price
        self.unpriced_calls = 0  # calls whose model has no known price: the total is then unknown

    class CostChanged(Message):
        """The running session cost changed (the screen shows it in the header)."""

    def compose(self) -> ComposeResult:
        yield Static("", id="budget-title", classes="panel-title")
        yield BudgetMeter(id="budget-meter")
        yield Static("", id="budget-spark")
        yield Static("", id="budget-compaction")
        yield Static("", id="budget-columns", markup=False)
        yield HistoryRows(self.index, id="budget-rows")
        yield Static(LEGEND, id="budget-legend")

    def on_mount(self) -> None:
        self._render_title()
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
            self.meter.usage = None
            self.cost, self.unpriced_calls = 0.0, 0
            self._render_title()
            self.post_message(self.CostChanged())
            self._render_spark()
            self._render_compaction()
        self.rows.rows_changed(reset)
        self._render_columns()
        self._update_sizes()

    def on_compaction(self, event: ev.CompactionReported) -> None:
        """A model call is about to go out: show exactly what it sends."""
        self.sync_history()
        report = event.report
        view = OutboundView.from_report(report, event.history_len, f"call #{event.call}", event.messages)
        self.rows.show_view(view)
        self._meter_call = event.call
        self.meter.meter = self._meter(f"Call #{event.call}", report, event.system_tokens, event.tools_tokens)
        self.calls[event.call] = event.outbound_tokens
        if report.event is not None and report.event.major:
            self._last_compaction = report.event.line()
        elif report.changed:
            self._last_compaction = f"call #{event.call}: {report.summary()}"
        self._update_sizes()
        self._render_spark()
        self._render_compaction()

    def on_usage(self, usage: ev.Usage) -> None:
        """The API's own count replaces the estimate for that call (a summary call only adds its cost)."""
        if usage.purpose == "summary":
            self._add_cost(usage)
            return
        self.calls[usage.call] = usage.context_tokens
        self.exact_calls.add(usage.call)
        meter = self.meter.meter
        if meter is not None and usage.call == self._meter_call:
            self.meter.meter = replace(meter, exact_total=usage.context_tokens, cache_read=usage.cache_read_input_tokens)
        self.meter.usage = usage
        self._add_cost(usage)
        self._render_spark()

    def _add_cost(self, usage: ev.Usage) -> None:
        cost = cost_usd(self.session.provider.model, UsageInfo(
            usage.input_tokens, usage.output_tokens, usage.cache_creation_input_tokens, usage.cache_read_input_tokens))
        if cost is None:
            self.unpriced_calls += 1
        else:
            self.cost += cost
        self._render_title()
        self.post_message(self.CostChanged())

    @property
    def cost_text(self) -> str:
        """"$0.0123" once a priced call reported usage; "" while unknown (no usage, or no price)."""
        if self.unpriced_calls or not self.meter.usage:
            return ""
        return fmt_usd(self.cost)

    # -- exact count on demand -------------------------------------------------------------------
    def action_count_exact(self) -> None:
        """`c` in the panel, or `/context`: count the next call exactly, beside its estimate."""
        if self.session.running:
            self.meter.exact = Content.styled("exact count: after this turn ends", MUTED)
            return
        if not self.session.history:
            self.meter.exact = Content.styled("exact count: nothing to count yet", MUTED)
            return
        self.show_next_call()  # the count measures the next call: show that one
        self.meter.exact = Content.styled("exact count: asking the provider…", MUTED)
        self._count_exact(self.meter.meter)

    @work(group="count", exclusive=True, exit_on_error=False)
    async def _count_exact(self, shown: Meter | None) -> None:
        try:
            exact = await self.session.count_next_tokens()
        except Exception as error:  # noqa: BLE001 - ProviderError or a transport failure: show it
            note = Content.assemble(("exact count failed: ", "$text-error"), str(error) or type(error).__name__)
        else:
            if exact is None:
                note = Content.styled(f"exact count: {self.session.provider.name} can't count tokens (≈ only)", MUTED)
            else:
                estimate = shown.total if shown is not None else exact
                off = (estimate - exact) * 100 / exact if exact else 0.0
                how = "right" if round(off) == 0 else f"{abs(off):.0f}% {'low' if off < 0 else 'high'}"
                note = Content.assemble(("exact ", "$text-success"), (f"{exact:,}", "bold"),
                                        (f" (count_tokens) · ≈ {how}", MUTED))
        if self.meter.meter is shown:  # still the call it measured
            self.meter.exact = note

    def show_next_call(self) -> None:
        """Between turns: preview what the next call would send (the same compaction, not yet run)."""
        self.sync_history()
        if not self.session.history:
            return
        result = self.session.plan_call()
        system, tools = self.session.baseline_tokens()
        self.rows.show_view(OutboundView.from_report(result.plan, len(self.session.history), "next call",
                                                     result.messages))
        self._meter_call = None
        self.meter.meter = self._meter("Next call", result.report, system, tools)
        self._update_sizes()

    # -- helpers ---------------------------------------------------------------------------------
    def _meter(self, label: str, report: "CompactReport", system: int, tools: int) -> Meter:
        provider = self.session.provider
        raw = system + tools + report.tokens_after
        # the engine's estimate is already calibrated on real usage: the meter shows it as the total
        calibration = report.estimated_tokens / raw if provider.reports_usage and raw else 1.0
        return Meter(label, provider.context_window, provider.max_output_tokens, system, tools, report.tokens_after,
                     calibration=calibration)

    def _render_title(self) -> None:
        cost = self.cost_text
        title = Content.styled("Context budget", "bold")
        if cost:
            title = Content.assemble(title, ("  session ", MUTED), (cost, "$text-success"))
        self.query_one("#budget-title", Static).update(title)

    def _update_sizes(self) -> None:
        view = self.rows.view
        sent = view.sent_count if view is not None else 0
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
            widget.update(Content.styled("calls: none yet", MUTED))
            return
        label = f"calls {len(values)} "
        peak = f" peak {fmt_k(max(values))}"
        last = max(self.calls)
        if last in self.exact_calls:  # the real number for the last call, beside the estimate of the next
            peak += f" · last {self.calls[last]:,} API"
        room = max(self.size.width - 2 - len(label) - len(peak), 4)
        widget.update(Content.assemble((label, MUTED), (spark(values, room), "$budget-messages"),
                                       (peak, MUTED)))

    def _render_compaction(self) -> None:
        text = self._last_compaction or "no compaction yet: every message is sent whole"
        self.query_one("#budget-compaction", Static).update(Content(text))
