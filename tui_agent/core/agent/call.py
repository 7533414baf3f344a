"""One call plan: the request a model call sends, planned in one place for every caller.

The loop's real call, the panel's "next call", `/compact`, `--print-outbound` and replay all ask
`plan_call()`, so what the panel shows as next is byte for byte what the loop sends, and every plan names
its call with the session's one counter (`Session.next_call`): the compactor never counts calls itself.
`keep=False` is a preview (no decision is kept); `keep=True` is the call itself.

The request carries `stable_prefix` from the plan (how many leading messages the previous request
already sent), so a provider places its cache breakpoints from the request alone, and the outbound-only
"N tokens left" notice (`core/agent/context_notice.py`) that the provider puts after them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from tui_agent.core.compaction.plan import CompactEvent, CompactPlan, CompactResult
from tui_agent.core.agent.context_notice import context_notice
from tui_agent.core.messages import Message, clean_message
from tui_agent.core.providers.base import ModelRequest
from tui_agent.core.tokens import text_tokens, tools_tokens

if TYPE_CHECKING:
    from tui_agent.core.compaction.protocol import CompactorProtocol
    from tui_agent.core.providers.base import Provider


@dataclass(frozen=True)
class CallPlan:
    """Call `call`'s compaction result and the request built from it (what is sent, exactly)."""

    call: int
    result: CompactResult
    request: ModelRequest
    system_tokens: int
    tools_tokens: int

    @property
    def plan(self) -> CompactPlan:
        return self.result.plan

    @property
    def messages(self) -> list[Message]:
        """The compacted outbound messages (before `clean_message`: what the panel's rows show)."""
        return self.result.messages

    def with_result(self, result: CompactResult) -> "CallPlan":
        """The same call with another result (the summary tier attached its recap)."""
        return replace(self, result=result, request=_request(self.request, result))


def plan_call(compactor: "CompactorProtocol", provider: "Provider", system: str, tools: list[dict[str, Any]],
              history: Sequence[Message], call: int, *, keep: bool, asked: CompactEvent | None = None) -> CallPlan:
    """Plan call `call` over `history` (never mutated); `keep` makes it the real call's plan. `asked`: the
    event `/compact` made for this call between turns: the call that sends it reports it (the journal's event
    field, the panel's list), as its own plan finds nothing more to change."""
    from tui_agent.core.compaction.strategies.server import edits_for  # (the engine: loaded by the first plan)

    system_tokens, tool_tokens = text_tokens(system), tools_tokens(tools)
    compactor.set_baseline(system_tokens + tool_tokens)
    result = compactor.compact(history, call) if keep else compactor.preview(history, call)
    thinking = provider.thinking_budget > 0
    empty = ModelRequest(model=provider.model, system=system, messages=[], tools=tools,
                         max_tokens=provider.max_output_tokens,
                         context_management=edits_for(compactor.mode, compactor, thinking))
    request = _request(empty, result)  # (the bytes are the compactor's alone: a resumed twin sends the same)
    if asked is not None and asked.call == call and result.plan.event is None:
        result = CompactResult(result.messages, replace(result.plan, event=asked))
    return CallPlan(call, result, request, system_tokens, tool_tokens)


def _request(base: ModelRequest, result: CompactResult) -> ModelRequest:
    messages = [clean_message(m) for m in result.messages]
    stable = max(0, min(result.plan.cached_messages, len(messages)))
    return replace(base, messages=messages, stable_prefix=stable, notice=context_notice(result.plan))


__all__ = ["CallPlan", "plan_call"]
