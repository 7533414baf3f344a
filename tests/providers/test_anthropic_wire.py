"""The Anthropic provider's own HTTP + SSE client (anthropic_wire): it never imports the `anthropic` SDK
(1–2 s per `-p` run, issue 18's long turn), sends what the installed SDK sends, and builds the final
message from the stream's deltas exactly (text, tool input, thinking, citations, usage)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.fakes.fake_anthropic import message_events, text, tool_use
from tests.fakes.http import Reply
from tests.providers.conftest import FAST_RETRY, collect, ended, notices, run
from tui_agent.core.messages import user_text
from tui_agent.core.providers.anthropic_provider import AnthropicProvider
from tui_agent.core.providers.anthropic_wire import API_VERSION, MessageBuilder, StatusError, custom_headers, encode
from tui_agent.core.providers.base import ModelRequest, ProviderError, StreamDone
from tui_agent.core.agent.session import Session
from tui_agent.core.tools import builtin_tools
from tui_agent.core.tools.base import ToolRegistry

ROOT = Path(__file__).resolve().parents[2]


def provider_for(fake, **kwargs) -> AnthropicProvider:
    options = {"api_key": "test-key", "base_url": fake.base_url, "model": "claude-fake-1",
               "context_window": 200_000, "max_output_tokens": 1024, "retry": FAST_RETRY}
    options.update(kwargs)
    return AnthropicProvider(**options)


def test_a_headless_turn_never_imports_the_anthropic_sdk(fake_anthropic, tmp_path):
    """A whole `-p` turn with a tool call against the fake API, in a fresh interpreter: the SDK's
    3,500 modules are never loaded (before this, the preload and the first call imported them)."""
    (tmp_path / "a.txt").write_text("hello")
    fake_anthropic.replies = [tool_use("Read", {"file_path": "a.txt"}, "toolu_a", say="Reading."), text("Done.")]
    code = textwrap.dedent(f"""
        import io, sys
        from pathlib import Path
        from tui_agent.faces.headless import run_headless
        out, err = io.StringIO(), io.StringIO()
        code = run_headless("read a.txt", workspace=Path({str(tmp_path)!r}), model="claude-fake-1", out=out, err=err)
        assert code == 0, err.getvalue()
        assert "Done." in out.getvalue(), out.getvalue()
        print(sorted(m for m in sys.modules if m == "anthropic" or m.startswith("anthropic.")))
    """)
    env = {"PATH": "/usr/bin:/bin", "ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": fake_anthropic.base_url,
           "TUI_AGENT_CONFIG_DIR": str(tmp_path / "config"), "TUI_AGENT_DATA_DIR": str(tmp_path / "data"),
           "HOME": str(tmp_path)}
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "[]"
    assert len(fake_anthropic.message_requests) == 2


def test_the_wire_matches_the_installed_sdk():
    """The version header and the key's scheme are the SDK's own (this fails when an SDK upgrade moves
    them, instead of requests drifting away from what the API expects)."""
    anthropic_constants = pytest.importorskip("anthropic._constants")
    assert API_VERSION == anthropic_constants.ANTHROPIC_API_VERSION
    import anthropic

    client = anthropic.Anthropic(api_key="k", base_url="http://127.0.0.1:9")
    assert client.auth_headers == {"Authorization": "Bearer k"}
    assert custom_headers("X-One: 1\nbad line\nX-Two:  two words \n") == {"X-One": "1", "X-Two": "two words"}


async def test_the_request_carries_the_headers_and_the_body_once(fake_anthropic, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_CUSTOM_HEADERS", "X-Team: tools")
    fake_anthropic.replies = [text("Hi.")]
    provider = provider_for(fake_anthropic)
    items = await collect(provider.stream(ModelRequest(model="claude-fake-1", system="s",
                                                       messages=[user_text("héllo")], tools=[], max_tokens=64)))
    await provider.aclose()
    sent = fake_anthropic.message_requests[0]
    assert sent["headers"]["authorization"] == "Bearer test-key"
    assert sent["headers"]["anthropic-version"] == API_VERSION
    assert sent["headers"]["x-team"] == "tools"
    assert sent["body"]["stream"] is True and sent["body"]["messages"][0]["content"][0]["text"] == "héllo"
    done = items[-1]
    assert isinstance(done, StreamDone) and done.message["content"] == [{"type": "text", "text": "Hi."}]


def test_the_builder_folds_every_delta_kind():
    builder = MessageBuilder()
    citation = {"type": "char_location", "cited_text": "x", "document_index": 0, "start_char_index": 0,
                "end_char_index": 1, "document_title": None}
    events = [
        {"type": "message_start", "message": {"id": "m", "type": "message", "role": "assistant", "content": [],
                                              "stop_reason": None, "usage": {"input_tokens": 7, "output_tokens": 1}}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": "", "signature": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "hm"}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "sig"}},
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}},
        {"type": "ping"},
        {"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "Hel"}},
        {"type": "content_block_delta", "index": 1, "delta": {"type": "citations_delta", "citation": citation}},
        {"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "lo"}},
        {"type": "content_block_stop", "index": 1},
        {"type": "content_block_start", "index": 2, "content_block": {"type": "tool_use", "id": "t", "name": "Read", "input": {}}},
        {"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": '{"file_'}},
        {"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": 'path": "a"}'}},
        {"type": "content_block_stop", "index": 2},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 9}},
        {"type": "message_stop"},
    ]
    shown = [builder.apply(event) for event in events]
    assert "".join(t for t in shown if t) == "Hello"
    from tui_agent.core.providers.anthropic_provider import message_from_response, usage_from

    assert builder.stopped and builder.message["stop_reason"] == "tool_use"
    assert usage_from(builder.message["usage"]).input_tokens == 7 and builder.message["usage"]["output_tokens"] == 9
    assert message_from_response(builder.message)["content"] == [
        {"type": "thinking", "thinking": "hm", "signature": "sig"},
        {"type": "text", "text": "Hello", "citations": [{k: v for k, v in citation.items() if v is not None}]},
        {"type": "tool_use", "id": "t", "name": "Read", "input": {"file_path": "a"}},
    ]
    with pytest.raises(StatusError) as raised:
        MessageBuilder().apply({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
    assert raised.value.status_code == 200 and raised.value.type == "overloaded_error"


async def test_a_refused_connection_is_retried_then_named(tmp_path):
    provider = AnthropicProvider(api_key="k", base_url="http://127.0.0.1:9", model="m", context_window=10_000,
                                 max_output_tokens=100, retry=FAST_RETRY)
    session = Session(provider, ToolRegistry(builtin_tools()), workspace=tmp_path)
    events = await run(session, "hi")
    end = ended(events)
    assert end.reason == "error"
    assert any("connection failed" in n and "retrying" in n for n in notices(events))
    await provider.aclose()


async def test_a_malformed_event_after_text_keeps_the_text(fake_anthropic):
    chunks = message_events(text("Partial answer"))[:4] + [b"event: content_block_delta\ndata: {not json\n\n"]
    fake_anthropic.replies = [Reply(chunks=chunks)]
    provider = provider_for(fake_anthropic)
    with pytest.raises(ProviderError) as raised:
        await collect(provider.stream(ModelRequest(model="claude-fake-1", system="", messages=[user_text("hi")],
                                                   tools=[], max_tokens=64)))
    await provider.aclose()
    assert "malformed event" in str(raised.value) and raised.value.partial_text == "Partia"  # the one delta shown


def test_a_lone_surrogate_is_escaped_not_a_failed_call():
    assert encode({"t": "é"}) == '{"t": "é"}'.encode()
    assert encode({"t": "a\udcff"}) == b'{"t": "a\\udcff"}'
