"""The streams recorded in the `anthropic` SDK's own test suite (tests/data/sdk_streams, copied as data from
anthropics/anthropic-sdk-python: tests/lib/streaming/fixtures and tests/fixtures/fable-fallback), replayed
from a loopback server through our provider: the final message, stop reason and usage are the SDK's own
accumulation of the same bytes (an empty text block may be dropped: the API refuses it sent back)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fakes.http import Reply
from tests.providers.conftest import FAST_RETRY, collect
from tui_agent.core.messages import user_text
from tui_agent.core.providers.anthropic_provider import AnthropicProvider
from tui_agent.core.providers.base import ModelRequest, ProviderError, StreamDone, StreamNotice, StreamText

ALL_STREAMS = sorted((Path(__file__).resolve().parents[1] / "data" / "sdk_streams").iterdir())
# The SDK's accumulation raises on this one (a tool input that is not JSON): tested on its own below.
INVALID_JSON = "tool_use_invalid_json_response.txt"
STREAMS = [p for p in ALL_STREAMS if p.name != INVALID_JSON]


def _without_nones(value):
    if isinstance(value, dict):
        return {k: _without_nones(v) for k, v in value.items() if v is not None and k != "parsed_output"}
    if isinstance(value, list):
        return [_without_nones(v) for v in value]
    return value


def _sdk_content(final, recorded: bytes = b"") -> list[dict]:
    """The SDK's blocks as plain data, blank text blocks left out; a `fallback` block's `trigger` as the
    stream carried it (echoed back verbatim, a null `category` too: the SDK's param says so)."""
    blocks = [_without_nones(block.to_dict()) for block in final.content]
    triggers = iter(_recorded_triggers(recorded))
    blocks = [{**b, "trigger": next(triggers)} if b.get("type") == "fallback" else b for b in blocks]
    return [b for b in blocks if not (b.get("type") == "text" and not b.get("text", "").strip())]


def _recorded_triggers(recorded: bytes) -> list:
    starts = [json.loads(line[5:]) for line in recorded.decode().splitlines()
              if line.startswith("data:") and '"content_block_start"' in line]
    return [s["content_block"]["trigger"] for s in starts if s["content_block"].get("type") == "fallback"]


def test_every_recorded_stream_is_here():
    assert len(ALL_STREAMS) == 12


def test_a_fallback_blocks_trigger_is_kept_verbatim():
    """Issue 40: the `fallback` block lost its `trigger` (its null `category` with it)."""
    assert _recorded_triggers((ALL_STREAMS[0].parent / "fallback_response.txt").read_bytes()) == [
        {"type": "refusal", "category": None}]


@pytest.mark.parametrize("path", STREAMS, ids=[p.name for p in STREAMS])
async def test_a_recorded_sdk_stream_gives_the_sdks_message(fake_anthropic, path):
    import anthropic

    recorded = path.read_bytes()
    fake_anthropic.replies = [Reply(chunks=[recorded]), Reply(chunks=[recorded])]
    provider = AnthropicProvider(api_key="test-key", base_url=fake_anthropic.base_url, model="claude-fake-1",
                                 context_window=200_000, max_output_tokens=1024, retry=FAST_RETRY)
    request = ModelRequest(model="claude-fake-1", system="s", messages=[user_text("hi")], tools=[], max_tokens=64)
    items = await collect(provider.stream(request))
    await provider.aclose()
    client = anthropic.AsyncAnthropic(api_key="test-key", base_url=fake_anthropic.base_url, max_retries=0)
    # The beta accumulation: the one that reads every block kind (the plain one skips `compaction_delta`).
    async with client.beta.messages.stream(model="claude-fake-1", max_tokens=64,
                                           messages=[user_text("hi")]) as stream:
        sdk_text = [event.text async for event in stream if event.type == "text"]
        final = await stream.get_final_message()
    await client.close()

    done = items[-1]
    assert isinstance(done, StreamDone)
    assert "".join(i.text for i in items if isinstance(i, StreamText)) == "".join(sdk_text)
    assert done.message["content"] == _sdk_content(final, recorded) or (
        _sdk_content(final) == [] and done.message["content"] == [{"type": "text", "text": "(no content)"}])
    assert done.stop_reason == final.stop_reason
    usage = final.usage
    assert (done.usage.input_tokens, done.usage.output_tokens) == (usage.input_tokens, usage.output_tokens)
    assert done.usage.cache_read_input_tokens == (usage.cache_read_input_tokens or 0)
    assert done.usage.cache_creation_input_tokens == (usage.cache_creation_input_tokens or 0)


@pytest.mark.parametrize("path", STREAMS, ids=[p.name for p in STREAMS])
async def test_a_keep_warm_ping_reads_the_usage_the_sdk_reads_at_message_start(fake_anthropic, path):
    """The ping (`providers/anthropic_ping.py`) takes its usage at `message_start`: on each recorded stream its
    usage is the one the SDK's own stream gives with that event, and no generated content is waited for."""
    import anthropic

    recorded = path.read_bytes()
    fake_anthropic.replies = [Reply(chunks=[recorded]), Reply(chunks=[recorded])]
    provider = AnthropicProvider(api_key="test-key", base_url=fake_anthropic.base_url, model="claude-fake-1",
                                 context_window=200_000, max_output_tokens=1024, retry=FAST_RETRY)
    request = ModelRequest(model="claude-fake-1", system="s", messages=[user_text("hi")], tools=[], max_tokens=64)
    usage = (await provider.ping(request)).usage
    await provider.aclose()
    client = anthropic.AsyncAnthropic(api_key="test-key", base_url=fake_anthropic.base_url, max_retries=0)
    async with client.messages.stream(model="claude-fake-1", max_tokens=64, messages=[user_text("hi")]) as stream:
        start = next(iter([event async for event in stream if event.type == "message_start"]))
    await client.close()
    sdk = start.message.usage
    assert (usage.input_tokens, usage.output_tokens) == (sdk.input_tokens, sdk.output_tokens)
    assert usage.cache_read_input_tokens == (sdk.cache_read_input_tokens or 0)
    assert usage.cache_creation_input_tokens == (sdk.cache_creation_input_tokens or 0)
    assert fake_anthropic.message_requests[0]["body"]["max_tokens"] == 0  # a ping populates the cache only


async def _ours(fake, name: str) -> tuple[list, Exception | None]:
    fake.replies = [Reply(chunks=[(ALL_STREAMS[0].parent / name).read_bytes()]) for _ in range(4)]
    provider = AnthropicProvider(api_key="test-key", base_url=fake.base_url, model="claude-fake-1",
                                 context_window=200_000, max_output_tokens=1024, retry=FAST_RETRY)
    items: list = []
    try:
        async for item in provider.stream(ModelRequest(model="claude-fake-1", system="s", messages=[user_text("hi")],
                                                       tools=[], max_tokens=64)):
            items.append(item)
    except Exception as error:  # noqa: BLE001 - the test looks at it
        return items, error
    finally:
        await provider.aclose()
    return items, None


async def test_an_out_of_order_stream_the_sdk_accepts_is_not_a_dropped_connection(fake_anthropic):
    """Issue 40: the SDK accepts `out_of_order_response.txt` (its last event has no blank line after it); it was
    reported as "connection dropped" and sent four times."""
    items, error = await _ours(fake_anthropic, "out_of_order_response.txt")
    assert error is None and isinstance(items[-1], StreamDone)
    assert not [i for i in items if isinstance(i, StreamNotice)] and len(fake_anthropic.message_requests) == 1


async def test_a_tool_input_that_is_not_json_is_named_and_the_text_kept(fake_anthropic):
    items, error = await _ours(fake_anthropic, INVALID_JSON)
    assert isinstance(error, ProviderError) and "\n" not in str(error)
    assert "malformed event: a tool's input that is not JSON" in str(error)
    assert error.partial_text == "I'll check the current weather in Paris for you."
    assert len(fake_anthropic.message_requests) == 1
