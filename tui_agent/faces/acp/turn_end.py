"""How a turn ended, in the protocol's words: a `StopReason`, or a JSON-RPC error for a turn that failed.

Why its own module: the schema's stop reasons each promise the client something, and the engine's
`TurnEnded` reasons do not map one to one:
- `end_turn`: the model answered (also after a tool the user denied: the turn ended as asked);
- `max_tokens`: the last answer was cut by the output limit (the API's `stop_reason`);
- `max_turn_requests`: the engine's call limit for one turn;
- `cancelled`: `session/cancel` (also when the turn's task was cancelled before its `TurnEnded`);
- `refusal`: "the agent refused to continue; the user prompt and everything after it won't be included in
  the next prompt" (the schema's words). That is exactly a turn the engine refused before the prompt joined
  the history (an empty prompt, a prompt that cannot fit the window): the client is told why in the text.
A turn that failed after its prompt joined the history (an API error, "prompt is too long" after the retry)
did not end: the client gets an error response to `session/prompt` (`-32603`, the error's one line as its
message, as the Claude adapter answers its SDK's errors), never `end_turn` with the error as answer text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from acp import RequestError

from tui_agent.core.agent.event_wire import WireView, read

TURN_FAILED = -32603


@dataclass
class TurnWatch:
    """Follows one turn's events; `history_before` is the history's length when the prompt was sent."""

    history_before: int
    started: bool = False  # the prompt joined the history (`TurnStarted`)
    answer_stop: str | None = None  # the API's stop_reason of the turn's last answer
    ended: WireView | None = None  # the turn's `TurnEnded`, as the wire has it

    def see(self, event: Any) -> None:
        """One engine event, read from its wire form (`core/agent/event_wire.py`): its kind and fields."""
        wire = read(event)
        if wire.kind in BY_KIND:
            BY_KIND[wire.kind](self, wire)

    def stop_reason(self, history_now: int) -> str:
        """The ACP stop reason; raises `RequestError` for a turn that failed with its prompt in the history."""
        ended = self.ended
        if ended is None or ended["reason"] == "cancelled":
            return "cancelled"
        if ended["reason"] == "max_turns":
            return "max_turn_requests"
        if ended["reason"] == "error":
            if not self.started or history_now <= self.history_before:  # the prompt never joined the history
                return "refusal"
            raise turn_failed(ended["error"] or "the turn failed")
        return "max_tokens" if self.answer_stop == "max_tokens" else "end_turn"

    def refusal_text(self) -> str | None:
        """What a refused turn says to the user (None: the turn was not refused)."""
        ended = self.ended
        return ended["error"] if ended is not None and ended["reason"] == "error" else None


def _started(watch: TurnWatch, _: WireView) -> None:
    watch.started = True


def _answered(watch: TurnWatch, event: WireView) -> None:
    watch.answer_stop = event["stop_reason"]


def _ended(watch: TurnWatch, event: WireView) -> None:
    watch.ended = event


# the event kinds a turn's end is read from (the wire's kind names: core/agent/event_wire.EVENTS)
BY_KIND: dict[str, Callable[[TurnWatch, WireView], None]] = {
    "TurnStarted": _started, "AssistantMessage": _answered, "TurnEnded": _ended}


def turn_failed(line: str) -> RequestError:
    """The error response of a failed turn: the engine's one line is the message (clients show it)."""
    return RequestError(TURN_FAILED, line, {"reason": line})


__all__ = ["TURN_FAILED", "TurnWatch", "turn_failed"]
