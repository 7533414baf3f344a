"""Keeping the cache warm, priced in the replay: a session that pings while idle (`core.cache_clock`) finds a
pause of ten minutes warm; each ping is priced as a read of the previous request. `v2-ping` (and any
`…+warm` strategy) keeps warm by the fixed rule, after the last call too (the tail, until its limit); the
append-only conversation and the peers as they are never ping; `v2-cold` is ours without pings; `v2` waits by
the priced idle policy (`core/idle.py`, tested in tests/core/test_idle.py)."""

from __future__ import annotations

import pytest

from tests.shared import SYNTHETIC_LONG
from tui_agent.core.cache_clock import PING_OUTPUT_TOKENS, keep_warm_for
from tui_agent.core.models import CLASSIC, NEWER
from tui_agent.core.recordings.economics import replay
from tui_agent.core.recordings.strategy_table import default_policy
from tui_agent.core.recordings.economics_table import cost_at
from tui_agent.core.recordings.recorded import load_recorded


def test_a_pause_longer_than_the_ttl_is_kept_warm_by_pings_priced_as_reads():
    recorded = load_recorded(SYNTHETIC_LONG)
    gaps = [recorded.gap(k) for k in range(1, len(recorded.calls))]
    assert any(g is not None and g > NEWER.ttl_seconds for g in gaps), "the log holds a pause past the TTL"
    results = replay(recorded, ["none", "none+warm", "v2-ping", "v2-cold", "cc-92", "cc-92+warm"], default_policy(),
                     price=NEWER, check_memory=False)
    warm = keep_warm_for(NEWER)
    between = sum(warm.pings(g) for g in gaps)
    for name in ("v2-ping", "none+warm", "cc-92+warm"):  # between the calls, and the tail up to the limit
        assert results[name].pings == between + warm.max_pings and between > 0, name
        assert results[name].tail[0] == warm.max_pings
    assert results["v2-ping"].expired == 0 and results["v2-cold"].expired >= 1
    assert results["none"].pings == results["cc-92"].pings == results["v2-cold"].pings == 0
    for name in ("v2-ping", "v2-cold", "none", "none+warm"):  # the table's repricing gives the replay's own
        assert cost_at(results[name], recorded, NEWER) == pytest.approx(results[name].cost)  # figure, pings in


def test_a_ping_costs_a_read_of_the_previous_request_and_a_few_output_tokens():
    recorded = load_recorded(SYNTHETIC_LONG)
    v2 = replay(recorded, ["v2-ping"], default_policy(), price=NEWER, check_memory=False)["v2-ping"]
    k = next(k for k, call in enumerate(v2.per_call) if call[4])  # the first call after pings
    tokens, read, _, _, pings, idle, reads, written = v2.per_call[k]
    assert idle is not None and idle <= NEWER.ttl_seconds  # warm: idle only since the last ping
    previous = v2.per_call[k - 1][0]
    assert reads == pings * previous and written == 0.0  # each ping repeats the previous request
    ping = pings * (NEWER.read * previous + NEWER.output * PING_OUTPUT_TOKENS)
    without = list(v2.per_call)
    without[k] = (tokens, read, 0.0, 0.0, 0, idle, 0.0, 0.0)
    v2.per_call[:] = without
    assert cost_at(v2, recorded, NEWER) == pytest.approx(v2.cost - ping)


def test_no_expiry_no_ping():
    recorded = load_recorded(SYNTHETIC_LONG)
    assert replay(recorded, ["v2"], default_policy(), price=CLASSIC, check_memory=False)["v2"].pings == 0
