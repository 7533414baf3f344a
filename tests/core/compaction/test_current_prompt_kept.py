"""The prompt of the turn in progress is never dropped (issue 18's defect, brief item 6): when one turn's
tool rounds alone overflow the window, a drop passed its prompt and the model saw only the recap and tool
results. The prompt now stays as an island of its own; the rounds after it leave whole, as pairs."""

from __future__ import annotations

from tui_agent.core.compaction import Compactor, CompactPolicy
from tui_agent.core.messages import is_user_text, protocol_errors, text_of, tool_result_block, user_text


def long_turn(rounds: int, size: int) -> list[dict]:
    history = [user_text("first task"), {"role": "assistant", "content": [{"type": "text", "text": "done"}]},
               user_text("the prompt being worked on")]
    for k in range(rounds):
        history.append({"role": "assistant", "content": [
            {"type": "tool_use", "id": f"t{k}", "name": "Edit", "input": {"file_path": f"f{k}.py"}}]})
        history.append({"role": "user", "content": [tool_result_block(f"t{k}", f"{k}:" + "e" * size)]})
    return history


def test_a_drop_inside_the_turn_in_progress_keeps_its_prompt():
    compactor = Compactor(CompactPolicy(context_window=16_000, max_output_tokens=2_000, enabled=True, keep_head=0),
                          baseline_tokens=400)
    history = long_turn(40, 1_500)
    dropped_once = False
    for n in range(5, len(history) + 1, 2):  # each ends with a round of results
        result = compactor.compact(history[:n], n // 2)
        prompts = [text_of(m) for m in result.messages if is_user_text(m)]
        assert "the prompt being worked on" in prompts, f"call {n // 2}: the prompt in progress was dropped"
        assert not protocol_errors(result.messages)
        dropped_once |= result.plan.drop_until > max(result.plan.drop_from, 3)
        compactor.observe_usage(result.plan.estimated_tokens)
    assert dropped_once, "the turn was meant to overflow the window (a drop inside it)"


def test_once_a_new_prompt_is_asked_the_old_one_can_go_to_the_recap():
    compactor = Compactor(CompactPolicy(context_window=16_000, max_output_tokens=2_000, enabled=True, keep_head=0),
                          baseline_tokens=400)
    history = long_turn(40, 1_500)
    history += [{"role": "assistant", "content": [{"type": "text", "text": "finished"}]}, user_text("next one")]
    for k in range(40, 60):
        history.append({"role": "assistant", "content": [
            {"type": "tool_use", "id": f"t{k}", "name": "Edit", "input": {"file_path": f"f{k}.py"}}]})
        history.append({"role": "user", "content": [tool_result_block(f"t{k}", "e" * 1_500)]})
    result = compactor.compact(history, 1)
    prompts = [text_of(m) for m in result.messages if is_user_text(m)]
    assert "next one" in prompts
    assert result.plan.recap is not None and "the prompt being worked on" in result.plan.recap.prompts
    assert not protocol_errors(result.messages)
