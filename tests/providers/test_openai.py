"""The OpenAI-compatible provider driven by the real `openai` SDK against the fake chat completions server:
what only this provider does (message conversion both ways, stream assembly, `stream_options`).
The behaviour both providers share is in test_contract.py."""

from __future__ import annotations

from pathlib import Path

from tests.fakes.fake_anthropic import text, tool_use
from tests.providers.conftest import FAST_RETRY, collect, ended, run
from tui_agent.core.compaction import CompactOptions
from tui_agent.core.messages import tool_result_block, user_text
from tui_agent.core.providers.base import ModelRequest, StreamDone, StreamText
from tui_agent.core.providers.openai_provider import (
    OpenAIProvider,
    StreamAssembler,
    to_openai_messages,
    to_openai_tools,
)
from tui_agent.core.agent.session import Session
from tui_agent.core.tools import builtin_tools
from tui_agent.core.tools.base import ToolRegistry


def provider_for(fake, **kwargs) -> OpenAIProvider:
    options = {"api_key": "test-key", "base_url": fake.base_url, "model": "fake-chat",
               "context_window": 128_000, "max_output_tokens": 1024, "retry": FAST_RETRY}
    options.update(kwargs)
    return OpenAIProvider(**options)


def session_for(provider, workspace: Path, **kwargs) -> Session:
    return Session(provider, ToolRegistry(builtin_tools()), workspace=workspace, **kwargs)


def request(*messages, system: str = "be brief") -> ModelRequest:
    return ModelRequest(model="fake-chat", system=system, messages=list(messages) or [user_text("hi")],
                        tools=[], max_tokens=256)


# -- conversions (the seed's AC-M3 / AC-M4 / AC-M5, with its quirks fixed) -------------------------
def test_message_conversion_both_ways():
    assert to_openai_messages("", [user_text("hi")]) == [{"role": "user", "content": "hi"}]
    assert to_openai_messages("sys", [user_text("hi")])[0] == {"role": "system", "content": "sys"}
    history = [
        user_text("ping it"),
        {"role": "assistant", "content": [
            {"type": "text", "text": "Pinging."},
            {"type": "tool_use", "id": "call_1", "name": "Echo", "input": {"message": "ping"}},
        ]},
        {"role": "user", "content": [tool_result_block("call_1", "ping"), {"type": "text", "text": "and now?"}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "call_2", "name": "Echo", "input": {}}]},
        {"role": "user", "content": [tool_result_block("call_2", "boom", is_error=True)]},
    ]
    out = to_openai_messages("", history)
    assert out[1] == {"role": "assistant", "content": "Pinging.", "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "Echo", "arguments": '{"message": "ping"}'}}]}
    assert out[2] == {"role": "tool", "tool_call_id": "call_1", "content": "ping"}
    assert out[3] == {"role": "user", "content": "and now?"}
    assert out[4]["content"] is None
    assert out[5] == {"role": "tool", "tool_call_id": "call_2", "content": "Error: boom"}
    assert len(out) == 6


def test_tool_schemas_are_sent_whole():
    tools = to_openai_tools(ToolRegistry(builtin_tools()).schemas())
    by_name = {t["function"]["name"]: t["function"] for t in tools}
    assert set(by_name) >= {"Read", "Glob", "Grep"}
    for tool in ToolRegistry(builtin_tools()):
        assert by_name[tool.name]["parameters"] == tool.input_schema  # booleans, enums, arrays included
        assert by_name[tool.name]["description"] == tool.description


class _Obj:
    def __init__(self, **kw):
        self.__dict__.update(kw)


def _chunk(content=None, calls=None, finish=None):
    delta = _Obj(content=content, tool_calls=calls)
    return _Obj(choices=[_Obj(delta=delta, finish_reason=finish)], usage=None)


def test_assembler_joins_text_and_fragmented_tool_calls():
    a = StreamAssembler()
    assert [a.feed(_chunk("你")), a.feed(_chunk("好")), a.feed(_chunk(finish="stop"))] == ["你", "好", ""]
    assert a.message() == {"role": "assistant", "content": [{"type": "text", "text": "你好"}]}
    b = StreamAssembler()
    b.feed(_chunk("Let me echo.", [_Obj(index=0, id="call_1", function=_Obj(name="Echo", arguments='{"message":'))]))
    b.feed(_chunk(None, [_Obj(index=0, id=None, function=_Obj(name=None, arguments='"hi"}'))]))
    b.feed(_chunk(finish="tool_calls"))
    assert b.message()["content"] == [
        {"type": "text", "text": "Let me echo."},  # the seed dropped this text
        {"type": "tool_use", "id": "call_1", "name": "Echo", "input": {"message": "hi"}},
    ]
    assert b.stop_reason() == "tool_use"


# -- against the fake server -----------------------------------------------------------------------
async def test_streams_text_and_usage(fake_openai):
    fake_openai.cached_tokens = 6
    fake_openai.replies = [text("Hello from the compatible endpoint.")]
    provider = provider_for(fake_openai)
    items = await collect(provider.stream(request()))
    deltas = [i.text for i in items if isinstance(i, StreamText)]
    assert len(deltas) > 3 and "".join(deltas) == "Hello from the compatible endpoint."
    done = items[-1]
    assert isinstance(done, StreamDone) and done.stop_reason == "end_turn"
    assert done.usage.cache_read_input_tokens == 6 and done.usage.input_tokens > 0 and done.usage.output_tokens == 7
    body = fake_openai.chat_requests[0]["body"]
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert body["messages"][0] == {"role": "system", "content": "be brief"}
    assert fake_openai.chat_requests[0]["headers"]["authorization"] == "Bearer test-key"
    await provider.aclose()


async def test_real_token_limit_recovers_with_one_rejection(fake_openai, tmp_path):
    from tests.fakes.fake_anthropic import text as say

    for i in range(4):
        (tmp_path / f"big_{i}.txt").write_text("\n".join(f"row {n} " + "q" * 70 for n in range(500)))

    def model(body):
        done = sum(1 for m in body["messages"] if m["role"] == "tool")
        highest = max([int(c["id"].rsplit("_", 1)[1]) for m in body["messages"] for c in m.get("tool_calls") or []],
                      default=-1)
        index = highest + 1
        if index >= 4:
            return say(f"read {done} visible results")
        return tool_use("Read", {"file_path": f"big_{index}.txt"}, f"call_read_{index}")

    fake_openai.model = model
    fake_openai.token_limit = 30_000
    provider = provider_for(fake_openai, context_window=60_000)
    session = session_for(provider, tmp_path, compact=CompactOptions(max_tool_result_chars=1_000_000))
    events = await run(session, "read the big files")
    assert ended(events).reason == "completed", ended(events)
    assert len(fake_openai.rejected) == 1


async def test_server_without_stream_options_still_works(fake_openai):
    fake_openai.reject_stream_options = True
    fake_openai.replies = [text("old server")]
    items = await collect(provider_for(fake_openai).stream(request()))
    assert isinstance(items[-1], StreamDone) and items[-1].message["content"][0]["text"] == "old server"
    assert "stream_options" not in fake_openai.chat_requests[-1]["body"]


async def test_count_tokens_is_not_offered(fake_openai):
    assert await provider_for(fake_openai).count_tokens(request()) is None




async def test_an_error_object_mid_stream_keeps_the_partial_text(fake_openai, tmp_path):
    import json

    from tests.fakes.fake_openai import completion_chunks, data_line
    from tests.fakes.http import Reply
    from tui_agent.core.messages import protocol_errors

    chunks = completion_chunks(tool_use("Read", {"file_path": "x.txt"}, "call_half", say="Reading x.txt now."))
    cut = next(i for i, c in enumerate(chunks) if b"tool_calls" in c) + 1
    error = data_line({"error": {"message": "upstream overloaded", "type": "server_error"}})
    fake_openai.replies = [Reply(chunks=chunks[:cut] + [error]), text("fine")]
    session = session_for(provider_for(fake_openai), tmp_path)
    end = ended(await run(session, "read x.txt"))
    assert end.reason == "error" and "\n" not in end.error
    assert session.history[-1]["content"] == [{"type": "text", "text": "Reading x.txt now.\n\n[interrupted]"}]
    assert "tool_use" not in json.dumps(session.history)
    assert protocol_errors(session.history) == []
    assert ended(await run(session, "again")).reason == "completed"
