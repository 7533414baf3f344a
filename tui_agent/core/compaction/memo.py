"""Per-message facts that compaction asks for at every call, computed once per message object.

A replay (and a long live session) asks the legacy strategies for a request at every call, and each
request re-measures the same few hundred history messages and re-cuts the same tool results: on a
433-call Claude Code log that was most of `replay --report`'s time. History messages are never edited
(append-only, compaction works on copies), so a message object's size and its cut copy never change;
this memo keeps them by identity. Each entry keeps its message alive, so an `id` is never reused for
another message while it is remembered. Reusing the cut copy also keeps a strategy's requests made of the
same objects from one call to the next, which lets the cache-prefix comparison stop at `is`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Generic, NamedTuple, TypeVar

from tui_agent.core import tokens as tk
from tui_agent.core.messages import Message, blocks, is_user_text
from tui_agent.core.request_check import same_head

T = TypeVar("T")


class _ByIdentity(Generic[T]):
    """A value per object, keyed by `id` with the object kept alive beside it."""

    def __init__(self) -> None:
        self._known: dict[tuple[int, object], tuple[object, T]] = {}

    def get(self, obj: object, extra: object, make: Callable[[], T]) -> T:
        key = (id(obj), extra)
        known = self._known.get(key)
        if known is not None and known[0] is obj:
            return known[1]
        value = make()
        self._known[key] = (obj, value)
        return value


class Measures(NamedTuple):
    """`MessageMemo.measure`: one list per fact, one item per message."""

    tokens: list[int]  # chars/4 estimates
    chars: list[int]
    rounds: list[bool]  # a user message carrying tool results
    prompts: list[bool]  # user text (`messages.is_user_text`)


class MessageMemo:
    """Token estimates, character counts and cut copies of messages, each computed once per object."""

    def __init__(self) -> None:
        # id → (message kept alive, tokens, chars, a user message carrying tool results, user text)
        self._sizes: dict[int, tuple[Message, int, int, bool, bool]] = {}
        self._cuts: _ByIdentity[object] = _ByIdentity()
        self._texts: dict[int, tuple[Message, str | None]] = {}
        # the sequence `measure` was last asked for (a copy: the caller's list may grow) and its lists
        self._last: tuple[list[Message], Measures] = ([], Measures([], [], [], []))

    def text(self, message: Message) -> str | None:
        """`recap.message_text(message)`: what a request's text search sees of it."""
        known = self._texts.get(id(message))
        if known is None or known[0] is not message:
            from tui_agent.core.compaction.recap import message_text

            known = (message, message_text(message))
            self._texts[id(message)] = known
        return known[1]

    def sizes(self, message: Message) -> tuple[int, int]:
        """(chars/4 token estimate, characters) of `message`."""
        known = self._known(message)
        return known[1], known[2]

    def _known(self, message: Message) -> tuple[Message, int, int, bool, bool]:
        known = self._sizes.get(id(message))
        if known is None or known[0] is not message:
            known = (message, *tk.message_sizes(message), message.get("role") == "user" and any(
                b.get("type") == "tool_result" for b in blocks(message)), is_user_text(message))
            self._sizes[id(message)] = known
        return known

    def measure(self, messages: Sequence[Message]) -> Measures:
        """Per message of `messages`: its chars/4 estimate, its characters, whether it is a user message
        carrying tool results (a tool round) and whether it is user text (where a copy may start). A
        strategy compacts a history that grows by a message or two per call, so the lists of the sequence
        asked for last are reused as far as it holds the same messages, and only the rest is looked up
        (one lookup, and one scan of the blocks, per message per call was most of the seed strategy's
        time on a long replay). The lists returned are not to be changed."""
        seen, last = self._last
        n = same_head(seen, messages)  # equal messages have equal sizes and kinds
        if n < len(seen) or n < len(messages):
            tokens, chars, rounds, prompts = last.tokens[:n], last.chars[:n], last.rounds[:n], last.prompts[:n]
            for message in messages[n:]:
                _, t, c, r, p = self._known(message)
                tokens.append(t)
                chars.append(c)
                rounds.append(r)
                prompts.append(p)
            last = Measures(tokens, chars, rounds, prompts)
            self._last = (list(messages), last)
        return last

    def tokens(self, message: Message) -> int:
        return self.sizes(message)[0]

    def chars(self, message: Message) -> int:
        return self.sizes(message)[1]

    def cut(self, message: Message, limit: int, make: Callable[[], T]) -> T:
        """`make()` (the cut of `message` at `limit` characters), remembered for this message and limit."""
        return self._cuts.get(message, limit, make)  # type: ignore[return-value]
