"""The server strategies as compaction modes: what they ask the server to do, and that ours stays out."""

from __future__ import annotations

import pytest

from tui_agent.core.agent.call import plan_call
from tui_agent.core.compaction import CompactPolicy, CompactorProtocol, make_compactor
from tui_agent.core.compaction.strategies.server import server_edits
from tui_agent.core.compaction.settings import CompactSettingsError, mode_of
from tui_agent.core.messages import user_text
from tui_agent.core.providers.anthropic_provider import AnthropicProvider
from tui_agent.core.providers.server_report import BETA_COMPACT, BETA_CONTEXT, BETA_DIAGNOSIS, betas_for


def test_server_clear_asks_for_thinking_first_when_thinking_is_on():
    plain = server_edits("server-clear", 90_000)["edits"]
    assert [e["type"] for e in plain] == ["clear_tool_uses_20250919"]
    assert plain[0]["exclude_tools"] == ["Context"] and plain[0]["keep"] == {"type": "tool_uses", "value": 3}
    thinking = server_edits("server-clear", 90_000, thinking=True)["edits"]
    assert [e["type"] for e in thinking] == ["clear_thinking_20251015", "clear_tool_uses_20250919"]
    compact = server_edits("server-compact", 10_000)["edits"]
    assert compact == [{"type": "compact_20260112", "trigger": {"type": "input_tokens", "value": 50_000}}]
    assert betas_for({"edits": thinking}, False) == [BETA_CONTEXT]
    assert betas_for({"edits": compact}, True) == [BETA_COMPACT, BETA_DIAGNOSIS]
    assert betas_for(None, False) == []


def test_the_modes_plan_the_whole_history_and_the_request_carries_the_edits():
    assert mode_of("server-clear", "--compact") == "server-clear"
    with pytest.raises(CompactSettingsError):
        mode_of("server-clean", "--compact")
    provider = AnthropicProvider(api_key="k", model="claude-sonnet-4-5", thinking_budget=4_000)
    compactor = make_compactor("server-clear", 200_000, 8_000, policy=CompactPolicy(high_water=0.5))
    assert isinstance(compactor, CompactorProtocol) and not compactor.steerable and compactor.mode == "server-clear"
    history = [user_text("x " * 50_000)]
    planned = plan_call(compactor, provider, "sys", [], history, 1, keep=True)
    assert not planned.plan.changed and planned.request.messages[0]["content"] == history[0]["content"]
    edits = planned.request.context_management["edits"]
    assert edits[0]["type"] == "clear_thinking_20251015" and edits[1]["trigger"]["value"] == compactor.trigger_tokens
    body = provider.outbound_body(planned.request)
    assert body["context_management"] == planned.request.context_management
    ours = plan_call(make_compactor("v2", 200_000, 8_000), provider, "sys", [], history, 1, keep=True)
    assert ours.request.context_management is None and "context_management" not in provider.outbound_body(ours.request)


def test_a_provider_without_context_management_refuses_the_server_strategies(tmp_path):
    from tui_agent.core.agent.door import SessionOptions, SessionRefused, open_session
    from tui_agent.core.compaction.settings import CompactSettings

    options = SessionOptions(workspace=tmp_path, provider="demo", compact=CompactSettings(mode="server-clear"),
                             env={}, headless=True)
    with pytest.raises(SessionRefused, match="Anthropic API's own context management; the demo provider has none"):
        open_session(options)
