"""Esc at every point of a turn leaves a valid history (issue 9, item 7).

One scripted turn is run once to number its events; then, for every event, the turn is cancelled there
in each way a face can cancel it:
- `consumer`: the face is busy with that event (awaiting its own work) when its task is cancelled, so
  the loop's generator is closed at its `yield` (GeneratorExit), not inside an await of its own;
- `inside`: the cancel arrives at the loop's next await (the provider stream, a tool, the permission
  future), so CancelledError is raised inside the generator;
- `unclosed`: like `consumer`, but the face iterates without closing the generator, which is then only
  finalised later by the garbage collector: the next turn must answer what was left open, and the late
  repair must not append anything once history moved on.
Everything is scripted (no sleeps, no clock): the same cancel point is hit on every run.
"""

from __future__ import annotations

import asyncio
import gc
from contextlib import aclosing
from pathlib import Path

import pytest

from tui_agent.core import events as ev
from tui_agent.core.messages import protocol_errors, tool_results, tool_uses
from tui_agent.core.access.gate import PermissionDecision
from tui_agent.core.providers.scripted import ScriptedProvider, text_reply
from tui_agent.core.agent.session import Session
from tests.core.helpers import EchoTool, WriteLikeTool, registry
from tests.waiting import wait_until

ROUND = [
    {"type": "text", "text": "Let me look at both."},
    {"type": "tool_use", "id": "e1", "name": "Echo", "input": {"message": "one"}},
    {"type": "tool_use", "id": "e2", "name": "Echo", "input": {"message": "two"}},
    {"type": "tool_use", "id": "w1", "name": "Touch", "input": {"file_path": "a.txt"}},
]


def scripted_session() -> Session:
    provider = ScriptedProvider(replies=[ROUND, text_reply("All done here."), text_reply("Next answer.")])
    return Session(provider, registry(EchoTool(), WriteLikeTool()), Path("."))


def answer(event: ev.EngineEvent) -> None:
    if isinstance(event, ev.PermissionRequested) and not event.decision.done():
        event.decision.set_result(PermissionDecision.ALLOW_ONCE)


async def full_turn() -> list[str]:
    session = scripted_session()
    names = []
    async for event in session.run_turn("go"):
        answer(event)
        names.append(type(event).__name__)
    assert names[-1] == "TurnEnded" and session.history[-1]["content"][0]["text"] == "All done here."
    return names


EVENTS = asyncio.run(full_turn())
POINTS = [f"{i}-{name}" for i, name in enumerate(EVENTS)]


async def cancel_at(session: Session, index: int, mode: str) -> None:
    busy = asyncio.Event()

    async def face() -> None:
        turn = session.run_turn("go")
        if mode == "consumer":
            turn = aclosing(turn)  # type: ignore[assignment]
            async with turn as events:  # type: ignore[attr-defined]
                await consume(events)
        else:
            await consume(turn)

    async def consume(events) -> None:
        seen = 0
        async for event in events:
            if seen == index:
                if mode == "inside":
                    asyncio.current_task().cancel()  # delivered at the loop's next await
                else:
                    busy.set()
                    await asyncio.Event().wait()  # the face's own work (a modal, a render)
            answer(event)
            seen += 1

    task = asyncio.create_task(face())
    if mode != "inside":
        await wait_until(busy.is_set, what=f"the face to be busy with event {index}", task=task)
        task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        pass


def check_results(session: Session) -> None:
    """Tools that finished keep their real result; the others say they were cancelled or skipped."""
    results = {b["tool_use_id"]: b for m in session.history for b in tool_results(m)}
    for use in (b for m in session.history for b in tool_uses(m)):
        result = results[use["id"]]
        if not result.get("is_error"):
            assert use["name"] in ("Echo", "Touch")
            assert result["content"] in ("one", "two", "touched a.txt")


@pytest.mark.parametrize("mode", ["consumer", "inside", "unclosed"])
@pytest.mark.parametrize("index", range(len(EVENTS)), ids=POINTS)
async def test_cancel_at_every_point_leaves_a_valid_history(index: int, mode: str) -> None:
    session = scripted_session()
    await cancel_at(session, index, mode)
    if mode != "unclosed":
        # Closed at once: the repair has already run, before any other turn.
        assert protocol_errors(session.history) == [], session.history
        check_results(session)
    events = []
    async for event in session.run_turn("next"):
        answer(event)
        events.append(event)
    assert events[-1].reason == "completed"
    for request in session.provider.requests:
        assert protocol_errors(request.messages) == [], request.messages
    # A generator finalised late (unclosed) must not append to a history that moved on.
    length = len(session.history)
    gc.collect()
    for _ in range(5):
        await asyncio.sleep(0)
    assert len(session.history) == length
    assert protocol_errors(session.history) == []
    check_results(session)
    assert session.history[-1]["content"][0]["text"] in ("Next answer.", "All done here.")


def test_the_scripted_turn_covers_every_kind_of_point() -> None:
    assert {"TurnStarted", "ModelCallStarted", "CompactionReported", "TextDelta", "AssistantMessage",
            "ToolStarted", "ToolFinished", "PermissionRequested", "ToolResultsAppended", "TurnEnded"} <= set(EVENTS)


async def test_a_history_left_with_an_unanswered_tool_use_is_answered_by_the_next_turn() -> None:
    session = scripted_session()
    session.history.extend([{"role": "user", "content": [{"type": "text", "text": "old"}]},
                            {"role": "assistant", "content": [ROUND[1]]}])
    assert protocol_errors(session.history) != []
    session.provider.replies = [text_reply("fine")]
    events = [event async for event in session.run_turn("again")]
    assert events[-1].reason == "completed"
    assert session.history[2]["content"][0]["tool_use_id"] == "e1" and session.history[2]["content"][0]["is_error"]
    assert protocol_errors(session.provider.requests[0].messages) == []
