"""A tier is a function of a state and one read-only view of the request (`request_view.RequestView`): it can be
called with no `Compactor`, and a block decision (`Cut | Mask`) is one typed value that renders its block,
names its reason and glyph key, and crosses JSON as itself."""

from __future__ import annotations

import json

from tests.core.compaction.state_v1_session import BASELINE, POLICY, history
from tui_agent.core.compaction import tiers
from tui_agent.core.compaction.decisions import KINDS, Cut, Mask, merged, render_blocks, strongest
from tui_agent.core.compaction.estimator import RequestEstimator
from tui_agent.core.compaction.facts import Facts, newest_round_start
from tui_agent.core.compaction.layout import Layout
from tui_agent.core.compaction.policy import CompactPolicy
from tui_agent.core.compaction.request_view import RequestView
from tui_agent.core.compaction.state import CompactState
from tui_agent.core.messages import blocks, protocol_errors


def laid_out(h: list[dict]) -> tuple[CompactState, RequestView]:
    """A request laid out from an empty state over `h`, and the view a tier reads of it (call 9)."""
    facts, tokens, layout, policy = Facts(), RequestEstimator(BASELINE), Layout(), CompactPolicy(**POLICY)
    facts.sync(h)
    state = CompactState(history_len=len(h))
    layout.rebuild(state, h, facts, tokens, policy)
    return state, RequestView(h, facts, policy, layout, tokens, newest_round_start(h), call=9)


def test_cut_on_read_and_mask_run_on_a_view_with_no_compactor():
    h = history()[:31]  # ends with a round of results
    state, view = laid_out(h)
    cut, changed = tiers.cut_on_read(state, view, start=0)  # at an event: every long read result
    assert changed and state.blocks == {}  # the state passed in is a value: unchanged
    assert all(isinstance(d, Cut) and d.call == 9 and d.op == "cut" for i in changed for d in cut.blocks[i])
    assert max(changed) < view.newest  # the newest round is not read yet: never cut on read
    masked, mchanged, count = tiers.mask_old(cut, view)  # no target: every older re-runnable result
    assert count and all(isinstance(d, Mask) for i in mchanged for d in masked.blocks[i] if d.rank == Mask.rank)
    both = [i for i in mchanged if i in changed]  # a cut block masked later holds both, the mask shown
    assert both and all(strongest(masked.blocks[i]).op == "masked" for i in both)
    assert masked.cuts.keys() == cut.blocks.keys() and set(masked.masks) == set(mchanged)
    view.layout.rebuild(masked, h, view.facts, view.tokens, view.policy)
    assert not protocol_errors(view.layout.out)


def test_each_block_decision_renders_and_crosses_json_as_itself():
    h = history()[:31]
    state, view = laid_out(h)
    state, _ = tiers.cut_on_read(state, view, start=0)
    state, _, _ = tiers.mask_old(state, view)
    for i, per in state.blocks.items():
        assert [(d.block_index, d.rank) for d in per] == sorted((d.block_index, d.rank) for d in per)
        out = render_blocks(blocks(h[i]), per)
        for d in per:
            data = json.loads(json.dumps(d.to_json()))
            assert KINDS[data[0]].from_json(data, blocks(h[i])[d.block_index], view.facts.call_of) == d
            assert d.reason and d.op in ("cut", "masked")
        top = strongest(per)
        text = out[top.block_index]["content"]
        text = text if isinstance(text, str) else "".join(p.get("text", "") for p in text)
        assert ("cleared from context" in text) == isinstance(top, Mask)
    assert CompactState.from_json(state.to_json(), h, view.facts).blocks == state.blocks
    again = merged(state.blocks, {})  # merging nothing changes nothing
    assert again == dict(state.blocks)
