"""An event that only masks still says where its request first differs from the previous one.

`cached_messages` is what the provider's cache breakpoint and the panel's "cached" rows read. The event
step swapped masked messages in place and then laid the request out again; the re-layout compared the
request with itself (already swapped), so a mask-only event reported the whole request as unchanged:
the breakpoint then claimed a prefix that the event had just rewritten."""

from __future__ import annotations

from tui_agent.core.compaction import Compactor, CompactPolicy
from tui_agent.core.messages import protocol_errors, tool_result_block, user_text

RESULT = "".join(f"match {n}: " + "g" * 90 + "\n" for n in range(40))  # 4k chars: under the cut size


def grep_round(k: int) -> list[dict]:
    use = {"type": "tool_use", "id": f"t{k}", "name": "Grep", "input": {"pattern": f"word{k}"}}
    return [{"role": "assistant", "content": [use]}, {"role": "user", "content": [tool_result_block(f"t{k}", RESULT)]}]


def test_a_mask_only_event_reports_its_first_changed_message() -> None:
    policy = CompactPolicy(context_window=40_000, max_output_tokens=1_000, enabled=True, drop=False,
                           cut_on_read=False, mask_protect_tokens=2_000)
    compactor = Compactor(policy, baseline_tokens=500)
    history = [user_text("look for the words")]
    compactor.compact(history, 1)
    event = None
    for k in range(60):
        history += grep_round(k)
        result = compactor.compact(history, k + 2)
        if result.plan.event is not None and "mask" in result.plan.event.kinds:
            event = result
            break
    assert event is not None, "the request crossed the high mark and masked old results"
    plan = event.plan
    masked = [plan.outbound_indices.index(i) for i, per in plan.masks.items() if any(m.call == plan.call for m in per)]
    assert masked and plan.cached_messages <= min(masked) < len(event.messages)
    assert protocol_errors(event.messages) == []


def test_fitting_the_window_reports_the_head_it_dropped() -> None:
    """A newest result that nearly fills the window: the event's drop keeps a head, fitting the window
    drops the head too, and the request starts with the recap, so nothing of the previous request is a
    cached prefix (each re-layout of the step compared with the one before it: it said 4)."""
    policy = CompactPolicy(context_window=12_000, max_output_tokens=1_000, enabled=True, mask=False,
                           cut_on_read=False, keep_head=0.20, low_water=0.30)  # a head big enough that the window takes it
    # (the head an event keeps is bounded by the low mark: at compaction 4's 10 % it is too small to matter)
    compactor = Compactor(policy, baseline_tokens=500)
    history = [user_text("start here"), {"role": "assistant", "content": [{"type": "text", "text": "ok"}]},
               user_text("go on")]
    compactor.compact(history, 1)
    for k in range(5):
        history += grep_round(k)
        compactor.compact(history, k + 2)
    use = {"type": "tool_use", "id": "big", "name": "Read", "input": {"file_path": "big.txt"}}
    history += [{"role": "assistant", "content": [use]},
                {"role": "user", "content": [tool_result_block("big", "x" * 40_000)]}]
    result = compactor.compact(history, 7)
    plan = result.plan
    assert plan.event is not None and plan.drop_from == 0 and plan.recap_position == 0, plan
    assert plan.cached_messages == 0
    assert protocol_errors(result.messages) == []
