"""core.watch (a replay of a growing log), core.call_figures and core.forgot, in process."""

from __future__ import annotations

import json
from pathlib import Path

from tui_agent.core.recordings.call_figures import FiguresRun
from tui_agent.core.recordings.follow import Batch
from tui_agent.core.recordings.forgot import coverage_after, forgotten
from tui_agent.core.messages import text_of
from tui_agent.core.recordings.replay import open_replay
from tui_agent.core.recordings.watch import FIT_CALLS, LiveReplay
from tests.shared import SMALL_LOG, SYNTHETIC_LONG, TRANSCRIPTS

SHARED = TRANSCRIPTS  # tests/shared.py: the one definition of ../shared/transcripts
SMALL = SMALL_LOG  # the small real log, else the long synthetic one (tests/shared.py)
ATHENA = SHARED / "tensiondriven__athena__f059ad9a-9964-437c-90a1-28f4dd6d245b.jsonl"
COMPACTED = ATHENA if ATHENA.is_file() else SYNTHETIC_LONG  # a log with the agent's own compaction


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def test_growth_keeps_the_steps_and_matches_a_replay_of_the_whole(tmp_path):
    lines = _lines(SMALL)
    live = LiveReplay(SMALL, strategies=("none", "v2"))
    handed = []
    for at in range(0, len(lines), 5):
        live.feed(Batch(lines=lines[at:at + 5]))
        assert live.fixed or not live.ready()  # nothing final while the ruler is provisional
        handed += live.ready()
    handed += live.flush()
    whole = open_replay(SMALL, ("none", "v2"), fit_calls=FIT_CALLS)
    assert [s.number for s in handed] == list(range(1, whole.calls + 1))
    assert live.restarts == 0
    for step in handed:
        other = whole.step(step.number - 1)
        assert (step.real_tokens, step.ours_tokens, step.costs["v2"].cost) == (
            other.real_tokens, other.ours_tokens, other.costs["v2"].cost)


def test_a_reset_replays_from_the_start(tmp_path):
    lines = _lines(SMALL)
    live = LiveReplay(SMALL)
    live.feed(Batch(lines=lines[:60]))
    first = len(live.ready())
    assert first >= FIT_CALLS
    live.feed(Batch(lines=lines[:30], reset=True))
    assert live.resets == 1 and live.handed == 0
    again = live.ready() + live.flush()
    assert again[0].number == 1 and len(again) < first


def test_unreadable_and_non_json_lines_are_counted():
    lines = _lines(SMALL)[:40]
    live = LiveReplay(SMALL)
    live.feed(Batch(lines=lines[:20] + ["{not json"] + lines[20:], unreadable=2))
    assert live.unreadable == 2 and live.skipped_lines == 1 and live.calls > 0


def test_compact_boundary_pre_tokens_and_the_summary_after_it():
    lines = _lines(SMALL)[:40]
    boundary = {"type": "system", "subtype": "compact_boundary", "content": "Conversation compacted",
                "compactMetadata": {"trigger": "auto", "preTokens": 155_123}}
    summary = {"type": "user", "isCompactSummary": True, "message": {"role": "user", "content":
               "This session is being continued from a previous conversation. Summary: ported the parser."}}
    tail = _lines(SMALL)[40:70]
    live = LiveReplay(SMALL)
    live.feed(Batch(lines=lines + [json.dumps(boundary), json.dumps(summary)] + tail))
    steps = live.flush()
    run = FiguresRun()
    figures = [run.figures(live.replay, s, live.pre_tokens()) for s in steps]
    flagged = [f for f in figures if f.agent_compaction]
    assert len(flagged) == 1
    [compaction] = flagged[0].agent_compactions  # the boundary and its summary: one compaction
    assert compaction.kind == "boundary" and compaction.pre_tokens == 155_123
    assert compaction.text.startswith("This session is being continued")
    assert flagged[0].json()["agent_compactions"][0]["pre_tokens"] == 155_123


def test_figures_price_the_recorded_usage_at_the_call_model():
    replay = open_replay(SMALL, ("none", "v2"))
    run = FiguresRun()
    first = run.figures(replay, replay.step(0))
    usage = replay.step(0).usage
    assert first.recorded_tokens == sum(usage.get(k, 0) for k in (
        "input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"))
    assert 0 < first.hit_share < 1 and first.gap_seconds is None and first.recorded_cost_usd > 0
    second = run.figures(replay, replay.step(1))
    assert second.gap_seconds is not None and second.cache_expired == (second.gap_seconds > 300)
    assert second.recorded_total_usd == first.recorded_cost_usd + second.recorded_cost_usd


def test_what_the_agent_forgot_at_its_compaction():
    replay = open_replay(COMPACTED, ("v2",))
    compaction = replay.agent_compactions[0]
    lost = forgotten(replay.history, compaction.index)
    summary = " ".join(text_of(replay.history[compaction.index]).split()).lower()
    assert 0 < len(lost.prompts) <= lost.prompts_before and 0 < len(lost.paths) <= lost.paths_before
    assert all(" ".join(p.split()).lower()[:60] not in summary for p in lost.prompts)
    assert len(lost.paths) < lost.paths_before  # the summary names some of the files it touched
    steps = [replay.step(k) for k in range(compaction.call - 1 + 10)]
    recorded = replay.recorded
    after = coverage_after(replay.history, recorded.calls, recorded.segment_start, compaction.call,
                           [s.messages for s in steps])
    assert after.calls == tuple(range(compaction.call, compaction.call + 10))
    assert after.recorded.value < after.ours.value  # its summary lost what its next calls needed; ours kept it
