"""Whether an old result may become a "call it again" placeholder comes from the tool itself, and a
command that writes, deletes or runs code is never called re-runnable (the placeholder would invite the
model to run it again)."""

from __future__ import annotations

import pytest

from tui_agent.core.compaction import Compactor, CompactPolicy
from tui_agent.core.compaction.policy import CompactPolicy as Policy
from tui_agent.core.messages import tool_result_block, user_text
from tui_agent.core.tools import builtin_tools
from tui_agent.core.tools.base import ToolRegistry
from tui_agent.core.tools.readonly import is_read_only_command

DESTRUCTIVE = [
    "find . -delete", "find . -name '*.pyc' -exec rm {} +", "find . -execdir rm {} ;", "find . -fprint out",
    "awk 'BEGIN { system(\"rm -rf x\") }'", "awk '{ print > \"out\" }' a", "sed -n 'w out' a", "sed 's/a/b/e' a",
    "sort -o out a", "sort -oout a", "sort --output=out a", "uniq in out", "tree -o out", "date -s 2020-01-01",
    "git branch -D main", "git branch new", "rm -rf .", "ls > out", "cat a | sh", "echo $(rm x)",
]
LOOKING = ["ls -la", "cat README.md", "find . -name '*.py'", "grep -n foo a.py", "sort a", "uniq a",
           "git status", "git log -5", "git branch", "git branch -a", "wc -l a", "date"]


@pytest.mark.parametrize("command", DESTRUCTIVE)
def test_a_command_with_a_side_effect_is_not_rerunnable(command):
    assert not is_read_only_command(command)
    assert not Policy().rerunnable("Bash", {"command": command})  # the transcripts' name table agrees


@pytest.mark.parametrize("command", LOOKING)
def test_a_command_that_only_looks_is_rerunnable(command):
    assert is_read_only_command(command)


def test_the_tool_answers_for_itself():
    tools = ToolRegistry(builtin_tools())
    assert tools.rerunnable("Read", {"file_path": "a.py"}) is True
    assert tools.rerunnable("Write", {"file_path": "a.py", "content": ""}) is False
    assert tools.rerunnable("Bash", {"command": "find . -delete"}) is False
    assert tools.rerunnable("Bash", {"command": "ls"}) is True
    assert tools.rerunnable("NoSuchTool", {}) is None


def _bash_session(command: str) -> list[dict]:
    history = [user_text("clean up")]
    for i in range(6):
        history.append({"role": "assistant", "content": [
            {"type": "tool_use", "id": f"b{i}", "name": "Bash", "input": {"command": command}}]})
        history.append({"role": "user", "content": [tool_result_block(f"b{i}", f"{i} " + "line\n" * 900)]})
    return history


def test_the_compactor_asks_the_tools_before_its_name_table():
    policy = CompactPolicy(context_window=12_000, max_output_tokens=2_000, enabled=True, mask_protect_tokens=500,
                           drop=False, cut_on_read=False)
    history = _bash_session("ls -R")
    by_table = Compactor(policy)
    by_table.request_event("drop")
    assert by_table.compact(history, 1).plan.masks  # the table calls `ls -R` re-runnable
    asked: list[str] = []

    def never(name: str, tool_input: object) -> bool:
        asked.append(name)
        return False

    by_tools = Compactor(policy, rerunnable=never)
    by_tools.request_event("drop")
    assert not by_tools.compact(history, 1).plan.masks  # the tool said no: nothing is masked
    assert asked and set(asked) == {"Bash"}
