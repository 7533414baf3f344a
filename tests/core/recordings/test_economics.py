"""Compaction 2.0 on the real shared Claude Code sessions: the acceptance checks of the economics replay.

The sessions live in ../shared/transcripts (CI has them there); a clone without them runs the
same checks on the long synthetic log (tests/shared.LOGS) instead of skipping.
"""

from __future__ import annotations


import pytest

from tests.shared import LOGS, TRANSCRIPTS, shared_logs
from tui_agent.core.compaction import CompactPolicy
from tui_agent.core.models import PRICE_MODELS
from tui_agent.core.recordings.economics import replay
from tui_agent.core.recordings.recorded import load_recorded
from tui_agent.core.recordings.economics_report import estimator_error, format_report, session_report

SHARED = TRANSCRIPTS
SESSIONS = LOGS
POLICY = CompactPolicy(context_window=200_000, max_output_tokens=32_000, enabled=True)


def test_the_shared_sessions_are_there():
    assert len(shared_logs(3)) >= 3, f"expected the shared Claude Code sessions in {SHARED}"


@pytest.mark.parametrize("path", SESSIONS, ids=lambda p: p.name[:30])
def test_v2_on_a_real_session_fits_keeps_every_prompt_and_path_and_stays_valid(path):
    recorded = load_recorded(path)
    results = replay(recorded, ["none", "v2"], POLICY)
    none, v2 = results["none"], results["v2"]
    assert v2.over_window == 0, "no call over the 200k window"
    assert v2.invalid == 0, "every request valid for the Messages API"
    assert v2.newest_intact == v2.calls, "the newest round is always intact"
    assert v2.prompts_missing == 0 and v2.paths_missing == 0, "nothing the user said or the agent touched vanishes"
    assert v2.price / none.price <= 1.15, "price per prompt token within 1.15× the append-only conversation"
    if none.average > 90_000:
        assert v2.average >= 50_000, "compaction must not win by forgetting"
        # the saving at today's prices (0.05 reads, a 5-minute TTL: what the defaults are chosen at); at the
        # classic 0.1 with no expiry the 80 % mark saves less on a session of this size (0.81 on M-Claude)
        today = replay(recorded, ["none", "v2"], POLICY, price=PRICE_MODELS[1])
        assert today["v2"].cost < today["none"].cost * 0.8


@pytest.mark.parametrize("path", SESSIONS, ids=lambda p: p.name[:30])
def test_estimator_against_the_logged_real_usage(path):
    ours, v1 = estimator_error(load_recorded(path))
    assert ours.median <= 0.005 and ours.p90 <= 0.015
    assert ours.median <= v1.median * 1.5


def test_report_prints_every_strategy_side_by_side():
    report = session_report(SESSIONS[0], check_memory=False)
    text = format_report([report])
    for name in ("none", "seed-v1", "v1", "v2"):
        assert f"\n{name} " in text
    assert "estimate error vs logged usage" in text and "cost floor" in text


def test_a_call_of_the_append_only_run_sizes_only_what_it_adds(tmp_path):
    """`StrategyRun` keeps its previous request's running size sums and extends them in place: a call far
    into a long session allocates a couple of pointer lists (its request, the prefix compared), not the
    copies and re-sums of every size that made each call of a growing log slower than the last."""
    import tracemalloc

    from tests.watch.fast_log import write_log
    from tui_agent.core.recordings.economics import strategy_runs

    log = tmp_path / "s.jsonl"
    write_log(log, 3000)
    recorded = load_recorded(log)
    run = strategy_runs(recorded, ["none"], check_memory=False)["none"]
    for _ in range(len(recorded.calls) - 1):
        run.step()
    tracemalloc.start()
    try:
        price = run.step()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4 * 8 * len(price.messages), peak  # 8 bytes a message per pointer list
    assert run.result.tokens == pytest.approx(sum(call[0] for call in run.result.per_call))


def test_the_shared_prefix_takes_the_makers_word_once_confirmed_and_never_a_wrong_one():
    """`common_prefix(..., said=n)`: a maker's word that its first n messages are the previous ones is
    confirmed by one comparison, not the identity walk over them (a long watch's most costly step), and a
    word the comparison refutes changes nothing."""
    from tui_agent.core.messages import user_text
    from tui_agent.core.recordings.replay_checks import common_prefix

    class Walked(list):
        walks = 0

        def __iter__(self):
            Walked.walks += 1
            return super().__iter__()

    previous = [user_text(f"m{i}") for i in range(1_000)]
    grown = Walked(previous + [user_text("new")])
    assert common_prefix(Walked(previous), grown, said=1_000) == 1_000 and Walked.walks == 0
    assert common_prefix(Walked(previous), grown) == 1_000 and Walked.walks > 0
    changed = previous[:500] + [user_text("other")] + previous[501:]
    for said in (0, 400, 500, 501, 1_000, 5_000):  # right, short, and wrong words
        assert common_prefix(previous, changed, said=said) == 500
        assert common_prefix(previous, [*previous[:10], {**previous[10]}, *previous[11:]], said=said) == 1_000


def test_the_estimator_run_adds_each_requests_new_estimates_and_sums_nothing_again(tmp_path):
    """`EstimatorRun` keeps v1's uncalibrated request size as a running sum: a call reads the estimates it
    adds, not every estimate of the request again (a long watch's call grew with the log)."""
    from tests.watch.fast_log import write_log
    from tui_agent.core.recordings.economics_report import EstimatorRun

    class Read(list):
        reads = 0

        def __getitem__(self, at):
            Read.reads += len(range(len(self))[at]) if isinstance(at, slice) else 1
            return super().__getitem__(at)

    log = tmp_path / "s.jsonl"
    write_log(log, 400)
    recorded = load_recorded(log)
    plain = EstimatorRun(recorded)
    expected = [plain.step() for _ in recorded.calls]
    recorded.estimates = Read(recorded.estimates)
    run = EstimatorRun(recorded)
    assert [run.step() for _ in recorded.calls] == expected
    assert Read.reads <= 2 * len(recorded.estimates), Read.reads


def test_a_session_memo_keeps_keys_bounded_by_their_characters(monkeypatch):
    """The cache keys a replay makes are of messages a strategy made anew (a recap at each event, growing
    with the session): a watch kept each with its key until 8,192 were. They are bounded by characters
    too, and a key let go is made again equal."""
    from tui_agent.core.messages import to_json, user_text
    from tui_agent.core.recordings import replay_checks

    monkeypatch.setattr(replay_checks, "KEY_CHARS", 50_000)
    memo = replay_checks.SessionMemo()
    made = [user_text(f"recap {i}: " + "read src/file.py, " * (i + 20)) for i in range(200)]
    for message in made:
        assert memo.key(message) == to_json(message)
        assert memo.key_chars <= 50_000 + len(to_json(message))
    assert memo.key_chars == sum(len(value) for _, value in memo._keys.values()) <= 50_000
    assert len(memo._keys) < 40 and memo.key(made[0]) == to_json(made[0])
