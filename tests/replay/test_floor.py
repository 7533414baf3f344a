"""The floor of a session's cost: the base read warm at every call and each call's new messages written once.
No strategy that sends the base beats it, so it bounds what a cost target can ask (bench/economics.py
prints it beside the table)."""

from __future__ import annotations

import pytest

from tests.shared import LOGS
from tui_agent.core.models import CachePrice
from tui_agent.core.recordings.cost_causes import cost_by_cause, floor_cost
from tui_agent.core.recordings.economics import replay
from tui_agent.core.recordings.recorded import load_recorded
from tui_agent.core.recordings.strategy_result import StrategyResult
from tui_agent.core.recordings.strategy_table import default_policy

PRICE = CachePrice(read=0.05, write=1.25, ttl_seconds=300)


def test_the_floor_writes_the_base_once_and_each_calls_growth_once():
    result = StrategyResult("none")
    # three append-only requests over a 1,000-token base: 1,500, then 1,800 (sharing 1,500), then 2,600
    for tokens, shared in ((1500, 0.0), (1800, 1500), (2600, 1800)):
        result.per_call.append((tokens, shared, 0.0, 0.0, 0, None, 0.0, 0.0))
    floor = floor_cost(result, 1000, PRICE)
    assert floor.base == pytest.approx(1.25 * 1000 + 2 * 0.05 * 1000)
    assert floor.new == pytest.approx(1.25 * (500 + 300 + 800))
    assert floor.total == pytest.approx(floor.base + floor.new)


@pytest.mark.parametrize("log", LOGS[:1], ids=lambda p: p.name[:30])
def test_no_strategy_gets_below_the_floor(log):
    recorded = load_recorded(log)
    results = replay(recorded, ["none", "v2", "cc-77"], default_policy(), check_memory=False, price=PRICE)
    floor = floor_cost(results["none"], recorded.model.request(0), PRICE)
    assert 0 < floor.base and 0 < floor.new
    for name, result in results.items():
        assert cost_by_cause(result, PRICE).total >= floor.total, name
