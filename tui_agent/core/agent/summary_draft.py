"""The summary tier without the wait: the summary is written in the background and swapped in later.

A drop event that asks for a summary (or `/compact`) used to make the turn wait for an extra model call
before the real one. Now the call goes out at once with the deterministic recap, the summary call runs
as a background task beside the conversation, and its text becomes a *draft* the user can read and edit
(`Session.summary_draft()`, `Session.edit_summary_draft(text)`, `/summary`). The draft is swapped into
the recap at a turn boundary (at once when it is ready between turns, else when the turn ends) or at a
major compaction event mid-turn (the only times the request may change without a cache rewrite of its
own), and only while it still covers what the recap covers: a later drop makes it stale (that event asks
for a summary of its own). Until the next call sends it ("attached"), an edit replaces it in the recap. The summary call's usage is told like any
other (`Usage(purpose="summary")`), so its cost reaches the usage history, the journal and the budget
ledger.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Literal

from tui_agent.core import events as ev
from tui_agent.core import trace
from tui_agent.core.agent.answer_stream import usage_event
from tui_agent.core.compaction.summary import summary_messages
from tui_agent.core.formats import plural
from tui_agent.core.messages import Message, clean_message, text_of, tool_uses
from tui_agent.core.providers.base import ModelRequest, StreamDone

if TYPE_CHECKING:
    from tui_agent.core.agent.call import CallPlan
    from tui_agent.core.compaction.plan import CompactResult
    from tui_agent.core.compaction.protocol import CompactorProtocol
    from tui_agent.core.providers.base import Provider

DraftState = Literal["writing", "ready", "attached", "failed", "used", "stale"]


MAX_SUMMARY_TOKENS = 2_000  # a summary call's answer: a few paragraphs


@dataclass(frozen=True)
class SummaryOutcome:
    text: str | None
    error: str | None = None
    usage: Any = None  # the provider's UsageInfo for the summary call, when it reports one


async def run_summary(provider: Any, system: str, tools: list[dict[str, Any]], messages: list[Message]) -> SummaryOutcome:
    """One summary call through the provider; every failure is an outcome, never an exception."""
    request = ModelRequest(model=provider.model, system=system, messages=[clean_message(m) for m in messages],
                           tools=tools, max_tokens=min(provider.max_output_tokens, MAX_SUMMARY_TOKENS))
    done = None
    try:
        async for item in provider.stream(request):
            if isinstance(item, StreamDone):
                done = item
    except Exception as error:  # noqa: BLE001 - a failed summary only counts towards the breaker
        return SummaryOutcome(None, str(error) or type(error).__name__)
    if done is None:
        return SummaryOutcome(None, "the summary call ended without a reply")
    if tool_uses(done.message):
        return SummaryOutcome(None, "the model called a tool instead of writing the summary", done.usage)
    text = text_of(done.message).strip()
    if not text:
        return SummaryOutcome(None, "the model's summary was empty", done.usage)
    return SummaryOutcome(text, None, done.usage)


@dataclass
class SummaryDraft:
    """One summary of the span an event dropped: being written, ready (maybe edited), used, or stale."""

    call: int  # the call whose event asked for it
    covers: int  # the recap's `covers` it was written for (history messages [start, covers) are behind it)
    dropped: int
    state: DraftState = "writing"
    text: str = ""
    error: str | None = None
    edited: bool = False

    def line(self) -> str:
        """One line for `/summary` and the panel."""
        what = {"writing": "being written in the background", "ready": "ready, swapped in at the next turn",
                "attached": "in the next request's recap (edit it before you send)",
                "failed": f"failed ({self.error})", "used": "sent in the recap",
                "stale": "stale (a later event dropped more)"}[self.state]
        edited = ", edited by you" if self.edited else ""
        return f"Summary draft of call {self.call} ({plural(self.dropped, 'message')} dropped): {what}{edited}."


class BackgroundSummaries:
    """Starts summary calls as tasks, keeps the newest draft, and hands it to the compactor when due.

    `emit` is the session's: events from the task (its usage, the written summary) reach every listener
    (journal, panel) as they would from a turn.
    """

    def __init__(self, emit: Callable[[Any], None], on_ready: Callable[[], None] = lambda: None) -> None:
        self.emit = emit
        self.on_ready = on_ready  # the session swaps a draft in at once when it is idle
        self.draft: SummaryDraft | None = None
        self.task: asyncio.Task | None = None

    def start(self, compactor: "CompactorProtocol", provider: "Provider", system: str, tools: list[dict[str, Any]],
              planned: "CallPlan", focus: str = "") -> SummaryDraft:
        """Begin the summary of `planned`'s event now (its context is taken now); the caller goes on."""
        self.cancel()
        before, dropped = compactor.summary_context()
        recap = planned.plan.recap
        draft = SummaryDraft(planned.call, recap.covers if recap is not None else 0, dropped)
        self.draft = draft
        messages = summary_messages(before, dropped, focus)
        self.task = asyncio.get_running_loop().create_task(self._write(draft, provider, system, tools, messages))
        trace.trace("compact.summary_start", call=planned.call, dropped=dropped)
        return draft

    async def _write(self, draft: SummaryDraft, provider: "Provider", system: str, tools: list[dict[str, Any]],
                     messages: list["Message"]) -> None:
        outcome = await run_summary(provider, system, tools, messages)
        if outcome.usage is not None:
            u = outcome.usage
            self.emit(usage_event(draft.call, u, "summary"))
        if draft.state != "writing":  # the user wrote it meanwhile, or it went stale
            return
        draft.text, draft.error = outcome.text or "", outcome.error
        draft.state = "ready" if outcome.text else "failed"
        trace.trace("compact.summary", call=draft.call, ok=str(outcome.error is None).lower())
        self.emit(ev.SummaryWritten(draft.call, outcome.text, outcome.error, draft.dropped))
        self.on_ready()

    async def wait(self) -> None:
        """Until the summary being written is done (tests, headless before it exits)."""
        if self.task is not None:
            await asyncio.shield(self.task)

    def edit(self, text: str) -> str | None:
        """The user's text becomes the draft (a summary still being written is stopped); None when done,
        else why not (one line)."""
        draft = self.draft
        if draft is None or draft.state in ("used", "stale"):
            return "No summary draft to edit: a compaction event with a summary makes one (/compact)."
        if not text.strip():
            return "The summary text is empty: nothing changed."
        if draft.state == "writing":
            self.cancel(keep=True)
        draft.text, draft.error, draft.edited, draft.state = text.strip(), None, True, "ready"
        return None

    def swap(self, compactor: "CompactorProtocol", history: list["Message"], call: int,
             covers: int | None) -> "CompactResult | None":
        """At a turn boundary or an event: put a ready draft into the recap (None: nothing to swap).

        `covers` is the recap the request holds now; a draft written for another one is stale.
        """
        draft = self.draft
        if draft is None or draft.state not in ("ready", "failed"):
            return None
        if draft.state == "failed":
            draft.state = "stale"
            compactor.attach_summary(history, None, call)  # the circuit breaker counts it
            return None
        if covers != draft.covers:
            draft.state = "stale"
            return None
        draft.state = "attached"
        return compactor.attach_summary(history, draft.text, call)

    def sent(self) -> None:
        """A call went out: an attached draft is now used (no longer editable)."""
        if self.draft is not None and self.draft.state == "attached":
            self.draft.state = "used"

    def cancel(self, keep: bool = False) -> None:
        """Stop a summary being written (`/clear`, exit, a newer event); `keep` leaves the draft."""
        task, self.task = self.task, None
        if task is not None and not task.done():
            task.cancel()
        if not keep and self.draft is not None and self.draft.state == "writing":
            self.draft.state = "stale"


__all__ = ["BackgroundSummaries", "SummaryDraft"]
