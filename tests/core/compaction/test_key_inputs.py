"""One key-input table (core/messages.py): the placeholder, the panel's rows and a tool's card name a call alike."""

from __future__ import annotations

from pathlib import Path

from tui_agent.core.compaction.mask import key_input, placeholder_text
from tui_agent.ui.budget_model import key_input as row_key_input


def test_a_masked_grep_says_its_pattern_and_its_folder() -> None:
    # the table used to put `path` before `pattern`: the placeholder said "[Grep src — …]" and lost the pattern
    text = placeholder_text("Grep", {"pattern": "TODO", "path": "src"}, 12_000)
    assert text.startswith("[Grep TODO in src — 12.0k chars")


def test_the_rows_and_the_placeholders_read_the_same_table() -> None:
    for tool_input in ({"pattern": "*.py", "path": "/ws/pkg"}, {"file_path": "/ws/a.py", "offset": 3},
                       {"command": "git status"}, {"skill": "pdf"}, {"description": "look around"}):
        assert row_key_input(tool_input) == key_input(tool_input)
    assert row_key_input({"file_path": "/ws/a.py"}, Path("/ws")) == "a.py"  # the rows make it relative


def test_a_tools_card_reads_the_same_table() -> None:
    # Tool.summary kept a table of its own (no notebook_path, no description): a card said nothing where
    # the placeholder named the notebook
    from tui_agent.core.tools.base import Tool

    class NoSummary(Tool):
        name, description, input_schema = "Notebook", "", {}

        async def call(self, tool_input, ctx):  # pragma: no cover - never run here
            raise NotImplementedError

    tool = NoSummary()
    for tool_input in ({"notebook_path": "nb.ipynb"}, {"description": "look around"}, {"pattern": "x", "path": "s"},
                       {"command": "  "}, {}):
        assert tool.summary(tool_input) == key_input(tool_input)
