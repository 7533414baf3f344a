"""Which of some strings (earlier prompts, touched paths) a request's text holds, searching only what
changed since the same run's previous request.

The replay's memory check asks, at every call of every strategy, whether each earlier prompt and path
still appears in the request's joined text (`compaction.recap.request_text`). A string that is missing
is searched through the whole text, every call: on a 433-call log that was a third of `replay --report`.
But a request mostly repeats the previous one's first messages (`replay_checks.common_prefix`), so its
text starts with the same `L` characters. Where the previous search found a string inside those, it is
still there; where it did not, an occurrence can only start after `L - len(s)`: only the tail is searched.
The answers are exactly those of `s in text` (tests/core/recordings/test_text_presence.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from tui_agent.core.messages import Message


class TextPresence:
    """One run's searches; `missing(messages, shared, strings)` once per request, in call order."""

    def __init__(self, text_of: Callable[[Message], str | None]) -> None:
        self._text_of = text_of
        self._parts: list[str] = []  # the previous request's texts, in order (messages without one skipped)
        self._counts: list[int] = []  # per previous message: how many of `_parts` it and those before gave
        self._ends: list[int] = []  # per previous message: where its text ends in the joined text
        self._found: dict[str, int] = {}  # previous answers: the first offset of each string (-1: absent)

    def missing(self, messages: Sequence[Message], shared: int, strings: Sequence[str]) -> list[bool]:
        """Per string: True when the joined text of `messages` does not hold it. `shared`: how many first
        messages equal (by content) the previous request's."""
        shared = min(shared, len(self._ends))
        parts = self._parts[: self._counts[shared - 1]] if shared else []
        counts, ends = self._counts[:shared], self._ends[:shared]
        length = ends[-1] if shared else -1  # -1: no text yet (the first one starts at 0)
        for message in messages[shared:]:
            text = self._text_of(message)
            if text is not None:
                length += len(text) + 1
                parts.append(text)
            counts.append(len(parts))
            ends.append(max(length, 0))
        whole = "\n".join(parts)
        same = ends[shared - 1] if shared else 0  # the text's first `same` characters are the previous text's
        found: dict[str, int] = {}
        out = []
        for string in strings:
            before = self._found.get(string)
            if before is not None and 0 <= before and before + len(string) <= same:
                at = before
            else:
                at = whole.find(string, 0 if before is None else max(0, same - len(string) + 1))
            found[string] = at
            out.append(at < 0)
        self._parts, self._counts, self._ends, self._found = parts, counts, ends, found
        return out
