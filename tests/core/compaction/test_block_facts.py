"""A tool_result block's facts (the call it answers, its size, whether it failed, whether it can be had
again) are known once, as its message arrives: the history is append-only, so the tiers read
`Facts.results` instead of re-reading every block of every message on every call."""

from __future__ import annotations

from tui_agent.core.compaction.decisions import Mask
from tui_agent.core.compaction.facts import BlockFacts, Facts
from tui_agent.core.compaction.mask import placeholder_text
from tui_agent.core.compaction.policy import CompactPolicy

HISTORY = [
    {"role": "user", "content": "Fix the parser."},
    {"role": "assistant", "content": [
        {"type": "text", "text": "Looking."},
        {"type": "tool_use", "id": "r1", "name": "Read", "input": {"file_path": "src/parse.py"}},
        {"type": "tool_use", "id": "b1", "name": "Bash", "input": {"command": "pytest -q"}},
        {"type": "tool_use", "id": "m1", "name": "mcp__notes__lookup", "input": {"key": "parser"}},
    ]},
    {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "r1", "content": "x" * 5000},
        {"type": "tool_result", "tool_use_id": "b1", "content": [{"type": "text", "text": "FAILED 1"}],
         "is_error": True},
        {"type": "tool_result", "tool_use_id": "m1", "content": "notes"},
        {"type": "text", "text": "and keep the tests green"},
    ]},
]


def answers(name: str, tool_input: object) -> bool | None:
    """The tools' own answer: an MCP tool that says it only reads; the built-ins leave it to the table."""
    return True if name.startswith("mcp__") else None


def test_each_result_block_is_known_once_with_its_call_size_and_failure() -> None:
    facts = Facts(answers)
    facts.sync(HISTORY)
    assert facts.results[:2] == [(), ()]
    assert facts.results[2] == (
        BlockFacts(0, "r1", "Read", {"file_path": "src/parse.py"}, 5000, False, None),
        BlockFacts(1, "b1", "Bash", {"command": "pytest -q"}, len("FAILED 1"), True, None),
        BlockFacts(2, "m1", "mcp__notes__lookup", {"key": "parser"}, 5, False, True),
    )
    known = facts.results[2]
    facts.sync(HISTORY + [{"role": "assistant", "content": "Done."}])  # only the new message is learnt
    assert facts.results[2] is known and facts.results[3] == ()
    assert facts.copy().results == facts.results and facts.copy().results is not facts.results


def test_the_tool_answers_first_and_the_policy_table_only_when_it_does_not() -> None:
    facts = Facts(answers)
    facts.sync(HISTORY)
    read, bash, mcp = facts.results[2]
    policy = CompactPolicy()
    assert read.rerunnable(policy) is policy.rerunnable("Read", read.input) is True
    assert bash.rerunnable(policy) is policy.rerunnable("Bash", bash.input)
    assert mcp.rerunnable(policy) is True  # the table does not know it; the tool said so
    assert [r.rerunnable(policy) for r in facts.results[2]] == [
        facts.rerunnable(r.tool_use_id, policy) for r in facts.results[2]]


def test_a_mask_made_from_the_facts_is_the_mask_made_from_the_block() -> None:
    facts = Facts(answers)
    facts.sync(HISTORY)
    read = facts.results[2][0]
    from_facts = Mask.of_facts(2, read, 7)
    assert from_facts == Mask.of(2, 0, HISTORY[2]["content"][0], facts.call_of, 7)
    assert from_facts.placeholder == placeholder_text("Read", {"file_path": "src/parse.py"}, 5000)
