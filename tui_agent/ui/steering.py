"""Steering the next request by hand: pin, exclude or expand a history row, said in the chat, undone with one key.

A pin, an exclude or an expand changes what every following model call sends (and costs). Keys typed as a
question once made them, with nothing in the chat to say so: the next call grew 6.6k → 14.5k
tokens unseen. So each one is announced with its effect on the next call ("pinned #3: the next request
grows ≈2.1k → 14.5k tok"), kept in a log, and `u` in the steering mode (or `/undo-steer`) undoes the
newest. The log holds only what the user did by hand in this run; the engine's own decisions are not in it.
`u` takes back whichever is newer, the last change by hand or the last compaction event
(`/undo-compaction`: the event alone); the chat and the panel say what the undo costs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from textual.binding import Binding
from textual.content import Content
from textual.message import Message

from tui_agent.core.agent.compaction_control import undo_compaction, undoable_event
from tui_agent.ui.budget_model import fmt_k
from tui_agent.ui.widgets.history_rows import HistoryRows

if TYPE_CHECKING:
    from tui_agent.core.agent.session import Session
    from tui_agent.ui.approval import Approval
    from tui_agent.ui.widgets.budget_meter import BudgetMeter

PAST = {"pin": "pinned", "exclude": "excluded", "expand": "expanded"}
UNDONE = {"pin": "unpinned", "exclude": "included again", "expand": "no longer expanded"}
STEERING_TITLE = "STEERING"


def steering_keys() -> str:
    """"p pin · x exclude · e expand · u undo last · Esc leaves": the panel's title while steering, made from
    the rows' own bindings, so it names the keys they bind in their footer's words (Esc is no binding of
    theirs: it, or a letter that is no action, leaves the mode)."""
    acting = [b for b in HistoryRows.BINDINGS if isinstance(b, Binding) and b.key in ("p", "x", "e", "u")]
    return " · ".join([*(f"{b.key} {b.description.lower()}" for b in acting), "Esc leaves"])


STEERING_KEYS = steering_keys()


@dataclass(frozen=True)
class Steer:
    """One change by hand: `on` True pins / excludes / expands message `index`, False takes that back."""

    index: int
    action: str  # "pin", "exclude" or "expand"
    on: bool
    after_call: int = 0  # the session's call count when it was made (an event of a later call is newer)

    def reverse(self) -> "Steer":
        return Steer(self.index, self.action, not self.on, self.after_call)


def what_it_did(steer: Steer) -> str:
    """"pinned #3", "unpinned #3", "excluded #7", "included again #7"."""
    verb = PAST[steer.action] if steer.on else UNDONE[steer.action]
    return f"{verb} #{steer.index}"


def effect(before: int | None, after: int | None) -> str:
    """The next call before and after a change, in the panel's units ("grows ≈2.1k → 14.5k tok")."""
    if before is None or after is None:
        return "applies from the next call"
    if after > before:
        trend = "grows"
    elif after < before:
        trend = "shrinks"
    else:
        return f"the next request stays ≈{fmt_k(after)} tok"
    return f"the next request {trend} ≈{fmt_k(before)} → {fmt_k(after)} tok"


def announcement(steer: Steer, before: int | None, after: int | None, kind: str, undo: bool = False) -> str:
    """The line for one change: what it did and its effect on the next call (the chat adds `WAY_BACK`)."""
    lead = f"Undid the last change: {what_it_did(steer)}" if undo else what_it_did(steer).capitalize()
    sent = f" (sent as {kind})" if kind else ""
    return f"{lead}{sent}: {effect(before, after)}"


WAY_BACK = "; u in the steering mode or /undo-steer undoes it"


NOTHING_TO_UNDO = "Nothing to undo: no pin, exclude or expand was made by hand, and no compaction event to take back."


@dataclass
class Steered(Message):
    """A pin / exclude / expand (or its undo) by hand: the chat says what it does to the next call."""

    note: str


class SteeredPanel(Protocol):
    """What steering needs of the panel that holds it (a Protocol: the panel imports this module)."""

    session: "Session"
    approval: "Approval"  # while it waits, the bar's Edit may steer the paused call

    @property
    def rows(self) -> HistoryRows: ...

    @property
    def meter(self) -> "BudgetMeter": ...

    def show_reason(self, index: int | None, lead: str = "") -> None: ...

    def show_reason_note(self, note: Content) -> None: ...

    def post_message(self, message: Message) -> bool: ...


class Steering:
    """The row actions by hand, held by the budget panel (`panel.steering`): each one announced (`Steered`)
    and kept, newest last, in `done` for `u`. An object of its own rather than a mixin of the panel, so the
    log and the actions that fill it are one concept in one place, and the panel only asks it."""

    def __init__(self, panel: SteeredPanel) -> None:
        self.panel = panel
        self.done: list[Steer] = []  # the changes made by hand in this run, newest last

    def clear(self) -> None:
        """`/clear`: the rows the log names are gone."""
        self.done.clear()

    def act(self, index: int, action: str) -> str:
        """Toggle pin / exclude / expand of message `index` in the next request; returns what happened."""
        view = self.panel.rows.view
        plan = view.plan if view is not None else None
        done = {"pin": plan.pins, "exclude": plan.excluded, "expand": plan.expanded}[action] if plan else ()
        return self.steer(Steer(index, action, index not in done, self.panel.session.state.calls))

    def undo_newest(self) -> str:
        """`u` in the steering mode: take back the newer of the last change by hand and the last
        compaction event (an event at a call after the change was made is the newer)."""
        last = self.done[-1] if self.done else None
        event = undoable_event(self.panel.session)
        if event is not None and (last is None or event.call > last.after_call):
            return self.undo_event()
        return self.undo()

    def undo(self) -> str:
        """`/undo-steer`: take back the newest change made by hand."""
        last = self.done[-1] if self.done else None
        return self.steer(last.reverse(), undo=True) if last is not None else self._said(NOTHING_TO_UNDO)

    def undo_event(self) -> str:
        """`/undo-compaction` (or `u` when the event is the newer): the state before the last event returns;
        the chat and the panel's reason line say what it costs."""
        note = undo_compaction(self.panel.session)
        self.panel.show_reason(None, lead=note)
        return self._said(note)

    def steer(self, steer: Steer, undo: bool = False) -> str:
        """Make one change, and say in the chat what it does to the next call (the panel redraws as the
        engine tells the new next call: `panel_hearing.SessionHearing`)."""
        panel = self.panel
        if panel.session.running and not panel.approval.waiting:  # the bar's Edit pauses the turn
            note = "A turn is running: pin, exclude, expand and undo apply once it ends."
            panel.show_reason_note(Content.styled(note, "$text-warning"))
            return note
        meter, rows = panel.meter, panel.rows
        before = meter.meter.total if meter.meter is not None else None
        getattr(panel.session, steer.action)(steer.index, steer.on)
        if undo:
            if self.done:
                self.done.pop()
        else:
            self.done.append(steer)
        after = meter.meter.total if meter.meter is not None else None
        kind = rows.view.kind(steer.index) if rows.view is not None else "new"
        note = announcement(steer, before, after, kind, undo)
        panel.show_reason(steer.index, lead=note)
        self._said(f"{note}." if undo else f"{note}{WAY_BACK}.")
        return note

    def _said(self, note: str) -> str:
        self.panel.post_message(Steered(note))
        return note


__all__ = ["NOTHING_TO_UNDO", "STEERING_KEYS", "STEERING_TITLE", "Steer", "Steered", "SteeredPanel", "Steering",
           "announcement", "effect", "what_it_did"]
