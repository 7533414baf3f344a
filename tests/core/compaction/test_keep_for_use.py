"""Compaction 4's two moves of the curve: an event keeps the agent's own writes it will name (islands), and a
call after the cache went cold clears old results (inputs kept) since the request is written again anyway."""

from __future__ import annotations

from tests.core.helpers import split_turn

from dataclasses import replace

from tui_agent.core.cache_clock import went_cold
from tui_agent.core.compaction import Compactor, CompactPolicy
from tui_agent.core.compaction.keep_for_use import choose_kept
from tui_agent.core.compaction.state import CompactState
from tui_agent.core.messages import protocol_errors, tool_result_block, user_text

POLICY = CompactPolicy(context_window=40_000, max_output_tokens=4_000, enabled=True, cut_on_read=False)


def _call(tid: str, name: str, **inputs: str) -> dict:
    return {"role": "assistant", "content": [{"type": "tool_use", "id": tid, "name": name, "input": inputs}]}


def _result(tid: str, text: str) -> dict:
    return {"role": "user", "content": [tool_result_block(tid, text)]}


def session(rounds: int) -> list[dict]:
    """A task, the agent writing src/core_module.py early (after the kept head), building many times (results that cannot
    be had again by running the call again, so only a drop, or a cold cache's clearing, takes them)."""
    out = [user_text("port the project")]
    for k in range(rounds):
        out += [_call(f"r{k}", "Bash", command=f"make build_{k}"), _result(f"r{k}", f"line_{k} " * 900)]
        if k == 8:  # past the kept head
            out += [_call("w0", "Write", file_path="src/core_module.py", content="def parse_config(): pass\n" * 40),
                    _result("w0", "File created successfully at: src/core_module.py")]
    return out


def test_the_newest_write_of_each_file_is_kept_within_the_budget():
    history = [user_text("go"), _call("a", "Write", file_path="a.py", content="old"), _result("a", "ok"),
               _call("b", "Write", file_path="b.py", content="b"), _result("b", "ok"),
               _call("c", "Write", file_path="a.py", content="new"), _result("c", "ok"),
               _call("d", "Read", file_path="c.py"), _result("d", "text")]
    assert choose_kept(history, 1, 9, lambda i: 10.0, 1_000) == {3, 4, 5, 6}  # a.py's first write is stale
    assert choose_kept(history, 1, 9, lambda i: 10.0, 20) == {5, 6}  # newest first within the budget
    assert choose_kept(history, 1, 5, lambda i: 10.0, 1_000) == {3, 4}  # a.py is written again after the span


def _sent_ids(messages: list[dict]) -> set[str]:
    return {b.get("id") for m in messages for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_use"}


def test_an_event_keeps_the_agents_own_write_and_without_the_rule_drops_it():
    history = session(40)
    kept = Compactor(POLICY, baseline_tokens=1_000).compact(history)
    dropped = Compactor(replace(POLICY, keep_for_use=False), baseline_tokens=1_000).compact(history)
    assert "drop" in kept.plan.event.kinds and "drop" in dropped.plan.event.kinds
    assert "w0" in _sent_ids(kept.messages) and "w0" not in _sent_ids(dropped.messages)
    assert not protocol_errors(kept.messages)
    assert kept.plan.estimated_tokens <= POLICY.high_tokens


def test_the_kept_islands_survive_a_saved_state():
    compactor = Compactor(POLICY, baseline_tokens=1_000)
    history = session(40)
    compactor.compact(history)
    assert compactor.state.kept_for_use
    saved = compactor.state.to_json()
    assert saved["kept_for_use"] == sorted(compactor.state.kept_for_use)
    again = Compactor(POLICY, baseline_tokens=1_000)
    assert not again.import_state(history, compactor.export_state())
    assert again.state.kept_for_use == compactor.state.kept_for_use
    assert again.compact(history).messages == compactor.compact(history).messages


def test_a_cold_cache_clears_old_results_and_keeps_every_message():
    policy = replace(POLICY, keep_head=0.0, cold_clears_only=True)  # the variant that drops nothing
    history = split_turn(session(12), 3)  # above the cold mark, under the high mark; finished turns
    warm = Compactor(policy, baseline_tokens=1_000)
    assert policy.cold_mark_tokens < warm.compact(history).plan.estimated_tokens < policy.high_tokens
    cold = Compactor(policy, baseline_tokens=1_000)
    cold.compact(history[:-2])
    cold.cache_expired()
    result = cold.compact(history)
    assert result.plan.event is not None and "mask" in result.plan.event.kinds
    assert "drop" not in result.plan.event.kinds and len(result.messages) == len(history)
    assert result.plan.estimated_tokens < warm.compact(history).plan.estimated_tokens
    assert not protocol_errors(result.messages)


def test_by_default_a_cold_cache_drops_down_to_the_cold_target_and_a_warm_one_does_not():
    policy = replace(POLICY, keep_head=0.0)
    history = split_turn(session(12), 3)  # above the cold mark, under the high mark; finished turns
    warm = Compactor(policy, baseline_tokens=1_000).compact(history)
    assert policy.cold_mark_tokens < warm.plan.estimated_tokens < policy.high_tokens and warm.plan.event is None
    cold = Compactor(policy, baseline_tokens=1_000)
    cold.compact(history[:-2])
    cold.cache_expired()
    result = cold.compact(history)
    assert result.plan.event is not None and "drop" in result.plan.event.kinds
    assert result.plan.estimated_tokens <= policy.cold_target_tokens < policy.cold_mark_tokens
    assert "w0" in _sent_ids(result.messages)  # the agent's own write stays, as at any drop
    assert not protocol_errors(result.messages)


def test_the_cache_goes_cold_after_the_models_time_to_live():
    assert not went_cold(None, "claude-sonnet-5-5", now=10_000.0)
    assert not went_cold(1_000.0, "claude-sonnet-5-5", now=1_200.0)
    assert went_cold(1_000.0, "claude-sonnet-5-5", now=1_301.0)


def test_a_fresh_state_keeps_nothing_for_use():
    assert CompactState().kept_for_use == frozenset()


def test_each_event_says_how_much_of_what_is_in_use_it_kept():
    history = session(40)
    history += [{"role": "assistant", "content": [{"type": "text", "text": "now fix parse_config in src/core_module.py"
                                                   " and check line_3 and line_39"}]}, user_text("go on")]
    kept = Compactor(POLICY, baseline_tokens=1_000).compact(history).plan.event.loss.in_use
    lost = Compactor(replace(POLICY, keep_for_use=False), baseline_tokens=1_000).compact(history).plan.event.loss.in_use
    assert kept[1] == lost[1] >= 3  # parse_config, src/core_module.py, line_3, line_39 came from earlier messages
    assert kept[0] > lost[0]  # the kept write still holds parse_config and its path


def test_recurring_identifiers_keep_the_exchange_that_holds_them_and_not_one_the_tail_covers():
    from tui_agent.core.compaction.keep_for_use import choose_recurring
    from tui_agent.core.recordings.coverage import entities, held_text

    history = [user_text("go"),
               _call("a", "Bash", command="cat config/loader_spec.txt"), _result("a", "parse_config_v2 here"),
               _call("b", "Bash", command="ls"), _result("b", "tail_only_name"),
               _call("c", "Bash", command="echo parse_config_v2"), _result("c", "parse_config_v2"),
               _call("d", "Bash", command="echo tail_only_name"), _result("d", "tail_only_name")]

    def entities_of(i: int) -> frozenset[str]:
        return frozenset(entities(held_text(history[i])))

    def choose(budget: float, tail_from: int = 7) -> frozenset[int]:
        return choose_recurring(history, 1, tail_from, lambda i: 20.0 if i in (5, 6) else 10.0, budget,
                                entities_of, frozenset())

    # a's name recurs (and a is smaller than c, which then adds nothing); b's recurs but the tail holds it
    assert choose(1_000) == {1, 2}
    assert choose(1_000, tail_from=9) == {1, 2, 3, 4}  # with no tail, b's recurring name is worth keeping
    assert choose(10) == frozenset()  # an exchange never splits to fit
    assert choose(0) == frozenset()
    # a span that ends between a call and its result: the call is never kept without the result it waits
    # for (a real session sent 117 requests with a tool_use unanswered before this)
    split = [user_text("go"), _call("x", "Bash", command="echo dup_name_one"), _result("x", "ok"),
             _call("y", "Bash", command="echo dup_name_one"), _result("y", "ok"), _call("z", "Bash", command="ls"),
             _result("z", "done")]
    kept = choose_recurring(split, 1, 4, lambda i: 10.0, 1_000, lambda i: frozenset(entities(held_text(split[i]))),
                            frozenset())
    assert kept == {1, 2} and not protocol_errors([split[i] for i in (0, *sorted(kept), 5, 6)])


def test_an_event_with_recurring_share_keeps_an_old_exchange_the_session_keeps_naming():
    history = session(40)
    history[25:25] = [_call("n0", "Bash", command="cat src/shared_names.py"),  # past the head, before the tail
                      _result("n0", "def shared_helper_fn(): pass")]
    for message in history[28:60:6]:  # the session keeps naming it, in results a drop takes anyway
        block = message["content"][0]
        if block.get("type") == "tool_result":
            block["content"] += " shared_helper_fn src/shared_names.py"
    plain = Compactor(replace(POLICY, keep_recurring_share=0.0), baseline_tokens=1_000).compact(history)
    recurring = Compactor(replace(POLICY, keep_recurring_share=0.2), baseline_tokens=1_000).compact(history)
    assert "drop" in plain.plan.event.kinds and "drop" in recurring.plan.event.kinds
    assert "n0" not in _sent_ids(plain.messages) and "n0" in _sent_ids(recurring.messages)
    assert not protocol_errors(recurring.messages)


def test_keep_what_recurs_looks_at_a_bounded_span_and_counts_each_message_once():
    """An event far into a long session: the search reads the entities of the newest `RECURRING_SEARCH`
    messages before the tail (and the tail), not the whole session; the recurrence counts are extended by
    the new messages only (a watch of a 16,000-message log fell from 1,000 to 330 calls a second)."""
    from tui_agent.core.compaction.facts import Facts
    from tui_agent.core.compaction.keep_for_use import RECURRING_SEARCH, choose_recurring
    from tui_agent.core.recordings.coverage import entities, held_text

    history = [user_text("go")]
    for k in range(3 * RECURRING_SEARCH):
        history += [_call(f"t{k}", "Bash", command=f"echo shared_name_{k % 50}"), _result(f"t{k}", "ok")]
    read: list[int] = []

    def entities_of(i: int) -> frozenset[str]:
        read.append(i)
        return frozenset(entities(held_text(history[i])))

    tail_from = len(history) - 10
    facts = Facts()
    counts = facts.recurrence_of(history)
    kept = choose_recurring(history, 1, tail_from, lambda i: 10.0, 1_000, entities_of, frozenset(), counts=counts)
    assert kept and min(kept) >= tail_from - RECURRING_SEARCH
    assert min(read) >= tail_from - RECURRING_SEARCH  # nothing older was read: a third of this session
    assert len(set(read)) < len(history) / 2
    looked, before = set(facts.held), counts["shared_name_1"]
    history += [_call("new", "Bash", command="echo shared_name_1"), _result("new", "ok")]
    assert facts.recurrence_of(history)["shared_name_1"] == before + 1
    assert set(facts.held) - looked == {len(history) - 2, len(history) - 1}  # only the two new messages read
