"""Cache prices (`core.models`) and cache expiry in the economics replay."""

from __future__ import annotations

from tui_agent.core.compaction import CompactPolicy
from tui_agent.core.recordings.economics import replay
from tui_agent.core.recordings.recorded import Recorded, TokenModel
from tests.core.helpers import assistant_text
from tui_agent.core.messages import user_text
from tui_agent.core.models import CLASSIC, NEWER, CachePrice, for_model
from tui_agent.core.recordings.transcript_records import timestamp as _timestamp

POLICY = CompactPolicy(context_window=200_000, max_output_tokens=32_000, enabled=True)


def test_each_model_reads_the_cache_at_its_own_price():
    assert for_model("claude-opus-4-5-20251101").read == 0.1
    assert abs(for_model("claude-sonnet-5-5").read - 0.05) < 1e-9
    assert abs(for_model("claude-opus-5-5").read - 0.05) < 1e-9
    assert abs(for_model("claude-fable-5-1").read - 0.025) < 1e-9
    assert for_model("some-unknown-model").read == 0.1  # the usual multiplier when the model is unknown
    assert for_model("claude-sonnet-4-20250514", one_hour=True) == CachePrice(0.1, 2.0, 3600.0)
    assert for_model("claude-sonnet-4-20250514") == CachePrice(0.1, 1.25, 300.0)


def test_a_request_costs_its_read_prefix_and_its_written_rest():
    assert CLASSIC.cost(1000, 800) == 0.1 * 800 + 1.25 * 200
    assert NEWER.expired(301) and not NEWER.expired(299) and not NEWER.expired(None)
    assert not CLASSIC.expired(10_000)  # the classic benchmark has no expiry


def _recorded(times):
    history, calls = [], []
    for k in range(4):
        history.append(user_text(f"prompt {k} " + "word " * 400))
        calls.append(len(history))
        history.append(assistant_text(f"answer {k}"))
    return Recorded("synthetic", history, calls, [1000 * (k + 1) for k in range(4)], [0] * 4,
                    TokenModel(1000.0, 1.0), times=times)


def test_a_gap_past_the_time_to_live_writes_the_whole_prefix_again():
    warm = replay(_recorded([0.0, 60.0, 120.0, 180.0]), ["none"], POLICY, check_memory=False, price=NEWER)["none"]
    cold = replay(_recorded([0.0, 60.0, 1000.0, 1060.0]), ["none"], POLICY, check_memory=False, price=NEWER)["none"]
    assert warm.expired == 0 and cold.expired == 1
    assert cold.cost > warm.cost and cold.cached < warm.cached
    unknown = replay(_recorded([None] * 4), ["none"], POLICY, check_memory=False, price=NEWER)["none"]
    assert unknown.expired == 0 and unknown.cost == warm.cost  # an unknown gap is not an expiry


def test_log_timestamps_are_read_as_utc_seconds():
    assert _timestamp("1970-01-01T00:01:00.000Z") == 60.0
    assert _timestamp("not a time") is None and _timestamp(None) is None
