"""Whichever client carries the call (issue 27): a failure after the answer came whole keeps it and ends
the turn as answered, with one warning line (`-p` exits 0); a usage the engine cannot read is a warning,
not a failed turn; a block the API would refuse never enters history; a paused turn goes on."""

from __future__ import annotations

import io
from typing import Any, AsyncIterator

from tui_agent.core import events as ev
from tui_agent.core.agent.answer_stream import MAX_CONTINUATIONS
from tui_agent.core.messages import protocol_errors
from tui_agent.core.providers.base import ModelRequest, Provider, ProviderEvent, StreamDone, StreamText, UsageInfo
from tui_agent.core.agent.session import Session
from tui_agent.core.tools import ToolRegistry
from tui_agent.faces.headless import consume


class Shapes(Provider):
    """Each call: the next scripted (blocks, stop reason, usage, what to raise after StreamDone)."""

    def __init__(self, script: list[tuple[list[dict[str, Any]], str, Any, Exception | None]]) -> None:
        super().__init__(model="shapes", name="shapes")
        self.script = list(script)
        self.requests: list[ModelRequest] = []

    async def stream(self, request: ModelRequest) -> AsyncIterator[ProviderEvent]:
        self.requests.append(request)
        content, stop, usage, late = self.script.pop(0)
        for block in content:
            if block.get("type") == "text":
                yield StreamText(block["text"])
        yield StreamDone({"role": "assistant", "content": content}, stop, usage)
        if late is not None:
            raise late


def session_with(tmp_path, script) -> Session:
    return Session(Shapes(script), ToolRegistry([]), tmp_path, system_prompt_builder=lambda s: "test")


def text(value: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": value}]


async def headless_turn(session: Session, prompt: str) -> tuple[ev.TurnEnded | None, str, str]:
    out, err = io.StringIO(), io.StringIO()
    ended = await consume(session, prompt, out, err)
    return ended, out.getvalue(), err.getvalue()


async def test_a_failure_after_the_whole_answer_keeps_it_and_the_turn_is_answered(tmp_path) -> None:
    session = session_with(tmp_path, [(text("The answer is 42."), "end_turn", None, ConnectionResetError("gone"))])
    ended, out, err = await headless_turn(session, "question")
    assert ended is not None and ended.reason == "completed"  # -p: exit 0
    assert "The answer is 42." in out
    warnings = [line for line in err.splitlines() if line.startswith("[warning]")]
    assert len(warnings) == 1 and "ConnectionResetError" in warnings[0] and "kept" in warnings[0]
    assert session.history[-1] == {"role": "assistant", "content": text("The answer is 42.")}


async def test_non_numeric_usage_after_the_answer_is_a_warning_not_a_failed_turn(tmp_path) -> None:
    usage = UsageInfo(input_tokens="12 tokens", output_tokens=3)  # type: ignore[arg-type]
    session = session_with(tmp_path, [(text("Shown in full."), "end_turn", usage, None)])
    ended, out, err = await headless_turn(session, "question")
    assert ended is not None and ended.reason == "completed"
    assert "Shown in full." in out and "usage" in err and "'12 tokens'" in err
    assert session.history[-1]["content"] == text("Shown in full.")
    assert session.usage_history == []


async def test_numbers_given_as_text_or_floats_are_read(tmp_path) -> None:
    usage = UsageInfo(input_tokens="120", output_tokens=3.0, cache_read_input_tokens=None)  # type: ignore[arg-type]
    session = session_with(tmp_path, [(text("ok"), "end_turn", usage, None)])
    ended, _, err = await headless_turn(session, "question")
    assert ended.reason == "completed" and "[warning]" not in err
    assert (session.usage_history[-1].input_tokens, session.usage_history[-1].output_tokens) == (120, 3)


async def test_an_unknown_block_never_enters_history_and_is_named_once(tmp_path) -> None:
    odd = {"type": "hologram_block", "data": "?"}
    session = session_with(tmp_path, [(text("Hi.") + [odd], "end_turn", None, None), ([odd], "end_turn", None, None)])
    _, _, err = await headless_turn(session, "one")
    assert err.count("hologram_block") == 1
    ended, _, _ = await headless_turn(session, "two")
    assert ended.reason == "completed"
    assert all(b.get("type") != "hologram_block" for m in session.history for b in m["content"])
    assert session.history[-1]["content"] == [{"type": "text", "text": "(no content)"}]  # never empty


async def test_a_paused_turn_is_sent_back_and_joined_into_one_answer(tmp_path) -> None:
    call = {"type": "server_tool_use", "id": "srv_1", "name": "web_search", "input": {"query": "q"}}
    result = {"type": "web_search_tool_result", "tool_use_id": "srv_1", "content": []}
    session = session_with(tmp_path, [
        (text("Looking.") + [call], "pause_turn", UsageInfo(100, 5), None),
        ([result] + text("Found it."), "end_turn", UsageInfo(140, 7), None),
    ])
    ended, out, _ = await headless_turn(session, "search")
    assert ended.reason == "completed" and "Looking." in out and "Found it." in out
    first, second = session.provider.requests
    assert second.messages == [*first.sent_messages, {"role": "assistant", "content": text("Looking.") + [call]}]
    assert session.history[1:] == [{"role": "assistant", "content": text("Looking.") + [call, result] + text("Found it.")}]
    assert protocol_errors(session.history) == []
    assert [(u.input_tokens, u.output_tokens) for u in session.usage_history] == [(100, 12)]  # the planned request's
    assert session.state.calls == 1


async def test_a_turn_paused_past_the_bound_stops_and_leaves_no_lone_server_call(tmp_path) -> None:
    script = [(text(f"Part {n}.") + [{"type": "server_tool_use", "id": f"srv_{n}", "name": "web_search", "input": {}}],
               "pause_turn", None, None) for n in range(MAX_CONTINUATIONS + 3)]
    session = session_with(tmp_path, script)
    ended, _, err = await headless_turn(session, "search")
    assert ended.reason == "completed"
    assert len(session.provider.requests) == MAX_CONTINUATIONS + 1
    assert "paused this answer" in err and "server_tool_use" in err
    assert [b["type"] for b in session.history[-1]["content"]] == ["text"] * (MAX_CONTINUATIONS + 1)
