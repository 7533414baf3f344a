"""What the economics replay checks of each strategy's request, apart from its price: its size (each
message measured once), the prefix it shares with the strategy's previous request (what the cache reads),
whether the newest round went out whole, and the user prompts and touched paths that must stay in it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tui_agent.core import tokens as tk
from tui_agent.core.messages import Message, is_user_text, text_of, to_json, tool_results, tool_uses
from tui_agent.core.compaction.recap import PATH_KEYS  # the inputs that name a touched path, defined once

if TYPE_CHECKING:
    from tui_agent.core.economics import Recorded

PROMPT_MAX_CHARS, PROMPTS_BUDGET = 2_000, 80_000


def sized_estimate(message: Message, sized: dict[int, tuple[Message, int]]) -> int:
    known = sized.get(id(message))
    if known is not None and known[0] is message:
        return known[1]
    estimate = tk.message_tokens(message)
    sized[id(message)] = (message, estimate)
    return estimate


def common_prefix(previous: list[Message], current: list[Message]) -> int:
    """How many first messages `current` repeats byte for byte from `previous` (what the cache reads).
    Mostly they are the very same objects (history is never edited); only a pair that is not is serialized
    and compared, so no serialized copy of an old request is kept between calls."""
    n = 0
    for old, new in zip(previous, current):
        if old is not new and to_json(old) != to_json(new):
            break
        n += 1
    return n


def newest_intact(prefix: list[Message], messages: list[Message]) -> bool:
    if not prefix or not messages:
        return False
    last = prefix[-1]
    if not same_message(messages[-1], last):
        return False
    if tool_results(last) and len(prefix) >= 2:
        return len(messages) >= 2 and same_message(messages[-2], prefix[-2])
    return True


def same_message(a: Message, b: Message) -> bool:
    return a is b or to_json(a) == to_json(b)


def required_memory(recorded: "Recorded") -> list[tuple[list[str], list[str]]]:
    """Per call: the user prompts (text-only, ≤ 2,000 chars, newest first within 80k chars) and the touched
    file paths of earlier tool calls, which must appear somewhere in the request."""
    history = recorded.history
    prompts_so_far: list[str] = []
    paths_so_far: list[str] = []
    seen_paths: set[str] = set()
    out = []
    scanned = 0
    for index in recorded.calls:
        for i in range(scanned, index):
            message = history[i]
            if is_user_text(message):
                text = text_of(message)
                if text.strip() and len(text) <= PROMPT_MAX_CHARS:
                    prompts_so_far.append(text)
            for use in tool_uses(message):
                tool_input = use.get("input")
                if isinstance(tool_input, dict):
                    for key in PATH_KEYS:
                        value = tool_input.get(key)
                        if isinstance(value, str) and value and value not in seen_paths:
                            seen_paths.add(value)
                            paths_so_far.append(value)
        scanned = index
        chosen, used = [], 0
        for text in reversed(prompts_so_far):
            if used + len(text) > PROMPTS_BUDGET:
                break
            chosen.append(text)
            used += len(text)
        out.append((chosen, list(paths_so_far)))
    return out
