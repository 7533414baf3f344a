"""A turn's end in the protocol's words: a failed turn ("prompt is too long", an API error) is an error
response to `session/prompt`, never `end_turn` with the error as answer text; a prompt refused before it
joined the history is `refusal`; an answer cut by the output limit is `max_tokens`."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from acp import PROTOCOL_VERSION, RequestError, text_block

from tests.acp.test_acp_client import TIMEOUT, RecordingClient, open_agent, workspace
from tests.fakes.fake_anthropic import FakeAnthropic, error_reply, overloaded, stream_reply, text
from tui_agent.core import events as ev
from tui_agent.faces.acp.turn_end import TurnWatch

TOO_LONG = "prompt is too long: 250000 tokens > 200000 maximum"


def test_the_engines_ends_map_to_the_schemas_stop_reasons() -> None:
    def watched(*events: object) -> TurnWatch:
        watch = TurnWatch(history_before=4)
        for event in events:
            watch.see(event)
        return watch

    started, answer = ev.TurnStarted("hi", 4), ev.AssistantMessage({"role": "assistant", "content": []}, 5, "end_turn")
    assert watched(started, answer, ev.TurnEnded("completed", 1)).stop_reason(6) == "end_turn"
    assert watched(started, ev.TurnEnded("denied", 1)).stop_reason(7) == "end_turn"
    assert watched(started, ev.TurnEnded("max_turns", 9)).stop_reason(20) == "max_turn_requests"
    assert watched(started).stop_reason(5) == "cancelled"  # the task was cancelled before its TurnEnded
    cut = ev.AssistantMessage({"role": "assistant", "content": []}, 5, "max_tokens")
    assert watched(started, cut, ev.TurnEnded("completed", 1)).stop_reason(6) == "max_tokens"
    refused = watched(ev.TurnEnded("error", 0, "The prompt is empty: type something to ask."))
    assert refused.stop_reason(4) == "refusal" and refused.refusal_text().startswith("The prompt is empty")
    with pytest.raises(RequestError) as failed:
        watched(started, ev.TurnEnded("error", 1, TOO_LONG)).stop_reason(5)
    assert failed.value.code == -32603 and str(failed.value) == TOO_LONG


@pytest.mark.asyncio
async def test_a_failed_turn_is_an_error_response_and_the_session_goes_on(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    too_long = error_reply(400, "invalid_request_error", TOO_LONG)
    server = FakeAnthropic([too_long, too_long, overloaded(), overloaded(), text("fine now"),
                            stream_reply(text("a long answer that the output limit cut"), stop_reason="max_tokens")])
    client = RecordingClient()
    with server:
        async with await open_agent(client, tmp_path, model="claude-sonnet-4-5", server=server) as (conn, _p):
            await conn.initialize(protocol_version=PROTOCOL_VERSION)
            sid = (await conn.new_session(cwd=str(root), mcp_servers=[])).session_id
            with pytest.raises(RequestError) as too_long_error:  # too long, compacted harder, too long again
                await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block("first")]), TIMEOUT)
            assert too_long_error.value.code == -32603 and "prompt is too long" in str(too_long_error.value)
            assert "[error]" not in client.answer_text()  # no longer an answer that reads as a normal end
            with pytest.raises(RequestError) as overloaded_error:  # an API error (retried once, as configured)
                await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block("second")]), TIMEOUT)
            assert overloaded_error.value.code == -32603 and "verload" in str(overloaded_error.value)
            fine = await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block("third")]), TIMEOUT)
            assert fine.stop_reason == "end_turn" and "fine now" in client.answer_text()
            cut = await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block("fourth")]), TIMEOUT)
            assert cut.stop_reason == "max_tokens"
            mark = len(client.updates)
            empty = await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block("   ")]), TIMEOUT)
            assert empty.stop_reason == "refusal"  # never joined the history: the schema's promise holds
            said = "".join(u.content.text for u in client.updates[mark:] if u.session_update == "agent_message_chunk")
            assert "The prompt is empty" in said
    assert server.violations == []
    assert len(server.message_requests) == 6  # the empty prompt reached no model


@pytest.mark.asyncio
async def test_a_prompt_larger_than_the_window_is_a_refusal_that_reaches_no_model(tmp_path: Path) -> None:
    """Issue 40: over ACP the prompt too large for the window is refused before it is sent (`refusal`: it is
    not in the next prompt), with what to do in the text; the session goes on with the next prompt."""
    import sys

    from acp import spawn_agent_process

    from tests.acp.test_acp_client import agent_args, agent_env

    root = workspace(tmp_path)
    server = FakeAnthropic([text("fine")], token_limit=20_000)
    client = RecordingClient()
    env = {**agent_env(tmp_path, server), "CONTEXT_WINDOW_TOKENS": "20000"}
    huge = "a pasted log line that goes on\n" * 4_000
    with server:
        async with spawn_agent_process(client, sys.executable, *agent_args("claude-sonnet-4-5"), env=env,
                                       cwd=str(tmp_path)) as (conn, _process):
            await conn.initialize(protocol_version=PROTOCOL_VERSION)
            sid = (await conn.new_session(cwd=str(root), mcp_servers=[])).session_id
            refused = await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block(huge)]), TIMEOUT)
            assert refused.stop_reason == "refusal"
            said = "".join(u.content.text for u in client.updates if u.session_update == "agent_message_chunk")
            assert "Not sent" in said and "Shorten it by at least" in said
            fine = await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block("a short one")]), TIMEOUT)
            assert fine.stop_reason == "end_turn"
    assert server.violations == [] and server.rejected == []
    assert len(server.message_requests) == 1  # only the short prompt reached the model
