"""One session's figures for the report are the replay engine's: each strategy's bill by cause adds up to
what its run charged, the recorded bill is the watch's per-call figures summed, a cache miss after a pause
past the TTL is told as such and priced as a rewrite, and the idle policy picks ours with or without pings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.replay.jsonl import Log, read, text
from tests.shared import SYNTHETIC_LONG
from tui_agent.core.models import for_model, model_info
from tui_agent.core.recordings.call_figures import FiguresRun
from tui_agent.core.recordings.cost_causes import cost_by_cause
from tui_agent.core.recordings.economics import replay
from tui_agent.core.recordings.strategy_table import default_policy
from tui_agent.core.recordings.recorded import load_recorded
from tui_agent.core.recordings.recorded_spend import MISS_REASONS
from tui_agent.core.recordings.replay import open_replay
from tui_agent.core.recordings.session_figures import SessionFigures, ours_strategy, session_figures

MODEL = "claude-sonnet-4-5-20250929"


def test_each_strategys_causes_add_up_to_what_its_run_charged():
    figures = session_figures(SYNTHETIC_LONG)
    assert [s.name for s in figures.strategies] == ["append_only", "ours", "claude_code", "opencode", "context_editing"]
    for s in figures.strategies:
        assert s.conversation + s.idle_rewrites + s.summaries + s.pings_units == pytest.approx(s.units, rel=1e-9), s.name
    ours, append = figures.strategy("ours"), figures.strategy("append_only")
    assert ours is not None and append is not None
    assert ours.pings > 0 and ours.pings_units > 0 and ours.spared_units > 0 and ours.idle_rewrites == 0
    assert append.pings == 0 and append.expired >= 1 and append.idle_rewrites > 0  # its pause goes cold


def test_the_causes_reprice_the_replays_own_results():
    recorded = load_recorded(SYNTHETIC_LONG)
    price = for_model(MODEL)
    results = replay(recorded, ["none", "v2", "cc-92"], default_policy(), price=price, check_memory=False)
    for name, result in results.items():
        assert cost_by_cause(result, price).total == pytest.approx(result.cost), name


def test_the_recorded_bill_is_the_watchs_per_call_figures_summed():
    figures = session_figures(SYNTHETIC_LONG)
    replay_ = open_replay(SYNTHETIC_LONG)
    run = FiguresRun()
    per_call = [run.figures(replay_, step).recorded_cost_usd for step in replay_.run_all()]
    assert figures.input_usd == pytest.approx(sum(c for c in per_call if c is not None))
    assert figures.unit_usd == model_info(MODEL).input_price / 1e6


def _paused_log(path: Path) -> Path:
    """Three calls; the third ten minutes after the second, its whole prompt written again (cache cold)."""
    log = Log().user("Read the two files.", timestamp="2026-12-01T10:00:00.000Z")
    usages = [(20_000, 0, 20_000), (21_000, 20_000, 1_000), (22_000, 0, 22_000)]
    stamps = ["10:00:05", "10:00:30", "10:10:40"]
    for i, ((total, read_, written), stamp) in enumerate(zip(usages, stamps)):
        log.record(type="assistant", timestamp=f"2026-12-01T{stamp}.000Z", message={
            "id": f"m{i}", "type": "message", "role": "assistant", "model": MODEL,
            "content": [text(f"Reading {i}."), read(f"t{i}", f"src/f{i}.py")],
            "usage": {"input_tokens": total - read_ - written, "cache_read_input_tokens": read_,
                      "cache_creation_input_tokens": written, "output_tokens": 10}})
        log.result(f"t{i}", "x = 1\n" * 600, timestamp=f"2026-12-01T{stamp}.500Z")
    return log.write(path)


def test_a_miss_after_a_pause_past_the_ttl_is_told_and_priced_as_a_rewrite(tmp_path):
    figures = session_figures(_paused_log(tmp_path / "paused.jsonl"))
    ttl = MISS_REASONS.index("ttl_expired")
    assert figures.miss_calls[ttl] == 1 and figures.miss_tokens[ttl] == 21_000  # what call 2 left cached
    price, cache = model_info(MODEL).input_price / 1e6, for_model(MODEL)
    assert figures.miss_usd[ttl] == pytest.approx(21_000 * (cache.write - cache.read) * price)
    assert figures.idle_rewrites_usd == figures.miss_usd[ttl]
    assert sum(figures.miss_calls) == 1 and figures.started == "2026-12-01T10:00:05+00:00"


def test_the_idle_policy_picks_ours_with_or_without_pings():
    assert (ours_strategy("auto"), ours_strategy("ping")) == ("v2", "v2-ping")
    assert (ours_strategy("cold"), ours_strategy("compact")) == ("v2-cold", "v2-compact")
    with pytest.raises(ValueError, match="idle policy 'warm'"):
        ours_strategy("warm")
    cold = session_figures(SYNTHETIC_LONG, idle="cold").strategy("ours")
    assert cold is not None and cold.pings == 0 and cold.expired >= 1


def test_figures_survive_their_json_exactly():
    figures = session_figures(SYNTHETIC_LONG)
    assert SessionFigures.from_json(json.loads(json.dumps(figures.json()))) == figures
