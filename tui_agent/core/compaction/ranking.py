"""Which results leave first at an event, and how much of the recent tail is protected from masking.

Masking an old result of a re-runnable tool loses least: the placeholder says how to get it back. But a
mask only helps when the masked message is still *sent* after the event: a protected tail larger than what
the drop keeps means every masked message is dropped right after (0 masked on every real session, and the
demo's 20k protection was larger than its whole window). So the protection is measured against the room
the low-water mark leaves once the base, the head and the recap are sent: at most `PROTECT_SHARE` of it,
and the rest of the kept tail can hold masked results.

Among the candidates, the order is how likely the agent needs each one again:
1. a read of a file that was read again, written or edited since (its content is stale or repeated);
2. a result none of whose entities a later message mentions;
3. a result whose entities later messages mention (it stays longest: the agent is still using it).
Pure functions of explicit arguments.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence, Set
from typing import Any

from tui_agent.core.compaction.names.entities import entities, held_text
from tui_agent.core.messages import Message, tool_results, tool_uses

PROTECT_SHARE = 0.5  # of the room the low mark leaves after the base, the head and the recap
FILE_TOOLS = ("Read", "Write", "Edit", "MultiEdit", "NotebookRead", "NotebookEdit")


def mask_protection(configured: float, target: float, baseline: float, head: float, recap: float) -> float:
    """The recent tokens never masked at this event: the configured protection, but no more than a share
    of what the drop to `target` can keep, so masked results still fit in the request after it."""
    room = max(target - baseline - head - recap, 0.0)
    return min(float(configured), PROTECT_SHARE * room)


def in_progress_floor(last_prompt: int | None, turn_tokens: float, baseline: float, window: int,
                      newest: int, history_ends_with_user: bool) -> int:
    """The first message no mask or cut may take: the turn in progress (the prompt being answered and
    every result after it), since the model is still using what it fetched for it (a Grep it is about to
    read, a listing it ranks); unless that turn alone is over `window` (the high mark: a long agent turn
    still compacts inside once it alone passes the budget, or it sent 1.2× the prompt tokens of v1 on a
    40-read turn), when only the newest round is kept whole (`newest`). Between turns (the history ends
    with an answer) nothing is in progress."""
    if last_prompt is None or not history_ends_with_user or last_prompt >= newest:
        return newest
    if baseline + turn_tokens > window:
        return newest
    return last_prompt + 1  # the turn's first assistant message: a drop may end there, never later


def touched_path(name: str, tool_input: Any) -> str:
    """The file a file tool reads or changes ("" for other tools)."""
    if name not in FILE_TOOLS or not isinstance(tool_input, dict):
        return ""
    path = tool_input.get("file_path") or tool_input.get("notebook_path") or tool_input.get("path")
    return path if isinstance(path, str) else ""


def superseded_reads(uses: Sequence[tuple[int, str, Any]]) -> set[int]:
    """Of `uses` (message index, tool name, input) in history order: the messages holding a read of a
    file that a later use read again, wrote or edited."""
    last_touch: dict[str, int] = {}
    for i, name, tool_input in uses:
        path = touched_path(name, tool_input)
        if path:
            last_touch[path] = max(last_touch.get(path, -1), i)
    out: set[int] = set()
    for i, name, tool_input in uses:
        path = touched_path(name, tool_input)
        if name in ("Read", "NotebookRead") and path and last_touch[path] > i:
            out.add(i + 1)  # the result is in the message after the tool_use
    return out


def mask_rank(index: int, superseded: set[int], mentioned_later: bool) -> tuple[int, int]:
    """Sort key (smaller leaves first): superseded reads, then results not mentioned later, then the
    rest; the oldest first within each group."""
    if index in superseded:
        group = 0
    elif not mentioned_later:
        group = 1
    else:
        group = 2
    return group, index


def mask_signals(history: Sequence[Message], start: int,
                 entities_of: Callable[[int], Set[str]] | None = None,
                 wanted: Set[int] | None = None) -> tuple[set[int], dict[int, bool]]:
    """What the ranking reads: the superseded reads, and for each result from `start` on whether a later
    assistant message mentions one of its entities (`entities_of(i)`: message i's entities, memoized by
    the caller; by default read from the message). `wanted`: only these results are asked about (the
    mask's candidates): the others' entities, a long protected tail's among them, are not extracted."""
    held = entities_of or (lambda i: entities(held_text(history[i])))
    uses = [(i, use.get("name", ""), use.get("input")) for i in range(start, len(history))
            for use in tool_uses(history[i])]
    superseded = superseded_reads(uses)
    mentioned: dict[int, bool] = {}
    later: set[str] = set()
    for i in range(len(history) - 1, start - 1, -1):
        message = history[i]
        if message.get("role") == "assistant":
            later |= held(i)  # an answer's held text is what it mentions (`coverage.mentioned_text`)
        elif (wanted is None or i in wanted) and tool_results(message):
            mentioned[i] = not later.isdisjoint(held(i))
    return superseded, mentioned
