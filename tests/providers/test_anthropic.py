"""The Anthropic provider driven by the real `anthropic` SDK against the fake Messages API: what only
this provider does (prompt caching, thinking blocks, exact counts, `event: error` in a 200 stream).
The behaviour both providers share is in test_contract.py."""

from __future__ import annotations

import json
from pathlib import Path

from tests.fakes.fake_anthropic import (
    message_events,
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
from tui_agent.core.messages import user_text
from tui_agent.core.providers.anthropic_provider import AnthropicProvider
from tui_agent.core.providers.base import ModelRequest, StreamNotice
from tui_agent.core.agent.session import Session
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


async def test_drop_before_any_text_is_retried(fake_anthropic, tmp_path):
    fake_anthropic.replies = [Reply(chunks=message_events(text("lost")), drop_after=1), text("Second try.")]
    session = session_for(provider_for(fake_anthropic), tmp_path)
    events = await run(session, "hi")
    assert ended(events).reason == "completed"
    assert any("connection dropped" in n and "retrying" in n for n in notices(events))


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


def test_breakpoints_come_from_the_request_not_from_earlier_calls():
    """The provider keeps no hidden digest of the previous request: the plan's `stable_prefix` places the
    middle breakpoint, so a fresh provider (a resumed session, `--print-outbound`) builds exactly the body
    a provider that made the earlier calls would."""
    from tests.core.helpers import assistant_text

    used, fresh = (AnthropicProvider(api_key="test-key", model="claude-fake-1") for _ in range(2))
    used.build_params(request(user_text("first")))
    later = ModelRequest(model="claude-fake-1", system="be brief", tools=[], max_tokens=512, stable_prefix=1,
                         messages=[user_text("first"), assistant_text("ok"), user_text("second")])
    body = fresh.build_params(later)
    assert used.build_params(later) == body == {k: v for k, v in fresh.outbound_body(later).items() if k != "stream"}
    assert body["messages"][0]["content"][-1]["cache_control"] == {"type": "ephemeral"}
    assert "cache_control" not in json.dumps(body["messages"][1])
    unstable = fresh.build_params(ModelRequest(**{**later.__dict__, "stable_prefix": 0}))
    assert "cache_control" not in json.dumps(unstable["messages"][0])


async def test_a_real_window_smaller_than_the_output_reserve_lowers_max_tokens_once(fake_anthropic, tmp_path):
    """Issue 28 §5: the API's window (30,000) under the reserve (32,000) left a budget of 1 token: every
    call an event, every read cut, the model told "≈0 tokens left of 1". Now max_tokens is lowered to fit,
    said once, and the session goes on with room for the conversation."""
    files = []
    for i in range(4):
        name = f"big_{i}.txt"
        (tmp_path / name).write_text("\n".join(f"line {n} " + "z" * 70 for n in range(400)))
        files.append(name)
    fake_anthropic.model = reader_model(files)
    fake_anthropic.token_limit = 30_000
    provider = provider_for(fake_anthropic, context_window=200_000, max_output_tokens=32_000)
    session = session_for(provider, tmp_path)  # compaction 2.0, the default
    events = await run(session, "read all the big files")
    assert ended(events).reason == "completed", ended(events)
    lowered = [n for n in notices(events) if "max_tokens is lowered to 7,500" in n]
    assert len(lowered) == 1 and "context window is 30,000 tokens" in lowered[0], notices(events)
    after = fake_anthropic.message_requests[-1]["body"]
    assert after["max_tokens"] == 7_500
    policy = session.compactor.policy
    assert policy.context_window == 30_000 and policy.max_output_tokens == 7_500
    assert provider.context_window == 30_000  # the panel's window is the real one
    reports = [e for e in events if isinstance(e, ev.CompactionReported)]
    later = reports[reports.index(next(r for r in reports if r.plan.event is not None)) + 1:]
    assert all(r.plan.event is None or not r.plan.event.major for r in later), "not every call an event"
    assert not any("left of 1" in json.dumps(r["body"]) for r in fake_anthropic.message_requests)
