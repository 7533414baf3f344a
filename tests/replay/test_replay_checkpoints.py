"""Checkpoints change no figure: a replay that keeps only a few steps and makes the others again from its
checkpoints (each compactor's exported state + the runs' accumulators) gives every step and the report
exactly as a straight run from call 1 does, on real Claude Code logs, in any order."""

from __future__ import annotations

import json
import random

import pytest

from tui_agent.core.recordings.strategy_table import STRATEGIES
from tests.shared import SYNTHETIC_LONG, TRANSCRIPTS
from tui_agent.core.recordings.replay import open_replay
from tui_agent.core.recordings.replay_json import report_json, step_json

LOGS = {"drmaciver": "DRMacIver__claude-reliability__python-to-rust-port-transcript.jsonl",
        "m-claude": "M-Thisness__M-Claude__3cfce0ff-0725-47be-a572-f8af8122b71e.jsonl"}


def log_path(log: str):
    """The named real log in ../shared, else the long synthetic one (a clone without ../shared runs too)."""
    path = TRANSCRIPTS / LOGS[log]
    return path if path.is_file() else SYNTHETIC_LONG


def figures(replay, step) -> str:
    return json.dumps(step_json(replay, step), sort_keys=True)


@pytest.mark.parametrize("log", sorted(LOGS))
def test_steps_made_again_from_checkpoints_are_the_straight_runs_steps(log: str) -> None:
    path = log_path(log)
    straight = open_replay(path, STRATEGIES, check_memory=True)
    expected = [figures(straight, s) for s in straight.run_all()]
    report = report_json(straight.report())

    replay = open_replay(path, STRATEGIES, check_memory=True)
    replay.checkpoint_every, replay.keep_steps = 7, 3
    made_again = []
    replay.progress = lambda done, target: made_again.append(done)
    replay.run_all()  # the frontier goes to the end first: the report covers every call
    assert len(replay.steps) == 3 and len(made_again) == replay.calls
    assert report_json(replay.report()) == report  # every figure of the table, after checkpoints
    order = list(range(replay.calls))
    random.Random(20).shuffle(order)
    for k in order[:80] + [0, 1, replay.calls - 1]:
        assert figures(replay, replay.step(k)) == expected[k], f"call {k + 1}"
    assert len(replay.steps) == 3  # memory stays bounded


def test_a_step_made_again_is_found_from_the_nearest_checkpoint() -> None:
    replay = open_replay(log_path("drmaciver"))
    replay.checkpoint_every, replay.keep_steps = 5, 1
    replay.run_all()
    assert sorted(replay._checkpoints) == list(range(0, replay.calls, 5))
    seen: list[int] = []
    replay.progress = lambda done, target: seen.append(done)
    replay.step(12)  # made again from the checkpoint at call index 10: calls 11, 12, 13, not from call 1
    assert seen == []  # remaking is not the frontier's progress
    assert [s.number for s in replay.steps] == [13]


def test_taking_a_checkpoint_at_every_call_changes_no_figure_of_the_report() -> None:
    from tui_agent.core.recordings.economics_report import session_report

    path = log_path("drmaciver")
    replay = open_replay(path, STRATEGIES, check_memory=True)
    replay.checkpoint_every = 1
    replay.run_all()
    assert len(replay._checkpoints) == replay.calls
    assert report_json(replay.report()) == report_json(session_report(path, price=replay.price))  # no checkpoints


def test_thinned_checkpoints_stay_bounded_and_change_no_figure() -> None:
    """`max_checkpoints`: past it every other checkpoint goes and they are taken twice as far apart, so a
    long watch keeps a bounded number; a step made again from a thinned one is the straight run's step."""
    path = log_path("drmaciver")
    straight = open_replay(path, ("none", "v2"))
    expected = [figures(straight, s) for s in straight.run_all()]
    replay = open_replay(path, ("none", "v2"))
    replay.checkpoint_every, replay.keep_steps, replay.max_checkpoints = 2, 2, 4
    for k in range(replay.calls):
        replay.step(k)
        assert len(replay._checkpoints) <= 4
    assert replay.checkpoint_every > 2 and 0 in replay._checkpoints
    assert all(c % replay.checkpoint_every == 0 for c in replay._checkpoints)
    for k in (0, 3, replay.calls // 2, replay.calls - 5):
        assert figures(replay, replay.step(k)) == expected[k], f"call {k + 1}"



def test_a_checkpoint_copies_nothing_that_grows_with_the_calls_and_a_resumed_run_has_every_figure() -> None:
    """A checkpoint keeps the per-call prices as their count (the frontier's list is append-only) and the
    compactor's export compressed, so dozens of them over a long watch do not each hold a copy of what
    grows with every call; a run resumed from one has the very per-call prices of the straight run."""
    import zlib

    from tui_agent.core.recordings.strategy_table import make_strategy
    from tui_agent.core.recordings.replay import baseline_estimate

    replay = open_replay(log_path("drmaciver"), ("none", "v2"))
    replay.checkpoint_every = 10
    replay.run_all()
    for call, checkpoint in replay._checkpoints.items():
        for name, state in checkpoint.runs.items():
            assert state.result.per_call == [] and state.per_call_upto == call
        exported = checkpoint.runs["v2"].compactor
        assert isinstance(exported, bytes) and len(exported) < len(zlib.decompress(exported))
    call = max(c for c in replay._checkpoints if c < replay.calls)
    for name, frontier in replay._runs.items():
        run = frontier.resume(replay._checkpoints[call].runs[name],
                              make_strategy(name, replay.policy, baseline_estimate(replay)))
        assert run.result.per_call == frontier.result.per_call[:call]
        run.step()
        assert run.result.per_call == frontier.result.per_call[:call + 1]



def test_the_append_only_requests_head_is_not_walked_again_at_each_call(monkeypatch) -> None:
    """The append-only request is a longer slice of a history that is never edited: neither its cache
    prefix nor its validity check compares its head with the previous request's again (a walk over the
    whole session at every call, most of a call's cost far into a long watch). Steps made again from a
    checkpoint check on a lane of their own, so the frontier's lane holds only its own previous request.
    (`replay --json` of the shared logs is byte for byte what the comparisons gave.)"""
    from tui_agent.core import request_check
    from tui_agent.core.recordings import replay_checks
    from tui_agent.core.recordings.economics import strategy_runs
    from tui_agent.core.recordings.recorded import load_recorded

    recorded = load_recorded(log_path("drmaciver"))
    walked: list[int] = []
    same_head, head = request_check.same_head, replay_checks._head
    monkeypatch.setattr(request_check, "same_head", lambda a, b: walked.append(1) or same_head(a, b))
    monkeypatch.setattr(replay_checks, "_head", lambda items, n: walked.append(2) or head(items, n))
    run = strategy_runs(recorded, ("none",), check_memory=False)["none"]
    prices = [run.step() for _ in recorded.calls]
    assert walked == [] and run.result.invalid == 0 and run.result.calls == len(recorded.calls) > 20
    assert all(p.messages == recorded.history[:i] for p, i in zip(prices, recorded.calls))
    assert all(b.cached >= a.tokens * 0.99 for a, b in zip(prices, prices[1:]) if b.cached)  # the whole previous one
