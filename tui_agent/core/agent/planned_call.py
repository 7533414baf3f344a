"""A turn's call planned and told: the one plan (`call.py`) with the summary tier's part done as the plan
asks, then reported (trace, `CompactionReported`, and the chat's line for an event).

Its own concept because the loop's phases (ask, take the answer, run the tools) do not care how a plan's
summary gets written (in the background, inline before the call, or a ready draft swapped in at a major
event) nor in which words an event reaches a user with the panel folded; this module is both, and the
loop reads only the `CallPlan` it yields last. What it reads of the loop's configuration is a `PlanConfig`
(`loop.LoopConfig` is one).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, AsyncIterator, Protocol

from tui_agent.core import events as ev
from tui_agent.core import trace
from tui_agent.core.agent.answer_stream import usage_event
from tui_agent.core.agent.approval import Approver, ask_before_event
from tui_agent.core.agent.call import plan_call
from tui_agent.core.agent.summary_draft import run_summary
from tui_agent.core.cache_clock import went_cold
from tui_agent.core.compaction import CompactEvent, CompactPlan, CompactResult
from tui_agent.core.compaction.protocol import CompactorProtocol
from tui_agent.core.compaction.summary import summary_messages
from tui_agent.core.formats import plural
from tui_agent.core.messages import Message
from tui_agent.core.providers.base import Provider
from tui_agent.core.tools.base import ToolRegistry

if TYPE_CHECKING:
    from tui_agent.core.agent.summary_draft import BackgroundSummaries


class PlanConfig(Protocol):
    """What planning a call reads of the loop's configuration (`loop.LoopConfig` is one)."""

    @property
    def provider(self) -> Provider: ...

    @property
    def tools(self) -> ToolRegistry: ...

    @property
    def compactor(self) -> CompactorProtocol: ...

    @property
    def headless(self) -> bool: ...

    @property
    def summaries(self) -> BackgroundSummaries | None: ...

    @property
    def approve(self) -> Approver | None: ...

    def system(self) -> str: ...


async def planned_call(config: PlanConfig, history: list[Message], call: int, warm_since: float | None = None,
                     now: float | None = None, asked: CompactEvent | None = None) -> AsyncIterator[Any]:
    """The call's one plan (`plan_call`), with the summary tier's part done as the plan asks: started in
    the background, awaited (no background summaries), or a ready draft swapped in at a major event; then
    the plan is reported (trace, `CompactionReported`, an event's notice). Yields events, and the
    `CallPlan` last. A cache gone cold since the last request that touched it (`warm_since`, by the clock
    `now`) is told to the compactor first: the request is written again anyway, so an event costs nothing extra."""
    if went_cold(warm_since, config.provider.model, now) and hasattr(config.compactor, "cache_expired"):
        config.compactor.cache_expired()
    system = config.system()
    schemas = config.tools.schemas()
    compactor = config.compactor
    if config.approve is not None and (said := await ask_before_event(config.approve, compactor, config.provider,
                                                                      system, schemas, history, call)):
        yield ev.Notice(said, "info")
    planned = plan_call(compactor, config.provider, system, schemas, history, call, keep=True, asked=asked)
    if planned.plan.summary_requested and config.summaries is not None:
        config.summaries.start(compactor, config.provider, system, schemas, planned)
        yield ev.Notice(f"Summarising the {planned.plan.event.dropped if planned.plan.event else 0} dropped "
                        "messages in the background; this call does not wait (/summary shows the draft).", "info")
    elif planned.plan.summary_requested:
        async for event in summarise(compactor, config, system, schemas, call, history):
            if isinstance(event, CompactResult):
                planned = planned.with_result(event)
            else:
                yield event
    elif config.summaries is not None and planned.plan.event not in (None, asked) and planned.plan.event.major:
        recap = planned.plan.recap  # an event moves the prefix anyway: a ready draft joins now
        swapped = config.summaries.swap(compactor, history, call, recap.covers if recap else None)
        if swapped is not None:
            planned = planned.with_result(swapped)
    if config.summaries is not None:
        config.summaries.sent()
    plan = planned.plan
    if plan.changed:
        trace.trace("compact.run", **plan.trace_fields())
    if plan.event is not None:
        trace.trace("compact.event", call=call, kinds=",".join(plan.event.kinds),
                    reason=plan.event.reason, tokens=f"{plan.event.tokens_before}->{plan.event.tokens_after}")
    yield ev.CompactionReported(call, plan, len(history), planned.system_tokens, planned.tools_tokens,
                                planned.messages)
    if plan.event is not None and plan.event.major and plan.event is not asked:
        yield ev.Notice(event_notice(plan, headless=config.headless), "info")
    yield planned


async def summarise(compactor: CompactorProtocol, config: PlanConfig, system: str, schemas: list[dict[str, Any]], call: int,
                    history: list[Message], focus: str = "") -> AsyncIterator[Any]:
    """The summary tier's call for this event: its events, then the plan with the summary in its recap."""
    before, dropped = compactor.summary_context()
    yield ev.Notice(f"Summarising the {plural(dropped, 'message')} compaction drops (one extra model call)…", "info")
    outcome = await run_summary(config.provider, system, schemas, summary_messages(before, dropped, focus))
    if outcome.usage is not None:
        u = outcome.usage
        yield usage_event(call, u, "summary")
    yield ev.SummaryWritten(call, outcome.text, outcome.error, dropped)
    if outcome.error:
        trace.trace("compact.summary", call=call, ok="false", error=outcome.error)
        yield ev.Notice(f"No summary: {outcome.error}. The recap still keeps the prompts and files.", "warning")
    else:
        trace.trace("compact.summary", call=call, ok="true", chars=len(outcome.text or ""))
    yield compactor.attach_summary(history, outcome.text, call)


TUI_HINT = " F2 shows what is sent."
TUI_DROP_HINT = " F2 shows what is sent; /compact summarises."
HEADLESS_HINT = " --print-outbound prints what is sent; TRACE=1 traces every call."


def event_notice(plan: CompactPlan, *, headless: bool = False) -> str:
    """The chat's line for a compaction event, so a user with the panel folded is never surprised.

    Headless (`-p`) has no panel, no F2 and no /compact: its line points at what it has."""
    event = plan.event
    assert event is not None
    what = []
    if event.dropped:
        what.append(f"{plural(event.dropped, 'older message')} {'is' if event.dropped == 1 else 'are'} no longer "
                    f"sent (a recap keeps {event.recap_prompts} of your prompts and "
                    f"{plural(event.recap_files, 'file path')})")
    if event.masked:
        what.append(f"{plural(event.masked, 'old tool result')} {'was' if event.masked == 1 else 'were'} "
                    "replaced by placeholders")
    if not what and set(event.kinds) <= {"pin", "exclude", "expand", "cut"}:  # the user's own change
        return (f"Your pins, excludes or expands apply from this call on: {event.line()}."
                + (HEADLESS_HINT if headless else TUI_HINT))
    if not what:
        what.append(event.line())
    tail = HEADLESS_HINT if headless else TUI_DROP_HINT if event.dropped else TUI_HINT
    return "Older turns are no longer sent in full: " + "; ".join(what) + f" ({event.reason})." + tail
