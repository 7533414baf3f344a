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


def test_a_plan_shows_the_states_views_instead_of_making_its_own(monkeypatch):
    """Every call makes a plan; its cuts and masks are the state's (the panel reads them at each update:
    made again per plan, they walked every decision of the session at every call)."""
    from tui_agent.core.compaction import CompactPolicy, Compactor
    from tui_agent.core.messages import user_text

    compactor = Compactor(CompactPolicy(context_window=200_000, max_output_tokens=8_000))
    history = [user_text("hello")]
    first = compactor.compact(history).plan
    made = []
    monkeypatch.setattr("tui_agent.core.compaction.plan.of_kind", lambda blocks, kind: made.append(kind) or {})
    history.append({"role": "assistant", "content": "hi"})
    plan = compactor.compact(history).plan
    assert plan.cuts is compactor.state.cuts and plan.masks is compactor.state.masks
    assert first.cuts == {} and made == []  # no walk of the decisions to make the plan's own copy
