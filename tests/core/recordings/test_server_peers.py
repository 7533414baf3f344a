"""The server strategies on the economics replay: `server-clear` is the rule the server applies, computed
from the whole history at every call (stateless, so exact); `server-compact` is priced like a summary."""

from __future__ import annotations

import pytest

from tests.core.recordings.test_coverage_measure import ATHENA
from tui_agent.core.compaction import CompactPolicy
from tui_agent.core.messages import protocol_errors, tool_result_block, user_text
from tui_agent.core.models import NEWER
from tui_agent.core.recordings.economics import replay
from tui_agent.core.recordings.recorded import load_recorded
from tui_agent.core.recordings.server_peers import PLACEHOLDER, make_server_peer


def _round(i: int, name: str, size: int) -> list[dict]:
    return [{"role": "assistant", "content": [{"type": "tool_use", "id": f"t{i}", "name": name, "input": {}}]},
            {"role": "user", "content": [tool_result_block(f"t{i}", "z" * size)]}]


def _sent_results(messages: list[dict]) -> dict[str, str]:
    return {b["tool_use_id"]: b["content"] for m in messages for b in m["content"] if isinstance(m["content"], list)
            and b.get("type") == "tool_result"}


def test_server_clear_keeps_three_and_the_context_tool_and_clears_only_enough():
    policy = CompactPolicy(context_window=200_000, max_output_tokens=1_000, high_water=20_000.0, low_water=10_000.0)
    peer = make_server_peer("server-clear", policy, None)
    history = [user_text("go"), *_round(0, "Context", 8_000)]
    for i in range(1, 8):
        history += _round(i, "Read", 16_000)
    sent = peer.compact(history).messages
    results = _sent_results(sent)
    assert not protocol_errors(sent) and results["t0"] != PLACEHOLDER  # the Context tool is never cleared
    assert [k for k, v in results.items() if v == PLACEHOLDER] == ["t1", "t2", "t3", "t4"]  # newest 3 kept
    small = [user_text("go")] + _round(1, "Read", 4_000) + _round(2, "Read", 4_000) + _round(3, "Read", 4_000) \
        + _round(4, "Read", 4_000) + _round(5, "Read", 80_000)
    assert PLACEHOLDER not in _sent_results(peer.compact(small).messages).values()  # frees < 5,000: not worth it
    assert peer.compact(history[:3]).messages == history[:3]  # under the trigger: sent whole


@pytest.mark.parametrize("name", ["server-clear", "server-compact"])
def test_the_server_strategies_replay_a_real_session(name):
    recorded = load_recorded(ATHENA)
    results = replay(recorded, ["none", name], CompactPolicy(context_window=200_000, enabled=True), price=NEWER)
    assert results[name].invalid == 0 and results[name].cost < results["none"].cost
