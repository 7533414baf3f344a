"""What the demo model reads of a request: the current turn and the user's real prompts.

After a drop the request holds user-role text the compactor wrote (the recap, a stand-in, a summary
request). A real model tells them from the user's words by reading them; the demo does it by their marks
(`compaction.marks`), so it answers the newest prompt the user typed, never the recap.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, replace
from typing import Any

from tui_agent.core.compaction.marks import is_user_prompt, recap_files, recap_prompts
from tui_agent.core.compaction.mask import CLEARED
from tui_agent.core.messages import Message, result_text, text_of, tool_results, tool_uses


@dataclass
class Turn:
    """What the demo can see of the current prompt's turn in the request it was sent."""

    prompt: str
    rounds: int
    calls: list[tuple[str, dict[str, Any], str, bool]]  # (tool name, input, result text, is_error)
    notes: tuple[str, ...] = ()  # what the demo itself said in this turn (its text is never masked)
    read: tuple[str, ...] = ()  # every file a Read of this turn returned, in order (`reads`)
    recapped: tuple[str, ...] = ()  # files the recap right before the prompt lists (read before, maybe in this turn)

    def reads(self) -> list[str]:
        """Every file this turn read, in order, once each: those still held and those compaction took
        out since (an answer's count is of what was done, not of what is still in the request)."""
        held = [str(i.get("file_path")) for name, i, _t, error in self.calls if name == "Read" and not error]
        return list(dict.fromkeys([*self.read, *held]))  # (a Turn made by hand names only its calls)


def current_turn(messages: list[Message]) -> Turn:
    """The turn of the newest prompt the user typed: its text, the rounds since, and its tool calls."""
    start = max((i for i, m in enumerate(messages) if is_user_prompt(m)), default=-1)
    prompt = text_of(messages[start]) if start >= 0 else ""
    uses: dict[str, tuple[str, dict]] = {}
    calls: list[tuple[str, dict[str, Any], str, bool]] = []
    rounds = 0
    notes: list[str] = []
    for message in messages[start + 1:]:
        if message.get("role") == "assistant":
            rounds += 1
            notes.append(text_of(message))
            for use in tool_uses(message):
                uses[use["id"]] = (use["name"], use.get("input", {}))
        for result in tool_results(message):
            name, tool_input = uses.get(result.get("tool_use_id", ""), ("?", {}))
            calls.append((name, tool_input, result_text(result), bool(result.get("is_error"))))
    read = tuple(str(i.get("file_path")) for name, i, _t, error in calls if name == "Read" and not error)
    recapped = tuple(recap_files(messages[start - 1])) if start > 0 else ()  # the recap just before the prompt
    return Turn(prompt, rounds, calls, tuple(notes), read, recapped)


def earlier_prompts(messages: list[Message]) -> list[str]:
    """The user's prompts before the current one, oldest first: those still sent as they were typed and
    those a recap lists in their place (in the order the request holds them)."""
    prompts: list[str] = []
    for message in messages:
        if is_user_prompt(message):
            prompts.append(text_of(message))
        else:
            prompts.extend(recap_prompts(message))
    return prompts[:-1]  # the last one is the current prompt


CUT_MARK = "…[tool_result cut"
LISTS = ("Grep", "Glob")  # a cut list is a wrong list (its tail is gone): fetched again, like a placeholder
GIVE_UP = 2  # a result lost this many times in one turn is not fetched again (the window cannot hold it)


def lost(name: str, text: str) -> bool:
    """Is this result a stand-in rather than content: a mask's placeholder, or a cut list?"""
    head = text.lstrip()[:400]
    return (head.startswith("[") and CLEARED in head) or (name in LISTS and CUT_MARK in text)


def still_held(turn: Turn) -> Turn:
    """The turn as a model reads it: a placeholder says the result left, so that call is as if not made
    (the flows run it again), never read as the file or the search it stands for. A call lost
    `GIVE_UP` times stays, so a window too small for it cannot loop the turn."""
    times = Counter((name, repr(sorted(i.items()))) for name, i, text, _e in turn.calls if lost(name, text))
    calls = [c for c in turn.calls if not lost(c[0], c[2]) or times[(c[0], repr(sorted(c[1].items())))] >= GIVE_UP]
    return turn if len(calls) == len(turn.calls) else replace(turn, calls=calls)


RANKED = re.compile(r"`([^`]+)` \(([\d,]+) lines?\)")  # the demo's own note of a ranking


def line_counts(turn: Turn) -> list[tuple[str, int]]:
    """(path, lines) from this turn's Grep count results, largest first (ties by path: deterministic);
    when compaction took those results, from the ranking the demo wrote down when it had them, as a
    model keeps what it found in its own words."""
    counts: dict[str, int] = {}
    for name, tool_input, text, is_error in turn.calls:
        if name != "Grep" or is_error or tool_input.get("output_mode") != "count" or lost(name, text):
            continue
        for line in text.splitlines():
            path, sep, number = line.rpartition(":")
            if sep and path and number.strip().isdigit():
                counts[path.strip()] = int(number)
    if not counts:
        for note in reversed(turn.notes):
            counts = {path: int(number.replace(",", "")) for path, number in RANKED.findall(note)}
            if counts:
                break
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))
