"""The live cache clock: when the cache goes cold and what the next call then writes (issue 17, item 5)."""

from __future__ import annotations

from tui_agent.core.cache_clock import cache_outlook, outlook_line
from tui_agent.core.models import CLASSIC, NEWER, ONE_HOUR, CachePrice, for_model


def test_warm_then_cold_after_the_models_time_to_live():
    warm = cache_outlook(60, NEWER, cached_tokens=40_000, new_tokens=2_000)
    assert warm is not None and not warm.cold and warm.seconds_left == 240
    assert warm.next_read_tokens == 42_000 and warm.next_write_tokens == 0
    assert warm.next_units == 42_000 * 0.05 and warm.cold_units == 42_000 * 1.25
    assert outlook_line(warm).startswith("cache warm 4:00 more (5-min TTL)")
    assert "writes ≈42.0k again" in outlook_line(warm)
    cold = cache_outlook(301, NEWER, cached_tokens=40_000, new_tokens=2_000)
    assert cold.cold and cold.next_write_tokens == 42_000 and cold.next_units == 42_000 * 1.25
    assert outlook_line(cold, 3e-6) == ("cache cold (idle 5:01 > 5-min TTL): "
                                        "the next call writes ≈42.0k again (≈$0.1575)")


def test_the_one_hour_cache_and_a_price_without_expiry():
    hour = CachePrice(read=0.1, write=2.0, ttl_seconds=ONE_HOUR)
    assert not cache_outlook(301, hour, 10_000, 0).cold and cache_outlook(3601, hour, 10_000, 0).cold
    assert for_model("claude-sonnet-4-5", one_hour=True).ttl_seconds == ONE_HOUR
    assert cache_outlook(10_000, CLASSIC, 10_000, 0) is None  # no expiry: nothing to say


def test_a_call_that_cached_nothing_says_so_and_prices_the_next_uncached():
    """Issue 28 §4: "cache warm 4:54 more" beside "cached 0 · written 0", and the next call priced as a
    cache read ($0.0165) where 164k uncached tokens cost ≈$0.33. No cache, no clock: the next call is
    priced as this one was, every token at the input price."""
    outlook = cache_outlook(6, NEWER, cached_tokens=0, new_tokens=164_000, nothing_cached=True)
    assert outlook is not None and outlook.uncached and outlook.next_units == 164_000 == outlook.cold_units
    line = outlook_line(outlook, 2e-6)
    assert line == "nothing cached: the API reported no cache write · the next call sends ≈164.0k uncached (≈$0.3280)"
    assert "warm" not in line


def test_keep_warm_pings_as_many_as_half_the_rewrite_pays_for() -> None:
    """At 0.05 reads and 1.25 writes a ping (0.05 of the prefix) spares a rewrite 1.2 dearer: twelve pings
    (54 minutes at one every 4.5) cost half of it; at 0.1 five; within an hour; no expiry or no saving: none."""
    from tui_agent.core.cache_clock import keep_warm_for
    from tui_agent.core.models import CHEAPEST, CLASSIC, NEWER, ONE_HOUR_CACHE, CachePrice

    newer = keep_warm_for(NEWER)
    assert (newer.interval_seconds, newer.max_pings) == (270.0, 12)
    assert keep_warm_for(CachePrice(read=0.1, write=1.25, ttl_seconds=300)).max_pings == 5
    assert keep_warm_for(CHEAPEST).max_pings == 13  # 24 would pay; an hour holds 13
    assert keep_warm_for(ONE_HOUR_CACHE).max_pings == 1  # one ping at 54 minutes, then the hour is up
    assert keep_warm_for(CLASSIC).max_pings == 0  # no expiry: nothing to keep warm
    assert keep_warm_for(CachePrice(read=1.0, write=1.0, ttl_seconds=300)).max_pings == 0
    assert keep_warm_for(NEWER, minutes=10).max_pings == 2
    assert keep_warm_for(NEWER, minutes=0).max_pings == 0


def test_keep_warm_leaves_the_cache_idle_only_since_the_last_ping() -> None:
    from tui_agent.core.cache_clock import keep_warm_for
    from tui_agent.core.models import NEWER

    warm = keep_warm_for(NEWER)
    assert warm.pings(200) == 0 and warm.idle_after_pings(200) == 200  # came back before the first ping
    assert warm.pings(270) == 0  # exactly at the first ping's time: the call itself refreshes it
    assert warm.pings(7 * 60) == 1 and warm.idle_after_pings(7 * 60) == 150
    assert warm.pings(25 * 60) == 5 and not NEWER.expired(warm.idle_after_pings(25 * 60))
    assert warm.pings(3 * 3600) == 12 and NEWER.expired(warm.idle_after_pings(3 * 3600))  # gone too long: cold
    assert warm.pings(None) == 0 and warm.idle_after_pings(None) is None
