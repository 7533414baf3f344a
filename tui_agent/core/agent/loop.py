"""The query loop: compact the outbound copy → call the model → run the tools → repeat.

`run_turn` is an async generator of `EngineEvent`s that appends to the caller's history list (never
copies it, so nothing is duplicated between turns, and never edits or removes an entry). Whatever
happens (a refused tool, a malformed input, an error mid-stream, the task being cancelled mid-tool),
the history it leaves is valid for the Messages API: every tool_use has its tool_result in the next
message, and no half-built tool_use is ever appended. How a call is planned and its compaction told (the
summary tier's part, `CompactionReported`, the chat's line for an event) is `planned_call.py`.
"""

from __future__ import annotations

from contextlib import aclosing
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, AsyncGenerator, AsyncIterator, Callable

from tui_agent.core import events as ev
from tui_agent.core import trace
from tui_agent.core.agent.approval import Approver
from tui_agent.core.agent.call import CallPlan
from tui_agent.core.agent.planned_call import planned_call
from tui_agent.core.agent.too_long import fit_output_reserve, too_long_numbers
from tui_agent.core.agent.prompt_fit import prompt_refusal
from tui_agent.core.agent.answer_stream import stream_answer
from tui_agent.core.agent.server_watch import answered
from tui_agent.core.redact import redact, redact_event
from tui_agent.core.compaction import Compactor
from tui_agent.core.compaction.protocol import CompactorProtocol
from tui_agent.core.messages import (
    Message,
    answer_trailing_tool_uses,
    assemble_content,
    blocks,
    left_out_notice,
    round_trip_blocks,
    text_of,
    tool_use_ids,
    tool_uses,
    user_text,
)
from tui_agent.core.access.gate import PermissionPolicy
from tui_agent.core.providers.base import (
    PromptTooLongError,
    Provider,
    ProviderError,
    StreamDone,
    StreamNotice,
    StreamText,
)
from tui_agent.core.agent.pending_tools import CANCELLED_MESSAGE, PendingTools
from tui_agent.core.agent.tool_round import run_tools
from tui_agent.core.agent.loop_state import DEFAULT_MAX_TURNS, LoopState
from tui_agent.core.tools.base import ToolContext, ToolRegistry

if TYPE_CHECKING:
    from tui_agent.core.agent.summary_draft import BackgroundSummaries


@dataclass
class LoopConfig:
    provider: Provider
    tools: ToolRegistry
    system_prompt: str | Callable[[], str] = ""
    compactor: CompactorProtocol = field(default_factory=Compactor)  # v2, or v1 / seed / off (make_compactor)
    max_turns: int = DEFAULT_MAX_TURNS
    permissions: PermissionPolicy = field(default_factory=PermissionPolicy)
    # Headless has nobody to ask "what instead?": a denied call's result goes back to the model, which
    # answers (the turn still ends "denied"). Interactive stops the round and waits for the user.
    answer_denials: bool = False
    headless: bool = False  # `-p`: the chat lines name what `-p` has (flags, TRACE=1), not the panel's keys
    # The summary tier in the background (`core/agent/summary_draft.py`): the call never waits for a summary.
    # None: the summary is written inline before the call (the engine driven without a session).
    summaries: "BackgroundSummaries | None" = None
    approve: "Approver | None" = None  # approve-before-compacting (`approval.py`): a face with a user asks

    def system(self) -> str:
        return self.system_prompt() if callable(self.system_prompt) else self.system_prompt


@dataclass
class _Turn:
    """What the phases of one turn share: its calls so far, and what it has met."""

    calls: int = 0
    retried_too_long: bool = False  # a "prompt is too long" is retried once per turn
    denied: bool = False  # a call was denied (answered, in headless): the turn ends "denied"


async def run_turn(
    history: list[Message],
    prompt: str | None,
    config: LoopConfig,
    ctx: ToolContext,
    state: LoopState | None = None,
) -> AsyncGenerator[ev.EngineEvent, None]:
    """Run one agentic turn for `prompt` (None: continue from the history as it is): model call, tools,
    repeat, until an answer without tool calls, a denial, the call limit or an error ends it. Every event
    leaves with the server's text in it redacted (`core/redact.py`): a gateway's 401 that echoes the key
    reaches no face, log or journal (closing this closes the turn's own generator: its repair runs)."""
    async with aclosing(_turn(history, prompt, config, ctx, state)) as events:
        async for event in events:
            yield redact_event(event)


async def _turn(history: list[Message], prompt: str | None, config: LoopConfig, ctx: ToolContext,
                state: LoopState | None) -> AsyncGenerator[ev.EngineEvent, None]:
    state = state or LoopState()
    # A turn interrupted earlier may have left tool calls without results (its generator closed late,
    # or a history loaded from elsewhere): answer them first, or this request would be a 400.
    if answer_trailing_tool_uses(history, CANCELLED_MESSAGE) is not None:
        trace.trace("query.repaired", reason="unanswered_tool_use")
    if prompt is not None and not prompt.strip():
        # The API rejects a whitespace-only text block, and such a message would be dropped on resume:
        # an empty prompt never enters the history.
        yield ev.TurnEnded("error", 0, "The prompt is empty: type something to ask.")
        return
    if prompt is not None and (refused := prompt_refusal(config.compactor, config.system(), config.tools.schemas(),
                                                         prompt)):
        trace.trace("query.refused", reason="prompt_too_large", chars=len(prompt))
        yield ev.TurnEnded("error", 0, refused)  # before it joined the history: nothing to repair, nothing sent
        return
    if prompt is not None:
        history.append(user_text(prompt))
        yield ev.TurnStarted(prompt, len(history) - 1)
    turn, pending, retrying = _Turn(), PendingTools(), False
    try:
        while True:
            if not retrying:  # a retry after "prompt is too long" is the same call, not a new one
                turn.calls += 1
                state.calls += 1
                trace.trace("query.turn_start", turn=turn.calls)
                yield ev.ModelCallStarted(state.calls, turn.calls, config.provider.model)
            done: StreamDone | None = None
            async for item in _ask_model(history, config, state, turn, pending):
                if isinstance(item, StreamDone):
                    done = item
                else:
                    yield item
            retrying = done is None
            if done is None:
                continue
            async for item in _take_answer(done, history, config, state, pending):
                yield item
            ended: ev.TurnEnded | None = None
            async for item in _answer_tools(done, history, config, ctx, turn, pending):
                ended = item if isinstance(item, ev.TurnEnded) else ended
                yield item
            if ended is not None:
                return
            if turn.calls >= config.max_turns:
                trace.trace("query.turn_end", reason="max_turns", turn=turn.calls)
                yield ev.TurnEnded("max_turns", turn.calls)
                return
    except Exception as error:  # noqa: BLE001 - every failure ends the turn with a clear message
        partial_text = "".join(pending.partial) or getattr(error, "partial_text", "")
        pending.repair(history, f"Not run: {redact(str(error))}", partial_text)
        trace.trace("query.turn_end", reason="error", turn=turn.calls)
        line = str(error) or type(error).__name__
        if not isinstance(error, ProviderError):
            line = f"{type(error).__name__}: {line}"
        yield ev.TurnEnded("error", turn.calls, line)
    finally:
        # Cancelled (Esc), closed at a yield (GeneratorExit), or anything else that is not an Exception:
        # record what was shown and answer every tool call. No await and no yield here.
        if pending.repair(history, CANCELLED_MESSAGE):
            trace.trace("query.turn_end", reason="cancelled", turn=turn.calls)


async def _ask_model(history: list[Message], config: LoopConfig, state: LoopState, turn: _Turn,
                     pending: PendingTools) -> AsyncIterator[Any]:
    """One model call: its plan, then the streamed answer. Yields events, and the `StreamDone` last; ends
    without it when the call is to be made again (the prompt was too long: compacted harder, once)."""
    planned = None
    asked, state.asked_event = state.asked_event, None
    async for item in planned_call(config, history, state.calls, state.warm_since, state.clock(),
                                 asked if asked is not None and asked.call == state.calls else None):
        if isinstance(item, CallPlan):
            planned = item
        else:
            yield item
    assert planned is not None  # planned_call ends with the plan
    request = replace(planned.request, previous_message_id=state.cache.message_id)  # the cache diagnosis
    state.last_plan, state.last_request = planned.plan, request
    trace.trace("api.request", messages=len(request.messages), tools=len(request.tools), model=request.model)
    pending.clear()
    pending.watch(history)
    done: StreamDone | None = None
    state.sent_at = state.clock()  # the cache's time to live runs from here (the request's arrival)
    try:
        async for item in stream_answer(config.provider, request, pending.partial):
            if isinstance(item, StreamText):
                yield ev.TextDelta(item.text)
            elif isinstance(item, StreamNotice):
                yield ev.Notice(item.text, item.level)  # type: ignore[arg-type]
            elif isinstance(item, StreamDone):
                done = item
    except PromptTooLongError as error:
        if turn.retried_too_long or "".join(pending.partial).strip():
            raise
        turn.retried_too_long = True
        pending.clear()
        real, limit = too_long_numbers(str(error))
        lowered = fit_output_reserve(config.provider, config.compactor, limit)
        if lowered:
            yield ev.Notice(lowered, "warning")
        config.compactor.too_long(history, real, limit)
        yield ev.Notice(f"The model said the prompt is too long ({error}); compacting harder and retrying once.",
                        "warning")
        return
    if done is None:
        raise ProviderError("The model's stream ended without a complete message.",
                            partial_text="".join(pending.partial))
    yield done


async def _take_answer(done: StreamDone, history: list[Message], config: LoopConfig, state: LoopState,
                       pending: PendingTools) -> AsyncIterator[ev.EngineEvent]:
    """The answer joins the history (its tool calls pending until answered), then its usage is told."""
    # Any provider (scripted and demo included) gets the same guard: only blocks the API takes back
    # (others are named in a notice below), no blank text, unique ids.
    content, left_out = round_trip_blocks(blocks(done.message))
    message = {**done.message, "content": assemble_content(content, tool_use_ids(history))}
    history.append(message)
    uses = tool_uses(message)
    pending.clear()
    pending.watch(history)
    pending.uses = uses  # before any yield: a close at the next yield answers them
    # A reply cut off by the output limit may end in a tool call whose input was never finished (half-parsed
    # JSON: a timeout of 120000 read as 12): it is answered, never run. Read here, from the answer in hand.
    if done.stop_reason == "max_tokens" and uses and blocks(message)[-1].get("type") == "tool_use":
        pending.cut_off = {uses[-1]["id"]}
    if uses:
        trace.trace("api.assistant", kind="tool_use", tool_uses=len(uses))
    else:
        trace.trace("api.assistant", kind="text", text_len=len(text_of(message)))
    yield ev.AssistantMessage(message, len(history) - 1, done.stop_reason)
    if left_out:
        yield ev.Notice(left_out_notice(left_out, "the answer"), "warning")
    for event in answered(done, state.last_plan, config.compactor, config.provider, state, len(history) - 1):
        yield event  # the usage (or why it is unreadable), what the server did, why the cache missed


async def _answer_tools(done: StreamDone, history: list[Message], config: LoopConfig, ctx: ToolContext,
                        turn: _Turn, pending: PendingTools) -> AsyncIterator[ev.EngineEvent]:
    """Run the answer's tool calls and append their results; a `TurnEnded` when the turn ends here (an
    answer without tool calls, or a denial nobody answers)."""
    uses = pending.uses
    if not uses:
        pending.clear()
        ended = ev.TurnEnded("denied" if turn.denied else "completed", turn.calls)
        trace.trace("query.turn_end", reason=ended.reason, turn=turn.calls)
        yield ended
        return
    async for event in run_tools(uses, config, ctx, pending.finished, pending.cut_off):
        yield event
    finished = pending.finished
    denied = any(outcome.denied for outcome in finished.values())
    results = [finished[u["id"]].block(u["id"]) for u in uses]
    history.append({"role": "user", "content": results})
    pending.clear()
    yield ev.ToolResultsAppended(history[-1], len(history) - 1)
    if denied and not config.answer_denials:
        trace.trace("query.turn_end", reason="denied", turn=turn.calls)
        yield ev.TurnEnded("denied", turn.calls)
        return
    turn.denied = turn.denied or denied
