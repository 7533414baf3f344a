"""The API's own context management through the SDK (`--compact server-clear` / `server-compact`) and the
cache-diagnosis beta, against the fake that validates `context_management`, `diagnostics` and the beta
headers and answers as the API documents (applied edits, a compaction block, `cache_miss_reason`)."""

from __future__ import annotations

from tests.fakes.fake_anthropic import reader_model
from tests.fakes.fake_context import BETA_COMPACT, BETA_CONTEXT, BETA_DIAGNOSIS, SUMMARY, FakeContextAnthropic
from tests.providers.conftest import ended, notices, run
from tests.providers.test_compaction_real_sdk import make_files, session_on
from tui_agent.core import events as ev
from tui_agent.core.compaction import CompactPolicy
from tui_agent.core.messages import protocol_errors


def _policy(high: int) -> CompactPolicy:
    return CompactPolicy(high_water=float(high), low_water=float(high // 2))


async def test_server_clear_sends_the_edit_with_its_beta_and_shows_what_was_cleared(tmp_path):
    names = make_files(tmp_path, 8, 6_000)
    fake = FakeContextAnthropic(model=reader_model(names))
    with fake:
        session = session_on(fake, tmp_path, 100_000, 20, compact_mode="server-clear", compact_policy=_policy(4_000))
        events = await run(session, "Read the modules.")
        await session.aclose()
    assert ended(events).reason == "completed" and fake.violations == []
    body = fake.message_requests[-1]["body"]
    edit = body["context_management"]["edits"][0]
    assert edit["type"] == "clear_tool_uses_20250919" and edit["exclude_tools"] == ["Context"]
    assert edit["trigger"] == {"type": "input_tokens", "value": 4_000}
    assert all(BETA_CONTEXT in betas for betas in fake.betas)
    edited = [e for e in events if isinstance(e, ev.ServerEdited)]
    assert edited and edited[-1].edits[0].cleared >= 1 and edited[-1].edits[0].tokens >= 5_000
    assert "server cleared" in edited[-1].line()
    # our compaction stayed out of the way: every request sends the history whole
    reported = [e for e in events if isinstance(e, ev.CompactionReported)]
    assert all(not e.plan.changed for e in reported)


async def test_server_compact_keeps_the_compaction_block_and_sends_it_back(tmp_path):
    names = make_files(tmp_path, 30, 9_000)
    fake = FakeContextAnthropic(model=reader_model(names))
    with fake:
        session = session_on(fake, tmp_path, 200_000, 40, compact_mode="server-compact")
        session.compactor.trigger_tokens = 50_000
        events = await run(session, "Read the modules.")
        await session.aclose()
    assert ended(events).reason == "completed" and fake.violations == []
    assert fake.compactions >= 1 and all(BETA_COMPACT in b for b in fake.betas)
    edited = [e for e in events if isinstance(e, ev.ServerEdited) and e.compacted]
    first = edited[0]
    assert first.summary == SUMMARY and first.compaction_usage is not None
    assert first.compaction_usage.input_tokens > 50_000  # its own usage iteration, not the call's
    block = session.history[first.history_index]["content"][0]
    assert block == {"type": "compaction", "content": SUMMARY, "encrypted_content": "opaque-1"}
    later = fake.message_requests[-1]["body"]["messages"]
    # sent back as it came, and only from there on (the API reads no further back: issue 41), after a stand-in
    assert {k: v for k, v in later[1]["content"][0].items() if k != "cache_control"} == block
    newest = edited[-1].history_index  # (the last request went out before its answer joined the history)
    assert later[0]["role"] == "user" and len(later) == len(session.history) - newest
    assert protocol_errors(session.history) == []


async def test_a_cache_miss_says_why_from_the_api_and_ours(tmp_path):
    names = make_files(tmp_path, 3, 3_000)
    fake = FakeContextAnthropic(model=reader_model(names))
    env_session = session_on(fake, tmp_path, 100_000, 10)
    env_session.provider.diagnose = True
    with fake:
        events = await run(env_session, "Read the modules.")
        # the system prompt changes between turns: the API names it, and what it cost
        env_session.system_prompt_builder = lambda s: "a different system prompt"
        events += await run(env_session, "And again.")
        await env_session.aclose()
    assert fake.violations == []
    assert all(BETA_DIAGNOSIS in b for b in fake.betas)
    sent = [r["body"]["diagnostics"]["previous_message_id"] for r in fake.message_requests]
    assert sent[0] is None and sent[1:] == [f"msg_fake_{i:03d}" for i in range(1, len(sent))]
    missed = [e for e in events if isinstance(e, ev.CacheMissed)]
    assert len(missed) == 1 and missed[0].source == "api" and missed[0].reason == "system_changed"
    assert missed[0].missed > 0 and "system prompt changed" in missed[0].line()


async def test_an_endpoint_without_the_beta_is_asked_once_then_never_again(tmp_path):
    names = make_files(tmp_path, 2, 1_000)
    fake = FakeContextAnthropic(model=reader_model(names), refuse_diagnosis=True)
    session = session_on(fake, tmp_path, 100_000, 10)
    session.provider.diagnose = True
    with fake:
        events = await run(session, "Read the modules.")
        await session.aclose()
    assert ended(events).reason == "completed" and fake.violations == []
    assert sum("cache-diagnosis" in n for n in notices(events)) == 1
    assert [BETA_DIAGNOSIS in b for b in fake.betas] == [True] + [False] * (len(fake.betas) - 1)


async def test_context_under_our_strategy_asks_what_server_clear_would_have_cleared(tmp_path):
    from tui_agent.core.agent.server_compare import server_clear_count, server_clear_line

    names = make_files(tmp_path, 8, 6_000)
    fake = FakeContextAnthropic(model=reader_model(names))
    with fake:
        session = session_on(fake, tmp_path, 100_000, 20, compact_policy=_policy(4_000))
        await run(session, "Read the modules.")
        counted = await server_clear_count(session)
        line = await server_clear_line(session, 9_000)
        await session.aclose()
    assert fake.violations == []
    asked = [r for r in fake.requests if r["path"].endswith("count_tokens")][-1]
    assert asked["body"]["context_management"]["edits"][0]["type"] == "clear_tool_uses_20250919"
    assert len(asked["body"]["messages"]) == len(session.history)  # the whole history, as server-clear sends it
    assert counted is not None and counted.cleared >= 5_000 and counted.after < counted.whole
    assert line == counted.line(9_000) and "server-clear would send" in line and "ours 9,000" in line


def test_the_flag_end_to_end_in_print_mode(tmp_path):
    import subprocess
    import sys

    from tests.e2e.conftest import cli_env

    names = make_files(tmp_path, 8, 6_000)
    fake = FakeContextAnthropic(model=reader_model(names))
    with fake:
        env = cli_env(tmp_path, fake, ANTHROPIC_MODEL="claude-fake-1", CACHE_DIAGNOSIS="1")
        out = subprocess.run([sys.executable, "-m", "tui_agent", "-p", "Read the modules.", "--compact", "server-clear",
                              "--compact-high", "4000", "-C", str(tmp_path)],
                             env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert out.returncode == 0, out.stderr
    assert fake.violations == [] and "server cleared" in out.stderr
    assert all({BETA_CONTEXT, BETA_DIAGNOSIS} <= b for b in fake.betas)


async def test_a_compaction_block_is_sent_with_its_beta_after_switching_to_our_strategy(tmp_path):
    names = make_files(tmp_path, 14, 16_000)
    fake = FakeContextAnthropic(model=reader_model(names))
    with fake:
        session = session_on(fake, tmp_path, 400_000, 40, compact_mode="server-compact")
        session.compactor.trigger_tokens = 50_000
        await run(session, "Read the modules.")
        assert fake.compactions >= 1
        session.switch_compaction("off")  # the block stays in history: its beta goes with it
        events = await run(session, "Thanks.")
        await session.aclose()
    assert ended(events).reason == "completed" and fake.violations == []
    last = fake.message_requests[-1]
    assert "context_management" not in last["body"] and BETA_COMPACT in fake.betas[-1]


async def test_with_thinking_on_clear_thinking_goes_first_and_the_server_reports_it():
    from tests.fakes.fake_anthropic import text
    from tests.providers.conftest import FAST_RETRY, collect
    from tui_agent.core.compaction.strategies.server import server_edits
    from tui_agent.core.messages import user_text
    from tui_agent.core.providers.anthropic_provider import AnthropicProvider
    from tui_agent.core.providers.base import ModelRequest, StreamDone

    thought = {"type": "thinking", "thinking": "hmm", "signature": "sig=="}
    history = []
    for i in range(3):
        history += [user_text(f"q{i}"), {"role": "assistant", "content": [thought, {"type": "text", "text": f"a{i}"}]}]
    history.append(user_text("last"))
    fake = FakeContextAnthropic([text("ok")])
    with fake:
        provider = AnthropicProvider(api_key="test-key", base_url=fake.base_url, model="claude-fake-1",
                                     retry=FAST_RETRY, thinking_budget=2_000)
        request = ModelRequest(model="claude-fake-1", system="s", tools=[], max_tokens=4_000, messages=history,
                               context_management=server_edits("server-clear", 1, thinking=True))
        done = [e for e in await collect(provider.stream(request)) if isinstance(e, StreamDone)][0]
        await provider.aclose()
    assert fake.violations == [] and BETA_CONTEXT in fake.betas[0]
    sent = fake.message_requests[0]["body"]["context_management"]["edits"]
    assert [e["type"] for e in sent] == ["clear_thinking_20251015", "clear_tool_uses_20250919"]
    assert done.server is not None and done.server.edits[0].kind == "clear_thinking_20251015"
    assert done.server.edits[0].cleared == 2  # three turns with thinking, the last kept
