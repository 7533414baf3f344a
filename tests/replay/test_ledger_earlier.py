"""A replay's panel feeds every step before the one it shows with `BudgetLedger.feed_earlier` (no figures
for calls whose figures the shown one replaces): the ledger must end exactly as if each step had been fed
in full, at every call and on a session with our own and the agent's compactions."""

from __future__ import annotations

import pytest

from tests.shared import SYNTHETIC_TRANSCRIPT, TRANSCRIPT_FILES
from tui_agent.core.agent.budget import BudgetLedger
from tui_agent.core.recordings.replay import open_replay


@pytest.mark.parametrize("path", [SYNTHETIC_TRANSCRIPT, *TRANSCRIPT_FILES], ids=lambda p: p.name[:24])
def test_feeding_earlier_steps_without_figures_ends_as_feeding_them_all(path) -> None:
    replay = open_replay(path)
    steps = replay.run_all()
    assert any(s.plan.event is not None for s in steps) or len(steps) < 40
    for shown in sorted({1, 2, len(steps) // 2, len(steps)}):
        full, quick = BudgetLedger(model=replay.model), BudgetLedger(model=replay.model)
        for step in steps[:shown]:
            full.feed(replay.reported(step))
        for step in steps[:shown - 1]:
            quick.feed_earlier(replay.reported(step))
        quick.feed(replay.reported(steps[shown - 1]))
        assert quick == full and quick.current is not None
