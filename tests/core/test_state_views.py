"""`CompactState.evolve` keeps the views of `blocks` (its cuts and masks) while `blocks` stays the same:
a call makes a few new states, and each made them again from every block decision of the session."""

from __future__ import annotations

from tui_agent.core.compaction import decisions
from tui_agent.core.compaction.decisions import Cut
from tui_agent.core.compaction.state import CompactState


def test_views_are_made_again_only_when_the_blocks_change(monkeypatch):
    made = []
    real = decisions.of_kind
    monkeypatch.setattr("tui_agent.core.compaction.state.of_kind", lambda blocks, kind: made.append(kind) or real(blocks, kind))
    blocks = {i: (Cut(i, 0, f"t{i}", "Read", 5_000, 500, 1),) for i in range(50)}
    state = CompactState().evolve(blocks=blocks)
    assert len(state.cuts) == 50 and state.masks == {} and len(made) == 2
    for n in range(10):  # a call's bookkeeping: the same blocks
        state = state.evolve(calls=n, history_len=100 + n)
        assert len(state.cuts) == 50 and state.masks == {}
    assert len(made) == 2
    grown = state.evolve(blocks={**blocks, 99: (Cut(99, 0, "t99", "Read", 5_000, 500, 2),)})
    assert len(grown.cuts) == 51 and len(state.cuts) == 50 and len(made) == 3
