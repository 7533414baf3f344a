"""core.replay on small synthetic logs: the steps, their costs against the report, and the real-file
cases (broken lines, sidechains, images, missing results, Windows paths, the agent's own compactions,
our journals)."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from tests.replay.jsonl import Log, basic, read, rounds, text
from tui_agent.core.recordings.strategy_table import STRATEGIES
from tui_agent.core.recordings.economics_report import session_report
from tui_agent.core.messages import protocol_errors, tool_results, tool_uses
from tui_agent.core.recordings.replay import REPLAY_STRATEGIES, open_replay
from tui_agent.core.recordings.replay_json import replay_json
from tui_agent.core.recordings.transcripts import MISSING_RESULT, load_transcript

NUMBERS = ("calls", "over_window", "peak", "tokens", "cost", "cached", "newest_intact", "prompts_missing",
           "paths_missing", "invalid", "events")


def numbers(result) -> dict:
    return {name: getattr(result, name) for name in NUMBERS}


def test_steps_price_each_call_and_end_at_the_reports_totals(tmp_path: Path) -> None:
    path = basic(tmp_path / "s.jsonl", n=8)
    replay = open_replay(path)
    assert replay.calls == 9 and replay.kind == "claude-code" and replay.model.startswith("claude-sonnet-4-5")
    steps = replay.run_all()
    assert [s.number for s in steps] == list(range(1, 10))
    assert all(s.history_len < t.history_len for s, t in zip(steps, steps[1:]))
    assert steps[0].real_tokens == 5_000 and steps[0].usage["cache_creation_input_tokens"] == 100
    for s in steps:
        assert protocol_errors(s.messages) == []
        assert set(s.costs) == set(REPLAY_STRATEGIES)
        for c in s.costs.values():
            assert c.cost > 0 and c.total_cost >= c.cost
    # running totals are the sums of the per-call costs, and the last one is the report's cost
    report = session_report(path, REPLAY_STRATEGIES, check_memory=False, price=replay.price)
    for name in REPLAY_STRATEGIES:
        assert sum(s.costs[name].cost for s in steps) == pytest.approx(steps[-1].costs[name].total_cost)
        # the report's cost is the running total and the pings after the last call (the tail)
        result = report.results[name]
        assert steps[-1].costs[name].total_cost + result.tail_cost == pytest.approx(result.cost)
        assert steps[-1].costs[name].total_tokens == report.results[name].tokens
    # the estimate is of the request the agent really sent, so it tracks the logged size closely
    assert all(s.estimate.real == s.real_tokens for s in steps)
    assert max(s.estimate.error for s in steps[1:]) < 0.25


def test_a_jump_replays_the_calls_before_it_and_stepping_back_is_the_same_step(tmp_path: Path) -> None:
    path = basic(tmp_path / "s.jsonl", n=8)
    far = open_replay(path).step(7)
    replay = open_replay(path)
    one_by_one = [replay.step(k) for k in range(8)]
    assert far.plan.digest == one_by_one[7].plan.digest
    assert far.costs["v2"].total_cost == one_by_one[7].costs["v2"].total_cost
    assert replay.step(3) is one_by_one[3]
    with pytest.raises(IndexError, match="call 10 is not in this session"):
        replay.step(9)


def test_the_report_from_the_steps_equals_session_report(tmp_path: Path) -> None:
    path = basic(tmp_path / "s.jsonl", n=10)
    replay = open_replay(path, STRATEGIES, check_memory=True)
    replay.run_all()
    ours = replay.report()
    theirs = session_report(path, price=replay.price)
    assert ours.calls == theirs.calls and ours.messages == theirs.messages and ours.model == theirs.model
    assert {n: numbers(r) for n, r in ours.results.items()} == {n: numbers(r) for n, r in theirs.results.items()}
    assert ours.estimate == theirs.estimate and ours.estimate_v1 == theirs.estimate_v1


def test_broken_and_truncated_lines_are_skipped(tmp_path: Path) -> None:
    log = Log().user("Fix the bug.").raw("{not json").raw("[1, 2]").raw("")
    rounds(log, 4)
    log.raw('{"type":"assistant","message":{"id":"cut')  # a line cut short by a crash
    path = log.write(tmp_path / "broken.jsonl")
    replay = open_replay(path)
    assert replay.recorded.skipped_lines == 3
    assert replay.calls == 4
    assert all(protocol_errors(s.messages) == [] for s in replay.run_all())


def test_sidechain_records_are_not_part_of_the_replay(tmp_path: Path) -> None:
    log = Log().user("Explore the repo.")
    log.assistant([text("Starting."), read("t0", "a.py")], input_tokens=4_000)
    # a subagent's conversation, logged inline: huge, and never part of the main agent's requests
    log.user("subagent prompt " + "x" * 50_000, isSidechain=True)
    log.assistant([text("subagent answer")], input_tokens=90_000, isSidechain=True)
    log.result("t0", "contents of a.py")
    log.assistant([text("Done.")], input_tokens=4_100)
    replay = open_replay(log.write(tmp_path / "side.jsonl"))
    assert replay.calls == 2
    assert [s.real_tokens for s in replay.run_all()] == [4_000, 4_100]
    assert not any("subagent" in json.dumps(m) for m in replay.history)


def test_images_in_tool_results_count_as_images_not_as_base64(tmp_path: Path) -> None:
    picture = base64.b64encode(b"\x89PNG" + bytes(300_000)).decode()
    log = Log().user("What is in the screenshot?")
    log.assistant([{"type": "tool_use", "id": "t0", "name": "Read", "input": {"file_path": "shot.png"}}],
                  input_tokens=4_000)
    log.result("t0", [{"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": picture}}])
    log.assistant([text("A login form.")], input_tokens=5_600)
    replay = open_replay(log.write(tmp_path / "image.jsonl"))
    assert max(replay.recorded.estimates) < 3_000  # 400k chars of base64 would be 100k tokens
    steps = replay.run_all()
    assert steps[-1].plan.estimated_tokens < 20_000
    assert all(protocol_errors(s.messages) == [] for s in steps)


def test_a_tool_call_without_a_result_is_answered(tmp_path: Path) -> None:
    log = Log().user("Run the tests.")
    log.assistant([{"type": "tool_use", "id": "lost", "name": "Bash", "input": {"command": "pytest"}}],
                  input_tokens=4_000)
    log.user("never mind, stop")  # the result was never logged (interrupted)
    log.assistant([text("Stopped.")], input_tokens=4_200)
    replay = open_replay(log.write(tmp_path / "missing.jsonl"))
    answered = tool_results(replay.history[2])
    assert answered and answered[0]["tool_use_id"] == "lost" and answered[0]["content"] == MISSING_RESULT
    assert all(protocol_errors(s.messages) == [] for s in replay.run_all())


def test_windows_paths_are_kept_and_found_in_the_request(tmp_path: Path) -> None:
    win = "C:\\Users\\dev\\proj\\src\\main.rs"
    log = Log().user("Explain main.rs.", cwd="C:\\Users\\dev\\proj")
    log.assistant([read("t0", win)], input_tokens=4_000, cwd="C:\\Users\\dev\\proj")
    log.result("t0", "fn main() {}", cwd="C:\\Users\\dev\\proj")
    log.assistant([text("It prints nothing.")], input_tokens=4_100)
    path = log.write(tmp_path / "windows.jsonl")
    report = open_replay(path, STRATEGIES, check_memory=True)
    report.run_all()
    assert report.report().results["v2"].paths_missing == 0
    sent = [u["input"]["file_path"] for m in report.step(1).messages for u in tool_uses(m)]
    assert sent == [win]


def compacting_log(path: Path) -> Path:
    """Rounds, then Claude Code's own compaction (boundary + summary), then rounds on a smaller prompt."""
    log = Log().user("Build the feature.")
    rounds(log, 5, start_tokens=150_000, prefix="a")
    log.record(type="system", subtype="compact_boundary", content="Conversation compacted", parentUuid=None,
               compactMetadata={"trigger": "auto", "preTokens": 155_554})
    log.user("This session is being continued from a previous conversation that ran out of context. "
             "Summary: the feature is half built.", isCompactSummary=True, isVisibleInTranscriptOnly=True)
    rounds(log, 4, start_tokens=20_000, prefix="b")
    return log.write(path)


def test_the_agents_own_compaction_is_found_at_its_call(tmp_path: Path) -> None:
    path = compacting_log(tmp_path / "compacted.jsonl")
    load = load_transcript(path)
    assert load.compaction_boundaries and load.compaction_summaries
    replay = open_replay(path)
    kinds = [(c.kind, c.call) for c in replay.agent_compactions]
    assert kinds == [("boundary", 6)]  # the boundary and its summary: one compaction
    [compaction] = replay.agent_compactions
    assert compaction.summary == load.compaction_summaries[0] and compaction.text  # with its summary's words
    steps = replay.run_all()
    assert [bool(s.agent_compactions) for s in steps] == [False] * 5 + [True] + [False] * 3
    assert steps[5].recorded_start == compaction.summary > 0
    assert steps[4].recorded_start == 0
    assert steps[5].estimate.event  # the first call after the agent's compaction
    assert (5, "agent boundary") in replay.event_calls()


async def test_one_of_our_journals_replays_with_its_recorded_usage(tmp_path: Path) -> None:
    from tests.journal.helpers import run, session_on
    from tui_agent.core.journal.writer import start_journal
    from tui_agent.core.providers.base import UsageInfo
    from tui_agent.core.providers.scripted import ScriptedProvider, text_reply, tool_reply

    workspace = tmp_path / "repo"
    workspace.mkdir()
    (workspace / "notes.txt").write_text("the answer is 42\n")
    provider = ScriptedProvider(replies=[tool_reply("Read", {"file_path": "notes.txt"}, "t1", "Reading."),
                                         text_reply("It says 42."), text_reply("Yes, 42.")],
                                usage=UsageInfo(1_200, 8, 0, 300))
    session = session_on(workspace, provider)
    journal = start_journal(session)
    await run(session, "what do the notes say?")
    await run(session, "sure?")
    replay = open_replay(journal.path)
    assert replay.kind == "journal" and replay.model == "scripted"
    assert replay.calls == 3
    steps = replay.run_all()
    assert [s.real_tokens for s in steps] == [1_500] * 3
    assert [s.history_len for s in steps] == [1, 3, 5]
    assert steps[0].usage["cache_read_input_tokens"] == 300
    data = replay_json(open_replay(journal.path))
    assert data["kind"] == "journal" and len(data["steps"]) == 3


def test_json_has_stable_keys_and_every_step(tmp_path: Path) -> None:
    path = compacting_log(tmp_path / "c.jsonl")
    data = json.loads(json.dumps(replay_json(open_replay(path, STRATEGIES, check_memory=True))))
    assert set(data) == {"file", "kind", "model", "usd_per_unit", "report", "agent_compactions", "steps"}
    assert set(data["report"]["strategies"]) == set(STRATEGIES)
    assert len(data["steps"]) == data["report"]["calls"] == 9
    step = data["steps"][5]
    assert set(step) == {"call", "history_len", "recorded", "ours", "costs", "agent_compactions", "idle"}
    assert step["agent_compactions"] and step["recorded"]["real_tokens"] == 20_000
    v2 = data["report"]["strategies"]["v2"]
    assert data["steps"][-1]["costs"]["v2"]["total_cost"] + v2["tail_cost"] == pytest.approx(v2["cost"], abs=0.001)


def test_the_long_synthetic_log_is_what_its_generator_writes(tmp_path: Path) -> None:
    """tests/data's long synthetic log (what the whole-session checks run on without ../shared) is
    `long_session`'s output, byte for byte: regenerate it with that function after changing it."""
    from tests.replay.jsonl import long_session
    from tests.shared import SYNTHETIC_LONG

    assert long_session(tmp_path / "long.jsonl").read_bytes() == SYNTHETIC_LONG.read_bytes()
    replay = open_replay(SYNTHETIC_LONG)
    assert replay.calls == 48 and [(c.kind, c.call) for c in replay.agent_compactions] == [("boundary", 30)]
