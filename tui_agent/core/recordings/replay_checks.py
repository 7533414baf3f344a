"""What the economics replay checks of each strategy's request, apart from its price: its size (each
message measured once), the prefix it shares with the strategy's previous request (what the cache reads),
whether the newest round went out whole, and the user prompts and touched paths that must stay in it.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from tui_agent.core import tokens as tk
from tui_agent.core.messages import Message, is_user_text, to_json, tool_results, tool_uses
from tui_agent.core.request_check import identical_head
from tui_agent.core.compaction.recap import PATH_KEYS  # the inputs that name a touched path, defined once

if TYPE_CHECKING:
    from tui_agent.core.recordings.recorded import Recorded

PROMPT_MAX_CHARS, PROMPTS_BUDGET = 2_000, 80_000
KEPT = 8192  # the sizes and keys of other messages a session memo keeps (requests hold far fewer)
KEY_CHARS = 2_000_000  # ... and the keys' characters at most (a 200k-token request is about 800k)


class SessionMemo:
    """What every run of one session measures of a message it sends, made once per message object: its
    chars/4 size and its prefix-cache key (`to_json`). The strategies send mostly the same messages (the
    append-only run all of them), and each run measuring and serializing them again at every call that
    did not reuse its previous request was most of a replay's pricing. History messages are never edited
    (compaction works on copies), and each entry keeps its message alive, so an id is never another's.

    Sizes start from the estimates the load already made of each history message (`Recorded.estimates`);
    the others (cut and masked copies, messages a growing log added since) and the keys are kept for the
    newest `KEPT` messages only: kept for good, they would keep every copy ever sent alive over a long
    watch. A key is asked only of a message that is not the very same object as the one before it."""

    def __init__(self, recorded: "Recorded | None" = None) -> None:
        self._history: dict[int, tuple[Message, int]] = {}
        if recorded is not None and len(recorded.estimates) == len(recorded.history):
            self._history = {id(m): (m, e) for m, e in zip(recorded.history, recorded.estimates)}
        self._sizes: OrderedDict[int, tuple[Message, int]] = OrderedDict()  # the newest used last
        self._keys: OrderedDict[int, tuple[Message, str]] = OrderedDict()
        self.key_chars = 0  # the characters of the keys kept

    def size(self, message: Message) -> int:
        """`tk.message_tokens(message)`."""
        known = self._history.get(id(message))
        if known is not None and known[0] is message:
            return known[1]
        return _kept(self._sizes, message, tk.message_tokens)

    def seed(self, messages: Sequence[Message], estimates: Sequence[int]) -> None:
        """Sizes already measured (a growing log's new messages, measured by its load): kept with the
        newest, so a run sending them does not measure them again."""
        sizes = self._sizes
        for message, estimate in zip(messages, estimates):
            sizes[id(message)] = (message, estimate)
            sizes.move_to_end(id(message))
        while len(sizes) > KEPT:
            sizes.popitem(last=False)

    def key(self, message: Message) -> str:
        """`to_json(message)`: two requests share a cached prefix as far as these are equal. The keys kept
        are bounded by their characters too: the messages keyed are the ones a strategy made anew (a
        recap at each event, which grows with the session), and a watch made one every hundred calls
        for hours, each kept with its key until 8,192 of them were."""
        keys = self._keys
        known = keys.get(id(message))
        if known is not None and known[0] is message:
            keys.move_to_end(id(message))
            return known[1]
        value = to_json(message)
        keys[id(message)] = (message, value)
        self.key_chars += len(value)
        while len(keys) > 1 and (len(keys) > KEPT or self.key_chars > KEY_CHARS):
            _, (_, gone) = keys.popitem(last=False)
            self.key_chars -= len(gone)
        return value


def _kept(memo: OrderedDict, message: Message, make: Callable[[Message], Any]) -> Any:
    known = memo.get(id(message))
    if known is not None and known[0] is message:
        memo.move_to_end(id(message))
        return known[1]
    value = make(message)
    memo[id(message)] = (message, value)
    if len(memo) > KEPT:
        memo.popitem(last=False)
    return value


def common_prefix(previous: list[Message], current: list[Message], key: Callable[[Message], str] = to_json,
                  said: int = 0, *, sure: bool = False) -> int:
    """How many first messages `current` repeats byte for byte from `previous` (what the cache reads).
    Mostly they are the very same objects (history is never edited); only a pair that is not is compared
    by `key` (a memo's `to_json`), so no serialized copy of a whole old request is kept between calls.

    `said`: how many first messages the maker of `current` says are the very ones of `previous` (a
    compactor's `plan.cached_messages`, or the length of an append-only request that grew). A long
    session's identity walk costs more than the rest of its call; one list comparison in C (identity
    first) confirms the word instead, and a word it does not confirm is ignored (the walk from 0).
    `sure`: the word needs no confirming (the append-only request, a longer slice of a history that is
    never edited: the comparison walked the whole session again at every call)."""
    n = min(said, len(previous), len(current))
    if n and not sure and _head(previous, n) != _head(current, n):
        n = 0
    n = n + identical_head(previous[n:], current[n:]) if n else identical_head(previous, current)
    for old, new in zip(previous[n:], current[n:]):
        if old is not new and key(old) != key(new):
            break
        n += 1
    return n


def _head(items: list[Message], n: int) -> list[Message]:
    """The first n items (the list itself when that is all of it: a request that grew is not copied)."""
    return items if n == len(items) else items[:n]


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


def prompt_blocks(message: Message) -> tuple[str, ...]:
    """A user prompt as its text blocks (Claude Code 2.x sends `<ide_opened_file>…` and the typed words
    as separate blocks; a request joins them with a newline, so the prompt is found when each block is)."""
    content = message.get("content")
    if isinstance(content, str):
        return (content,) if content.strip() else ()
    return tuple(b.get("text", "") for b in content or () if isinstance(b, dict) and b.get("type") == "text"
                 and b.get("text", "").strip())


def required_memory(recorded: "Recorded") -> list[tuple[list[tuple[str, ...]], list[str]]]:
    """Per call: the user prompts (text-only, ≤ 2,000 chars, newest first within 80k chars; each as its
    text blocks) and the touched file paths of earlier tool calls, which must appear somewhere in the
    request."""
    history = recorded.history
    prompts_so_far: list[tuple[str, ...]] = []
    paths_so_far: list[str] = []
    seen_paths: set[str] = set()
    out = []
    scanned = 0
    for index in recorded.calls:
        for i in range(scanned, index):
            message = history[i]
            if is_user_text(message):
                pieces = prompt_blocks(message)
                if pieces and sum(map(len, pieces)) <= PROMPT_MAX_CHARS:
                    prompts_so_far.append(pieces)
            for use in tool_uses(message):
                tool_input = use.get("input")
                if isinstance(tool_input, dict):
                    for key in PATH_KEYS:
                        value = tool_input.get(key)
                        if isinstance(value, str) and value and value not in seen_paths:
                            seen_paths.add(value)
                            paths_so_far.append(value)
        scanned = index
        chosen: list[tuple[str, ...]] = []
        used = 0
        for prompt in reversed(prompts_so_far):
            size = sum(map(len, prompt))
            if used + size > PROMPTS_BUDGET:
                break
            chosen.append(prompt)
            used += size
        out.append((chosen, list(paths_so_far)))
    return out
