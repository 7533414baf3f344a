"""The demo model's mind: which step answers the newest prompt (small talk, a search, named paths, the biggest
files, an overview, the data files, a look around), apart from `demo.py`'s provider so that the TUI's first
frame, which builds a demo provider, does not wait for the answers, flows and prompt readers it loads.
"""

from __future__ import annotations

import re
from typing import Any

from tui_agent.core.compaction.marks import is_recap, recap_files
from tui_agent.core.compaction.summary import extractive_summary, is_summary_request
from tui_agent.core.messages import Message, result_text, tool_results
from tui_agent.core.providers.base import ModelRequest
from tui_agent.core.providers.demo_answers import GREETING, HEADLESS_WORDS, RECAP, TUI_WORDS, from_conversation
from tui_agent.core.providers.demo_files import DemoFiles
from tui_agent.core.providers.demo_flows import biggest, data_flow, explore, grep_flow, overview
from tui_agent.core.providers.demo_named import named_paths, named_step
from tui_agent.core.providers.demo_prompts import (
    BIGGEST,
    OVERVIEW,
    already_read,
    files_read,
    grep_ask,
    skills,
    wants_data,
)
from tui_agent.core.providers.demo_recall import recall_step
from tui_agent.core.providers.demo_turn import CUT_MARK, Turn, current_turn, earlier_prompts, lost, still_held
from tui_agent.core.providers.scripted import words

__all__ = ["decide", "highest_demo_call", "trimmed", "extractive_summary", "is_summary_request", "current_turn",
           "still_held", "words"]

Step = tuple[str, list[tuple[str, dict[str, Any]]]]


def decide(turn: Turn, request: ModelRequest, available: set[str], files: DemoFiles, headless: bool) -> Step:
    """The newest prompt's wish, in order: small talk and recaps, a search, named paths, the biggest
    files, an overview (with the data files when asked), the data files, else a look around."""
    hints = HEADLESS_WORDS if headless else TUI_WORDS
    if GREETING.match(turn.prompt) or RECAP.search(turn.prompt):  # no exploring: it is all in the talk
        recaps = [m for m in request.messages if is_recap(m)]
        read = list(dict.fromkeys([*(p for m in recaps for p in recap_files(m)), *files_read(request.messages)]))
        return from_conversation(turn.prompt, earlier_prompts(request.messages), read, hints,
                                 "dropped" if recaps else trimmed(request.messages)), []
    terms, where = grep_ask(turn.prompt)
    if terms and "Grep" in available:
        return grep_flow(turn, terms, where, hints)
    named = named_paths(turn.prompt, files)
    if named.here and not named.missing and "Context" in available:
        recalled = recall_step(turn, named.here, request.messages)
        if recalled is not None:
            return recalled
    if (named.here and "Read" in available) or (named.missing and "Glob" in available):
        return named_step(turn, named, files, hints)
    if BIGGEST.search(turn.prompt) and {"Glob", "Grep", "Read"} <= available:
        return biggest(turn, files, hints)
    data = wants_data(turn.prompt) and {"Glob", "Read"} <= available
    if OVERVIEW.search(turn.prompt) and {"Glob", "Read"} <= available:
        return overview(turn, files, hints, request.system, available, data)
    if data:
        return data_flow(turn, hints)
    return _look_around(turn, request, available, hints, files)


def _look_around(turn: Turn, request: ModelRequest, available: set[str], hints: Any, files: DemoFiles) -> Step:
    """A question about the code; `/<skill> args` loads the skill first, as the system prompt asks."""
    found = skills(request.system)
    step = turn.rounds
    invoked = re.match(r"^/([\w.-]+)\s*(.*)$", turn.prompt.strip(), flags=re.DOTALL)
    if invoked and invoked.group(1) in found and "Skill" in available:
        if step == 0:
            skill_input = {"skill": invoked.group(1)}
            if invoked.group(2).strip():
                skill_input["args"] = invoked.group(2).strip()
            return f"Loading the `{invoked.group(1)}` skill first.", [("Skill", skill_input)]
        step, found = step - 1, []
    return explore(turn, step, files, hints, request.system, available, already_read(request.messages), found)


_DEMO_ID = re.compile(r"^toolu_demo_(\d+)_\d+$")


def highest_demo_call(messages: list[Message]) -> int:
    highest = 0
    for message in messages:
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            match = _DEMO_ID.match(str(block.get("id", ""))) if isinstance(block, dict) else None
            if match:
                highest = max(highest, int(match.group(1)))
    return highest


def trimmed(messages: list[Message]) -> str:
    """"trimmed" when a tool result in the request is a placeholder or cut short (compaction's mark)."""
    return "trimmed" if any(lost("Read", result_text(r)) or CUT_MARK in result_text(r)
                            for m in messages for r in tool_results(m)) else ""
