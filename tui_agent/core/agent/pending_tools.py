"""What a turn has shown or started but not yet recorded in history, and how it is recorded when the turn
stops early (a cancel, an error, a consumer that stops listening): the loop's protocol safety in one place.
Every tool_use gets its tool_result (run, refused or "not run"), and a partial reply stays, marked.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tui_agent.core.agent.tool_round import ToolOutcome
from tui_agent.core.messages import Message, tool_result_block

CANCELLED_MESSAGE = "Cancelled: the user interrupted the turn before this tool finished."
INTERRUPTED_MARK = "\n\n[interrupted]"


@dataclass
class PendingTools:
    """What the turn has shown or started but not yet recorded in history.

    The `finally` of `loop.run_turn` answers it however the turn stops: an exception inside the loop, the
    task cancelled while the loop awaits (CancelledError), or while the *consumer* awaits its own work
    (the generator is then closed at a `yield`, with GeneratorExit). It is filled *before* each yield,
    so no yield point can leave a tool_use without its result.

    `anchor` is the history entry the repair must follow: when the generator is finalised late (closed
    by the garbage collector after the next turn already answered the tool calls), history has moved
    on and the repair must not append anything.
    """

    partial: list[str] = field(default_factory=list)
    uses: list[dict[str, Any]] = field(default_factory=list)
    finished: dict[str, ToolOutcome] = field(default_factory=dict)
    cut_off: set[str] = field(default_factory=set)  # the use the output limit cut off: answered, never run
    anchor: Message | None = None
    anchor_len: int = 0

    def watch(self, history: list[Message]) -> None:
        self.anchor = history[-1] if history else None
        self.anchor_len = len(history)

    def clear(self) -> None:
        self.partial = []
        self.uses = []
        self.finished = {}
        self.cut_off = set()

    def repair(self, history: list[Message], reason: str, partial_text: str | None = None) -> bool:
        """Record what is pending (once); False when there was nothing to do or history moved on."""
        text = "".join(self.partial) if partial_text is None else partial_text
        uses, finished = self.uses, self.finished
        self.clear()
        if not uses and not text.strip():
            return False
        if len(history) != self.anchor_len or (history and history[-1] is not self.anchor):
            return False
        repair_after_interrupt(history, text, uses, finished, reason)
        return True


def repair_after_interrupt(
    history: list[Message],
    partial: list[str] | str,
    pending_uses: list[dict[str, Any]],
    finished: dict[str, ToolOutcome],
    reason: str,
) -> None:
    """Leave a valid history after a cancel or an error: keep what was shown, answer every tool_use."""
    text = partial if isinstance(partial, str) else "".join(partial)
    if pending_uses:
        results = []
        for use in pending_uses:
            done = finished.get(use["id"])
            if done is not None:
                results.append(done.block(use["id"]))
            else:
                results.append(tool_result_block(use["id"], reason, True))
        history.append({"role": "user", "content": results})
    elif text.strip():
        # The partial reply stays visible and in history, marked as interrupted; no half tool_use enters.
        history.append({"role": "assistant", "content": [{"type": "text", "text": text + INTERRUPTED_MARK}]})
