"""What the economics replay checks of each strategy's request, apart from its price: its size (each
message measured once), the prefix it shares with the strategy's previous request (what the cache reads),
whether the newest round went out whole, and the user prompts and touched paths that must stay in it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tui_agent.core import tokens as tk
from tui_agent.core.messages import Message, is_user_text, text_of, to_json, tool_results, tool_uses
from tui_agent.core.request_check import identical_head
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


def session_sizes(recorded: "Recorded") -> dict[int, tuple[Message, int]]:
    """A `sized_estimate` memo for every run of one session, filled from the chars/4 estimates the load
    already made of each history message (`Recorded.estimates`, `tk.message_tokens`): the strategies send
    mostly the same messages, and each run measuring them again was the most of the append-only run."""
    if len(recorded.estimates) != len(recorded.history):
        return {}
    return {id(m): (m, e) for m, e in zip(recorded.history, recorded.estimates)}


def common_prefix(previous: list[Message], current: list[Message], previous_keys: list[str]) -> int:
    """How many leading messages of `current` equal `previous`'s (the same object, or the same JSON)."""
    n = identical_head(previous, current)
    for old, new in zip(previous[n:], current[n:]):
        if old is not new and previous_keys[n] != to_json(new):
            break
        n += 1
    return n


def request_keys(previous: list[Message], previous_keys: list[str], current: list[Message], start: int) -> list[str]:
    """`to_json` of `current[start:]` (the messages past the cached prefix), each message that the previous
    request also sent (by identity, anywhere in it) taking its key from there: a window that slides (the
    seed's last 40 messages) sends the same objects one place earlier at every call, and serializing them
    again was a fifth of a replay. The previous request is alive while this runs, so its ids are its own."""
    known = {id(m): key for m, key in zip(previous[start:], previous_keys[start:])}
    out = []
    for m in current[start:]:
        key = known.get(id(m))
        out.append(to_json(m) if key is None else key)
    return out


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
