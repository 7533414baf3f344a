"""The priced idle policy (`core/idle.py`): ping, compact or let the cache go cold, by what each costs."""

from __future__ import annotations

import math

import pytest

from tests.shared import SYNTHETIC_LONG
from tui_agent.core.cache_clock import keep_warm_for
from tui_agent.core.idle import PRIOR, IdleSizes, Returns, choice_from, idle_prices, mode_from
from tui_agent.core.models import CLASSIC, NEWER
from tui_agent.core.recordings.economics import replay
from tui_agent.core.recordings.strategy_table import default_policy
from tui_agent.core.recordings.economics_table import cost_at
from tui_agent.core.recordings.recorded import load_recorded

KEEP = keep_warm_for(NEWER, by_price=False)  # a ping every 270 s, within the hour
BIG = IdleSizes(prefix=100_000, cold=100_000, compacted=20_000)


def soon() -> Returns:
    """A person who always comes back within a few minutes of the first ping."""
    return Returns((300.0, 320.0, 350.0, 400.0) * 5, (1.0,) * 20)


def gone() -> Returns:
    """A person who never came back after a pause this long."""
    return Returns((30.0, 40.0, math.inf, math.inf), (1.0,) * 4)


def test_a_person_who_comes_back_soon_is_worth_a_ping():
    prices = idle_prices(270, BIG, NEWER, KEEP, soon())
    assert prices.choice == "ping" and prices.ping < prices.cold and prices.back > 0.99


def test_a_person_who_does_not_come_back_is_not_pinged():
    prices = idle_prices(270, BIG, NEWER, KEEP, gone())
    assert prices.choice == "cold" and prices.cold < 1.0 and prices.back < 1e-6


def test_compacting_while_idle_pays_only_when_the_cold_call_would_write_much_more():
    """With no summary, an idle event that writes what the cold call would write costs at least as much as
    letting it go cold; when the cold call would keep the whole prefix and the event shrinks it, and the
    person comes back, writing the small request now and keeping it warm is cheaper than both."""
    same = IdleSizes(prefix=100_000, cold=20_000, compacted=20_000)
    prices = idle_prices(270, same, NEWER, KEEP, soon())
    assert prices.compact >= prices.cold - 1e-6
    late = Returns((2_000.0, 2_100.0, 2_200.0) * 4, (1.0,) * 12)  # back after half an hour, always
    shrink = IdleSizes(prefix=150_000, cold=150_000, compacted=10_000)
    prices = idle_prices(270, shrink, NEWER, KEEP, late)
    assert prices.choice == "compact" and prices.compact < min(prices.ping, prices.cold)


def test_a_summary_made_while_warm_is_what_compacting_while_idle_saves():
    with_summary = IdleSizes(prefix=150_000, cold=30_000, compacted=30_000, summary=(150_000, 2_000))
    late = Returns((2_000.0,) * 10, (1.0,) * 10)
    prices = idle_prices(270, with_summary, NEWER, KEEP, late)
    assert prices.compact < prices.cold  # the summary reads the prefix warm instead of writing it again


def test_no_expiry_or_no_pings_allowed_leaves_only_cold():
    assert idle_prices(270, BIG, CLASSIC, keep_warm_for(CLASSIC), PRIOR).choice == "cold"
    assert idle_prices(270, BIG, NEWER, keep_warm_for(NEWER, minutes=0), PRIOR).choice == "cold"


def test_pinging_stops_as_the_chance_of_a_return_fades():
    """Along one long wait the policy pings while the person may come back, then stops: the prior's waits
    end at 25 minutes, and beyond them only sessions that ended remain."""
    choices = [idle_prices(270 * j, BIG, NEWER, keep_warm_for(NEWER, by_price=False), PRIOR).choice
               for j in range(1, 14)]
    assert choices[0] == "ping" and choices[-1] == "cold"
    first_stop = choices.index("cold")
    assert all(c == "cold" for c in choices[first_stop:])


def test_the_survival_is_smooth_and_counts_sessions_that_ended():
    returns = Returns((100.0, math.inf), (1.0, 1.0))
    assert returns.survival(1) == pytest.approx(2.0, abs=1e-6) and returns.never == 1.0
    assert returns.survival(100) == pytest.approx(1.5)
    assert returns.survival(10_000) == pytest.approx(1.0, abs=1e-6)
    assert returns.with_waits([50.0], 3.0).total == 5.0


def test_modes():
    assert mode_from({}, None) == "auto" and mode_from({"TUI_AGENT_IDLE": "cold"}) == "cold"
    assert mode_from({"TUI_AGENT_IDLE": "cold"}, "ping") == "ping"
    with pytest.raises(ValueError, match="--idle"):
        mode_from({}, "sometimes")
    prices = idle_prices(270, BIG, NEWER, KEEP, soon())
    assert choice_from("auto", prices) == prices.choice and choice_from("cold", prices) == "cold"


def test_in_the_replay_the_policy_never_pings_more_than_the_fixed_rule_and_prices_its_tail():
    """On the long synthetic log: the pings the priced policy sends are at most the fixed rule's, after the
    last call too, and the table's repricing gives the replay's own cost (tail included)."""
    recorded = load_recorded(SYNTHETIC_LONG)
    results = replay(recorded, ["v2", "v2-ping", "v2-cold"], default_policy(), price=NEWER, check_memory=False)
    auto, fixed = results["v2"], results["v2-ping"]
    assert auto.tail[0] <= fixed.tail[0] == keep_warm_for(NEWER).max_pings
    assert auto.pings <= fixed.pings + keep_warm_for(NEWER, by_price=False).max_pings
    assert sum(auto.idle_choices.values()) > 0
    assert cost_at(auto, recorded, NEWER) == pytest.approx(auto.cost)
    assert results["v2-cold"].pings == 0 and results["v2-cold"].tail == (0, results["v2-cold"].tail[1], 0.0)


def test_the_pings_of_one_wait_stay_within_a_share_of_what_the_session_cost():
    """A session that ended (a scripted run, a person gone) pays every ping of its tail: those pings never cost
    more than `WAIT_SPEND_SHARE` of what the session had cost, so a small session is not billed a fifth more."""
    from tui_agent.core.idle import WAIT_SPEND_SHARE
    from tests.shared import SMALL_LOG

    recorded = load_recorded(SMALL_LOG)
    v2 = replay(recorded, ["v2"], default_policy(), price=NEWER, check_memory=False)["v2"]
    before_tail = v2.cost - v2.tail_cost
    assert 0 < v2.tail_cost <= WAIT_SPEND_SHARE * before_tail
