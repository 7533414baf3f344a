"""The one place an outbound message is built from the history and the decisions about it.

The compactor uses `render_message` when a decision is taken; `render(history, plan)` rebuilds a whole
request from a plan alone (the tests check that both agree, byte for byte). Same inputs, same bytes:
that is what keeps the cached prefix stable between events.
"""

from __future__ import annotations

from typing import Sequence

from tui_agent.core.compaction.decisions import BlockDecision, render_blocks
from tui_agent.core.compaction.marks import CONTINUES
from tui_agent.core.compaction.plan import CompactPlan
from tui_agent.core.messages import Message, blocks


def render_message(message: Message, decisions: Sequence[BlockDecision] = ()) -> Message:
    """Message as sent: each block decision applied (cut, masked…); the message itself when there is none."""
    if not decisions:
        return message
    return {"role": message["role"], "content": render_blocks(blocks(message), decisions)}


def recap_message(text: str) -> Message:
    return {"role": "user", "content": [{"type": "text", "text": text}]}


def first_message_fix(out: list[Message]) -> Message | None:
    """A request must open with a user message: the stand-in to put first when it would not."""
    if out and out[0].get("role") != "user":
        return recap_message(CONTINUES)
    return None


def render(history: Sequence[Message], plan: CompactPlan) -> list[Message]:
    """The outbound messages of `plan`, rebuilt from the history and the plan alone."""
    out = [render_message(history[i], plan.blocks.get(i, ())) for i in plan.outbound_indices]
    if plan.recap_position is not None and plan.recap is not None:
        out.insert(plan.recap_position - plan.lead_placeholder, recap_message(plan.recap.text))
    if plan.lead_placeholder:
        out.insert(0, recap_message(CONTINUES))
    return out
