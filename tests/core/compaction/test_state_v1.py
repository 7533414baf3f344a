"""A state saved by main's compactor before CompactState (`export_state` version 1, as journals hold it
today) still loads: the decisions come back as they were, and the next request is the one the old
process planned, byte for byte (tests/core/compaction/data/compact_state_v1.json, made by main's code from
tests/core/compaction/state_v1_session.py by tests/core/compaction/data/make_state_v1.py.txt, run with main on the path)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.core.compaction.state_v1_session import BASELINE, POLICY, history
from tui_agent.core.compaction import Compactor, CompactPolicy
from tui_agent.core.compaction.estimator import RequestEstimator
from tui_agent.core.compaction.layout import Layout
from tui_agent.core.compaction.state import CompactState
from tui_agent.core.messages import protocol_errors

FIXTURE = json.loads((Path(__file__).parent / "data" / "compact_state_v1.json").read_text())


def test_a_version_1_state_loads_and_plans_what_the_old_process_planned():
    h = history()
    saved = FIXTURE["state"]
    assert saved["version"] == 1
    compactor = Compactor(CompactPolicy(**POLICY), baseline_tokens=BASELINE)
    assert compactor.import_state(h[:FIXTURE["saved_at"]], saved) is None
    state = compactor.state
    assert (state.drop_from, state.drop_until) == (saved["drop_from"], saved["drop_until"])
    assert {(c.message_index, c.block_index) for per in state.cuts.values() for c in per} == \
        {(c[0], c[1]) for c in saved["cuts"]}
    assert {(m.message_index, m.block_index) for per in state.masks.values() for m in per} == \
        {(m[0], m[1]) for m in saved["masks"]}
    assert state.pins == frozenset(saved["pins"]) and state.excludes == frozenset(saved["excluded"])
    # the request laid out from the loaded value is the one the old process sent last, byte for byte
    layout = Layout()
    layout.rebuild(state, h[:FIXTURE["saved_at"]], compactor.facts, RequestEstimator(BASELINE), compactor.policy)
    assert json.dumps(layout.out, sort_keys=True) == json.dumps(FIXTURE["sent_messages"], sort_keys=True)
    assert not protocol_errors(layout.out)
    nxt = compactor.compact(h[:FIXTURE["saved_at"] + 2], state.calls + 1)  # and the session goes on from it
    assert not protocol_errors(nxt.messages)


def test_the_current_version_round_trips_as_the_same_value():
    h = history()
    compactor = Compactor(CompactPolicy(**POLICY), baseline_tokens=BASELINE)
    assert compactor.import_state(h[:FIXTURE["saved_at"]], FIXTURE["state"]) is None
    data = json.loads(json.dumps(compactor.export_state()))
    assert data["version"] == 3
    twin = Compactor(CompactPolicy(**POLICY), baseline_tokens=BASELINE)
    assert twin.import_state(h[:FIXTURE["saved_at"]], data) is None
    from dataclasses import replace
    assert replace(twin.state, tokens={}) == replace(compactor.state, tokens={})
    assert CompactState.from_json(data, h, twin.facts).to_json() == data


FIXTURE_V2 = json.loads((Path(__file__).parent / "data" / "compact_state_v2.json").read_text())


def test_a_version_2_state_written_by_main_loads_and_plans_what_it_planned():
    """tests/core/compaction/data/compact_state_v2.json: written by main's code at b4ff187 (before one map of block
    decisions) by make_state_v2.py.txt; it holds a cut and a later mask on the same blocks."""
    h = history()
    saved = FIXTURE_V2["state"]
    assert saved["version"] == 2
    compactor = Compactor(CompactPolicy(**POLICY), baseline_tokens=BASELINE)
    assert compactor.import_state(h[:FIXTURE_V2["saved_at"]], saved) is None
    state = compactor.state
    assert {(c.message_index, c.block_index) for per in state.cuts.values() for c in per} == \
        {(c[0], c[1]) for c in saved["cuts"]}
    assert {(m.message_index, m.block_index) for per in state.masks.values() for m in per} == \
        {(m[0], m[1]) for m in saved["masks"]}
    assert state.pins == frozenset(saved["pins"]) and state.skip == frozenset(saved["skip"])
    layout = Layout()
    layout.rebuild(state, h[:FIXTURE_V2["saved_at"]], compactor.facts, RequestEstimator(BASELINE), compactor.policy)
    assert json.dumps(layout.out, sort_keys=True) == json.dumps(FIXTURE_V2["sent_messages"], sort_keys=True)
    data = compactor.export_state()  # written again as version 3: one list of tagged block decisions
    assert data["version"] == 3 and "cuts" not in data and "masks" not in data
    assert sorted(d[0] for d in data["blocks"]) == ["cut"] * len(saved["cuts"]) + ["mask"] * len(saved["masks"])
    twin = Compactor(CompactPolicy(**POLICY), baseline_tokens=BASELINE)
    assert twin.import_state(h[:FIXTURE_V2["saved_at"]], data) is None
    assert twin.state.blocks == state.blocks
    nxt = compactor.compact(h[:FIXTURE_V2["saved_at"] + 2], state.calls + 1)
    assert not protocol_errors(nxt.messages)
