"""The panel's events list: one plain-words line per compaction event, newest last.

It replaces the raw `compact.run key=value` line (which stays in the trace): "call 21 · over 120k:
dropped 14 old messages, masked 6 old results, recap keeps 3 prompts and 9 files · 121k → 47k tok".
Enter (or a click) on a line opens the event's loss report (`EventScreen`). When the next call would
make an event of its own (a `--transcript` or resumed history that cannot fit), that is listed too, so
the panel never claims "every message is sent whole" for a request that will be compacted.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from textual.binding import Binding
from textual.content import Content
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from tui_agent.core.agent.budget import BudgetLedger, EventEntry
from tui_agent.core.compaction.plan import CompactEvent
from tui_agent.core.events import CacheMissed, ServerEdited
from tui_agent.ui.themes import MUTED
from tui_agent.ui.widgets.type_through import OnPurpose

SHOW_EVENTS = 50  # older events stay in the ledger; the list shows the newest ones
NONE_YET = "no compaction yet: every message is sent whole"


class EventsList(OnPurpose, OptionList, can_focus=False):
    """Compaction events of this session (and the next call's, when it would make one).

    Off the Tab cycle (Tab visits chat, rows and prompt only): `v` in the rows brings the keyboard here,
    Esc or leaving gives it back. Text typed here goes to the prompt; Enter opens an event only when
    the list was entered on purpose (`v`)."""

    ARMED_KEYS = frozenset({"enter"})

    DEFAULT_CSS = """
    EventsList { height: auto; max-height: 5; border: none; padding: 0 1; background: $surface;
                 scrollbar-size-vertical: 1; }
    EventsList:focus { border: none; }
    EventsList > .option-list--option { color: $foreground 78%; }
    """
    BINDINGS = [Binding("escape", "back", "Back to the rows", show=False)]

    @dataclass
    class Opened(Message):
        """An event line was chosen: show its loss report."""

        entry: EventEntry

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.entries: list[EventEntry | None] = []  # None: a line that opens nothing
        self._shown: tuple = ()
        self._texts: list[Content] = []
        self.cap = 5  # lines at most; the panel sets it from its height (more room, more events)

    def show(self, entries: Sequence[EventEntry | ServerEdited | CacheMissed], pending: CompactEvent | None = None,
             pending_entry: EventEntry | None = None, empty: str = NONE_YET,
             earlier: Sequence[tuple[int, str]] = ()) -> None:
        """Redraw only when the events changed (a call without an event costs nothing here). `earlier`: a
        resumed session's journaled events, (call, words), listed first (the journal keeps their words, not
        the requests an event view reads)."""
        tail = list(entries[-SHOW_EVENTS:])
        before = list(earlier[-(SHOW_EVENTS - len(tail)):]) if len(tail) < SHOW_EVENTS else []
        key = (len(entries), id(tail[-1]) if tail else None, pending.line() if pending else None, empty, len(earlier))
        if key == self._shown:
            return
        self._shown = key
        options: list[Option] = []
        self.entries = []
        for _, words in before:
            options.append(Option(Content.assemble(Content(words), (" (before the resume)", MUTED)), disabled=True))
            self.entries.append(None)
        for entry in tail:
            if isinstance(entry, (ServerEdited, CacheMissed)):  # the server's own, or why the cache missed
                options.append(Option(Content(entry.line())))  # (no loss report to open)
                self.entries.append(None)
            else:
                options.append(Option(Content(entry.line)))
                self.entries.append(entry)
        if pending is not None:
            options.append(Option(Content.assemble(("next call · ", "bold"), pending.line().split(" · ", 1)[-1])))
            self.entries.append(pending_entry)
        if not options:
            options.append(Option(Content.styled(empty, MUTED), disabled=True))
            self.entries.append(None)
        self._texts = [option.prompt if isinstance(option.prompt, Content) else Content(str(option.prompt))
                       for option in options]
        self.clear_options()
        self.add_options(options)
        self.highlighted = None
        self.fit()
        self.scroll_end(animate=False, immediate=True)

    def fit(self, cap: int | None = None) -> None:
        """As tall as the newest events that fit in `cap` lines, each one whole: the top line is always
        the start of an event, never the middle of one cut by the list's edge (160x45 showed 2½)."""
        if cap is not None:
            self.cap = cap
        width = max((self.size.width or 40) - 2, 10)  # padding 0 1
        if sum(len(text.wrap(width)) or 1 for text in self._texts) > self.cap:
            width -= 1  # it scrolls: the scrollbar takes a column
        used = 0
        for text in reversed(self._texts):
            lines = len(text.wrap(width)) or 1
            if used and used + lines > self.cap:
                break
            used += lines
        self.styles.height = max(min(used, self.cap) if used else 1, 1)
        self.styles.max_height = self.cap

    def on_resize(self) -> None:
        self.fit()

    def take_focus(self) -> None:
        """Focus the list (on its newest line) although it is off the Tab cycle."""
        self.can_focus = True
        self.enter_on_purpose()
        if self.option_count and self.highlighted is None:
            self.highlighted = self.option_count - 1

    def on_blur(self) -> None:
        """(`OnPurpose.on_blur` disarms as well.)"""
        self.can_focus = False

    def action_back(self) -> None:
        self.can_focus = False
        self.screen.query_one("HistoryRows").enter_on_purpose()  # back where the user came from

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        entry = self.entries[event.option_index] if event.option_index < len(self.entries) else None
        if entry is not None:
            self.post_message(self.Opened(entry))


__all__ = ["EventsList", "NONE_YET"]


def no_events_text(ledger: BudgetLedger) -> str:
    """What the list says while it has no major event: the routine cuts so far, or what a strategy without
    events (v1, seed) leaves out."""
    from tui_agent.ui.budget_model import counted, fmt_k

    plan = ledger.current_plan
    if plan is not None and plan.changed and plan.event is None and not ledger.events:
        cut = sum(len(v) for v in plan.cuts.values())
        return (f"{plan.mode} compaction: {counted(plan.dropped_count, 'older message')} not sent, "
                f"{counted(cut, 'result')} cut "
                f"· {fmt_k(plan.message_tokens_before)} → {fmt_k(plan.message_tokens_after)} tok")
    return NONE_YET
