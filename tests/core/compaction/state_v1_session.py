"""A deterministic session for the version-1 state fixture (tests/core/compaction/data/compact_state_v1.json): the
same code made the fixture with main's compactor (before CompactState) and replays it in the test."""

from __future__ import annotations

from tui_agent.core.messages import tool_result_block, user_text

POLICY = dict(context_window=16_000, max_output_tokens=2_000, enabled=True, mask_protect_tokens=2_000)
BASELINE = 400


def history() -> list[dict]:
    out: list[dict] = []
    n = 0
    for turn in range(10):
        out.append(user_text(f"prompt {turn}: " + "please " * (turn * 7 % 30)))
        for k in range(3):
            n += 1
            name = ["Read", "Grep", "Bash"][k]
            key = {"command": f"ls d{n}"} if name == "Bash" else {"file_path": f"src/f{n}.py"}
            out.append({"role": "assistant", "content": [{"type": "text", "text": "looking " * (n % 9 + 1)},
                                                         {"type": "tool_use", "id": f"t{n}", "name": name, "input": key}]})
            out.append({"role": "user", "content": [tool_result_block(f"t{n}", f"{n}:" + "r" * (900 + 700 * (n % 7)))]})
        out.append({"role": "assistant", "content": [{"type": "text", "text": f"answer {turn}"}]})
    return out


def drive(compactor, steps: list[dict]) -> list[int]:
    """Call after each turn's results with usage 1.3× the estimate; pin/exclude midway; the calls made."""
    calls = []
    call = 0
    for end in range(2, len(steps) + 1):
        if steps[end - 1]["role"] != "user":
            continue
        call += 1
        if call == 12:
            compactor.pin(4)
            compactor.exclude(9)
        result = compactor.compact(steps[:end], call)
        compactor.observe_usage(round(1.3 * result.plan.estimated_tokens) + 50)
        calls.append(call)
    return calls
