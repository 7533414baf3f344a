"""How one request differs from another: the messages an event removed, changed or added, the recap's
own tokens, and the first history row the request does not send as it is. The budget ledger, the events
list and the message view read these; they are pure functions of two plans and their messages.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from tui_agent.core.compaction.plan import CompactEvent, CompactPlan
from tui_agent.core.messages import Message
from tui_agent.core.tokens import message_tokens


@dataclass(frozen=True)
class EventEntry:
    """A compaction event as the events list shows it, with what is needed to explain it on demand."""

    event: CompactEvent
    plan: CompactPlan
    messages: Sequence[Message]
    previous_plan: CompactPlan | None = None
    previous_messages: Sequence[Message] = ()
    undone: bool = False  # taken back by `/undo-compaction`: still listed, no longer counted

    @property
    def line(self) -> str:
        return self.event.line() + (" · undone" if self.undone else "")


@dataclass(frozen=True)
class RequestChange:
    """One message of the request that differs from the previous call's: removed, changed or added."""

    kind: str  # "removed" | "changed" | "added"
    index: int | None  # history index (None: the recap or the lead placeholder)
    before_tokens: int
    after_tokens: int


def request_diff(entry: EventEntry) -> list[RequestChange]:
    """What the event changed in the request, message by message, against the previous call's request."""
    prev_plan, plan = entry.previous_plan, entry.plan
    if prev_plan is None:
        return []
    changes: list[RequestChange] = []
    new_indices = set(plan.outbound_indices)
    for i in prev_plan.outbound_indices:
        before = _sent(prev_plan, entry.previous_messages, i)
        if i not in new_indices:
            changes.append(RequestChange("removed", i, before, 0))
            continue
        after = _sent(plan, entry.messages, i)
        old = _message_at(prev_plan, entry.previous_messages, i)
        now = _message_at(plan, entry.messages, i)
        if old is not None and now is not None and old != now:
            changes.append(RequestChange("changed", i, before, after))
    old_recap = _recap_message(prev_plan, entry.previous_messages)
    new_recap = _recap_message(plan, entry.messages)
    if new_recap is not None and new_recap != old_recap:
        kind = "changed" if old_recap is not None else "added"
        changes.append(RequestChange(kind, None, message_tokens(old_recap) if old_recap else 0,
                                     message_tokens(new_recap)))
    return changes


def _message_at(plan: CompactPlan, messages: Sequence[Message], index: int) -> Message | None:
    pos = plan.position(index)
    return messages[pos] if pos is not None and pos < len(messages) else None


def _sent(plan: CompactPlan, messages: Sequence[Message], index: int) -> int:
    message = _message_at(plan, messages, index)
    return message_tokens(message) if message is not None else 0


def _recap_message(plan: CompactPlan, messages: Sequence[Message]) -> Message | None:
    pos = plan.recap_position
    return messages[pos] if pos is not None and pos < len(messages) else None


def recap_tokens(plan: CompactPlan, messages: Sequence[Message]) -> int:
    """The recap message's (and a lead placeholder's) sent tokens: sent, but no history row of their own."""
    total = 0
    recap = _recap_message(plan, messages)
    if recap is not None:
        total += message_tokens(recap)
    if plan.lead_placeholder and messages:
        total += message_tokens(messages[0])
    return total


def first_difference(plan: CompactPlan) -> int | None:
    """The first history row the request does not send as it is (dropped, excluded, cut or masked)."""
    decided = [i for i, per in plan.blocks.items() if per]  # a block decision of any kind (decisions.KINDS)
    candidates = [i for i in (*decided, *plan.excluded) if i < plan.history_len]
    if plan.drop_until > plan.drop_from:
        candidates += [i for i in range(plan.drop_from, min(plan.drop_until, plan.drop_from + len(plan.kept_in_drop) + 1))
                       if i not in plan.kept_in_drop]
    return min(candidates) if candidates else None
