"""Every Claude call goes through the official `anthropic` SDK (issue 31), against the loopback fake: the
SDK's own headers arrive, and what the SDK leaves vague is said in one line here (issue 27's transport
items: a redirect, a proxy answering JSON, `retry-after` as a date, shapes the SDK accepts)."""

from __future__ import annotations

import email.utils
import time

import pytest

from tests.fakes.fake_anthropic import message_events, sse, text
from tests.fakes.http import Reply
from tests.providers.conftest import FAST_RETRY, collect
from tui_agent.core.messages import protocol_errors, user_text
from tui_agent.core.providers.anthropic_provider import AnthropicProvider
from tui_agent.core.providers.base import ModelRequest, ProviderError, StreamDone, StreamNotice, StreamText
from tui_agent.core.providers.retry import RetryPolicy, retry_after


def provider_for(fake, **kwargs) -> AnthropicProvider:
    options = {"api_key": "test-key", "base_url": fake.base_url, "model": "claude-fake-1",
               "context_window": 200_000, "max_output_tokens": 1024, "retry": FAST_RETRY}
    options.update(kwargs)
    return AnthropicProvider(**options)


def request(prompt: str = "hi") -> ModelRequest:
    return ModelRequest(model="claude-fake-1", system="s", messages=[user_text(prompt)], tools=[], max_tokens=64)


async def call(fake, **kwargs) -> list:
    provider = provider_for(fake, **kwargs)
    try:
        return await collect(provider.stream(request()))
    finally:
        await provider.aclose()


async def test_the_sdk_carries_the_call_with_its_own_headers(fake_anthropic, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_CUSTOM_HEADERS", "X-Team: tools")
    fake_anthropic.replies = [text("Hi.")]
    items = await call(fake_anthropic)
    sent = fake_anthropic.message_requests[0]
    assert sent["headers"]["user-agent"].startswith("AsyncAnthropic/Python ")
    assert sent["headers"]["authorization"] == "Bearer test-key"
    assert sent["headers"]["x-stainless-retry-count"] == "0"  # our retries, not the SDK's silent ones
    assert sent["headers"]["x-team"] == "tools"
    assert sent["body"]["stream"] is True
    done = items[-1]
    assert isinstance(done, StreamDone) and done.message["content"] == [{"type": "text", "text": "Hi."}]


async def test_what_print_outbound_shows_is_the_wire_body(fake_anthropic):
    fake_anthropic.replies = [text("ok")]
    provider = provider_for(fake_anthropic, cache_ttl="1h")
    req = ModelRequest(model="claude-fake-1", system="s", messages=[user_text("héllo \udcff")], tools=[],
                       max_tokens=64, notice="12 tokens left")
    await collect(provider.stream(req))
    await provider.aclose()
    sent = fake_anthropic.message_requests[0]["body"]
    assert sent == provider.outbound_body(req)
    assert sent["messages"][0]["content"][0]["text"] == "héllo \ufffd"  # a lone surrogate does not fail the call


async def test_a_redirect_is_named_with_the_base_url_and_not_retried(fake_anthropic):
    fake_anthropic.replies = [Reply(status=307, json_body={}, headers={"location": "http://127.0.0.1:9/v1/messages"})]
    with pytest.raises(ProviderError) as raised:
        await call(fake_anthropic)
    message = str(raised.value)
    assert "307" in message and "http://127.0.0.1:9/v1/messages" in message
    assert "ANTHROPIC_BASE_URL" in message and fake_anthropic.base_url in message
    assert len(fake_anthropic.requests) == 1 and "\n" not in message


async def test_a_proxy_answering_json_is_named_and_not_retried(fake_anthropic):
    fake_anthropic.replies = [Reply(json_body={"type": "message", "content": []})]
    with pytest.raises(ProviderError) as raised:
        await call(fake_anthropic)
    message = str(raised.value)
    assert "application/json" in message and "ANTHROPIC_BASE_URL" in message
    assert len(fake_anthropic.requests) == 1


def test_retry_after_as_an_http_date():
    now = time.time()
    date = email.utils.formatdate(now + 5, usegmt=True)
    assert retry_after({"retry-after": date}, now=int(now)) == pytest.approx(5, abs=1)
    assert retry_after({"retry-after": "3"}) == 3.0
    assert retry_after({"retry-after": "soon"}) is None


async def test_a_429_with_a_date_waits_as_asked(fake_anthropic):
    """Backoff alone would wait 0.01 s here; the date asks for about 2 s (the notice says so)."""
    date = email.utils.formatdate(time.time() + 3, usegmt=True)
    fake_anthropic.replies = [Reply(status=429, json_body={"type": "error", "error": {
        "type": "rate_limit_error", "message": "slow down"}}, headers={"retry-after": date}), text("ok")]
    items = await call(fake_anthropic, retry=RetryPolicy(max_retries=2, base_delay=0.01, max_delay=30))
    notice = next(i for i in items if isinstance(i, StreamNotice))
    waited = float(notice.text.split("retrying in ")[1].split(" s")[0])
    assert waited >= 1.0, notice.text
    assert isinstance(items[-1], StreamDone)


def _start(usage: dict) -> bytes:
    return sse("message_start", {"type": "message_start", "message": {
        "id": "msg_odd", "type": "message", "role": "assistant", "model": "claude-fake-1", "content": [],
        "stop_reason": None, "stop_sequence": None, "usage": usage}})


def _block(index: int, block: dict, *deltas: dict) -> list[bytes]:
    out = [sse("content_block_start", {"type": "content_block_start", "index": index, "content_block": block})]
    out += [sse("content_block_delta", {"type": "content_block_delta", "index": index, "delta": d}) for d in deltas]
    return out + [sse("content_block_stop", {"type": "content_block_stop", "index": index})]


def _end(stop: str, usage: dict) -> list[bytes]:
    return [sse("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                                  "usage": usage}),
            sse("message_stop", {"type": "message_stop"})]


async def test_odd_shapes_the_sdk_accepts_keep_the_answer(fake_anthropic):
    """`citations: null` then a citation delta, a citation that is not an object, usage that is not a
    number, a tool_use without an id: the answer is kept, the history stays valid."""
    citation = {"type": "char_location", "cited_text": "x", "document_index": 0, "start_char_index": 0,
                "end_char_index": 1, "document_title": None}
    chunks = [_start({"input_tokens": "12", "output_tokens": "many"}),
              *_block(0, {"type": "text", "text": "", "citations": None},
                      {"type": "text_delta", "text": "Cited."},
                      {"type": "citations_delta", "citation": citation},
                      {"type": "citations_delta", "citation": "not an object"}),
              *_block(1, {"type": "tool_use", "name": "Read", "input": {}},
                      {"type": "input_json_delta", "partial_json": '{"file_path": "a"}'}),
              *_end("tool_use", {"output_tokens": "n/a"})]
    fake_anthropic.replies = [Reply(chunks=chunks)]
    items = await call(fake_anthropic)
    assert "".join(i.text for i in items if isinstance(i, StreamText)) == "Cited."
    done = items[-1]
    assert isinstance(done, StreamDone) and done.stop_reason == "tool_use"
    first, second = done.message["content"]
    assert first == {"type": "text", "text": "Cited.", "citations": [{k: v for k, v in citation.items() if v is not None}]}
    assert second["type"] == "tool_use" and second["id"] and second["input"] == {"file_path": "a"}
    assert done.usage.input_tokens == 12 and done.usage.output_tokens == 0
    answered = [user_text("hi"), done.message,
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": second["id"], "content": "x"}]}]
    assert protocol_errors(answered) == []


async def test_a_malformed_event_after_text_keeps_the_text(fake_anthropic):
    chunks = message_events(text("Partial answer"))[:4] + [b"event: content_block_delta\ndata: {not json\n\n"]
    fake_anthropic.replies = [Reply(chunks=chunks)]
    with pytest.raises(ProviderError) as raised:
        await call(fake_anthropic)
    assert "broke off" in str(raised.value) and raised.value.partial_text == "Partia"  # the one delta shown


async def test_invalid_utf8_in_a_stream_keeps_the_text(fake_anthropic):
    """Issue 40: a byte that is not UTF-8 ended the turn (the SDK's decoder raised); it is U+FFFD and the reply
    goes on, as last round's client did."""
    chunks = [c.replace(b"world", b"w\xffrld") for c in message_events(text("Hello world, all of it."))]
    fake_anthropic.replies = [Reply(chunks=chunks)]
    items = await call(fake_anthropic)
    done = items[-1]
    assert isinstance(done, StreamDone) and done.message["content"] == [{"type": "text", "text": "Hello w\ufffdrld, all of it."}]
    assert "".join(i.text for i in items if isinstance(i, StreamText)) == "Hello w\ufffdrld, all of it."


async def test_one_malformed_event_is_named_not_a_bare_index_error(fake_anthropic):
    """Issue 40: a delta for a block that never started was reported as "IndexError: list index out of range"."""
    stray = sse("content_block_delta", {"type": "content_block_delta", "index": 5,
                                        "delta": {"type": "text_delta", "text": "x"}})
    chunks = message_events(text("Partial answer"))
    fake_anthropic.replies = [Reply(chunks=chunks[:4] + [stray] + chunks[4:])]
    with pytest.raises(ProviderError) as raised:
        await call(fake_anthropic)
    message = str(raised.value)
    assert "IndexError" not in message and "\n" not in message
    assert "a malformed event: content_block_delta for block 5, which never started" in message
    assert raised.value.partial_text == "Partia"


async def test_a_refused_connection_is_retried_then_named():
    provider = AnthropicProvider(api_key="k", base_url="http://127.0.0.1:9", model="m", context_window=10_000,
                                 max_output_tokens=100, retry=FAST_RETRY)
    items: list = []
    with pytest.raises(ProviderError) as raised:
        async for item in provider.stream(request()):
            items.append(item)
    await provider.aclose()
    assert "gave up after 3 retries" in str(raised.value)
    assert any("connection failed" in i.text and "retrying" in i.text for i in items if isinstance(i, StreamNotice))


def test_p_starts_the_sdk_import_at_process_start_and_the_call_carries_its_user_agent(fake_anthropic, tmp_path):
    """`tui-agent -p` against the fake: the SDK's import thread is running before the session is built
    (traced from the factory), and the request arrives with the SDK's own User-Agent."""
    import subprocess
    import sys

    from tests.e2e.conftest import cli_env

    fake_anthropic.replies = [text("Hello from the fake.")]
    probe = ("import threading, runpy, sys\n"
             "import tui_agent.core.agent.factory as f\n"
             "real = f.build_session\n"
             "def spy(*a, **k):\n"
             "    names = [t.name for t in threading.enumerate()]\n"
             "    print('import thread at build_session:', 'import-anthropic' in names or 'anthropic' in sys.modules,"
             " file=sys.stderr)\n"
             "    return real(*a, **k)\n"
             "f.build_session = spy\n"
             "import tui_agent.faces.headless as h; h.build_session = spy\n"
             "sys.argv = ['tui-agent', '-p', 'hello']\n"
             "from tui_agent.faces.cli import main\n"
             "sys.exit(main())\n")
    out = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, env=cli_env(tmp_path, fake_anthropic),
                         capture_output=True, text=True, timeout=90, stdin=subprocess.DEVNULL)
    assert out.returncode == 0, out.stderr
    assert "Hello from the fake." in out.stdout
    assert "import thread at build_session: True" in out.stderr
    assert fake_anthropic.message_requests[0]["headers"]["user-agent"].startswith("AsyncAnthropic/Python ")
