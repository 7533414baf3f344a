"""Approve before compacting: when the next call would make a compaction event, a face with
a user asks first — approve, edit (pin / exclude, then approve) or postpone (send this call uncompacted).

Why its own module: the loop only asks `ask_before_event` before it plans its real call. Nobody is asked
when nobody can answer: `-p`, ACP and `serve` without a user have no `approve` callback, so they never wait.
An event the user asked for (/compact) or the API forced ("prompt is too long") is not asked about, and a
postponed call whose request would not fit the window compacts anyway, said so in one line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Awaitable, Callable, Literal

from tui_agent.core.agent.call import CallPlan, plan_call
from tui_agent.core.formats import fmt_tokens

if TYPE_CHECKING:
    from tui_agent.core.compaction.protocol import CompactorProtocol
    from tui_agent.core.messages import Message
    from tui_agent.core.providers.base import Provider

Answer = Literal["approve", "postpone"]
Approver = Callable[[CallPlan], Awaitable[Answer]]
NOT_ASKED = ("drop", "summary", "reactive")  # /compact and "prompt is too long": decided already


def env_approve(environ: dict[str, str] | None = None) -> bool:
    """`COMPACT_APPROVE=1` (or true/yes/on): the approve-before-compacting mode starts on."""
    import os

    value = (environ if environ is not None else os.environ).get("COMPACT_APPROVE", "")
    return value.strip().lower() in ("1", "true", "yes", "on")


def due_event(planned: CallPlan) -> bool:
    """Whether this preview makes an event worth asking about (a major one: something leaves the request)."""
    event = planned.plan.event
    return event is not None and event.major


async def ask_before_event(approve: Approver, compactor: "CompactorProtocol", provider: "Provider", system: str,
                           schemas: list[dict], history: "list[Message]", call: int) -> str | None:
    """Ask `approve` when call `call` would make an event; returns a line for the chat (None: nothing to
    say). A postponed event is held for this call only; over the window it compacts anyway."""
    from tui_agent.core.compaction.compactor import Compactor  # (the engine loads after the first frame)

    if not isinstance(compactor, Compactor) or set(compactor.state.pending) & set(NOT_ASKED):
        return None
    preview = plan_call(compactor, provider, system, schemas, history, call, keep=False)
    if not due_event(preview):
        return None
    if await approve(preview) != "postpone":
        return None
    compactor.postpone()
    postponed = plan_call(compactor, provider, system, schemas, history, call, keep=False)
    fitted = postponed.plan.event
    if fitted is not None and fitted.major:  # over the window without it: the call must compact
        compactor.postpone(False)
        return (f"Call #{call} must compact: without it the request (≈{fmt_tokens(fitted.tokens_before)} tok) "
                "would not fit the window.")
    return (f"Compaction postponed for call #{call}: sent uncompacted (≈{fmt_tokens(postponed.plan.estimated_tokens)} "
            f"tok, over the {fmt_tokens(postponed.plan.high_tokens)} mark); the next call asks again.")


__all__ = ["Answer", "Approver", "ask_before_event", "due_event", "env_approve"]
