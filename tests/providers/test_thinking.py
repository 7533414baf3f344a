"""Extended thinking (MAX_THINKING_TOKENS / --thinking-tokens): the request asks for it, and every thinking
block goes back byte for byte as the model signed it, whatever our tiers did around it (cut on read,
mask, drop), after a resume from the journal and in a replay of that journal."""

from __future__ import annotations

import asyncio
import json
import tempfile
from pathlib import Path

from tests.fakes.fake_anthropic import message_events
from tests.fakes.http import Reply
from tests.journal.helpers import LocalClaude, run, session_on
from tests.providers.conftest import FAST_RETRY, collect
from tui_agent.core import events as ev
from tui_agent.core.journal.reader import read_journal
from tui_agent.core.journal.resume import resume_journaled
from tui_agent.core.journal.writer import journal_of, start_journal
from tui_agent.core.messages import protocol_errors, user_text
from tui_agent.core.providers.anthropic_provider import AnthropicProvider
from tui_agent.core.providers.anthropic_request import thinking_config
from tui_agent.core.providers.base import ModelRequest, StreamDone, UsageInfo
from tui_agent.core.providers.config import provider_from_env

READS = 16


def thinking(n: int) -> dict:
    # Odd bytes on purpose: a signature is opaque, a thought may hold anything.
    # Long enough that thinking alone outgrows the window: older turns must be dropped whole.
    return {"type": "thinking", "thinking": f"Thought {n}: read f{n % 4}.txt next; \u00e9 \u2014 {{\"q\": 1}}\n" * 25,
            "signature": f"EqQBCkYIBxgCKkB/sig+{n}==\u0000"}


def script() -> list[list[dict]]:
    replies = [[thinking(n), {"type": "tool_use", "id": f"toolu_{n}", "name": "Read",
                              "input": {"file_path": f"f{n % 4}.txt"}}] for n in range(READS)]
    return replies + [[thinking(READS), {"type": "text", "text": "Read them all."}]]


def thinking_blocks(messages: list[dict]) -> list[str]:
    return [json.dumps(b) for m in messages if isinstance(m.get("content"), list) for b in m["content"]
            if isinstance(b, dict) and b.get("type") in ("thinking", "redacted_thinking")]


ORIGINALS = {json.dumps(thinking(n)) for n in range(READS + 1)}


def test_the_env_turns_thinking_on_with_a_valid_budget():
    provider = provider_from_env({"ANTHROPIC_API_KEY": "k", "MAX_THINKING_TOKENS": "4096"})
    assert provider.thinking_budget == 4096
    assert provider_from_env({"ANTHROPIC_API_KEY": "k"}).thinking_budget == 0
    assert thinking_config(4096, 8192) == {"type": "enabled", "budget_tokens": 4096}
    assert thinking_config(50_000, 8192)["budget_tokens"] == 8191  # below max_tokens, as the API asks


async def test_thinking_streams_in_and_goes_back_signed(fake_anthropic):
    block = thinking(1)
    fake_anthropic.replies = [Reply(chunks=message_events([block, {"type": "text", "text": "Done."}]))]
    provider = AnthropicProvider(api_key="test-key", base_url=fake_anthropic.base_url, model="claude-fake-1",
                                 retry=FAST_RETRY, thinking_budget=2048, max_output_tokens=4096)
    request = ModelRequest(model="claude-fake-1", system="s", messages=[user_text("hi")], tools=[], max_tokens=4096)
    done = (await collect(provider.stream(request)))[-1]
    await provider.aclose()
    assert fake_anthropic.message_requests[0]["body"]["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert isinstance(done, StreamDone) and json.dumps(done.message["content"][0]) == json.dumps(block)
    again = ModelRequest(model="claude-fake-1", system="s", messages=[user_text("hi"), done.message, user_text("more")],
                         tools=[], max_tokens=4096)
    sent = provider.build_params(again)["messages"][1]["content"][0]
    assert json.dumps(sent) == json.dumps(block)  # no cache_control, not one byte changed


def test_thinking_survives_cut_mask_drop_resume_and_replay(tmp_path: Path):
    from tui_agent.core.recordings.replay import open_replay

    workspace = tmp_path / "repo"
    workspace.mkdir()
    for i in range(4):
        (workspace / f"f{i}.txt").write_text("".join(f"line {n} of file {i}: " + "x" * 60 + "\n" for n in range(90)))
    usage = UsageInfo(500, 20, 0, 0)
    provider = LocalClaude(replies=script(), usage=usage, sized=True, context_window=6_000, max_output_tokens=1_000,
                           thinking_budget=1024)
    session = session_on(workspace, provider)
    environ = {"TUI_AGENT_DATA_DIR": tempfile.mkdtemp(dir=tmp_path)}
    start_journal(session, environ=environ)
    events = asyncio.run(run(session, "read the files, several times"))
    assert isinstance(events[-1], ev.TurnEnded) and events[-1].reason == "completed", events[-1]

    # What our tiers did on the way: some results cut or masked, some messages left out.
    reports = [e for e in events if isinstance(e, ev.CompactionReported)]
    acted = [r.plan.event for r in reports if r.plan.event is not None]
    for tier in ("cut", "masked", "dropped"):
        assert sum(getattr(e, tier) for e in acted) > 0, f"no tier {tier}: the test would prove nothing"
    assert thinking_blocks(session.history) == [json.dumps(thinking(n)) for n in range(READS + 1)]
    for body in provider.bodies:
        assert body["thinking"] == {"type": "enabled", "budget_tokens": 1024}
        sent = thinking_blocks(body["messages"])
        assert set(sent) <= ORIGINALS  # every block sent is one the model signed, byte for byte
        last = body["messages"][-2] if len(body["messages"]) > 1 else None
        if last is not None and last["role"] == "assistant":  # the tool loop's own turn keeps its thinking
            assert json.dumps(last["content"][0]) in ORIGINALS
        assert protocol_errors(body["messages"]) == []

    path = journal_of(session).path
    journal_of(session).close()
    load = read_journal(path)
    fresh = session_on(workspace, LocalClaude(model=load.model, context_window=6_000, max_output_tokens=1_000,
                                              usage=usage, thinking_budget=1024))
    resume_journaled(fresh, load, environ)
    assert thinking_blocks(fresh.history) == thinking_blocks(session.history)
    old_next = session.provider.outbound_body(session.plan_call().request)
    new_next = fresh.provider.outbound_body(fresh.plan_call().request)
    assert json.dumps(new_next) == json.dumps(old_next)

    replay = open_replay(path)
    steps = replay.run_all()
    assert steps
    for step in steps:
        assert set(thinking_blocks(step.messages)) <= ORIGINALS
    assert any(thinking_blocks(step.messages) for step in steps)
