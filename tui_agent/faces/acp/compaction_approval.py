"""Approve before compacting, over ACP: the engine's question (`core/agent/approval.py`) as a permission request.

When approve-before-compacting is on (`/approve`, `--approve-compaction`, `COMPACT_APPROVE=1`) and the next
call would make a compaction event, the loop awaits the face's `ask_approval`. Here that is a
`session/request_permission` about a `think` tool call titled "Compact conversation?", whose text says what
the event does and the next request's size either way (the engine's own figures: the event's tokens before
and after, the ledger's window and the plan's mark), with three options: compact now, compact now and stop
asking, or postpone (this call is sent uncompacted; the engine still compacts a call that would not fit the
window, and says so). A permission response carries no text, so the edits are commands the editor already
lists: `/compact FOCUS` (a compaction now whose summary keeps what you name), `/summary edit TEXT` (the
summary before it is sent) and `/undo-compaction` (the event taken back); the question names them.

The card is closed by the turn's next event: the engine's line about a postponed call (an info notice,
yielded right after the answer) or, when approved, the compaction itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from acp import schema
from acp.helpers import text_block, tool_content

from tui_agent.core.agent.event_wire import read
from tui_agent.core.formats import fmt_tokens

if TYPE_CHECKING:
    from tui_agent.core.agent.call import CallPlan

TITLE = "Compact conversation?"
# (option id, label, ACP option kind, the engine's answer, whether asking stays on)
OPTIONS = (
    ("compact", "Compact now", "allow_once", "approve", True),
    ("compact_always", "Compact now, and stop asking", "allow_always", "approve", False),
    ("postpone", "Postpone: send this call uncompacted", "reject_once", "postpone", True),
)
STEERING = ("To steer it: postpone, then /compact FOCUS (the summary keeps what you name); after it, /summary edit "
            "TEXT rewrites its summary and /undo-compaction takes it back.")


def question(preview: "CallPlan", window: int) -> str:
    """The permission request's text: what the event does and the next request's size either way."""
    event = preview.plan.event
    assert event is not None  # only asked about a call that makes an event
    what = event.line().split(": ", 1)[-1]
    return (f"Compaction due at call #{preview.call} ({event.reason}): {what}.\n"
            f"Compact now: the next request is ≈{fmt_tokens(event.tokens_after)} tok of the {fmt_tokens(window)} "
            f"window. Postpone: this call is sent uncompacted, ≈{fmt_tokens(event.tokens_before)} tok; the next "
            f"call asks again.\n{STEERING}")


@dataclass
class AskedCard:
    """A compaction question the client answered; its card is closed by the turn's next event."""

    tool_call_id: str
    answer: str
    call: int

    def closing(self, event: Any) -> schema.ToolCallProgress:
        """The card's last update: the engine's line when it had one to say (a postponed call), else the
        approval (the compaction follows as its own update)."""
        wire = read(event)
        if wire.kind == "Notice" and wire["level"] == "info" and self.answer == "postpone":
            text = wire["text"]
        elif self.answer == "postpone":
            text = f"Postponed: call #{self.call} is sent uncompacted."
        else:
            text = f"Approved: call #{self.call} compacts now."
        return schema.ToolCallProgress(session_update="tool_call_update", tool_call_id=self.tool_call_id,
                                       status="completed", content=[tool_content(text_block(text))])


async def ask(conn: Any, session_id: str, tool_call_id: str, preview: "CallPlan", window: int) -> tuple[str, bool]:
    """Ask the client; returns the engine's answer ("approve" / "postpone") and whether to keep asking. A
    cancelled request (the turn is being cancelled) postpones: nothing is compacted on a maybe."""
    event = preview.plan.event
    assert event is not None
    meta = {"contextCompaction": {"version": 1, "trigger": "automatic", "preTokens": event.tokens_before,
                                  "postTokens": event.tokens_after},
            "tuiAgent": {"line": event.line(), "call": preview.call, "approval": True}}
    text = question(preview, window)
    start = schema.ToolCallStart(session_update="tool_call", tool_call_id=tool_call_id, title=TITLE, kind="think",
                                 status="pending", content=[tool_content(text_block(text))], field_meta=meta)
    await conn.session_update(session_id=session_id, update=start)
    options = [schema.PermissionOption(option_id=option_id, name=name, kind=kind)  # type: ignore[arg-type]
               for option_id, name, kind, _, _ in OPTIONS]
    card = schema.ToolCallUpdate(tool_call_id=tool_call_id, title=TITLE, kind="think", status="pending",
                                 content=[tool_content(text_block(text))], field_meta=meta)
    response = await conn.request_permission(options=options, session_id=session_id, tool_call=card)
    chosen = getattr(response.outcome, "option_id", None)
    return next(((answer, keep) for option_id, _, _, answer, keep in OPTIONS if option_id == chosen),
                ("postpone", True))


__all__ = ["OPTIONS", "TITLE", "AskedCard", "ask", "question"]
