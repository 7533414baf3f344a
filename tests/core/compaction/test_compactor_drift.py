"""Regression tests for the compactor-side drift defects of issue 16: each failed before its fix."""

from __future__ import annotations

import json

from tui_agent.core.compaction import Compactor, CompactPolicy
from tui_agent.core.messages import protocol_errors, tool_result_block, user_text
from tests.core.helpers import split_turn


def dumps(messages) -> str:
    return json.dumps(messages, sort_keys=True)


def rounds(n: int, size: int, first: str = "task", name: str = "Read") -> list[dict]:
    history = [user_text(first)]
    for i in range(n):
        history.append({"role": "assistant", "content": [
            {"type": "text", "text": "look"},
            {"type": "tool_use", "id": f"t{i}", "name": name, "input": {"file_path": f"f{i}"}}]})
        history.append({"role": "user", "content": [tool_result_block(f"t{i}", "r" * size)]})
    return history


def test_an_event_that_drops_nothing_sends_the_head_once():
    """`_event` set the head before it knew a drop would be made, and the layout then sent the head and
    the whole history after it: the first messages (and their tool_use ids) went out twice."""
    history = rounds(4, 200)
    compactor = Compactor(CompactPolicy(context_window=200_000, max_output_tokens=4_000, enabled=True))
    for n in (3, 5, 7):
        compactor.compact(history[:n], n)
    compactor.request_event("drop")  # /compact, but nothing is worth dropping
    result = compactor.compact(history, 9)
    assert dumps(result.messages) == dumps(history)
    history += [{"role": "assistant", "content": [{"type": "text", "text": "done"}]}, user_text("more")]
    later = compactor.compact(history, 10)
    assert dumps(later.messages) == dumps(history) and not protocol_errors(later.messages)


def test_an_asked_event_lists_only_what_happened_and_says_you_asked():
    history = rounds(4, 200)
    compactor = Compactor(CompactPolicy(context_window=200_000, max_output_tokens=4_000, enabled=True))
    compactor.compact(history[:7], 1)
    compactor.request_event("summary")
    nothing = compactor.compact(history, 2)
    assert nothing.plan.event is None or "drop" not in nothing.plan.event.kinds
    assert nothing.plan.event is None or "summary" not in nothing.plan.event.kinds
    big = rounds(12, 3_000)
    compactor = Compactor(CompactPolicy(context_window=200_000, max_output_tokens=4_000, enabled=True))
    compactor.compact(big[:-2], 1)
    compactor.request_event("summary")
    asked = compactor.compact(big, 2)
    assert asked.plan.event is not None and "drop" in asked.plan.event.kinds
    assert asked.plan.event.reason == "you asked to compact now"
    assert "you asked" in asked.plan.op(asked.plan.drop_until - 1).reason


def test_a_row_keeps_the_reason_of_the_event_that_dropped_it():
    """One `dropped_reason` for every row: a later event rewrote why earlier rows had left."""
    history = split_turn(rounds(60, 2_000, name="Edit"), every=10)  # not re-runnable: rows are dropped
    policy = CompactPolicy(context_window=30_000, max_output_tokens=4_000, enabled=True, high_water=0.6)
    compactor = Compactor(policy)
    first_drop = None
    for n in range(3, len(history) + 1, 2):
        result = compactor.compact(history[:n], n)
        event = result.plan.event
        if event is not None and "drop" in event.kinds:
            if first_drop is None:
                first_drop = (n, result.plan.drop_until)
            else:
                break
    assert first_drop is not None and result.plan.drop_until > first_drop[1], "two drops happen"
    call, until = first_drop
    plan = result.plan

    def newest_dropped_before(end: int) -> int:  # (an island the newer event keeps in place is no dropped row)
        return max(i for i in range(plan.drop_from, end) if i not in plan.kept_in_drop)

    assert f"dropped at call {call}" in plan.op(newest_dropped_before(until)).reason  # its own event, not the newest
    assert f"dropped at call {n}" in plan.op(newest_dropped_before(plan.drop_until)).reason


def test_a_replaced_history_is_no_compaction_event_and_forgets_the_pins():
    history = rounds(3, 100)
    compactor = Compactor(CompactPolicy(context_window=200_000, max_output_tokens=4_000, enabled=True))
    compactor.compact(history, 1)
    compactor.pin(2)
    fresh = [user_text("a new conversation")]
    result = compactor.compact(fresh, 1)
    assert result.plan.event is None  # /clear used to report "history replaced · 5.0k → 5.0k"
    assert not result.plan.pins  # the pins named messages of the old history


def test_over_the_window_names_the_budget_it_means():
    history = rounds(1, 80_000, name="Edit")
    compactor = Compactor(CompactPolicy(context_window=16_000, max_output_tokens=4_096, enabled=True))
    event = compactor.compact(history, 1).plan.event
    assert event is not None
    assert "budget (16.0k window − 4.1k output reserve)" in event.reason, event.reason


def test_no_drop_frees_less_than_its_recap():
    """Over the window, the emergency drop replaced a long prompt by a recap quoting it (a bigger request)."""
    history = [user_text("please port this: " + "word " * 340), {"role": "assistant", "content": [
        {"type": "text", "text": "ok"}]}, user_text("now run it"),
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Edit", "input": {"file_path": "a"}}]},
        {"role": "user", "content": [tool_result_block("t1", "r" * 80_000)]}]
    result = Compactor(CompactPolicy(context_window=16_000, max_output_tokens=4_000, enabled=True)).compact(history, 1)
    assert result.plan.event is not None and "drop" not in result.plan.event.kinds
    assert dumps(result.messages[:3]) == dumps(history[:3]) and not protocol_errors(result.messages)


def test_a_pinned_prompt_travels_with_its_answer():
    """Pinning a prompt whose turn was dropped sent it directly before the answer to another prompt."""
    history: list[dict] = []
    for p in range(8):
        history.append(user_text(f"question {p}"))
        history.append({"role": "assistant", "content": [{"type": "text", "text": f"answer {p} " + "a" * 6_000}]})
    history.append(user_text("last question"))
    compactor = Compactor(CompactPolicy(context_window=30_000, max_output_tokens=4_000, enabled=True))
    compactor.compact(history[:-2], 1)
    compactor.pin(4)  # "question 2"
    compactor.request_event("drop")
    result = compactor.compact(history, 2)
    assert result.plan.drop_until > 5, "question 2's turn is in the dropped span"
    texts = [json.dumps(m) for m in result.messages]
    at = next(k for k, t in enumerate(texts) if "question 2" in t and "answer" not in t)
    assert "answer 2" in texts[at + 1]
    assert not protocol_errors(result.messages)


def test_the_loss_report_is_this_events_and_agrees_with_its_diff():
    """The loss report was cumulative (listing messages that left at earlier events)."""
    history = split_turn(rounds(60, 2_000, name="Edit"), every=10)  # events take finished turns
    compactor = Compactor(CompactPolicy(context_window=30_000, max_output_tokens=4_000, enabled=True, high_water=0.6))
    previous = None
    drops = 0
    for n in range(3, len(history) + 1, 2):
        result = compactor.compact(history[:n], n)
        event = result.plan.event
        if event is not None and "drop" in event.kinds and previous is not None:
            drops += 1
            would_send = set(previous.plan.outbound_indices) | set(range(previous.plan.history_len, n))
            diff = would_send - set(result.plan.outbound_indices)
            assert set(event.loss.left_request) == diff and event.dropped == len(diff)
        previous = result
    assert drops >= 2


def test_an_excluded_read_is_lost_unless_the_recap_has_it():
    history = rounds(3, 200)
    compactor = Compactor(CompactPolicy(context_window=200_000, max_output_tokens=4_000, enabled=True))
    compactor.compact(history[:5], 1)
    compactor.exclude(1)  # the Read of f0 and its result
    history += [{"role": "assistant", "content": [{"type": "text", "text": "done"}]}, user_text("more")]
    event = compactor.compact(history, 2).plan.event
    assert event is not None and "exclude" in event.kinds
    assert "f0" in event.loss.missing_paths
