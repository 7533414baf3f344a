"""The user in control of a compaction event: take the last one back (`/undo-compaction`, `u`).

Why its own module: `session.py` owns the turn; this is one user action with its own words. An undo brings
the decisions before the event back (the compactor's `undo_event`), holds them (no event by the marks until
the request grows a tenth of the budget past it, or /compact), and says what it costs: the cache holds the
compacted request, so the next call writes the longer one again in full. Everything goes through the
session's `emit`, so the journal records the undo and saves the held state: a resumed session holds the same.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from tui_agent.core import events as ev
from tui_agent.core.compaction.plan import CompactEvent, CompactPlan
from tui_agent.core.formats import fmt_tokens, fmt_usd
from tui_agent.core.models import for_model
from tui_agent.core.models import model_info

if TYPE_CHECKING:
    from tui_agent.core.agent.call import CallPlan
    from tui_agent.core.agent.loop_state import LoopState
    from tui_agent.core.agent.summary_draft import BackgroundSummaries
    from tui_agent.core.compaction.protocol import CompactorProtocol
    from tui_agent.core.messages import Message


class UndoHost(Protocol):
    """What an undo needs of the session (a Protocol: this module is imported by the commands, which the
    session imports, so naming `Session` itself would close an import circle; `CommandHost` includes it)."""

    running: bool
    compactor: "CompactorProtocol"
    summaries: "BackgroundSummaries"
    history: "list[Message]"
    state: "LoopState"

    @property
    def model(self) -> str: ...

    def plan_call(self) -> "CallPlan": ...

    def emit(self, event: Any) -> None: ...

    def announce_next(self, why: str) -> None: ...

NOTHING_TO_UNDO = ("Nothing to undo: no compaction event dropped, masked or summarised anything since the session "
                   "started (or since /clear); a cut on read stays.")
ONLY_THE_NEWEST = "Nothing to undo: only the newest compaction event can be taken back, once, by the process that made it."


@dataclass(frozen=True)
class UndoCost:
    """What taking an event back costs at the next call: the request before and after, and the price of
    writing the restored request to the cache again (in input-token units and, when the model's price is
    known, dollars)."""

    before: int
    after: int
    write_units: float
    dollars: float | None
    hold_until: int

    def words(self) -> str:
        price = f"≈{fmt_usd(self.dollars)}" if self.dollars is not None else f"≈{fmt_tokens(round(self.write_units))} uncached-token equivalents"
        trend = "grows" if self.after > self.before else "goes"
        return (f"the next request {trend} ≈{fmt_tokens(self.before)} → ≈{fmt_tokens(self.after)} tok, written to the "
                f"cache again in full ({price} once); no event until it passes ≈{fmt_tokens(self.hold_until)} "
                "tok or you run /compact")


def undo_cost(model: str, before: int, after: int, hold_until: int) -> UndoCost:
    """The restored request is written in full at the model's cache-write price (nothing of it is cached)."""
    units = for_model(model).write * after
    price = model_info(model).input_price  # dollars per million uncached input tokens
    dollars = units * price / 1_000_000 if price else None
    return UndoCost(before, after, units, dollars, hold_until)


def undoable_event(session: "UndoHost") -> CompactEvent | None:
    """The event `undo_compaction` would take back (None: none)."""
    from tui_agent.core.compaction.compactor import Compactor  # (the engine loads after the first frame)

    compactor = session.compactor
    return compactor.undoable if isinstance(compactor, Compactor) else None


def undo_compaction(session: "UndoHost") -> str:
    """`/undo-compaction`, `u`: take the last compaction event back; returns the line the chat shows."""
    if session.running:
        return "A turn is running: /undo-compaction can run once it ends."
    from tui_agent.core.compaction.compactor import Compactor, UndoRefused

    compactor = session.compactor
    if not isinstance(compactor, Compactor):
        return NOTHING_TO_UNDO
    if compactor.undoable is None:  # a cut on read (not a major event) stays: it is never taken back
        return NOTHING_TO_UNDO if compactor.last_event is None else ONLY_THE_NEWEST
    before = session.plan_call().plan.estimated_tokens
    try:
        event = compactor.undo_event(session.history)
    except UndoRefused as refused:
        return f"The last compaction event cannot be taken back: {refused}."
    assert event is not None
    session.summaries.cancel()  # a summary of what is sent again would join nothing
    session.summaries.draft = None
    session.state.last_plan, session.state.asked_event = None, None  # (an undone /compact reports nothing)
    after = session.plan_call().plan.estimated_tokens
    cost = undo_cost(session.model, before, after, compactor.state.hold_until or after)
    session.emit(ev.CompactionChanged("undo-event", event.call, True))  # (which call's event: no longer counted)
    session.announce_next("undo compaction")
    return f"Took back the compaction event of call #{event.call} ({event.line()}): {cost.words()}."


def nothing_to_compact(plan: CompactPlan) -> str:
    """Why an asked /compact dropped nothing, precisely: there is no older part, or dropping it would not
    make the request smaller (the recap that stands for it is as large as what it would free); or what it
    did instead (a prompt larger than the window clipped: `compaction/clip.py`)."""
    if plan.event is not None and "clip" in plan.event.kinds:
        return f"Compacted now: {plan.event.line()}."
    older = sum(1 for i in plan.outbound_indices if i < plan.protected_from)
    if not older:
        return "Nothing to compact: the request holds only the newest round."
    messages = plan.message_tokens_after
    return (f"Nothing to compact: dropping the {older} older message{'s' * (older != 1)} (≈{messages:,} tok of "
            f"messages in all, ≈{plan.estimated_tokens:,} with the system prompt and tools) would free less than "
            "the recap in their place costs, so the request stays as it is.")


__all__ = ["NOTHING_TO_UNDO", "ONLY_THE_NEWEST", "UndoHost", "UndoCost", "nothing_to_compact", "undo_compaction", "undo_cost",
           "undoable_event"]
