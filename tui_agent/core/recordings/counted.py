"""What the API counts of a replayed request, and how far the replay's ruler is from the logged usage.

A replay prices every strategy's requests on one ruler per session (`Recorded.model`: real tokens ≈
baseline + ratio × chars/4). Two things decide whether that ruler measures what the API measured:

- **Thinking.** On the models before Claude Opus 4.5 the API leaves the thinking blocks of earlier turns out
  of the context: only the turn in progress (the assistant messages after the last user message that is more
  than tool results) counts its thinking. From Opus 4.5 on every thinking block sent counts
  (`models.keeps_earlier_thinking`). A session's message sizes (`Recorded.estimates`) therefore leave their
  thinking out when its model strips it, and each request adds back the thinking of its own turn in progress
  (`turn_thinking`). Measured on the shared logs: the call-to-call growth of the logged usage fits this
  count better than counting all thinking or none (`bench/economics.py --ruler` prints the three).
- **The ruler's error.** For each recorded call the ruler's size of the request the recorded agent sent is
  set beside the usage the log reports (`ruler_errors`): per session, the median and the 90th percentile of
  |ruler − logged| ÷ logged. Where the agent compacted on its own, its later requests carry what a log does
  not hold (files it attached again after its summary), so the error is given for the calls it sent whole
  (the fit's span) and for all of them.
"""

from __future__ import annotations

import statistics
from itertools import accumulate
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from tui_agent.core import tokens as tk
from tui_agent.core.messages import Message, opens_turn


class Ruler(Protocol):
    def request(self, message_estimate: float) -> float: ...


class Recorded(Protocol):
    """What the ruler's error reads of a recorded session (`recordings.recorded.Recorded` is one)."""

    history: list[Message]
    calls: list[int]
    real: list[int]
    segment_start: list[int]
    estimates: list[int]
    thinking: list[int]
    keeps_thinking: bool

    @property
    def model(self) -> Ruler: ...

    def is_measured(self, k: int) -> bool: ...


def turn_thinking(messages: Sequence[Message], thinking_of: Callable[[Message], int], start: int = 0,
                  end: int | None = None) -> int:
    """The thinking tokens of the turn in progress at the end of `messages[start:end]`: what a model that
    strips earlier thinking still counts. Walks back only as far as the last message that opens a turn."""
    total = 0
    for i in range(len(messages) if end is None else end, start, -1):
        message = messages[i - 1]
        if opens_turn(message):
            break
        if message.get("role") == "assistant":
            total += thinking_of(message)
    return total


def turn_thinking_split(messages: Sequence[Message], thinking_of: Callable[[Message], int],
                        cached_n: int) -> tuple[int, int]:
    """(the thinking of the turn in progress at the end of `messages`, the part of it within the first
    `cached_n` messages): the request counts the first, the cached prefix it shares holds the second."""
    total = cached = 0
    for i in range(len(messages), 0, -1):
        message = messages[i - 1]
        if opens_turn(message):
            break
        if message.get("role") == "assistant":
            tokens = thinking_of(message)
            total += tokens
            cached += tokens if i - 1 < cached_n else 0
    return total, cached


@dataclass(frozen=True)
class ThinkingMemo:
    """Each history message's thinking tokens, known once (`Recorded.thinking`); a copy (a strategy's cut or
    masked message) is measured when asked."""

    known: dict[int, tuple[Message, int]]

    @classmethod
    def of(cls, history: Sequence[Message], thinking: Sequence[int]) -> ThinkingMemo:
        return cls({id(m): (m, t) for m, t in zip(history, thinking) if t})

    def __call__(self, message: Message) -> int:
        found = self.known.get(id(message))
        if found is not None and found[0] is message:
            return found[1]
        return tk.thinking_tokens(message) if message.get("role") == "assistant" else 0


def recorded_sizes(recorded: Recorded) -> list[float]:
    """The ruler's chars/4 size of the messages each call of the recorded agent sent (its segment, with the
    thinking the API counted)."""
    cumulative = [0, *accumulate(recorded.estimates)]
    strips = not recorded.keeps_thinking and any(recorded.thinking)
    memo = ThinkingMemo.of(recorded.history, recorded.thinking) if strips else None
    sizes = []
    for index, start in zip(recorded.calls, recorded.segment_start):
        size = float(cumulative[index] - cumulative[start])
        if memo is not None:
            size += turn_thinking(recorded.history, memo, start, index)
        sizes.append(size)
    return sizes


@dataclass(frozen=True)
class RulerError:
    """|ruler − logged| ÷ logged over one session's calls: the median and the 90th percentile, over the
    calls the agent sent whole (`fitted`) and over all of them."""

    median: float
    p90: float
    median_all: float
    p90_all: float
    calls: int

    def line(self) -> str:
        return (f"ruler error per call: median {self.median:.1%}, p90 {self.p90:.1%} ({self.calls} calls sent "
                f"whole); all calls {self.median_all:.1%} / {self.p90_all:.1%}")


def ruler_errors(recorded: Recorded) -> RulerError | None:
    """The ruler's error against the log's own usage, call by call (None: no measured call)."""
    whole: list[float] = []
    every: list[float] = []
    for k, (real, size) in enumerate(zip(recorded.real, recorded_sizes(recorded))):
        if real <= 0 or not recorded.is_measured(k):
            continue
        error = abs(recorded.model.request(size) - real) / real
        every.append(error)
        if recorded.segment_start[k] == 0:
            whole.append(error)
    if not every:
        return None
    whole = whole or every
    return RulerError(statistics.median(whole), _p90(whole), statistics.median(every), _p90(every), len(whole))


def _p90(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.9 * (len(ordered) - 1) + 0.5))]
