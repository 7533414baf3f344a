"""The one place an outbound message is built from the history and the decisions about it.

The compactor uses `render_message` when a decision is taken; `render(history, plan)` rebuilds a whole
request from a plan alone (the tests check that both agree, byte for byte). Same inputs, same bytes:
that is what keeps the cached prefix stable between events.
"""

from __future__ import annotations

from typing import Sequence

from tui_agent.core.compaction.cut import cut_block
from tui_agent.core.compaction.marks import CONTINUES
from tui_agent.core.compaction.mask import masked_block
from tui_agent.core.compaction.plan import BlockCut, BlockMask, CompactPlan
from tui_agent.core.messages import Message, blocks


def render_message(message: Message, cuts: Sequence[BlockCut] = (), masks: Sequence[BlockMask] = ()) -> Message:
    """Message as sent: its cut results cut, its masked results replaced; the message itself when neither."""
    if not cuts and not masks:
        return message
    original = blocks(message)
    content = list(original)
    for cut in cuts:
        done = cut_block(original[cut.block_index], cut.kept_chars, cut.tool_name)
        if done is not None:
            content[cut.block_index] = done[0]
    for mask in masks:
        content[mask.block_index] = masked_block(original[mask.block_index], mask.placeholder)
    return {"role": message["role"], "content": content}


def ledger_message(text: str) -> Message:
    return {"role": "user", "content": [{"type": "text", "text": text}]}


def first_message_fix(out: list[Message]) -> Message | None:
    """A request must open with a user message: the stand-in to put first when it would not."""
    if out and out[0].get("role") != "user":
        return ledger_message(CONTINUES)
    return None


def render(history: Sequence[Message], plan: CompactPlan) -> list[Message]:
    """The outbound messages of `plan`, rebuilt from the history and the plan alone."""
    out = [render_message(history[i], plan.cuts.get(i, ()), plan.masks.get(i, ())) for i in plan.outbound_indices]
    if plan.ledger_position is not None and plan.ledger is not None:
        out.insert(plan.ledger_position - plan.lead_placeholder, ledger_message(plan.ledger.text))
    if plan.lead_placeholder:
        out.insert(0, ledger_message(CONTINUES))
    return out
