"""A working budget, not a share of the window: the marks are a size in tokens chosen from the prices and
bounded by the window and a long-context price step; one setting (flag, env, /budget) sets it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.shared import shared_log
from tui_agent.core.agent.builtin_commands import register_builtin_commands
from tui_agent.core.compaction import CompactPolicy
from tui_agent.core.compaction.pricing import DEFAULT_BUDGET_TOKENS, default_budget, event_pays_above
from tui_agent.core.compaction.settings import CompactSettingsError, settings_from
from tui_agent.core.recordings.economics import replay
from tui_agent.core.models import NEWER
from tui_agent.core.providers.scripted import ScriptedProvider
from tui_agent.core.recordings.recorded import load_recorded
from tui_agent.core.agent.session import Session
from tui_agent.core.tools.base import ToolRegistry


@pytest.mark.parametrize("read", [0.1, 0.05, 0.025])
def test_a_200k_and_a_1m_window_give_the_same_marks(read):
    small, large = (CompactPolicy(context_window=w, cache_read=read) for w in (200_000, 1_000_000))
    assert (small.high_tokens, small.low_tokens, small.head_tokens) == (large.high_tokens, large.low_tokens,
                                                                        large.head_tokens)
    assert large.high_tokens < 0.2 * large.context_window


def test_a_cheaper_read_pays_for_a_larger_budget_only_when_asked_and_the_window_bounds_it():
    assert event_pays_above(0.025, 1.25, 0.46) > event_pays_above(0.05, 1.25, 0.46) > event_pays_above(0.1, 1.25, 0.46)
    assert default_budget(0.1, 1.25, 0.65, 0.30, from_prices=True) == DEFAULT_BUDGET_TOKENS
    assert default_budget(0.025, 1.25, 0.65, 0.30, from_prices=True) > DEFAULT_BUDGET_TOKENS
    assert default_budget(0.025, 1.25, 0.65, 0.30) == DEFAULT_BUDGET_TOKENS
    assert CompactPolicy(context_window=1_000_000, cache_read=0.025).room == DEFAULT_BUDGET_TOKENS
    # (at compaction 3's marks, which keep 46 % at an event: compaction 4's keep so little that an event pays
    # early at any price, and the price-derived budget is the default one)
    cheap = CompactPolicy(context_window=200_000, cache_read=0.025, budget_from_prices=True, high_water=0.65,
                          low_water=0.30)
    assert cheap.room == cheap.effective_window and cheap.budget_bound == "the window"
    small = CompactPolicy(context_window=50_000, max_output_tokens=8_000)
    assert small.high_tokens == int(CompactPolicy.high_water * 42_000), "a small window's marks are still shares of it"


def test_a_long_context_price_step_bounds_the_budget():
    policy = CompactPolicy(context_window=1_000_000, budget_tokens=400_000, long_context_step=200_000)
    assert policy.room == 200_000 - 32_000 and policy.budget_bound == "the long-context price step"


def test_one_setting_from_env_or_flag_says_where_it_came_from():
    env = settings_from({"COMPACT_BUDGET": "120k"}).policy(CompactPolicy(context_window=1_000_000))
    assert env.room == 120_000 and env.high_tokens == int(CompactPolicy.high_water * 120_000) and env.budget_bound == "env COMPACT_BUDGET"
    flag = settings_from({"COMPACT_BUDGET": "120k"}, budget="90000").policy()
    assert flag.room == 90_000 and flag.budget_bound == "flag --budget"
    with pytest.raises(CompactSettingsError, match="COMPACT_BUDGET"):
        settings_from({"COMPACT_BUDGET": "lots"})
    with pytest.raises(CompactSettingsError, match="at least"):
        settings_from({}, budget="12")


async def test_the_budget_command_shows_and_sets_the_budget(tmp_path: Path):
    session = Session(provider=ScriptedProvider(), tools=ToolRegistry(), workspace=tmp_path)
    register_builtin_commands(session)
    shown = await session.commands.run(session, "/budget")
    assert "budget" in shown.text and "window" in shown.text and "default for this model" in shown.text
    changed = await session.commands.run(session, "/budget 100k")
    assert "100k" in changed.text and "/budget" in changed.text
    assert session.compactor.policy.room == 100_000 and session.compactor.policy.high_tokens == int(CompactPolicy.high_water * 100_000)
    refused = await session.commands.run(session, "/budget many")
    assert refused.level == "warning" and session.compactor.policy.room == 100_000


def test_a_1m_window_costs_what_a_200k_window_costs_on_a_real_session():
    recorded = load_recorded(shared_log("M-Thisness*.jsonl"))
    costs = {}
    for window in (200_000, 1_000_000):
        policy = CompactPolicy(context_window=window, max_output_tokens=32_000, enabled=True)
        results = replay(recorded, ["none", "v2"], policy, check_memory=False, price=NEWER)
        costs[window] = results["v2"].cost / results["none"].cost
        assert results["v2"].events >= 1
    assert costs[1_000_000] == pytest.approx(costs[200_000], rel=0.01)
