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
