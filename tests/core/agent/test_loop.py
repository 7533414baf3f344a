"""The query loop and Session: dispatch, synthetic results, max turns, permissions, cancellation."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tui_agent.core import events as ev
from tui_agent.core.compaction.pricing import HUGE_RESULT_CHARS
from tests.core.helpers import unanswered_tool_uses
from tui_agent.core.messages import protocol_errors, tool_results
from tui_agent.core.access.gate import REJECT_MESSAGE, SKIPPED_MESSAGE, PermissionDecision, PermissionPolicy
from tui_agent.core.providers.base import ProviderError
from tui_agent.core.providers.scripted import ScriptedProvider, text_reply, tool_reply
from tui_agent.core.agent.session import Session
from tests.core.helpers import BoomTool, EchoTool, SlowTool, WriteLikeTool, registry
from tests.waiting import wait_until


def session_with(replies, *tools, **kwargs) -> Session:
    provider = ScriptedProvider(replies=list(replies))
    return Session(provider, registry(*(tools or (EchoTool(),))), Path("."), **kwargs)


async def collect(session: Session, prompt: str) -> list:
    return [event async for event in session.run_turn(prompt)]


def results_of(session: Session) -> list[dict]:
    return [b for m in session.history for b in tool_results(m)]


async def test_ac_q1_echo_round_trip_then_text():
    session = session_with([tool_reply("Echo", {"message": "hello"}, "t1"), text_reply("done")])
    events = await collect(session, "say hello")
    assert events[-1] == ev.TurnEnded("completed", 2)
    assert results_of(session) == [{"type": "tool_result", "tool_use_id": "t1", "content": "hello"}]
    assert session.history[-1]["content"][0]["text"] == "done"
    assert protocol_errors(session.history) == []


async def test_text_that_comes_with_tool_calls_is_kept():
    session = session_with([tool_reply("Echo", {"message": "x"}, "t1", text="Let me check."), text_reply("ok")])
    events = await collect(session, "go")
    assert session.history[1]["content"][0] == {"type": "text", "text": "Let me check."}
    assert "".join(e.text for e in events if isinstance(e, ev.TextDelta)) == "Let me check.ok"


async def test_ac_q4_max_turns_stops_after_the_tool_results():
    looping = [tool_reply("Echo", {"message": str(i)}, f"t{i}") for i in range(5)]
    session = session_with(looping, max_turns=1)
    events = await collect(session, "loop")
    assert events[-1].reason == "max_turns" and events[-1].turn_calls == 1
    assert len(session.provider.requests) == 1
    assert unanswered_tool_uses(session.history) == []


async def test_ac_q5_system_prompt_is_forwarded_every_call():
    session = session_with([tool_reply("Echo", {"message": "x"}, "t1"), text_reply("ok")],
                           system_prompt_builder=lambda s: "SYSTEM RULES")
    await collect(session, "go")
    assert [r.system for r in session.provider.requests] == ["SYSTEM RULES", "SYSTEM RULES"]
    session.clear()
    session.provider.replies.append(text_reply("again"))
    await collect(session, "go")
    assert session.provider.requests[-1].system == "SYSTEM RULES"


async def test_ac_q6_trace_turn_start_and_end(monkeypatch, capsys):
    monkeypatch.setenv("TRACE", "1")
    await collect(session_with([text_reply("hi")]), "go")
    err = capsys.readouterr().err
    assert "[trace] query.turn_start turn=1" in err
    assert "[trace] query.turn_end reason=completed turn=1" in err
    assert "[trace] api.request messages=1 tools=1 model=scripted" in err


async def test_unknown_tool_malformed_input_and_exceptions_become_error_results():
    reply = [
        {"type": "tool_use", "id": "u1", "name": "NoSuchTool", "input": {}},
        {"type": "tool_use", "id": "u2", "name": "Echo", "input": {"message": 42}},
        {"type": "tool_use", "id": "u3", "name": "Echo", "input": {}},
        {"type": "tool_use", "id": "u4", "name": "Boom", "input": {}},
        {"type": "tool_use", "id": "u5", "name": "Echo", "input": "not an object"},
    ]
    session = session_with([reply, text_reply("sorry")], EchoTool(), BoomTool())
    events = await collect(session, "go")
    assert events[-1].reason == "completed"
    results = {b["tool_use_id"]: b for b in results_of(session)}
    assert all(b.get("is_error") for b in results.values())
    assert "Unknown tool: NoSuchTool" in results["u1"]["content"]
    assert "message" in results["u2"]["content"] and "string" in results["u2"]["content"]
    assert "'message' is a required property" in results["u3"]["content"]
    assert results["u4"]["content"] == "RuntimeError: kaboom"
    assert "expected an object" in results["u5"]["content"]
    assert protocol_errors(session.history) == []


async def test_all_results_of_a_round_go_in_one_user_message_in_block_order():
    reply = [{"type": "tool_use", "id": f"p{i}", "name": "Echo", "input": {"message": str(i)}} for i in range(3)]
    session = session_with([reply, text_reply("ok")])
    await collect(session, "go")
    assert [b["tool_use_id"] for b in session.history[2]["content"]] == ["p0", "p1", "p2"]


async def test_read_only_tools_run_concurrently_others_in_order():
    slow = SlowTool(read_only=True)
    reply = [{"type": "tool_use", "id": f"s{i}", "name": "Slow", "input": {"seconds": 0.05, "tag": str(i)}}
             for i in range(3)]
    session = session_with([reply, text_reply("ok")], slow)
    await collect(session, "go")
    assert slow.log[:3] == ["start 0", "start 1", "start 2"]

    serial = SlowTool(read_only=False)
    session = session_with([reply, text_reply("ok")], serial, permissions=PermissionPolicy(mode="allow_all"))
    await collect(session, "go")
    assert serial.log == ["start 0", "end 0", "start 1", "end 1", "start 2", "end 2"]


async def test_ac_e1_two_turns_accumulate_without_duplicates():
    session = session_with([tool_reply("Echo", {"message": "a"}, "t1"), text_reply("I am Alice's agent"),
                            text_reply("You are Alice")])
    await collect(session, "My name is Alice")
    await collect(session, "What is my name?")
    roles = [m["role"] for m in session.history]
    assert roles == ["user", "assistant", "user", "assistant", "user", "assistant"]
    # The second model call of turn 1 saw the tool round exactly once (the seed sent it twice).
    second = session.provider.requests[1].messages
    assert [m["role"] for m in second] == ["user", "assistant", "user"]
    assert len(session.provider.requests[2].messages) == 5


async def test_ac_e2_clear_empties_history():
    session = session_with([text_reply("hi")])
    await collect(session, "hello")
    session.clear()
    assert session.history == []


async def test_headless_denial_goes_back_to_the_model_which_answers():
    """Headless has nobody to ask: the denial is the call's result, the model answers, the turn says
    "denied" (so the exit code does). Before issue 9 the turn stopped without telling the model."""
    touch = WriteLikeTool()
    reply = [{"type": "tool_use", "id": "w1", "name": "Touch", "input": {"file_path": "a.txt"}},
             {"type": "tool_use", "id": "w2", "name": "Echo", "input": {"message": "after"}}]
    session = session_with([reply, text_reply("I could not write a.txt.")], touch, EchoTool(),
                           permissions=PermissionPolicy.headless(allow_write=False))
    events = await collect(session, "write")
    assert events[-1].reason == "denied"
    assert touch.calls == 0
    results = results_of(session)
    assert results[0]["is_error"] and "ALLOW_WRITE" in results[0]["content"]
    assert results[1] == {"type": "tool_result", "tool_use_id": "w2", "content": "after"}  # gated on its own
    assert len(session.provider.requests) == 2
    assert session.provider.requests[1].messages[-1]["content"][0] == results[0]
    assert session.history[-1]["content"] == [{"type": "text", "text": "I could not write a.txt."}]
    assert protocol_errors(session.history) == []


async def test_interactive_denial_stops_the_round_and_skips_the_rest():
    touch = WriteLikeTool()
    reply = [{"type": "tool_use", "id": "w1", "name": "Touch", "input": {"file_path": "a.txt"}},
             {"type": "tool_use", "id": "w2", "name": "Echo", "input": {"message": "after"}}]
    session = session_with([reply, text_reply("never")], touch, EchoTool())
    async for event in session.run_turn("write"):
        if isinstance(event, ev.PermissionRequested):
            event.decision.set_result(PermissionDecision.DENY)
        ended = event
    assert ended.reason == "denied" and touch.calls == 0
    results = results_of(session)
    assert results[0]["content"] == REJECT_MESSAGE
    assert results[1]["is_error"] and results[1]["content"] == SKIPPED_MESSAGE
    assert len(session.provider.requests) == 1
    assert protocol_errors(session.history) == []


@pytest.mark.parametrize("answer", list(PermissionDecision))
async def test_interactive_permission_request(answer):
    touch = WriteLikeTool()
    replies = [tool_reply("Touch", {"file_path": "a.txt"}, "w1"), text_reply("ok"),
               tool_reply("Touch", {"file_path": "a.txt"}, "w2"), text_reply("ok")]
    session = session_with(replies, touch)
    asked = 0
    for prompt in ("one", "two"):
        async for event in session.run_turn(prompt):
            if isinstance(event, ev.PermissionRequested):
                asked += 1
                assert event.tool_name == "Touch" and event.summary == "a.txt"
                event.decision.set_result(answer)
            if isinstance(event, ev.TurnEnded):
                ended = event
        if answer is PermissionDecision.DENY:
            break
    if answer is PermissionDecision.DENY:
        assert ended.reason == "denied" and touch.calls == 0
        assert results_of(session)[0]["content"] == REJECT_MESSAGE
    elif answer is PermissionDecision.ALLOW_ONCE:
        assert asked == 2 and touch.calls == 2
    else:
        assert asked == 1 and touch.calls == 2  # remembered for the session
    assert protocol_errors(session.history) == []


async def test_cancel_mid_tool_leaves_valid_history_and_session_usable():
    slow = SlowTool()
    reply = [{"type": "tool_use", "id": "s1", "name": "Slow", "input": {"seconds": 0.01, "tag": "a"}},
             {"type": "tool_use", "id": "s2", "name": "Slow", "input": {"seconds": 30, "tag": "b"}}]
    session = session_with([reply, text_reply("after")], slow, permissions=PermissionPolicy(mode="allow_all"))
    slow.read_only = False  # run in order, so s1 finishes before s2 hangs

    async def run():
        async for _ in session.run_turn("go"):
            pass

    task = asyncio.create_task(run())
    await wait_until(lambda: "start b" in slow.log, what="the slow tool to start", task=task)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    results = {b["tool_use_id"]: b for b in results_of(session)}
    assert results["s1"]["content"] == "slept a" and not results["s1"].get("is_error")
    assert results["s2"]["is_error"] and "Cancelled" in results["s2"]["content"]
    assert protocol_errors(session.history) == []
    events = await collect(session, "next")
    assert events[-1].reason == "completed"
    assert protocol_errors(session.provider.requests[-1].messages) == []


async def test_cancel_mid_stream_keeps_partial_text_marked():
    provider = ScriptedProvider(replies=[text_reply("one two three four five six"), text_reply("fine")], delay=0.05)
    session = Session(provider, registry(EchoTool()), Path("."))
    seen: list[str] = []

    async def run():
        async for event in session.run_turn("go"):
            if isinstance(event, ev.TextDelta):
                seen.append(event.text)

    task = asyncio.create_task(run())
    await wait_until(lambda: len(seen) >= 2, what="two text deltas", task=task)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert session.history[-1]["role"] == "assistant"
    assert session.history[-1]["content"][0]["text"].startswith("one two")
    assert session.history[-1]["content"][0]["text"].endswith("[interrupted]")
    events = await collect(session, "again")
    assert events[-1].reason == "completed"


async def test_provider_error_ends_turn_with_message_and_keeps_partial():
    session = session_with([ProviderError("connection dropped", partial_text="half an ans"), text_reply("ok")])
    events = await collect(session, "go")
    assert events[-1] == ev.TurnEnded("error", 1, "connection dropped")
    assert session.history[-1]["content"][0]["text"].startswith("half an ans")
    events = await collect(session, "retry")
    assert events[-1].reason == "completed"


async def test_every_call_reports_compaction():
    # one huge result (issue 17: below the high mark only such a result is cut on read; 9,000 chars was
    # enough under the old cut-always rule)
    session = session_with([tool_reply("Echo", {"message": "x" * (HUGE_RESULT_CHARS + 1000)}, "t1"),
                            tool_reply("Echo", {"message": "y"}, "t2"), text_reply("ok")])
    reports = [e for e in await collect(session, "go") if isinstance(e, ev.CompactionReported)]
    assert [r.call for r in reports] == [1, 2, 3]
    assert [sum(len(per) for i, per in r.plan.cuts.items() if r.plan.is_sent(i)) for r in reports] == [0, 0, 1]
    assert reports[-1].history_len == 5
    assert reports[-1].outbound_tokens > reports[-1].plan.message_tokens_after


def test_core_never_imports_textual_or_rich():
    import subprocess
    import sys

    code = (
        "import sys, pkgutil, importlib, tui_agent.core, tui_agent.compact, tui_agent.faces.headless\n"
        "for m in pkgutil.walk_packages(tui_agent.core.__path__, 'tui_agent.core.'):\n"
        "    importlib.import_module(m.name)\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'textual', 'rich'}))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


async def test_real_usage_calibrates_the_next_estimate():
    from tui_agent.core.providers.base import UsageInfo

    session = session_with([tool_reply("Echo", {"message": "x" * 400}, "t1"), text_reply("ok")])
    session.provider.usage = UsageInfo(input_tokens=0, output_tokens=5, cache_read_input_tokens=0)
    events = await collect(session, "go")
    first = next(e for e in events if isinstance(e, ev.CompactionReported))
    assert session.calibration == 1.0  # input 0: nothing learned
    session.provider.usage = UsageInfo(input_tokens=first.outbound_tokens, cache_read_input_tokens=first.outbound_tokens)
    session.provider.replies.append(text_reply("again"))
    events = await collect(session, "more")
    last = [e for e in events if isinstance(e, ev.CompactionReported)][-1]
    assert session.calibration == pytest.approx(2 * first.outbound_tokens / last.outbound_tokens)
    assert session.calibrated(100) == round(100 * session.calibration)


async def test_blank_partial_text_is_not_kept_on_cancel():
    """Only whitespace was streamed when Esc came: nothing enters history (a blank block is a 400)."""
    provider = ScriptedProvider(replies=[text_reply("\n\n   then words that never come"), text_reply("fine")],
                                delay=0.01)
    session = Session(provider, registry(EchoTool()), Path("."))
    seen: list[str] = []

    async def run():
        async for event in session.run_turn("go"):
            if isinstance(event, ev.TextDelta):
                seen.append(event.text)
                asyncio.current_task().cancel()  # lands while the loop awaits the next chunk

    task = asyncio.create_task(run())
    with pytest.raises(asyncio.CancelledError):
        await task
    assert seen == ["\n\n   "]
    assert [m["role"] for m in session.history] == ["user"]
    assert ended_reason(await collect(session, "again")) == "completed"
    assert protocol_errors(session.provider.requests[-1].messages) == []


def ended_reason(events: list) -> str:
    assert isinstance(events[-1], ev.TurnEnded)
    return events[-1].reason


async def test_a_blank_prompt_never_enters_the_history(tmp_path: Path) -> None:
    provider = ScriptedProvider(replies=[text_reply("hello")])
    session = Session(provider=provider, tools=registry(), workspace=tmp_path)
    events = [e async for e in session.run_turn(" \r\n\t")]
    assert isinstance(events[-1], ev.TurnEnded) and events[-1].reason == "error" and "empty" in events[-1].error
    assert session.history == [] and provider.requests == []
