"""Checkpoints change no figure: a replay that keeps only a few steps and makes the others again from its
checkpoints (each compactor's exported state + the runs' accumulators) gives every step and the report
exactly as a straight run from call 1 does, on real Claude Code logs, in any order."""

from __future__ import annotations

import json
import random

import pytest

from tui_agent.core.recordings.economics import STRATEGIES
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
    assert report_json(replay.report()) == report_json(session_report(path))  # the table without checkpoints


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
