"""A forged or stale state is refused in one place (`CompactState.problems`) with a one-line warning, and
the request is then planned from the history: a drop that splits a tool round, a mask on a text block,
half an exchange left out (versions 2 and 3 trust the saved `skip`, so it is checked), a read-up-to mark
outside the history."""

from __future__ import annotations

import json

import pytest

from tests.core.compaction.state_v1_session import BASELINE, POLICY, history
from tui_agent.core.compaction import Compactor, CompactPolicy
from tui_agent.core.messages import protocol_errors


def saved() -> tuple[list[dict], dict]:
    h = history()[:31]  # ends with a round of results
    compactor = Compactor(CompactPolicy(**POLICY), baseline_tokens=BASELINE)
    for end in range(2, len(h) + 1):
        if h[end - 1]["role"] == "user":
            compactor.compact(h[:end], end)
    return h, json.loads(json.dumps(compactor.export_state()))


@pytest.mark.parametrize("forge, why", [
    (lambda s: s.update(drop_from=0, drop_until=2), "splits a tool round"),  # before a tool_result
    (lambda s: s.update(blocks=s["blocks"] + [["mask", 0, 0, 1]]), "not a tool result"),  # the first prompt's text
    (lambda s: s.update(skip=[1]), "without its partner"),  # a tool_use left out, its results sent
    (lambda s: s.update(cut_scan=-3), "read-up-to mark"),
])
def test_a_forged_state_is_refused_and_the_request_planned_from_the_history(forge, why):
    h, state = saved()
    assert state["version"] == 3
    forge(state)
    fresh = Compactor(CompactPolicy(**POLICY), baseline_tokens=BASELINE)
    warning = fresh.import_state(h, state)
    assert warning is not None and why in warning and "\n" not in warning, warning
    result = fresh.compact(h, 99)
    assert not protocol_errors(result.messages)
    assert fresh.state.skip == frozenset() and fresh.state.calls == 99  # a fresh compactor's plan
