"""The provider contract, run against both fakes: Anthropic (real `anthropic` SDK) and OpenAI-compatible
(real `openai` SDK), each over real HTTP on 127.0.0.1.

Whatever the wire format, a provider streams text as it arrives, ends with one API-clean assistant
message (no blank text, unique tool_use ids), retries visibly before any text, keeps the partial text
after, names the variable to fix on a 401, turns a context-length refusal into one harder compaction,
closes its HTTP stream on cancel, and reports a cut-off reply as `max_tokens` (whose last tool call the
loop then answers instead of running). Provider-specific behaviour (prompt caching, thinking blocks,
token counting, message conversion) stays in test_anthropic.py / test_openai.py.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import pytest

from tests.fakes import fake_anthropic as fa
from tests.fakes import fake_openai as fo
from tests.fakes.fake_anthropic import text, tool_use
from tests.fakes.http import Reply
from tests.providers.conftest import FAST_RETRY, collect, ended, notices, run
from tests.waiting import wait_until
from tui_agent.core import events as ev
from tui_agent.core.agent.tool_round import CUT_OFF_MESSAGE
from tui_agent.core.messages import protocol_errors, tool_results, tool_uses, user_text
from tui_agent.core.providers.base import ModelRequest, Provider, StreamDone, StreamText
from tui_agent.core.agent.session import Session
from tui_agent.core.tools import builtin_tools
from tui_agent.core.tools.base import ToolRegistry


@dataclass
class Backend:
    name: str
    fake: Any
    make_provider: Callable[..., Provider]
    key_variable: str
    busy: Callable[[], Reply]
    busy_text: str
    too_long: Callable[[], Reply]
    too_long_text: str
    events: Callable[..., list[bytes]]  # the wire chunks of a scripted reply
    malformed: bytes

    def provider(self, **kwargs: Any) -> Provider:
        return self.make_provider(self.fake, **kwargs)

    def session(self, workspace: Path, **kwargs: Any) -> Session:
        return Session(self.provider(), ToolRegistry(builtin_tools()), workspace=workspace, **kwargs)

    @property
    def sent(self) -> list[dict[str, Any]]:
        return self.fake.message_requests if self.name == "anthropic" else self.fake.chat_requests

    def cut_off(self, content: list[dict[str, Any]]) -> Reply:
        """`content` streamed with the last tool call's input cut short and the output-limit stop."""
        if self.name == "anthropic":
            chunks = fa.message_events(content, stop_reason="max_tokens")
            deltas = [i for i, c in enumerate(chunks) if b"input_json_delta" in c]
        else:
            chunks = fo.completion_chunks(content, finish="length")
            deltas = [i for i, c in enumerate(chunks) if b'"arguments"' in c and b'"id"' not in c]
        dropped = set(deltas[len(deltas) // 2:])
        return Reply(chunks=[c for i, c in enumerate(chunks) if i not in dropped])


def _anthropic(fake) -> Backend:
    from tui_agent.core.providers.anthropic_provider import AnthropicProvider

    def make(fake, **kwargs):
        options = {"api_key": "test-key", "base_url": fake.base_url, "model": "claude-fake-1",
                   "context_window": 200_000, "max_output_tokens": 1024, "retry": FAST_RETRY}
        return AnthropicProvider(**{**options, **kwargs})

    return Backend(
        "anthropic", fake, make, "ANTHROPIC_API_KEY", fa.overloaded, "overloaded (529)",
        lambda: fa.error_reply(400, "invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum"),
        "prompt is too long", fa.message_events, b"event: content_block_delta\ndata: {not json\n\n")


def _openai(fake) -> Backend:
    from tui_agent.core.providers.openai_provider import OpenAIProvider

    def make(fake, **kwargs):
        options = {"api_key": "test-key", "base_url": fake.base_url, "model": "fake-chat",
                   "context_window": 128_000, "max_output_tokens": 1024, "retry": FAST_RETRY}
        return OpenAIProvider(**{**options, **kwargs})

    too_long = ("This model's maximum context length is 65536 tokens. However, you requested 70000 tokens "
                "(70000 in the messages, 0 in the completion).")
    return Backend(
        "openai", fake, make, "OPENAI_API_KEY", fo.server_busy, "(503)",
        lambda: fo.error_reply(400, too_long, code="context_length_exceeded"), "maximum context length",
        fo.completion_chunks, b"data: {oops\n\n")


@pytest.fixture(params=["anthropic", "openai"])
def backend(request) -> Backend:
    fixture = "fake_anthropic" if request.param == "anthropic" else "fake_openai"
    fake = request.getfixturevalue(fixture)  # fails the test if the fake saw an invalid request
    return (_anthropic if request.param == "anthropic" else _openai)(fake)


def request_of(*messages) -> ModelRequest:
    return ModelRequest(model="m", system="be brief", messages=list(messages) or [user_text("hi")], tools=[],
                        max_tokens=256)


async def test_streams_text_deltas_then_one_clean_message(backend):
    backend.fake.replies = [text("Hello there, how are you today?")]
    provider = backend.provider()
    items = await collect(provider.stream(request_of()))
    deltas = [i.text for i in items if isinstance(i, StreamText)]
    assert len(deltas) > 3 and "".join(deltas) == "Hello there, how are you today?"
    done = items[-1]
    assert isinstance(done, StreamDone) and done.stop_reason == "end_turn"
    assert done.message == {"role": "assistant", "content": [{"type": "text", "text": "Hello there, how are you today?"}]}
    assert done.usage is not None and done.usage.input_tokens > 0 and done.usage.output_tokens > 0
    assert backend.sent[0]["headers"]["authorization"] == "Bearer test-key"
    assert backend.sent[0]["body"]["stream"] is True and backend.sent[0]["body"]["max_tokens"] == 256
    await provider.aclose()


async def test_tool_round_trip_keeps_the_text_beside_the_call(backend, tmp_path):
    (tmp_path / "notes.txt").write_text("alpha\nbeta\n")
    backend.fake.replies = [tool_use("Read", {"file_path": "notes.txt"}, "call_1", say="Let me look."),
                            text("It says alpha and beta.")]
    session = backend.session(tmp_path)
    events = await run(session, "what is in notes.txt?")
    assert ended(events).reason == "completed"
    finished = [e for e in events if isinstance(e, ev.ToolFinished)]
    assert len(finished) == 1 and "alpha" in str(finished[0].content) and not finished[0].is_error
    assert session.history[1]["content"] == [
        {"type": "text", "text": "Let me look."},
        {"type": "tool_use", "id": "call_1", "name": "Read", "input": {"file_path": "notes.txt"}}]
    assert "beta" in json.dumps(backend.sent[1]["body"]["messages"][-1])
    assert [e for e in events if isinstance(e, ev.Usage)]
    assert protocol_errors(session.history) == []
    await session.aclose()


async def test_rate_limit_then_success_shows_one_retry_notice(backend, tmp_path):
    backend.fake.replies = [fa.rate_limited(retry_after_ms=10) if backend.name == "anthropic" else fo.rate_limited(),
                            text("Fine now.")]
    session = backend.session(tmp_path)
    events = await run(session, "hi")
    assert ended(events).reason == "completed"
    shown = notices(events)
    assert len(shown) == 1 and "rate limited (429)" in shown[0] and "retrying" in shown[0]
    assert len(backend.sent) == 2
    assert session.history[-1]["content"] == [{"type": "text", "text": "Fine now."}]


async def test_a_busy_storm_ends_in_one_clear_line_and_the_session_survives(backend, tmp_path):
    backend.fake.replies = [backend.busy() for _ in range(4)] + [text("Back.")]
    session = backend.session(tmp_path)
    events = await run(session, "hi")
    end = ended(events)
    assert end.reason == "error" and backend.busy_text in end.error and "gave up after 3 retries" in end.error
    assert "\n" not in end.error
    assert len(notices(events)) == 3 and all("retrying" in n for n in notices(events))
    assert len(backend.sent) == 4
    assert ended(await run(session, "again")).reason == "completed"
    assert protocol_errors(session.history) == []


@pytest.mark.parametrize("breakage", ["drop", "malformed", "no_stop"])
async def test_a_broken_stream_keeps_the_partial_text_and_no_half_tool_call(backend, tmp_path, breakage):
    chunks = backend.events(tool_use("Read", {"file_path": "f.txt"}, "call_half", say="I will read the file now."))
    cut = next(i for i, c in enumerate(chunks) if b"f.txt" not in c and (b"input_json_delta" in c or b"tool_calls" in c)) + 2
    broken = {"drop": Reply(chunks=chunks, drop_after=cut),
              "malformed": Reply(chunks=chunks[:cut] + [backend.malformed] + chunks[cut:]),
              "no_stop": Reply(chunks=chunks[:cut])}[breakage]
    backend.fake.replies = [broken, text("All good.")]
    session = backend.session(tmp_path)
    events = await run(session, "read f.txt")
    end = ended(events)
    assert end.reason == "error" and end.error and "\n" not in end.error
    assert "".join(e.text for e in events if isinstance(e, ev.TextDelta)) == "I will read the file now."
    assert session.history[-1]["content"] == [{"type": "text", "text": "I will read the file now.\n\n[interrupted]"}]
    assert "tool_use" not in json.dumps(session.history)
    assert protocol_errors(session.history) == []
    assert ended(await run(session, "try again")).reason == "completed"


async def test_unauthorized_names_the_variable_and_is_not_retried(backend, tmp_path):
    session = Session(backend.provider(api_key="wrong"), ToolRegistry(builtin_tools()), workspace=tmp_path)
    end = ended(await run(session, "hi"))
    assert end.reason == "error" and backend.key_variable in end.error and "401" in end.error
    assert "\n" not in end.error
    assert len(backend.sent) == 1


async def test_a_context_length_refusal_compacts_harder_once_per_turn(backend, tmp_path):
    backend.fake.replies = [backend.too_long(), text("Done.")]
    session = backend.session(tmp_path)
    events = await run(session, "hi")
    assert ended(events).reason == "completed"
    assert any("compacting harder" in n for n in notices(events))
    backend.fake.replies = [backend.too_long()] * 3
    end = ended(await run(session, "again"))
    assert end.reason == "error" and backend.too_long_text in end.error
    assert len(backend.sent) == 4  # 2 + 2: one retry per turn, never a loop
    assert protocol_errors(session.history) == []


async def test_cancelling_closes_the_http_stream(backend):
    backend.fake.replies = [Reply(chunks=backend.events(text("word " * 200)), delay=0.05)]
    provider = backend.provider()
    got: list[str] = []

    async def consume() -> None:
        async for item in provider.stream(request_of()):
            if isinstance(item, StreamText):
                got.append(item.text)

    task = asyncio.create_task(consume())
    await wait_until(lambda: got, what="the first text delta", task=task)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await wait_until(lambda: backend.fake.open_streams == 0, what="the fake to see its stream closed",
                     shown=lambda: backend.fake.open_streams)
    assert len(got) < 50  # stopped long before the 200 words
    await provider.aclose()


# -- issue 9, items 8 and 9 ------------------------------------------------------------------------
async def test_blank_text_blocks_are_dropped_and_never_sent_back(backend, tmp_path):
    """The real API answers 400 "text content blocks must contain non-whitespace text" to a blank
    text block sent back; models do send "\\n\\n" before a tool call."""
    (tmp_path / "a.txt").write_text("x")
    backend.fake.replies = [tool_use("Read", {"file_path": "a.txt"}, "call_a", say="\n\n"), text("  \n"), text("ok")]
    session = backend.session(tmp_path)
    assert ended(await run(session, "read a.txt")).reason == "completed"
    assert session.history[1]["content"] == [
        {"type": "tool_use", "id": "call_a", "name": "Read", "input": {"file_path": "a.txt"}}]
    assert session.history[3]["content"] == [{"type": "text", "text": "(no content)"}]
    assert ended(await run(session, "more")).reason == "completed"
    for sent in backend.sent:
        assert "\\n\\n\"" not in json.dumps(sent["body"]["messages"]) and '"  \\n"' not in json.dumps(sent["body"])
    assert protocol_errors(session.history) == []


async def test_duplicate_and_repeated_tool_use_ids_are_renamed(backend, tmp_path):
    """Two calls with one id in a reply (and `call_0` again in the next reply, as some servers number
    them): every call keeps its own result and the history stays valid."""
    (tmp_path / "a.txt").write_text("AAA")
    (tmp_path / "b.txt").write_text("BBB")
    (tmp_path / "c.txt").write_text("CCC")
    twice = tool_use("Read", {"file_path": "a.txt"}, "call_0") + tool_use("Read", {"file_path": "b.txt"}, "call_0")
    backend.fake.replies = [twice, tool_use("Read", {"file_path": "c.txt"}, "call_0"), text("Read all three.")]
    session = backend.session(tmp_path)
    assert ended(await run(session, "read them")).reason == "completed"
    ids = [b["id"] for m in session.history for b in tool_uses(m)]
    assert len(ids) == 3 and len(set(ids)) == 3 and ids[0] == "call_0"
    results = {b["tool_use_id"]: str(b["content"]) for m in session.history for b in tool_results(m)}
    assert [("AAA" in results[ids[0]]), ("BBB" in results[ids[1]]), ("CCC" in results[ids[2]])] == [True] * 3
    assert protocol_errors(session.history) == []


async def test_a_tool_call_cut_off_by_the_output_limit_is_answered_not_run(backend, tmp_path):
    (tmp_path / "a.txt").write_text("first file\n")
    (tmp_path / "big.txt").write_text("".join(f"line {i}\n" for i in range(200)))
    reply = (tool_use("Read", {"file_path": "a.txt"}, "call_ok", say="Reading both.")
             + tool_use("Read", {"file_path": "big.txt", "offset": 1, "limit": 120000}, "call_cut"))
    backend.fake.replies = [backend.cut_off(reply), text("I will read big.txt again.")]
    session = backend.session(tmp_path)
    events = await run(session, "read")
    assert ended(events).reason == "completed"
    assert [e.stop_reason for e in events if isinstance(e, ev.AssistantMessage)][0] == "max_tokens"
    results = {b["tool_use_id"]: b for m in session.history for b in tool_results(m)}
    assert "first file" in str(results["call_ok"]["content"])  # complete calls before it still run
    assert results["call_cut"] == {"type": "tool_result", "tool_use_id": "call_cut", "content": CUT_OFF_MESSAGE,
                                   "is_error": True}
    assert "line 0" not in json.dumps(session.history)
    assert protocol_errors(session.history) == []
