"""Future-entity coverage: how much of what the agent goes on to use is still in the request.

The cost table cannot show what a strategy makes the agent lose; this measure can. For every call of a
recorded session, take the *entities* (file paths, code identifiers, flags: tokens that contain `/`, `.`,
`_` or an inner capital) that the agent's own next `HORIZON` responses mention and that already appeared
earlier in the history. The call's coverage is the share of them still present in its request; the
append-only conversation scores 1.0 by construction (every earlier message is in its request). A session's
coverage is the mean over the calls that have any such entity.

What a response "mentions" is its text and the values of its tool inputs (the paths it goes on to read),
not its thinking; what a message "holds" is every text the model is sent (texts, tool inputs' values,
tool results), so a recap that names a path keeps that path covered — that is what a recap is for.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from tui_agent.core.compaction.names.entities import entities, held_text, mentioned_text, own_text
from tui_agent.core.messages import Message, blocks

HORIZON = 10  # how many of the agent's next responses count as "what it needs next"


def future_entities(history: Sequence[Message], calls: Sequence[int], horizon: int = HORIZON,
                    known: EntityIndex | None = None) -> list[frozenset[str]]:
    """Per call (the history index of its reply): the entities the next `horizon` replies mention that
    appeared in the history before the call. Computed once per session and shared by every strategy.
    `known`: the session's `EntityIndex`, which learns each history message's entities on the way (the
    strategies' requests are mostly those messages: found once, not once here and once there)."""
    mentioned = [entities(mentioned_text(history[i])) if i < len(history) else set() for i in calls]
    out: list[frozenset[str]] = []
    seen: set[str] = set()
    scanned = 0
    for k, index in enumerate(calls):
        for i in range(scanned, min(index, len(history))):
            seen |= entities(held_text(history[i])) if known is None else known.of(history[i])
        scanned = max(scanned, index)
        ahead: set[str] = set()
        for later in mentioned[k:k + horizon]:
            ahead |= later
        out.append(frozenset(ahead & seen))
    return out


class EntityIndex:
    """Entity sets of the messages requests are made of, computed once per message object (a strategy's
    requests repeat most of their messages from one call to the next). Keeps each message alive while it
    is indexed, so an `id` is never reused for another message."""

    def __init__(self) -> None:
        self._sets: dict[int, tuple[Message, frozenset[str]]] = {}

    def of(self, message: Message) -> frozenset[str]:
        known = self._sets.get(id(message))
        if known is not None and known[0] is message:
            return known[1]
        found = frozenset(entities(held_text(message)))
        self._sets[id(message)] = (message, found)
        return found

    def present(self, wanted: Iterable[str], request: Sequence[Message]) -> int:
        """How many of `wanted` some message of `request` holds."""
        remaining = set(wanted)
        if not remaining:
            return 0
        for message in request:
            remaining -= self.of(message)
            if not remaining:
                break
        return len(set(wanted)) - len(remaining)


def request_entities(request: Sequence[Message], index: EntityIndex | None = None) -> frozenset[str]:
    """Every entity some message of `request` holds: all a coverage asks of a request
    (`EntityIndex.present(wanted, request)` is `len(wanted & request_entities(request))`), so a face that
    lets the request go keeps this set instead (`core.watch_feed.CallsView`)."""
    index = index if index is not None else EntityIndex()
    found: set[str] = set()
    for message in request:
        found |= index.of(message)
    return frozenset(found)


@dataclass
class Coverage:
    """A running coverage figure: per-call shares averaged over the calls that had entities to cover."""

    calls: int = 0  # calls with at least one entity to cover
    share_sum: float = 0.0
    wanted: int = 0
    present: int = 0

    def add(self, wanted: int, present: int) -> None:
        if wanted <= 0:
            return
        self.calls += 1
        self.share_sum += present / wanted
        self.wanted += wanted
        self.present += present

    def merge(self, other: Coverage) -> None:
        self.calls += other.calls
        self.share_sum += other.share_sum
        self.wanted += other.wanted
        self.present += other.present

    @property
    def value(self) -> float:
        """The mean per-call share (1.0 when nothing needed covering)."""
        return self.share_sum / self.calls if self.calls else 1.0

    @property
    def pooled(self) -> float:
        """All wanted entities of all calls pooled (weights busy calls more)."""
        return self.present / self.wanted if self.wanted else 1.0


# ---- the honest measure (`shared/reference/coverage-measure.md`): identifiers only, traces not counted ----

_IDENTIFIER = re.compile(r"[A-Za-z_~.][A-Za-z0-9_./~-]{3,}[A-Za-z0-9_]")
_CAMEL = re.compile(r"[a-z][A-Z]")
MIN_IDENTIFIER_CHARS = 5


def identifiers(text: str) -> set[str]:
    """The identifiers of `text`, exactly as the measure defines them: a code-like token, its edges' `.`
    and `/` stripped, of at least 5 characters, not a URL, holding a `/`, a `_`, an inner `.` or a
    camelCase step. Plain words (and so most prose) are not identifiers."""
    out: set[str] = set()
    for raw in set(_IDENTIFIER.findall(text)):
        token = raw.strip("./")
        if len(token) < MIN_IDENTIFIER_CHARS or token.startswith("http") or token in out:
            continue
        if "/" in token or "_" in token or "." in token[:-1] or _CAMEL.search(token):
            out.add(token)
    return out


def vocabulary(history: Sequence[Message]) -> frozenset[str]:
    """The session's tool names and tool input keys: never counted as needed identifiers (every strategy
    would 'keep' them for free, since every request names its tools)."""
    out: set[str] = set()
    for message in history:
        for block in blocks(message):
            if block.get("type") == "tool_use":
                out.add(str(block.get("name", "")))
                out |= _keys(block.get("input"))
    return frozenset(out)


def _keys(value: object) -> set[str]:
    if isinstance(value, dict):
        out = {str(k) for k in value}
        for item in value.values():
            out |= _keys(item)
        return out
    if isinstance(value, list):
        return set().union(*(_keys(v) for v in value)) if value else set()
    return set()


def future_identifiers(history: Sequence[Message], calls: Sequence[int], horizon: int = HORIZON,
                       known: IdentifierIndex | None = None) -> list[frozenset[str]]:
    """Per call: the identifiers the agent's next `horizon` replies mention (text and tool input values)
    that occur in the history before the call, less the session's tool names and input keys."""
    known = known if known is not None else IdentifierIndex(history)
    stop = vocabulary(history)
    mentioned = [identifiers(mentioned_text(history[i])) - stop if i < len(history) else set() for i in calls]
    out: list[frozenset[str]] = []
    seen: set[str] = set()
    scanned = 0
    for k, index in enumerate(calls):
        for i in range(scanned, min(index, len(history))):
            seen |= known.of(history[i])
        scanned = max(scanned, index)
        ahead: set[str] = set()
        for later in mentioned[k:k + horizon]:
            ahead |= later
        out.append(frozenset(ahead & seen))
    return out


class IdentifierIndex:
    """Identifier sets of request messages, made once per message object. A message of the history
    counts whole; a copy the strategy made (a cut or masked round) counts without its traces; a text-only
    user message the history does not hold (a recap, a summary, a continuation line) counts
    only in the figure *with* the recap."""

    def __init__(self, history: Sequence[Message] = ()) -> None:
        self._history = {id(m) for m in history}
        self._own: dict[int, tuple[Message, frozenset[str]]] = {}
        self._all: dict[int, tuple[Message, frozenset[str]]] = {}

    def of(self, message: Message) -> frozenset[str]:
        """Every identifier the model is sent in `message` (recap and traces included)."""
        return self._memo(self._all, message, lambda m: identifiers(held_text(m)))

    def own(self, message: Message) -> frozenset[str]:
        """The identifiers of `message` that are the conversation's own (no recap, summary or trace)."""
        if id(message) in self._history:
            return self.of(message)
        return self._memo(self._own, message, _own_identifiers)

    def _memo(self, memo: dict, message: Message, make) -> frozenset[str]:  # type: ignore[type-arg]
        known = memo.get(id(message))
        if known is not None and known[0] is message:
            return known[1]
        found = frozenset(make(message))
        memo[id(message)] = (message, found)
        return found

    def present(self, wanted: frozenset[str], request: Sequence[Message], recap: bool) -> int:
        """How many of `wanted` the request holds (`recap`: counting recaps, summaries and traces)."""
        remaining = set(wanted)
        for message in request:
            if not remaining:
                break
            remaining -= self.of(message) if recap else self.own(message)
        return len(wanted) - len(remaining)


def _own_identifiers(message: Message) -> set[str]:
    content = message.get("content")
    only_text = isinstance(content, str) or all(b.get("type") == "text" for b in blocks(message))
    if message.get("role") == "user" and only_text:
        return set()  # a recap, a summary or a continuation line: not the conversation's own
    return identifiers(own_text(message))
