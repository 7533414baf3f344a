"""The budget ledger: every figure the faces show about context and cost, computed once, UI-free.

The panel, the one-line context meter, headless `-p` and the web face all read this one object, so
they cannot disagree about what a call sent, what it cost or what the cache held. It is fed the
engine's own events (`CompactionReported`, `Usage`, `SummaryWritten`, `TurnEnded`) and, between turns,
the next call's plan (`Session.plan_call()`); it never compacts anything itself.

This module hears the events and keeps the numbers; a call's figures are made in `figures.py`, the
ledger said in one line in `ledger_lines.py`. Every update is O(changed messages): the cached/new split
sums only the messages after the cached prefix, calls and events are appended, nothing walks the history.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Sequence

from tui_agent.core import events as ev
from tui_agent.core.compaction.plan import CompactPlan, CompactResult
from tui_agent.core.cache_clock import caches_nothing
from tui_agent.core.formats import fmt_usd
from tui_agent.core.messages import Message, UsageInfo
from tui_agent.core.models import cost_usd, for_model, model_info
from tui_agent.core.models import InputCost, input_cost
from tui_agent.core.agent.figures import CallFigures, call_figures
from tui_agent.core.agent.ledger_lines import ContextUse, context_line, context_tool_line, summary_line
from tui_agent.core.events import BaseBreakdown  # noqa: F401  (named here by the faces)
from tui_agent.core.compaction.request_diff import EventEntry, RequestChange, first_difference, recap_tokens, request_diff  # noqa: F401
from tui_agent.core.tokens import tokens_for_chars


CONTEXT_TOOL = "Context"


@dataclass
class BudgetLedger:
    """Running per-session figures, fed by engine events in order; the faces only read them."""

    model: str = ""
    window: int = 0
    reserve: int = 0
    calls: dict[int, int] = field(default_factory=dict)  # call → request tokens (estimate, or API usage)
    exact_calls: set[int] = field(default_factory=set)  # calls whose number is the API's
    event_calls: set[int] = field(default_factory=set)  # calls that made a major compaction event
    events: list[EventEntry] = field(default_factory=list)  # every event, routine cuts included
    major_events: list[EventEntry] = field(default_factory=list)  # every event the journal records, in order
    routine_cuts: int = 0  # results cut on read by events that changed nothing else
    # what the server did on its own and why the cache missed (`ServerEdited`, `CacheMissed`), in order
    server_events: list[ev.ServerEdited | ev.CacheMissed] = field(default_factory=list)
    cost: float = 0.0  # USD at list price over the calls that reported usage
    unpriced_calls: int = 0  # calls whose model has no known price (the total is then unknown)
    usage: ev.Usage | None = None  # the last call's usage
    summaries: int = 0
    summary_cost: float = 0.0  # USD of the summary calls (their own line in the ledger; also in `cost`)
    summary_tokens: int = 0  # input + output tokens of the summary calls
    current: CallFigures | None = None  # the call being made, or the next one between turns
    current_plan: CompactPlan | None = None
    current_messages: Sequence[Message] = ()
    last_plan: CompactPlan | None = None  # the last call's plan and request (what an event is diffed against)
    last_messages: Sequence[Message] = ()
    context_uses: list[ContextUse] = field(default_factory=list)  # every Context tool use, in order
    earlier_events: list[tuple[int, str]] = field(default_factory=list)  # a resumed session's: (call, words)
    pings: int = 0  # keep-warm pings (`CacheKeptWarm`): paid for (in `cost`), no call of the conversation
    ping_cost: float = 0.0  # USD of the pings (also in `cost`)
    ping_read_tokens: int = 0  # what the pings read from the cache
    warm: ev.CacheKeptWarm | None = None  # the last ping since the last call (None: none since)
    keep_warm: ev.KeepWarmArmed | None = None  # the pings planned since the last call (None: none, or stopped)
    idle: ev.IdleChosen | None = None  # the idle policy's last choice (ping / compact / cold, each priced)
    _context_started: dict[str, str] = field(default_factory=dict, repr=False)  # tool_use id → summary

    # -- feeding --------------------------------------------------------------------------------
    def feed(self, event: object) -> None:
        """Take one engine event (others are ignored)."""
        match event:
            case ev.CompactionReported():
                self._on_call(event)
            case ev.Usage():
                self._on_usage(event)
            case ev.SummaryWritten():
                self.summaries += event.summary is not None
            case ev.ServerEdited() | ev.CacheMissed():
                self._on_server(event)
            case ev.ToolStarted(name=name) if name == CONTEXT_TOOL:
                self._context_started[event.tool_use_id] = event.summary
            case ev.ToolFinished(name=name) if name == CONTEXT_TOOL:
                summary = self._context_started.pop(event.tool_use_id, "")
                call = max(self.calls, default=0)
                self.context_uses.append(ContextUse(call, summary, tokens_for_chars(event.chars), event.is_error))
            case ev.CacheKeptWarm():
                self._on_ping(event)
            case ev.KeepWarmArmed():
                self.keep_warm = event
            case ev.KeepWarmStopped():
                self.keep_warm = None
            case ev.IdleChosen():
                self.idle = event
            case ev.NextRequestChanged(why="idle compact") if event.plan.plan.event is not None:
                self._on_idle_event(event.plan.plan, event.plan.messages)
            case ev.SessionCleared():
                self.reset()
            case ev.CompactionChanged(action="undo-event", index=int(call)):
                self._undone(call)

    def _on_server(self, event: ev.ServerEdited | ev.CacheMissed) -> None:
        """What the server did, in order; a clearing that goes on (`ServerEdited.since`) takes the place of the
        line of the clearing it continues: one clearing, one line, its counts the newest."""
        if isinstance(event, ev.ServerEdited) and event.since is not None:
            for i in range(len(self.server_events) - 1, -1, -1):
                old = self.server_events[i]
                if isinstance(old, ev.ServerEdited) and (old.since or old.call) == event.since:
                    self.server_events[i] = event
                    return
        self.server_events.append(event)

    def _undone(self, call: int) -> None:
        """`/undo-compaction` took call `call`'s event back: listed as undone, no longer counted."""
        for entries in (self.events, self.major_events):
            for i, entry in enumerate(entries):
                if entry.event.call == call and not entry.undone:
                    entries[i] = replace(entry, undone=True)
        self.earlier_events = [(c, words) for c, words in self.earlier_events if c != call]
        self.event_calls.discard(call)

    @property
    def counted_events(self) -> list[EventEntry]:
        """This run's compaction events that stand (an undone one is listed, not counted)."""
        return [entry for entry in self.major_events if not entry.undone]

    def timeline(self) -> list[EventEntry | ev.ServerEdited | ev.CacheMissed]:
        """The events list's lines: our compaction events and the server's (edits, cache misses) by call."""
        if not self.server_events:
            return list(self.major_events)
        merged: list[EventEntry | ev.ServerEdited | ev.CacheMissed] = [*self.major_events, *self.server_events]
        return sorted(merged, key=lambda e: e.event.call if isinstance(e, EventEntry) else e.call)

    @property
    def last_miss(self) -> ev.CacheMissed | None:
        """The last call's cache miss, if the last call missed (the cache clock names its reason)."""
        last = self.server_events[-1] if self.server_events else None
        return last if isinstance(last, ev.CacheMissed) and self.usage is not None and last.call == self.usage.call \
            else None

    def reset(self) -> None:
        model, window, reserve = self.model, self.window, self.reserve
        self.__init__(model=model, window=window, reserve=reserve)  # type: ignore[misc]

    def configure(self, model: str, window: int, reserve: int) -> None:
        self.model, self.window, self.reserve = model, window, reserve

    def resumed(self, usages: Sequence[ev.Usage], calls: Sequence[tuple[int, int, str | None]]) -> None:
        """A resumed session's journaled calls, (call, estimated tokens, its event in words or None): their
        sizes, their usage priced again (the API's counts, the last call's cache split, the cost) and their
        compaction events counted with their words (the journal keeps no request to diff them against).
        Without them the meter said "calls: none yet" after a resume."""
        for call, tokens, _ in calls:
            if tokens:  # (0: the next call's, an idle event was made for it: only its words are known)
                self.calls[call] = tokens
        for usage in usages:
            self.feed(usage)
        self.earlier_events = [(call, words) for call, _, words in calls if words]
        self.event_calls.update(call for call, _ in self.earlier_events)

    @property
    def caches(self) -> bool:
        """False when the last call's usage said nothing is cached (`cache_clock.caches_nothing`): no figure
        may then count on the cache (the next call reads and writes nothing, and is priced uncached)."""
        return not caches_nothing(self.usage, for_model(self.model))

    @property
    def kept_warm_missed(self) -> int:
        """Calls that missed the cache although keep-warm pings had read their prefix since the call before."""
        return sum(1 for e in self.server_events if isinstance(e, ev.CacheMissed) and e.kept_warm)

    @property
    def event_count(self) -> int:
        """Every compaction event of the session: before a resume (journaled) and since."""
        return len(self.earlier_events) + len(self.counted_events)

    def feed_earlier(self, event: ev.CompactionReported) -> None:
        """A call before the one a face is about to show (a replay feeds every step up to it, in order):
        all of it but its `current` figures, which the shown call's replace before anything reads them
        (measuring each earlier request's new messages for them was a good part of a far jump's panel)."""
        self._on_call(event, figures=False)

    def _on_call(self, event: ev.CompactionReported, figures: bool = True) -> None:
        plan = event.plan
        self.calls[event.call] = event.outbound_tokens
        if plan.event is not None:
            entry = EventEntry(plan.event, plan, event.messages, self.last_plan, self.last_messages)
            self.events.append(entry)
            # every event, routine cuts too: the panel, the headless line, the journal and `export` count
            # the same events ("6 compaction events" beside a journal of 8 was the cut-only ones left out)
            self.event_calls.add(event.call)
            self.major_events.append(entry)
            if not plan.event.major:
                self.routine_cuts += plan.event.cut
        if figures:
            self.current = self.figures(f"Call #{event.call}", event.call, plan, event.messages,
                                        event.system_tokens + event.tools_tokens, history_len=event.history_len)
        self.current_plan, self.current_messages = plan, event.messages
        self.last_plan, self.last_messages = plan, event.messages

    def _on_idle_event(self, plan: CompactPlan, messages: Sequence[Message]) -> None:
        """The idle policy compacted while the session waited (`idle_policy.py`): an event of the next call's
        request, on the timeline now (that call reports no event of its own: it was already made)."""
        entry = EventEntry(plan.event, plan, messages, self.last_plan, self.last_messages)  # type: ignore[arg-type]
        self.events.append(entry)
        self.major_events.append(entry)
        self.event_calls.add(plan.call)

    def let_go(self, held: Callable[[int], bool], slim: Callable[[CompactPlan], CompactPlan]) -> None:
        """Drop the requests of the events whose calls (or the calls before them) `held` no longer holds:
        a watch over a long session keeps every event's line and sizes, not every event's request (the
        event view has the calls made again, `ui.screens.watch`). The call shown stays as it is."""
        swapped: dict[int, EventEntry] = {}
        for i, entry in enumerate(self.events):
            previous = entry.previous_plan
            drop_now = bool(entry.messages) and not held(entry.plan.call)
            drop_before = bool(entry.previous_messages) and previous is not None and not held(previous.call)
            if not (drop_now or drop_before):
                continue
            new = replace(entry, plan=slim(entry.plan) if drop_now else entry.plan,
                          messages=() if drop_now else entry.messages,
                          previous_plan=slim(previous) if drop_before and previous is not None else previous,
                          previous_messages=() if drop_before else entry.previous_messages)
            swapped[id(entry)] = new
            self.events[i] = new
        if swapped:
            self.major_events = [swapped.get(id(entry), entry) for entry in self.major_events]

    def _on_ping(self, ping: ev.CacheKeptWarm) -> None:
        """A keep-warm ping's usage is paid for like a call's: in the cost, apart from the calls."""
        cost = cost_usd(self.model, UsageInfo.of(ping))
        self.cost += cost or 0.0
        self.unpriced_calls += cost is None
        self.ping_cost += cost or 0.0
        self.pings += 1
        self.ping_read_tokens += ping.cache_read_input_tokens
        self.warm = ping

    def _on_usage(self, usage: ev.Usage) -> None:
        if usage.purpose == "call":  # a new call: its own pings (if any) are armed after this
            self.warm, self.keep_warm = None, None
        cost = cost_usd(self.model, UsageInfo.of(usage))
        if cost is None:
            self.unpriced_calls += 1
        else:
            self.cost += cost
        if usage.purpose == "summary":  # a summary call is paid for, but it is not a call of the conversation
            self.summary_cost += cost or 0.0
            self.summary_tokens += usage.context_tokens + usage.output_tokens
            return
        self.usage = usage
        self.calls[usage.call] = usage.context_tokens
        self.exact_calls.add(usage.call)
        current = self.current
        if current is not None and current.call == usage.call:
            cached = usage.cache_read_input_tokens
            self.current = replace(current, exact_total=usage.context_tokens, cached=cached,
                                   new=usage.context_tokens - cached, cost=input_cost(
                                       self.model, read=cached, write=usage.cache_creation_input_tokens,
                                       uncached=usage.input_tokens))  # the bill as reported

    def priced_as(self, cost: InputCost, cached: float) -> None:
        """A replayed call is priced by its strategy run, the figure its card shows: `cost`, with `cached`
        tokens read from the cache (the prefix shared with the strategy's previous request; 0 on a cold
        first call), not the ledger's own split of a request it did not make."""
        current = self.current
        if current is not None:
            read = min(max(round(cached), 0), current.total)
            self.current = replace(current, cached=read, new=current.total - read, cost=cost)

    def reported_as(self, usage: dict[str, int]) -> None:
        """A replayed call whose request is the one the recorded agent sent: its figures are what the API
        reported for it (its total, the cache it read, its bill), not the ledger's estimate of them."""
        current = self.current
        read, written = usage.get("cache_read_input_tokens", 0), usage.get("cache_creation_input_tokens", 0)
        total = usage.get("input_tokens", 0) + read + written
        if current is not None and total > 0:
            self.current = replace(current, exact_total=total, cached=read, new=total - read, cost=input_cost(
                self.model, read=read, write=written, uncached=usage.get("input_tokens", 0)))

    def preview(self, result: CompactResult, base: int, history_tokens: int = 0) -> CallFigures:
        """Between turns: the next call's plan (`Session.plan_call()`) becomes the current figures."""
        self.current = self.figures("Next call", None, result.plan, result.messages, base, history_tokens)
        self.current_plan, self.current_messages = result.plan, result.messages
        return self.current

    # -- figures --------------------------------------------------------------------------------
    def figures(self, label: str, call: int | None, plan: CompactPlan, messages: Sequence[Message], base: int,
                history_tokens: int = 0, history_len: int | None = None) -> CallFigures:
        """`plan`'s request in figures (`figures.call_figures`), with what this ledger knows of the cache."""
        warm = bool(self.calls) and (call is None or call > min(self.calls))  # a previous request cached the base
        return call_figures(label, call, plan, messages, base, model=self.model, window=self.window,
                            reserve=self.reserve, cache_warm=warm, caches=self.caches,
                            calibrated=bool(self.exact_calls), history_tokens=history_tokens)

    # -- reading --------------------------------------------------------------------------------
    @property
    def priced(self) -> bool:
        return model_info(self.model).input_price is not None

    @property
    def cost_known(self) -> bool:
        """A session cost can be shown: usage came in and every call had a price."""
        return self.usage is not None and not self.unpriced_calls

    # (said in a line: `ledger_lines.py`)
    def context_line(self) -> str:
        return context_line(self.current, self.cost if self.cost_known else None)

    def context_tool_line(self) -> str:
        return context_tool_line(self.context_uses)

    def summary_line(self, earlier_usd: float | None = None, counted_before: float = 0.0) -> str:
        return summary_line(self.current, len(self.calls), len(self.counted_events), self.summary_tokens,
                            self.summary_cost, self.cost if self.cost_known else None, earlier_usd, counted_before)


__all__ = ["BaseBreakdown", "BudgetLedger", "CallFigures", "EventEntry", "RequestChange",
           "first_difference", "fmt_usd", "recap_tokens", "request_diff"]
