"""The Anthropic provider driven by the real `anthropic` SDK against the fake Messages API."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest

from tests.fakes.fake_anthropic import (
    error_reply,
    message_events,
    overloaded,
    rate_limited,
    reader_model,
    sse,
    text,
    tool_use,
)
from tests.fakes.http import Reply
from tests.providers.conftest import FAST_RETRY, collect, ended, notices, run
from tui_agent.core import events as ev
from tui_agent.core.compaction import CompactOptions
from tui_agent.core.messages import protocol_errors, user_text
from tui_agent.core.providers.anthropic_provider import AnthropicProvider
from tui_agent.core.providers.base import ModelRequest, StreamDone, StreamNotice, StreamText
from tui_agent.core.session import Session
from tui_agent.core.tools import builtin_tools
from tui_agent.core.tools.base import ToolRegistry

READ_SCHEMA_NAME = "Read"


def provider_for(fake, **kwargs) -> AnthropicProvider:
    options = {"api_key": "test-key", "base_url": fake.base_url, "model": "claude-fake-1",
               "context_window": 200_000, "max_output_tokens": 1024, "retry": FAST_RETRY}
    options.update(kwargs)
    return AnthropicProvider(**options)


def session_for(provider, workspace: Path, **kwargs) -> Session:
    return Session(provider, ToolRegistry(builtin_tools()), workspace=workspace, **kwargs)


def request(*messages, system: str = "be brief", tools=None) -> ModelRequest:
    return ModelRequest(model="claude-fake-1", system=system, messages=list(messages) or [user_text("hi")],
                        tools=tools or [], max_tokens=512)


async def test_streams_text_deltas_and_final_message(fake_anthropic):
    fake_anthropic.replies = [text("Hello there, how are you today?")]
    provider = provider_for(fake_anthropic)
    items = await collect(provider.stream(request()))
    deltas = [i.text for i in items if isinstance(i, StreamText)]
    assert len(deltas) > 3 and "".join(deltas) == "Hello there, how are you today?"
    done = items[-1]
    assert isinstance(done, StreamDone)
    assert done.message == {"role": "assistant", "content": [{"type": "text", "text": "Hello there, how are you today?"}]}
    assert done.stop_reason == "end_turn"
    assert done.usage is not None and done.usage.input_tokens > 0 and done.usage.output_tokens > 0
    sent = fake_anthropic.message_requests[0]
    assert sent["headers"]["authorization"] == "Bearer test-key"
    assert sent["body"]["stream"] is True and sent["body"]["max_tokens"] == 512
    await provider.aclose()


async def test_tool_round_trip_through_session(fake_anthropic, tmp_path):
    (tmp_path / "notes.txt").write_text("alpha\nbeta\n")
    fake_anthropic.replies = [
        tool_use("Read", {"file_path": "notes.txt"}, "toolu_1", say="Let me look."),
        text("The file says alpha and beta."),
    ]
    session = session_for(provider_for(fake_anthropic), tmp_path)
    events = await run(session, "what is in notes.txt?")
    assert ended(events).reason == "completed"
    finished = [e for e in events if isinstance(e, ev.ToolFinished)]
    assert len(finished) == 1 and "alpha" in str(finished[0].content) and not finished[0].is_error
    first = session.history[1]
    assert first["content"][0] == {"type": "text", "text": "Let me look."}  # text kept beside the tool_use
    assert first["content"][1] == {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": "notes.txt"}}
    second_body = fake_anthropic.message_requests[1]["body"]
    result = second_body["messages"][-1]["content"][0]
    assert result["type"] == "tool_result" and result["tool_use_id"] == "toolu_1" and "beta" in json.dumps(result)
    assert protocol_errors(session.history) == []
    assert [t["name"] for t in second_body["tools"]] == session.tools.names()
    await session.aclose()


async def test_usage_and_cache_fields_reach_usage_events(fake_anthropic, tmp_path):
    (tmp_path / "a.txt").write_text("x" * 8000)
    fake_anthropic.replies = [
        tool_use("Read", {"file_path": "a.txt"}, "toolu_a"),
        text("Read it."),
        text("Second answer."),
    ]
    session = session_for(provider_for(fake_anthropic), tmp_path)
    events = await run(session, "read a.txt") + await run(session, "and again?")
    usages = [e for e in events if isinstance(e, ev.Usage)]
    assert len(usages) == 3
    assert usages[0].cache_creation_input_tokens > 0 and usages[0].cache_read_input_tokens == 0
    assert usages[1].cache_read_input_tokens > usages[0].cache_creation_input_tokens // 2
    assert usages[2].cache_read_input_tokens > usages[1].cache_read_input_tokens
    assert all(u.input_tokens > 0 and u.output_tokens > 0 for u in usages)
    assert session.usage_history == usages


async def test_cache_breakpoints_in_the_request_and_history_untouched(fake_anthropic, tmp_path):
    (tmp_path / "a.txt").write_text("hello")
    fake_anthropic.replies = [tool_use("Read", {"file_path": "a.txt"}, "toolu_a"), text("ok")]
    session = session_for(provider_for(fake_anthropic), tmp_path)
    await run(session, "read a.txt")
    first, second = (r["body"] for r in fake_anthropic.message_requests)
    for body in (first, second):
        assert body["tools"][-1]["cache_control"] == {"type": "ephemeral"}
        assert all("cache_control" not in t for t in body["tools"][:-1])
        assert body["system"][0]["cache_control"] == {"type": "ephemeral"} and len(body["system"]) == 1
        assert body["messages"][-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}
        marks = json.dumps(body).count('"cache_control"')
        assert marks <= 4
    # The second call also marks the end of the prefix it shares with the first (the user prompt).
    assert second["messages"][0]["content"][-1]["cache_control"] == {"type": "ephemeral"}
    assert json.dumps(second).count('"cache_control"') == 4
    assert "cache_control" not in json.dumps(session.history)


async def test_rate_limit_then_success_shows_a_retry_notice(fake_anthropic, tmp_path):
    fake_anthropic.replies = [rate_limited(retry_after_ms=20), text("Fine now.")]
    session = session_for(provider_for(fake_anthropic), tmp_path)
    events = await run(session, "hi")
    assert ended(events).reason == "completed"
    shown = notices(events)
    assert len(shown) == 1 and "rate limited (429)" in shown[0] and "retrying" in shown[0]
    assert len(fake_anthropic.message_requests) == 2
    assert session.history[-1]["content"] == [{"type": "text", "text": "Fine now."}]


async def test_overloaded_storm_ends_in_a_clear_error_and_the_session_survives(fake_anthropic, tmp_path):
    fake_anthropic.replies = [overloaded() for _ in range(4)] + [text("Back.")]
    session = session_for(provider_for(fake_anthropic), tmp_path)
    events = await run(session, "hi")
    end = ended(events)
    assert end.reason == "error" and "overloaded (529)" in end.error and "gave up after 3 retries" in end.error
    assert "\n" not in end.error
    assert len(notices(events)) == 3 and all("retrying" in n for n in notices(events))
    assert len(fake_anthropic.message_requests) == 4
    events = await run(session, "again")
    assert ended(events).reason == "completed"
    assert protocol_errors(session.history) == []


async def test_error_event_before_any_text_is_retried(fake_anthropic, tmp_path):
    start = message_events(text("unused"))[:1]
    fake_anthropic.replies = [
        Reply(chunks=start + [sse("error", {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})]),
        text("Recovered."),
    ]
    session = session_for(provider_for(fake_anthropic), tmp_path)
    events = await run(session, "hi")
    assert ended(events).reason == "completed"
    assert any("overloaded" in n and "retrying" in n for n in notices(events))


async def test_error_event_after_text_keeps_the_partial_reply(fake_anthropic, tmp_path):
    chunks = message_events(text("Partial answer here"))[:5]
    fake_anthropic.replies = [
        Reply(chunks=chunks + [sse("error", {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})]),
        text("Next."),
    ]
    session = session_for(provider_for(fake_anthropic), tmp_path)
    events = await run(session, "hi")
    end = ended(events)
    assert end.reason == "error" and "Overloaded" in end.error
    assert session.history[-1]["content"][0]["text"].startswith("Partial ")
    assert "[interrupted]" in session.history[-1]["content"][0]["text"]
    assert ended(await run(session, "go on")).reason == "completed"


@pytest.mark.parametrize("breakage", ["drop", "malformed", "no_stop"])
async def test_broken_stream_keeps_partial_text_and_history_valid(fake_anthropic, tmp_path, breakage):
    (tmp_path / "f.txt").write_text("data")
    events_ = message_events(tool_use("Read", {"file_path": "f.txt"}, "toolu_half", say="I will read the file now."))
    cut = next(i for i, c in enumerate(events_) if b"input_json_delta" in c and b"f.txt" not in c) + 2
    if breakage == "drop":
        broken = Reply(chunks=events_, drop_after=cut)
    elif breakage == "malformed":
        broken = Reply(chunks=events_[:cut] + [b"event: content_block_delta\ndata: {not json\n\n"] + events_[cut:])
    else:
        broken = Reply(chunks=events_[:cut])
    fake_anthropic.replies = [broken, text("All good.")]
    session = session_for(provider_for(fake_anthropic), tmp_path)
    events = await run(session, "read f.txt")
    end = ended(events)
    assert end.reason == "error" and end.error and "\n" not in end.error
    streamed = "".join(e.text for e in events if isinstance(e, ev.TextDelta))
    assert streamed == "I will read the file now."
    last = session.history[-1]
    assert last["role"] == "assistant"
    assert last["content"] == [{"type": "text", "text": "I will read the file now.\n\n[interrupted]"}]
    assert "tool_use" not in json.dumps(session.history)
    assert protocol_errors(session.history) == []
    assert ended(await run(session, "try again")).reason == "completed"


async def test_drop_before_any_text_is_retried(fake_anthropic, tmp_path):
    fake_anthropic.replies = [Reply(chunks=message_events(text("lost")), drop_after=1), text("Second try.")]
    session = session_for(provider_for(fake_anthropic), tmp_path)
    events = await run(session, "hi")
    assert ended(events).reason == "completed"
    assert any("connection dropped" in n and "retrying" in n for n in notices(events))


async def test_prompt_too_long_compacts_harder_and_retries_once(fake_anthropic, tmp_path):
    too_long = "prompt is too long: 210000 tokens > 200000 maximum"
    fake_anthropic.replies = [error_reply(400, "invalid_request_error", too_long), text("Done.")]
    session = session_for(provider_for(fake_anthropic), tmp_path)
    events = await run(session, "hi")
    assert ended(events).reason == "completed"
    assert any("compacting harder" in n for n in notices(events))
    fake_anthropic.replies = [error_reply(400, "invalid_request_error", too_long)] * 3
    events = await run(session, "again")
    end = ended(events)
    assert end.reason == "error" and "prompt is too long" in end.error
    assert len(fake_anthropic.message_requests) == 4  # 2 + 2: one retry per turn, never a loop
    assert protocol_errors(session.history) == []


async def test_prompt_too_long_from_real_token_limit_recovers(fake_anthropic, tmp_path):
    """The window is over-estimated (60k claimed, 35k real): one rejection, then harder compaction fits."""
    files = []
    for i in range(5):
        name = f"big_{i}.txt"
        (tmp_path / name).write_text("\n".join(f"line {n} " + "z" * 70 for n in range(500)))
        files.append(name)
    fake_anthropic.model = reader_model(files)
    fake_anthropic.token_limit = 35_000
    provider = provider_for(fake_anthropic, context_window=60_000)
    session = session_for(provider, tmp_path, compact=CompactOptions(max_tool_result_chars=1_000_000))
    events = await run(session, "read all the big files")
    assert ended(events).reason == "completed", ended(events)
    assert len(fake_anthropic.rejected) == 1
    assert sum("compacting harder" in n for n in notices(events)) == 1


async def test_unauthorized_names_the_variable(fake_anthropic, tmp_path):
    session = session_for(provider_for(fake_anthropic, api_key="wrong"), tmp_path)
    events = await run(session, "hi")
    end = ended(events)
    assert end.reason == "error" and "ANTHROPIC_API_KEY" in end.error and "401" in end.error
    assert "\n" not in end.error
    assert len(fake_anthropic.message_requests) == 1  # not retried


async def test_count_tokens_uses_the_api(fake_anthropic, tmp_path):
    fake_anthropic.replies = [text("hello")]
    session = session_for(provider_for(fake_anthropic), tmp_path)
    assert await session.count_next_tokens() is None  # nothing to count yet
    await run(session, "hi")
    count = await session.count_next_tokens()
    counted = [r for r in fake_anthropic.requests if r["path"].startswith("/v1/messages/count_tokens")]
    assert len(counted) == 1 and count is not None and count > 100
    assert "max_tokens" not in counted[0]["body"] and "cache_control" not in json.dumps(counted[0]["body"])


async def test_thinking_blocks_are_kept_with_signatures(fake_anthropic, tmp_path):
    (tmp_path / "t.txt").write_text("x")
    thinking = {"type": "thinking", "thinking": "I should read t.txt.", "signature": "c2lnbmF0dXJl=="}
    fake_anthropic.replies = [[thinking] + tool_use("Read", {"file_path": "t.txt"}, "toolu_t"), text("ok")]
    session = session_for(provider_for(fake_anthropic), tmp_path)
    events = await run(session, "think")
    assert ended(events).reason == "completed"
    assert session.history[1]["content"][0] == thinking
    sent = fake_anthropic.message_requests[1]["body"]["messages"][1]["content"][0]
    assert sent == thinking  # passed back as-is, no cache_control on a thinking block


async def test_cancelling_closes_the_http_stream(fake_anthropic):
    slow = Reply(chunks=message_events(text("word " * 200)), delay=0.05)
    fake_anthropic.replies = [slow]
    provider = provider_for(fake_anthropic)
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
    while fake_anthropic.open_streams and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    assert fake_anthropic.open_streams == 0
    assert len(got) < 50
    await provider.aclose()


async def test_request_is_never_mutated(fake_anthropic):
    fake_anthropic.replies = [text("a"), text("b")]
    provider = provider_for(fake_anthropic)
    req = request(user_text("first"), tools=[{"name": "Echo", "description": "d", "input_schema": {"type": "object"}}])
    before = json.dumps([req.messages, req.tools])
    await collect(provider.stream(req))
    await collect(provider.stream(req))
    assert json.dumps([req.messages, req.tools]) == before


async def test_notice_objects_come_from_the_provider(fake_anthropic):
    fake_anthropic.replies = [rate_limited(retry_after_ms=10), text("x")]
    items = await collect(provider_for(fake_anthropic).stream(request()))
    assert isinstance(items[0], StreamNotice) and items[0].text.startswith("rate limited (429), retrying in")
