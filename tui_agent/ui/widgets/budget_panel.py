"""The context-budget panel: the product's signature, beside the chat.

It shows the whole in-memory history and, marked row by row, the exact request each model call sends:
kept, ✂ cut, ▒ masked, dropped, Σ summarised, ● pinned, ⊘ excluded, the ≡ recap, and a ┃ band over
the prefix the provider reads from its cache. The figures (per-call totals, cached / new, price, cost,
events) are the core's `BudgetLedger`, fed by the engine's events before any face sees them (it is a
Session listener); the panel only draws them. Between turns it shows the *next* call's plan as the engine
tells it on every change (`NextRequestChanged`); it never asks for a plan of its own. `p` / `x` / `e` pin,
exclude or expand a row (outbound only). Updates are incremental (`budget_model`): the same at 10k rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.widgets import Static

from tui_agent.core import events as ev
from tui_agent.core.agent.budget import BudgetLedger, EventEntry, first_difference
from tui_agent.core.models import for_provider, per_token
from tui_agent.ui.budget_model import SPARK, HistoryIndex, OutboundView, fmt_usd
from tui_agent.ui.themes import MUTED
from tui_agent.ui.widgets.budget_meter import BudgetMeter
from tui_agent.ui.widgets.events_list import EventsList, no_events_text
from tui_agent.ui.widgets.history_rows import BAR_CELLS, TOKENS_CELLS, HistoryRows, number_cells
from tui_agent.ui.approval import Approval
from tui_agent.ui.exact_count import ExactCount
from tui_agent.ui.steering import STEERING_KEYS, STEERING_TITLE, Steering
from tui_agent.ui.widgets.panel_hearing import SessionHearing
from tui_agent.ui.widgets.panel_legend import legend
from tui_agent.ui.widgets.recap_row import RecapRow
from tui_agent.ui.widgets.spark_line import spark_line
from tui_agent.ui.widgets.type_through import OnPurpose

if TYPE_CHECKING:
    from tui_agent.core.agent.session import Session


class BudgetPanel(Vertical):
    """Meter, per-call sparkline with event ticks, events list, the history rows, the row's reason, legend.

    What the user does to it beyond reading are objects it holds, each one concept with its own state (not
    mixins: one class spread over four files, each borrowing the others' attributes): `steering`, `approval`,
    `exact_count`; each asks the panel through a small Protocol, and the panel draws."""

    READ_ONLY = False  # replay: nothing is sent, so no pin / exclude / expand is offered

    # Esc leaves the panel: keys typed here would otherwise vanish while the user thinks they type a prompt.
    BINDINGS = [Binding("c", "count_exact", "Exact count"), Binding("escape", "screen.focus_prompt", "Back to prompt")]
    DEFAULT_CSS = """
    BudgetPanel { background: $surface; border-left: tall $panel; }
    BudgetPanel > .panel-title { padding: 0 1; color: $text-primary; background: $panel; }
    BudgetPanel > #budget-spark { padding: 0 1; height: auto; }
    BudgetPanel > #budget-columns { padding: 0 0 0 1; height: 1; color: $foreground 78%; text-style: bold; }
    BudgetPanel > #budget-recap-row { padding: 0 0 0 1; height: 1; background: $budget-outbound; display: none; }
    BudgetPanel > #budget-recap-row.-shown { display: block; }
    BudgetPanel > #budget-reason { padding: 0 1; height: auto; max-height: 3; color: $foreground 78%;
                                   border-top: hkey $panel; }
    BudgetPanel > #budget-legend { padding: 0 1; height: auto; color: $foreground 78%; border-top: hkey $panel; }
    """

    def __init__(self, session: "Session", ledger: BudgetLedger | None = None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.session = session
        self.ledger = ledger if ledger is not None else session.ledger  # the session's own figures
        self.ledger.configure(session.provider.model, session.provider.context_window,
                              session.provider.max_output_tokens)
        self.index = HistoryIndex(workspace=session.workspace)
        self.hearing = SessionHearing(self)  # what the session says between the turn's events
        self._pending_event = None
        self.shown_upto: int | None = None  # draw history[:shown_upto] (replay); None: all of it
        self.steering = Steering(self)  # the pins / excludes / expands made by hand, kept for `u`
        self.approval = Approval(self)  # approve-before-compacting: the bar that waits, when one does
        self.exact_count = ExactCount(self)  # `c`, `/context`: the provider's count beside the estimate
        self.recap_row = RecapRow()  # the recap's row above the history (its tokens counted once per recap)

    class CostChanged(Message):
        """The running session cost changed (the screen shows it in the header)."""

    class Changed(Message):
        """The figures changed (the one-line context meter redraws)."""

    @dataclass
    class Said(Message):
        """A line for the chat (keeping the cache warm stopped, and why; an approval that waits)."""

        text: str
        level: str = "info"

    def compose(self) -> ComposeResult:
        yield Static("", id="budget-title", classes="panel-title")
        yield BudgetMeter(id="budget-meter")
        yield Static("", id="budget-spark")
        yield EventsList(id="budget-events")
        yield Static("", id="budget-columns", markup=False)
        yield Static("", id="budget-recap-row")
        yield HistoryRows(self.index, id="budget-rows")
        yield Static("", id="budget-reason")
        yield Static(legend(read_only=self.READ_ONLY), id="budget-legend")

    def on_mount(self) -> None:
        self.hearing.attach()
        self._show_idle()
        self._render_title()
        self.sync_history()
        self._render_spark()
        self._render_events()
        self.show_reason(None)
        self.ask_first_plan()

    def ask_first_plan(self) -> None:
        """--transcript, a resume: the engine tells the first call's plan now (replay draws steps instead);
        with no history it tells after the first frame, and "No model call yet." shows the base it told
        (the panel never computes one of its own)."""
        if self.session.history:
            self.session.announce_next("panel shown")
        else:
            self.call_after_refresh(self._announce_if_still_empty)

    def _announce_if_still_empty(self) -> None:
        """After the first frame, unless a turn began meanwhile (its own events draw the panel then: a plan
        told now would stand for the call in flight and take its usage's place)."""
        if not self.session.history and not self.session.running:
            self.session.announce_next("panel shown")

    def on_unmount(self) -> None:
        self.hearing.detach()

    def cost_changed(self) -> None:
        """What the session spent changed outside a call (a ping, a background summary): the title says it."""
        self._render_title()
        self.post_message(self.CostChanged())

    def events_changed(self) -> None:
        self._render_spark()
        self._render_events()

    def on_resize(self) -> None:
        self.events.fit(max(5, self.size.height // 4))  # a taller panel shows more events, each whole
        self._render_columns()
        self._render_spark()
        self._render_recap_row()

    @property
    def rows(self) -> HistoryRows:
        return self.query_one(HistoryRows)

    @property
    def meter(self) -> BudgetMeter:
        return self.query_one(BudgetMeter)

    @property
    def events(self) -> EventsList:
        return self.query_one(EventsList)

    @property
    def calls(self) -> dict[int, int]:
        return self.ledger.calls

    # -- event entry points (the ledger already has the event: these only draw) --------------------
    def sync_history(self) -> None:
        """Pick up appended messages (cheap: only new ones are described and estimated)."""
        reset = self.index.sync(self.session.history, self.shown_upto)
        if reset:
            if self.ledger.calls and not self.session.history:
                self.ledger.reset()
            self._pending_event = None
            self.rows.show_view(None)
            self.meter.meter = None
            self.meter.usage = None
            self._render_title()
            self.post_message(self.CostChanged())
            self._render_spark()
            self._render_events()
            self._render_recap_row()
        self.rows.rows_changed(reset)
        self._render_columns()
        self._update_sizes()

    def on_compaction(self, event: ev.CompactionReported) -> None:
        """A model call is about to go out: show exactly what it sends."""
        if event.call not in self.ledger.calls:  # not heard as a listener (a bench or a test drives us)
            self.ledger.feed(event)
        self.sync_history()
        view = OutboundView.of_plan(event.plan, event.history_len, f"call #{event.call}", event.messages,
                                    self.ledger.caches)
        self.rows.show_view(view)
        self.meter.meter = self.ledger.current
        self._pending_event = None
        self._update_sizes()
        self._render_spark()
        self._render_events()
        self._render_recap_row()
        self.show_reason(self.rows.cursor)
        self.post_message(self.Changed())

    def on_usage(self, usage: ev.Usage) -> None:
        """The API's own count replaces the estimate for that call (a summary call only adds its cost)."""
        if usage.purpose != "summary":
            self.meter.meter = self.ledger.current
            self.meter.usage = self.ledger.usage
            self._render_spark()
            self.meter.miss = self.ledger.last_miss  # a miss of this call follows its usage (on_server)
            self.meter.call_finished(for_provider(self.session.provider), per_token(self.session.model),
                                     self.ledger.keep_warm, self.session.state.warm_since)
            self.meter.show_pings(self.ledger)
        self._render_title()
        self.post_message(self.CostChanged())
        self.post_message(self.Changed())

    def on_server(self, event: ev.ServerEdited | ev.CacheMissed) -> None:
        """What the server did, or why the cache missed: a line in the events list (the ledger has it)."""
        if event not in self.ledger.server_events:  # not heard as a listener (a test drives us)
            self.ledger.feed(event)
        self.meter.miss = self.ledger.last_miss
        self.meter.retick()
        self.meter.show_pings(self.ledger)
        self._render_events()

    def on_tool_finished(self, event: ev.ToolFinished) -> None:
        """A Context tool use: the meter says what the uses cost (the ledger heard it as a listener)."""
        self.meter.tool_line = self.ledger.context_tool_line()

    def replay_usage(self, usages: list[ev.Usage], calls: Sequence[tuple[int, int, str | None]] = ()) -> None:
        """A resumed session's journaled calls and events into the ledger (not heard live), then the next
        call told again: its cached split counts on the calls before it (told before them, it read 0)."""
        self.ledger.resumed(usages, calls)
        self.meter.usage = self.ledger.usage
        self._show_idle()  # `/resume` in a running TUI: the resumed session's last idle choice, not the old one's
        if (usages or calls) and self.session.history:
            self.session.announce_next("resumed calls")
        self._render_events()
        self._render_title()
        self._render_spark()
        self.post_message(self.CostChanged())

    def _show_idle(self) -> None:
        """The meter's idle line from the ledger: what the idle policy last chose (a resumed session's too)."""
        self.meter.idle_line = self.ledger.idle.line if self.ledger.idle is not None else ""

    @property
    def cost_text(self) -> str:
        """"$0.0123" once a priced call reported usage; "" while unknown (no usage, or no price)."""
        return fmt_usd(self.ledger.cost) if self.ledger.cost_known else ""

    @property
    def context_text(self) -> str:
        return self.approval.prefix() + self.ledger.context_line()  # an approval that waits leads the folded meter

    # -- acting on a row (outbound only: act, undo and steer are `steering.Steering`'s) --------------
    def on_history_rows_acted(self, event: HistoryRows.Acted) -> None:
        event.stop()
        self.steering.undo_newest() if event.action == "undo" else self.act(event.index, event.action)

    def act(self, index: int, action: str) -> str:
        """Pin / exclude / expand row `index` (the rows' keys, the message view): what happened, in words."""
        return self.steering.act(index, action)

    def action_count_exact(self) -> None:
        """`c` in the panel, or `/context` (a binding's action lives on the widget; the count does not)."""
        self.exact_count.ask()

    def on_history_rows_steering_changed(self, event: HistoryRows.SteeringChanged) -> None:
        self._render_title()

    def focus_first_difference(self) -> int | None:
        """`/context`: the first row the request does not send as it is in the history."""
        view = self.rows.view
        index = first_difference(view.plan) if view is not None else None
        if index is not None and index < len(self.index.rows):
            self.rows.cursor = index
        return index

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "count_exact":  # only in rows entered on purpose: reached by Tab, c is text
            focused = self.screen.focused
            return isinstance(focused, OnPurpose) and focused.armed and "c" in focused.ARMED_KEYS
        return True

    def on_history_rows_events_wanted(self, event: HistoryRows.EventsWanted) -> None:
        event.stop()
        self.events.take_focus()

    def on_history_rows_moved(self, event: HistoryRows.Moved) -> None:
        self.show_reason(event.index)

    # -- between turns: the next call ------------------------------------------------------------
    def show_next_call(self, told: ev.NextRequestChanged) -> None:
        """Between turns: the next call's plan as the engine told it, via the core ledger."""
        self.sync_history()
        if not self.session.history:
            if self.meter.meter is None:
                self.meter.base = told.base  # "No model call yet." with what every call will pay
            return
        result, base = told.plan.result, told.base
        self.ledger.configure(self.session.provider.model, self.session.provider.context_window,
                              self.session.provider.max_output_tokens)
        figures = self.ledger.preview(result, base.total, self.index.total_tokens)
        label = f"next call #{told.plan.call}"
        self.rows.show_view(OutboundView.of_plan(result.plan, len(self.session.history), label, result.messages,
                                                 self.ledger.caches))
        self.meter.base = base
        self.meter.meter = figures
        event = result.plan.event
        self._pending_event = event if event is not None and event.major and told.why != "idle compact" else None
        self._update_sizes()
        self._render_events()
        self._render_recap_row()
        self.show_reason(self.rows.cursor)
        self.post_message(self.Changed())

    # -- drawing helpers --------------------------------------------------------------------------
    def _render_title(self) -> None:
        cost = self.cost_text
        title = Content.styled("Context budget", "bold")
        if self.rows.armed and not self.READ_ONLY:  # the steering mode: what the plain keys do now
            title = Content.assemble((f"● {STEERING_TITLE}", "bold underline"), "  ", (STEERING_KEYS, MUTED))
        elif cost:
            title = Content.assemble(title, ("  session ", MUTED), (cost, "$text-success"))
        self.query_one("#budget-title", Static).update(title)

    def _update_sizes(self) -> None:
        view = self.rows.view
        sent = view.plan.sent_count if view is not None else 0  # the request's messages (the recap, the placeholder too)
        self.meter.history = (self.index.total_tokens, len(self.index.rows), sent)

    def _render_columns(self) -> None:
        digits = number_cells(len(self.index.rows))
        width = self.rows.scrollable_content_region.width or 40
        head = f"  {'#':>{digits}} role what (sizes in chars)"  # the columns on the right are tokens
        tail = f"{'mem':>{TOKENS_CELLS}} {'sent':>{TOKENS_CELLS}} {'tok':<{BAR_CELLS}}"
        self.query_one("#budget-columns", Static).update(head.ljust(max(width - len(tail) - 1, len(head) + 1)) + tail)

    def _render_recap_row(self) -> None:
        """The recap stands for the dropped span in the request: a row of its own above the history."""
        widget = self.query_one("#budget-recap-row", Static)
        content = self.recap_row.content(self.rows.view, self.rows.scrollable_content_region.width)
        widget.set_class(content is not None, "-shown")
        if content is not None:
            widget.update(content)

    def show_reason_note(self, note: Content) -> None:
        """A note in the reason line in place of a row's reason (a steer refused while a turn runs)."""
        self.query_one("#budget-reason", Static).update(note)

    def show_reason(self, index: int | None, lead: str = "") -> None:
        """The plan's words for the selected row (why it is sent, cut, masked, dropped...)."""
        widget = self.query_one("#budget-reason", Static)
        view = self.rows.view
        if index is None or view is None or index >= len(self.index.rows):
            widget.update(Content.styled(lead or "↑/↓ on a row: why it is sent as it is", MUTED))
            return
        op = view.plan.op(index) if index < view.history_len else None
        kind = op.kind if op is not None else "new"
        reason = op.reason if op is not None else "added after this call; the next call sends it"
        cached = " · in the cached prefix" if view.in_cache(index) else ""
        parts = [(f"#{index} {kind}: ", "bold"), reason + cached]
        if lead:
            parts = [(lead, "$text-success"), "\n", *parts]
        widget.update(Content.assemble(*parts))

    def _render_spark(self) -> None:
        self.query_one("#budget-spark", Static).update(spark_line(self.ledger, self.size.width))

    def _render_events(self) -> None:
        pending = self._pending_event
        entry = None
        if pending is not None and self.ledger.current_plan is not None:
            entry = EventEntry(pending, self.ledger.current_plan, self.ledger.current_messages,
                               self.ledger.last_plan, self.ledger.last_messages)
        self.events.show(self.ledger.timeline(), pending, entry, no_events_text(self.ledger),
                         self.ledger.earlier_events)

    def on_events_list_opened(self, event: EventsList.Opened) -> None:
        self.open_event(event.entry)

    def open_event(self, entry: EventEntry) -> None:
        """The event's loss report over the panel (a watch first has its calls made again, if let go)."""
        from tui_agent.ui.screens.event_view import EventScreen  # not needed for the first frame

        rows = self.index.rows

        def describe(i: int) -> str:
            return rows[i].what if 0 <= i < len(rows) else ""

        self.app.push_screen(EventScreen(entry, describe))


__all__ = ["BudgetPanel", "SPARK"]
