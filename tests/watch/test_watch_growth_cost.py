"""A growth of a watched log costs what it adds: checking that the new parse agrees with the steps made
finds the shared messages in C (they are the very same objects), not one Python step per message."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.watch.fast_log import call_lines
from tui_agent.core.recordings.follow import Batch
from tui_agent.core.recordings.watch import LiveReplay


def python_calls(run) -> int:
    """Python-level calls (a generator resumed counts as one) made by `run()`."""
    count = 0

    def tally(frame, event, arg):
        nonlocal count
        count += event == "call"

    sys.setprofile(tally)
    try:
        run()
    finally:
        sys.setprofile(None)
    return count


def test_the_agreement_check_of_a_growth_does_not_walk_the_history_in_python(monkeypatch):
    from tui_agent.core.recordings import watch

    live = LiveReplay(Path("s.jsonl"), None, ("none", "v2"))
    live.feed(Batch(lines=[line for i in range(1_500) for line in call_lines(i)]))
    assert len(live.ready()) == 1_500
    checks = []
    real = watch._extends
    monkeypatch.setattr(watch, "_extends", lambda old, new: checks.append(python_calls(lambda: real(old, new))) or real(old, new))
    live.feed(Batch(lines=call_lines(1_500)))
    assert checks and checks[0] < 200, checks  # 3,000 stable messages: no Python step per message
    assert live.restarts == 0 and len(live.ready()) == 1


def lines_run(run) -> int:
    """Python lines executed by `run()` (every frame, traced)."""
    count = 0

    def tracer(frame, event, arg):
        nonlocal count
        count += event == "line"
        return tracer

    sys.settrace(tracer)
    try:
        run()
    finally:
        sys.settrace(None)
    return count


def test_a_growths_load_finds_the_messages_it_knows_in_c():
    """`recorded_transcript(..., previous)` reuses the estimates of the very same messages: found in C, not
    by a Python step per message of the log (which every batch of a long watch paid)."""
    from tui_agent.core.recordings.recorded import recorded_transcript
    from tui_agent.core.recordings.transcripts import TranscriptReader

    reader = TranscriptReader().feed([line for i in range(2_000) for line in call_lines(i)])
    before = recorded_transcript(reader.load(), "s.jsonl", 8)
    grown = reader.feed(call_lines(2_000)).load()
    executed = lines_run(lambda: recorded_transcript(grown, "s.jsonl", 8, before))
    assert executed < 2_000, executed  # 4,000 known messages: no line run per message
    again = recorded_transcript(grown, "s.jsonl", 8, before)
    assert again.estimates == recorded_transcript(grown, "s.jsonl", 8).estimates
