"""Keep the agent's own words (`keep_for_use.choose_own_words`, `CompactPolicy.keep_own_words_share`): at a
drop, exchanges stay in place with their results cleared, so what the agent said and called with is still
sent; every request stays valid and the choice is sticky until the next event."""

from __future__ import annotations

from dataclasses import replace

from tests.shared import LOGS
from tui_agent.core.compaction.keep_for_use import choose_own_words
from tui_agent.core.compaction.names.entities import entities, held_text
from tui_agent.core.messages import protocol_errors, tool_results
from tui_agent.core.recordings.economics import replay, strategy_runs
from tui_agent.core.recordings.strategy_table import default_policy
from tui_agent.core.recordings.recorded import load_recorded


def exchange_history():
    history = [{"role": "user", "content": "port the parser"}]
    for n in range(6):
        history.append({"role": "assistant", "content": [
            {"type": "text", "text": f"Now src/module_{n}.py holds parse_{n}."},
            {"type": "tool_use", "id": f"t{n}", "name": "Bash", "input": {"command": f"pytest tests/test_{n}.py"}}]})
        history.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{n}",
                                                     "content": "ok " * 500}]})
    return history


def test_the_newest_exchanges_with_new_names_come_first_within_the_budget():
    history = exchange_history()
    of = lambda i: frozenset(entities(held_text(history[i])))  # noqa: E731
    chosen = choose_own_words(history, 1, 13, lambda i: 50.0, 300.0, of, frozenset())
    assert chosen == {9, 10, 11, 12, 7, 8}  # three exchanges of 100 tokens: the newest
    assert all((i % 2 == 1) == (history[i]["role"] == "assistant") for i in chosen)
    assert choose_own_words(history, 1, 13, lambda i: 50.0, 0.0, of, frozenset()) == frozenset()


def test_in_a_replay_the_islands_go_out_with_their_results_cleared_and_every_request_is_valid():
    path = max(LOGS, key=lambda p: p.stat().st_size)
    recorded = load_recorded(path)
    policy = replace(default_policy(), keep_own_words_share=0.3)
    run = strategy_runs(recorded, ["v2"], policy, check_memory=False)["v2"]
    cleared = set()
    for _ in recorded.calls:
        price = run.step()
        assert protocol_errors(price.messages) == []
        state = run.compactor.state
        cleared |= {i for i in state.kept_for_use if tool_results(recorded.history[i]) and state.masks.get(i)}
    assert cleared, "some island went out with its results cleared"
    assert run.result.invalid == 0
    with_words = replay(recorded, ["v2"], policy)["v2"]
    without = replay(recorded, ["v2"], default_policy())["v2"]
    assert with_words.coverage.pooled >= without.coverage.pooled - 0.005
