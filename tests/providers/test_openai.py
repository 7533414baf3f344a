"""The OpenAI-compatible provider driven by the real `openai` SDK against the fake chat completions server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fakes.fake_anthropic import text, tool_use
from tests.fakes.fake_openai import completion_chunks, data_line, error_reply, rate_limited, server_busy
from tests.fakes.http import Reply
from tests.providers.conftest import FAST_RETRY, collect, ended, notices, run
from tui_agent.core import events as ev
from tui_agent.core.compaction import CompactOptions
from tui_agent.core.messages import protocol_errors, tool_result_block, user_text
from tui_agent.core.providers.base import ModelRequest, StreamDone, StreamText
from tui_agent.core.providers.openai_provider import (
    OpenAIProvider,
    StreamAssembler,
    to_openai_messages,
    to_openai_tools,
)
from tui_agent.core.session import Session
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


async def test_tool_round_trip_through_session(fake_openai, tmp_path):
    (tmp_path / "notes.txt").write_text("gamma\n")
    fake_openai.replies = [tool_use("Read", {"file_path": "notes.txt"}, "call_r1", say="Reading."), text("It says gamma.")]
    session = session_for(provider_for(fake_openai), tmp_path)
    events = await run(session, "read notes.txt")
    assert ended(events).reason == "completed"
    assert session.history[1]["content"][0] == {"type": "text", "text": "Reading."}
    assert session.history[1]["content"][1]["input"] == {"file_path": "notes.txt"}
    second = fake_openai.chat_requests[1]["body"]["messages"]
    assert second[-2]["tool_calls"][0]["id"] == "call_r1" and second[-2]["content"] == "Reading."
    assert second[-1]["role"] == "tool" and "gamma" in second[-1]["content"]
    assert [e for e in events if isinstance(e, ev.Usage)]
    assert protocol_errors(session.history) == []


async def test_rate_limit_then_success_shows_a_retry_notice(fake_openai, tmp_path):
    fake_openai.replies = [rate_limited(), text("ok")]
    events = await run(session_for(provider_for(fake_openai), tmp_path), "hi")
    assert ended(events).reason == "completed"
    assert len(notices(events)) == 1 and "rate limited (429)" in notices(events)[0] and "retrying" in notices(events)[0]


async def test_server_busy_storm_ends_in_a_clear_error(fake_openai, tmp_path):
    fake_openai.replies = [server_busy() for _ in range(4)] + [text("back")]
    session = session_for(provider_for(fake_openai), tmp_path)
    events = await run(session, "hi")
    end = ended(events)
    assert end.reason == "error" and "(503)" in end.error and "gave up after 3 retries" in end.error
    assert len(fake_openai.chat_requests) == 4
    assert ended(await run(session, "again")).reason == "completed"


@pytest.mark.parametrize("breakage", ["drop", "malformed", "no_finish", "error_event"])
async def test_broken_stream_keeps_partial_text(fake_openai, tmp_path, breakage):
    chunks = completion_chunks(tool_use("Read", {"file_path": "x.txt"}, "call_half", say="Reading x.txt now."))
    cut = next(i for i, c in enumerate(chunks) if b"tool_calls" in c) + 1
    broken = {
        "drop": Reply(chunks=chunks, drop_after=cut),
        "malformed": Reply(chunks=chunks[:cut] + [b"data: {oops\n\n"] + chunks[cut:]),
        "no_finish": Reply(chunks=chunks[:cut]),
        "error_event": Reply(chunks=chunks[:cut] + [data_line({"error": {"message": "upstream overloaded", "type": "server_error"}})]),
    }[breakage]
    fake_openai.replies = [broken, text("fine")]
    session = session_for(provider_for(fake_openai), tmp_path)
    events = await run(session, "read x.txt")
    end = ended(events)
    assert end.reason == "error" and "\n" not in end.error
    assert session.history[-1]["content"] == [{"type": "text", "text": "Reading x.txt now.\n\n[interrupted]"}]
    assert "tool_use" not in json.dumps(session.history)
    assert protocol_errors(session.history) == []
    assert ended(await run(session, "again")).reason == "completed"


async def test_context_length_error_compacts_harder_once(fake_openai, tmp_path):
    too_long = ("This model's maximum context length is 65536 tokens. However, you requested 70000 tokens "
                "(70000 in the messages, 0 in the completion).")
    fake_openai.replies = [error_reply(400, too_long, code="context_length_exceeded"), text("done")]
    session = session_for(provider_for(fake_openai), tmp_path)
    events = await run(session, "hi")
    assert ended(events).reason == "completed"
    assert any("compacting harder" in n for n in notices(events))
    fake_openai.replies = [error_reply(400, too_long, code="context_length_exceeded")] * 3
    end = ended(await run(session, "again"))
    assert end.reason == "error" and "maximum context length" in end.error
    assert len(fake_openai.chat_requests) == 4


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


async def test_unauthorized_names_the_variable(fake_openai, tmp_path):
    events = await run(session_for(provider_for(fake_openai, api_key="wrong"), tmp_path), "hi")
    end = ended(events)
    assert end.reason == "error" and "OPENAI_API_KEY" in end.error and "401" in end.error
    assert len(fake_openai.chat_requests) == 1


async def test_server_without_stream_options_still_works(fake_openai):
    fake_openai.reject_stream_options = True
    fake_openai.replies = [text("old server")]
    items = await collect(provider_for(fake_openai).stream(request()))
    assert isinstance(items[-1], StreamDone) and items[-1].message["content"][0]["text"] == "old server"
    assert "stream_options" not in fake_openai.chat_requests[-1]["body"]


async def test_count_tokens_is_not_offered(fake_openai):
    assert await provider_for(fake_openai).count_tokens(request()) is None


async def test_cancelling_closes_the_http_stream(fake_openai):
    import asyncio
    import time

    fake_openai.replies = [Reply(chunks=completion_chunks(text("word " * 100)), delay=0.05)]
    provider = provider_for(fake_openai)
    got: list[str] = []

    async def consume() -> None:
        async for item in provider.stream(request()):
            if isinstance(item, StreamText):
                got.append(item.text)

    task = asyncio.create_task(consume())
    while not got:
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    deadline = time.monotonic() + 2
    while fake_openai.open_streams and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    assert fake_openai.open_streams == 0 and len(got) < 50
    await provider.aclose()
