"""Taking the last compaction event back (`/undo-compaction`, `u`): the compactor's state before it returns.

The user's pins, excludes and expands made since stay; the event holds (no event by the marks until the
request grows a share of the budget past its new size, or /compact), and the hold is in the state, so the
journal keeps it and a resumed session holds the same. Refused, with nothing changed, when the request
before the event with what came since would not fit the window: it would be compacted again at once.
"""

from __future__ import annotations

import copy
from typing import Any, Protocol, Sequence

from tui_agent.core.compaction.events_of import budget_words
from tui_agent.core.compaction.facts import Facts
from tui_agent.core.compaction.layout import Layout
from tui_agent.core.compaction.plan import CompactEvent, fmt_tokens
from tui_agent.core.compaction.policy import CompactPolicy
from tui_agent.core.compaction.state import CompactState
from tui_agent.core.messages import Message

UNDO_UNBOUNDED = 1 << 62  # the hold while the restored request is planned (no event by the marks at all)


class UndoRefused(ValueError):
    """An event cannot be taken back (the request before it would not fit the window); says why."""


class Undoable(Protocol):
    """The compactor as an undo sees it (a Protocol: the compactor imports this module)."""

    state: CompactState
    facts: Facts
    layout: Layout
    tokens: Any
    policy: CompactPolicy
    last_event: CompactEvent | None
    tool_rerunnable: Any
    _before_event: Any
    _undo_to: tuple[CompactState, CompactEvent | None, CompactEvent] | None

    def preview(self, history: Sequence[Message], call: int | None = None) -> Any: ...


def undo_event(self: Undoable, history: Sequence[Message], hold_share: float) -> CompactEvent | None:
    """Take the last event back: the decisions before it return (the user's pins, excludes and expands
    made since stay), and hold — no event by the marks until the request grows `hold_share` of the
    budget past its size now, or /compact. The hold is in the state, so the journal keeps it and a
    resumed session holds the same. None: nothing to undo. Raises UndoRefused (nothing changed) when the
    request before the event, with what came since, would not fit the window: it would be cut again."""
    if self._undo_to is None:
        return None
    before, last_event, event = self._undo_to
    now, kept = self.state, (self.state, self.facts, self.layout, self.last_event, self._before_event)
    changed = (before.pins, before.excludes, before.expanded) != (now.pins, now.excludes, now.expanded)
    restored = before.evolve(pending=(), dirty=before.dirty or changed, pins=now.pins, excludes=now.excludes,
                             expanded=now.expanded, learned_window=now.learned_window,
                             summary_failures=now.summary_failures, hold_until=UNDO_UNBOUNDED)
    tokens = copy.deepcopy(self.tokens)
    self.facts = Facts(self.tool_rerunnable)
    self.facts.sync(history)
    self.layout = Layout()
    self.layout.rebuild(restored, history, self.facts, self.tokens, self.policy)
    self.state, self.last_event, self._before_event = restored, last_event, None
    plan = self.preview(history, now.calls + 1).plan
    if plan.event is not None and plan.event.major:  # over the window: it would be fitted at once
        self.state, self.facts, self.layout, self.last_event, self._before_event = kept
        self.tokens = tokens
        raise UndoRefused(f"the request before it with what came since is ≈{fmt_tokens(plan.event.tokens_before)} "
                          f"tok, over the {budget_words(self.policy)}: it would be compacted again at once")
    self._undo_to = None
    self.state = self.state.evolve(hold_until=plan.estimated_tokens + int(self.policy.room * hold_share))
    return event
