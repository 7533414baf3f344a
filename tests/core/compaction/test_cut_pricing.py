"""Issue 17, "no loss without pressure": below the high mark a read result is cut only where the cut pays
(or when it is one huge result); at an event every long read result after the drop point is cut for free."""

from __future__ import annotations

from tui_agent.core.compaction import Compactor, CompactPolicy
from tui_agent.core.compaction.pricing import CutCase, calls_until_event, cut_on_read_now, cut_pays
from tui_agent.core.messages import protocol_errors
from tests.core.helpers import split_turn
from tests.core.compaction.test_compactor import long_turn, run_calls


def test_calls_until_event_is_capped_by_the_session_so_far():
    assert calls_until_event(150, 100, 10, 5) == 0.0  # over the mark: the event is now
    assert calls_until_event(50, 100, 10, 100) == 5.0  # (100 − 50) / 10
    assert calls_until_event(50, 100, 1, 8) == 8.0  # a session expected to last as long again
    assert calls_until_event(50, 100, 0, 3) == 3.0


def test_a_cut_pays_only_when_its_savings_outweigh_the_rewrite_and_a_read_again():
    cheap = CutCase(saved_tokens=2_000, kept_tokens=500, tail_tokens=0, request_tokens=10_000, calls_until_event=40)
    assert cut_pays(cheap, read=0.1, write=1.25)  # 8,000 saved vs 625 − 250 + 1,000 + 2,500
    short = CutCase(saved_tokens=2_000, kept_tokens=500, tail_tokens=0, request_tokens=10_000, calls_until_event=5)
    assert not cut_pays(short, read=0.1, write=1.25)
    long_tail = CutCase(saved_tokens=2_000, kept_tokens=500, tail_tokens=30_000, request_tokens=40_000,
                        calls_until_event=40)
    assert not cut_pays(long_tail, read=0.1, write=1.25)  # rewriting the cached tail costs more
    assert cut_on_read_now(70_000, 2_000, 30_000, 40_000, 0, read=0.1, write=1.25, huge_chars=60_000)  # huge
    assert cut_on_read_now(5_000, 2_000, 0, 1_000, 0, read=0.1, write=1.25, huge_chars=60_000, always=True)


def test_below_the_high_mark_nothing_is_cut_on_read():
    history = long_turn(8, size=10_000)
    compactor = Compactor(CompactPolicy(context_window=1_000_000, max_output_tokens=10_000, enabled=True))
    results = run_calls(compactor, history, start=3)
    assert all(r.plan.event is None and not r.plan.cuts for r in results)
    assert all(r.messages[k] == history[k] for r in results for k in range(len(r.messages)))  # sent whole


def test_one_huge_result_is_cut_on_read_whatever_the_budget():
    history = long_turn(2, size=80_000)
    compactor = Compactor(CompactPolicy(context_window=1_000_000, max_output_tokens=10_000, enabled=True))
    compactor.compact(history[:3])
    second = compactor.compact(history[:5])
    assert second.plan.event is not None and second.plan.event.kinds == ("cut",)
    assert len(second.messages[2]["content"][0]["content"]) < 3_000
    assert second.messages[4] == history[4]  # the newest round stays whole


def test_an_event_cuts_the_long_read_results_it_rewrites_anyway():
    history = split_turn(long_turn(30, size=6_000), every=5)  # an event cuts finished turns' results
    compactor = Compactor(CompactPolicy(context_window=60_000, max_output_tokens=8_000, enabled=True, mask=False))
    results = run_calls(compactor, history, start=3)
    events = [r for r in results if r.plan.event is not None]
    assert events and all(r.plan.estimated_tokens > 0 for r in events)
    first = events[0].plan
    assert "cut" in first.event.kinds and first.event.tokens_before > first.high_tokens
    before = [r for r in results if r.plan.call < first.call]
    assert before and not any(r.plan.cuts for r in before)  # nothing was cut before the pressure came
    assert all(protocol_errors(r.messages) == [] for r in results)


def test_an_asked_compact_drops_even_when_cuts_alone_would_reach_its_target():
    history = long_turn(10, size=6_000)
    compactor = Compactor(CompactPolicy(context_window=1_000_000, max_output_tokens=10_000, enabled=True))
    run_calls(compactor, history[:-2], start=3)
    compactor.request_event("drop")
    result = compactor.compact(history)
    assert result.plan.event is not None and "drop" in result.plan.event.kinds
    assert protocol_errors(result.messages) == []


def test_the_loss_report_lists_what_is_at_risk_most_recently_used_first():
    from tui_agent.core.compaction.at_risk import at_risk
    from tui_agent.core.messages import user_text

    history = [user_text("read src/old_module.py and parse_config"), user_text("then src/new_module.py"),
               user_text("keep src/kept.py")]
    assert at_risk(history, [0, 1], "still here: src/kept.py parse_config") == ("src/new_module.py", "src/old_module.py")
    history = long_turn(40, size=6_000)
    for k in range(2, len(history), 2):  # each result names an identifier of its own (the recap names the paths)
        block = history[k]["content"][0]
        history[k] = {**history[k], "content": [{**block, "content": f"def helper_{k}_fn(): " + block["content"]}]}
    compactor = Compactor(CompactPolicy(context_window=60_000, max_output_tokens=8_000, enabled=True, mask=False))
    results = run_calls(compactor, history, start=3)
    drops = [r.plan.event for r in results if r.plan.event is not None and "drop" in r.plan.event.kinds]
    assert drops
    risk = drops[0].loss.at_risk
    assert risk and all(e.startswith("helper_") for e in risk)
    numbers = [int(e.split("_")[1]) for e in risk]
    assert numbers == sorted(numbers, reverse=True)  # the most recently used first
    request = str(next(r.messages for r in results if r.plan.event is drops[0]))
    assert not any(f"'{e}'" in request or f'"{e}"' in request for e in risk)


def test_masks_reach_the_request_after_an_event_and_stale_reads_go_first():
    from tui_agent.core.compaction.ranking import mask_protection, superseded_reads

    assert mask_protection(20_000, target=50_000, baseline=20_000, head=10_000, recap=1_000) == 9_500
    assert mask_protection(4_000, target=50_000, baseline=20_000, head=0, recap=0) == 4_000
    uses = [(1, "Read", {"file_path": "a.py"}), (3, "Read", {"file_path": "b.py"}), (5, "Edit", {"file_path": "a.py"})]
    assert superseded_reads(uses) == {2}  # a.py was edited since its read; b.py was not touched again
    history = split_turn(long_turn(60, size=3_000), every=10)  # under the cut size: only masks and drops free room
    compactor = Compactor(CompactPolicy(context_window=60_000, max_output_tokens=8_000, enabled=True, high_water=0.6))
    results = run_calls(compactor, history, start=3)
    masked = [r for r in results if r.plan.event is not None and "mask" in r.plan.event.kinds]
    assert masked, "an event masks old re-runnable results"
    plan = masked[0].plan
    assert any(plan.is_sent(i) for i in plan.masks), "a masked result is still sent (a placeholder) after the event"
    assert all(protocol_errors(r.messages) == [] for r in results)


def test_a_live_session_prices_its_cuts_at_its_models_cache_prices(tmp_path, monkeypatch):
    from tui_agent.core.agent import factory
    from tui_agent.core.models import CachePrice

    monkeypatch.setattr(factory, "for_provider", lambda provider: CachePrice(read=0.05, write=2.0, ttl_seconds=3600))
    session, _ = factory.build_session(tmp_path, model="demo", headless=True)
    assert (session.compact_policy.cache_read, session.compact_policy.cache_write) == (0.05, 2.0)
    from tui_agent.core.providers.demo import demo_policy

    assert session.compact_policy.low_water == demo_policy().low_water  # the demo's own marks stay


def test_a_session_on_the_1h_cache_prices_its_cuts_at_a_2x_write(tmp_path):
    """ENABLE_PROMPT_CACHING_1H=1: the compactor weighs a cut against the 1-hour cache's 2x write."""
    from tui_agent.core.agent import factory

    env = {"ANTHROPIC_API_KEY": "k", "ENABLE_PROMPT_CACHING_1H": "1"}
    session, _ = factory.build_session(tmp_path, model="claude-sonnet-4-5", headless=True, env=env)
    assert session.compact_policy.cache_write == 2.0
    plain, _ = factory.build_session(tmp_path, model="claude-sonnet-4-5", headless=True, env={"ANTHROPIC_API_KEY": "k"})
    assert plain.compact_policy.cache_write == 1.25
