"""The summary tier never blocks: the summary is written in the background while the conversation goes
on, swapped in at a turn boundary, readable and editable before a call sends it, and paid for in the
budget ledger."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import AsyncIterator

from tests.core.compaction.test_compactor import long_turn
from tui_agent.core import events as ev
from tui_agent.core.agent.budget import BudgetLedger
from tui_agent.core.compaction import CompactPolicy
from tui_agent.core.compaction.summary import is_summary_request
from tui_agent.core.messages import protocol_errors
from tui_agent.core.providers.base import ModelRequest, Provider, ProviderEvent, StreamDone, UsageInfo
from tui_agent.core.agent.session import Session
from tui_agent.core.tools import ToolRegistry

SUMMARY = "The user asked to port the project; src/f0..f11 were read."


@dataclass
class GatedModel(Provider):
    """Answers every call at once, except the summary call, which waits for `gate`."""

    model: str = "claude-sonnet-5-5"  # priced: the ledger can show what the summary cost
    gate: asyncio.Event = field(default_factory=asyncio.Event)
    requests: list[ModelRequest] = field(default_factory=list)

    async def stream(self, request: ModelRequest) -> AsyncIterator[ProviderEvent]:
        self.requests.append(request)
        if is_summary_request(request.messages):
            await self.gate.wait()
            text = SUMMARY
        else:
            text = f"answer {len(self.requests)}"
        usage = UsageInfo(input_tokens=1_000, output_tokens=50)
        yield StreamDone({"role": "assistant", "content": [{"type": "text", "text": text}]}, "end_turn", usage)


def gated_session(tmp_path) -> tuple[Session, GatedModel, BudgetLedger]:
    provider = GatedModel()
    session = Session(provider, ToolRegistry([]), tmp_path, compact_policy=CompactPolicy(summary=True, enabled=True))
    history = long_turn(12, size=3_000)
    history.append({"role": "assistant", "content": [{"type": "text", "text": "all read"}]})
    session.history.extend(history)
    ledger = BudgetLedger(model=provider.model, window=200_000, reserve=8_192)
    session.listeners.append(ledger.feed)
    return session, provider, ledger


def recap_text(session: Session) -> str:
    plan = session.plan_call()
    return plan.messages[plan.plan.recap_position]["content"][0]["text"]


async def test_the_conversation_goes_on_while_the_summary_is_written_then_it_joins_the_recap(tmp_path):
    session, provider, ledger = gated_session(tmp_path)
    note = await session.compact_now("the port")
    assert "background" in note and session.summary_draft().state == "writing"
    assert "Summary of that part" not in recap_text(session)  # the next call does not wait for it
    events = [e async for e in session.run_turn("go on meanwhile")]
    assert events[-1].reason == "completed", "a turn runs while the summary call is still out"
    assert session.summary_draft().state == "writing"
    provider.gate.set()
    draft = await session.wait_summary()
    assert draft.state == "attached" and draft.text == SUMMARY  # idle: swapped in at once
    assert f"Summary of that part:\n{SUMMARY}" in recap_text(session)
    # paid for, in the budget ledger as well as the usage history
    assert [u.purpose for u in session.usage_history].count("summary") == 1
    assert ledger.summary_tokens == 1_050 and ledger.summary_cost > 0 and "summaries 1.1k tok" in ledger.summary_line()
    assert protocol_errors(session.history) == []


async def test_the_user_reads_and_edits_the_draft_before_a_call_sends_it(tmp_path):
    session, provider, _ = gated_session(tmp_path)
    await session.compact_now()
    assert "being written" in session.summary_draft().line()
    told = session.edit_summary_draft("My own recap: port the project, files f0-f11 read.")
    assert told.startswith("Summary draft edited") and session.summary_draft().edited
    provider.gate.set()
    await session.wait_summary()  # the model's late summary does not overwrite the user's
    assert "My own recap: port the project" in recap_text(session) and SUMMARY not in recap_text(session)
    session.edit_summary_draft("Second thoughts: the port is half done.")
    assert "Second thoughts" in recap_text(session), "an attached draft can still be changed before it is sent"
    [e async for e in session.run_turn("next")]
    assert "Second thoughts" in str(provider.requests[-1].messages)
    assert session.summary_draft().state == "used"
    assert session.edit_summary_draft("too late").startswith("No summary draft to edit")
    assert session.edit_summary_draft("   ").startswith("No summary draft")  # nothing to edit either way


async def test_a_draft_for_a_span_a_later_event_dropped_more_of_is_stale(tmp_path):
    session, provider, _ = gated_session(tmp_path)
    await session.compact_now()
    draft = session.summary_draft()
    draft.covers -= 1  # as if written for an earlier recap
    provider.gate.set()
    await session.wait_summary()
    assert draft.state == "stale" and "Summary of that part" not in recap_text(session)


async def test_clear_and_close_stop_a_summary_being_written(tmp_path):
    session, provider, _ = gated_session(tmp_path)
    await session.compact_now()
    task = session.summaries.task
    session.clear()
    await asyncio.sleep(0)
    assert task.cancelled() or task.done()
    assert session.summary_draft() is None
    heard = []
    session.listeners.append(heard.append)
    session.history.extend(long_turn(12, size=3_000))
    session.history.append({"role": "assistant", "content": [{"type": "text", "text": "all read"}]})
    await session.compact_now()
    task = session.summaries.task
    await session.aclose()
    await asyncio.sleep(0)
    assert task.cancelled() and not any(isinstance(e, ev.SummaryWritten) for e in heard)
