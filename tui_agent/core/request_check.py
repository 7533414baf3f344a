"""Is a request valid for the Messages API? The same rules as `messages.protocol_errors`, answered from
per-message facts computed once per message object.

A replay checks every strategy's request at every call (`StrategyResult.invalid`): on a 433-call log that
was a third of `replay --report`, because each check walks every block of a few hundred messages that
were already walked at the call before. A request is mostly the same message objects from one call to
the next (history is append-only; compaction reuses its copies), so the facts a check needs (role, blank
text, tool_use ids, tool_result ids, results first) are kept per object and the check itself is a walk
over small tuples. `tests/core/test_request_check.py` holds it to `protocol_errors` on real sessions.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from operator import is_

from tui_agent.core.messages import Message, blocks, is_blank_text, tool_results, tool_uses


def identical_head(previous: Sequence[object], current: Sequence[object]) -> int:
    """How many leading items of `current` are the very objects of `previous` (by identity). One request
    repeats most of the previous one's message objects, so every check of a replayed call starts by
    finding where they part; `map(is_, …)` walks them in C, several times faster than a Python loop."""
    same = list(map(is_, previous, current))
    try:
        return same.index(False)
    except ValueError:
        return len(same)


def same_head(previous: list[Message], current: Sequence[Message]) -> int:
    """A count of leading messages that `current` shares with `previous`, for what depends on a message's
    content only (its facts, its sizes: equal messages give equal answers): all of `previous` when
    `current` starts with it, found by one list comparison in C (identity first, so the usual request
    that extends the previous one costs a pointer test per message), else as far as they are the very
    same objects (`identical_head`)."""
    m = len(previous)
    if m <= len(current):
        head = current[:m]
        if (head if isinstance(head, list) else list(head)) == previous:
            return m
    return identical_head(previous, current)


@dataclass(frozen=True)
class MessageFacts:
    role: object
    blank: bool  # some text block is whitespace only
    use_ids: tuple[object, ...]  # tool_use ids (assistant messages)
    result_ids: frozenset[object]  # the tool_use ids its tool_results answer (user messages)
    has_results: bool
    results_first: bool  # every tool_result comes before any other block


def facts_of(message: Message) -> MessageFacts:
    content = blocks(message)
    results = tool_results(message)
    first_other = next((j for j, b in enumerate(content) if b.get("type") != "tool_result"), len(content))
    return MessageFacts(
        message.get("role"), any(is_blank_text(b) for b in content), tuple(b.get("id") for b in tool_uses(message)),
        frozenset(b.get("tool_use_id") for b in results), bool(results),
        not any(b.get("type") == "tool_result" for b in content[first_other:]))


FACTS_KEPT = 8192  # messages whose facts a check keeps (a lane asks only for what changed: far fewer)


class RequestCheck:
    """`valid(messages)` ≡ `not protocol_errors(messages)`, with each message's facts made once.

    The facts are kept for the newest `FACTS_KEPT` messages asked about, not for every one ever checked:
    a watch runs for hours and each call's compaction makes new copies (cut and masked messages), which a
    memo kept for good would keep alive, one set per call. A lane only asks for the messages past where
    its request changed, so the newest few thousand cover every check; an older one is made again."""

    def __init__(self, kept: int = FACTS_KEPT) -> None:
        # id → (message kept alive, its facts), the most recently asked last
        self._facts: OrderedDict[int, tuple[Message, MessageFacts]] = OrderedDict()
        self._kept = kept
        self._lanes: dict[object, _Lane] = {}  # a strategy run's previous request and its check

    def facts(self, message: Message) -> MessageFacts:
        known = self._facts.get(id(message))
        if known is not None and known[0] is message:
            self._facts.move_to_end(id(message))
            return known[1]
        found = facts_of(message)
        self._facts[id(message)] = (message, found)
        if len(self._facts) > self._kept:
            self._facts.popitem(last=False)
        return found

    @property
    def facts_kept(self) -> int:
        """How many messages' facts are kept (bounded by `FACTS_KEPT`)."""
        return len(self._facts)

    def valid(self, messages: list[Message], *, allow_pending: bool = False, lane: object = None,
              grows: bool = False) -> bool:
        """Whether `messages` is a valid request. With a `lane` (one per strategy run) the check starts
        where this request stops sharing its messages with the lane's previous one: a check at position i
        reads only positions i-1..i+1 and the tool_use ids before it, so up to the last shared message but
        one the previous answers hold, and only the rest is walked again. The lane is cut back and grown
        in place (its copy of the request, its ids and their set): a long session's call costs what it
        changed, not a copy of every list it keeps. `grows`: the caller says `messages` is the lane's
        previous request grown at its end (an append-only conversation on a lane only it uses), so the
        comparison, a walk over the whole session at every call, is skipped."""
        if not messages:
            return False
        previous = self._lanes.get(lane) if lane is not None else None
        if previous is None or previous.allow_pending != allow_pending:
            previous = _Lane([], allow_pending, [], [], set(), 0)
            if lane is not None:
                self._lanes[lane] = previous
        if grows and len(previous.messages) <= len(messages):
            resume = len(previous.messages) - 1
        else:
            resume = same_head(previous.messages, messages) - 1  # positions before it are checked alike in both
        if lane is not None:
            previous.messages[max(resume, 0):] = messages[max(resume, 0):]
        if resume > previous.first_bad:  # it failed inside the shared part: so does this one
            return False
        previous.cut_back(max(resume, 0))
        previous.first_bad = self._scan(messages, previous)
        return previous.first_bad == len(messages)

    def _scan(self, messages: list[Message], lane: _Lane) -> int:
        """Check positions `len(lane.before)`… (`lane.ids`: the tool_use ids before there, in order, and
        `lane.seen` their set; `lane.before[i]`: how many of them come before position i, appended as
        positions are reached). The first failing position, or len(messages) when every one passes."""
        facts, allow_pending = self.facts, lane.allow_pending
        ids, before, seen = lane.ids, lane.before, lane.seen
        last = len(messages) - 1
        for i in range(len(before), len(messages)):
            before.append(len(ids))
            f = facts(messages[i])
            if (i == 0 and f.role != "user") or f.role not in ("user", "assistant") or f.blank:
                return i
            for use_id in f.use_ids:
                if not use_id or use_id in seen:
                    return i
                seen.add(use_id)
                ids.append(use_id)
            if f.has_results:
                if not f.results_first:
                    return i
                if not f.result_ids <= (set(facts(messages[i - 1]).use_ids) if i > 0 else set()):
                    return i
            if f.use_ids:
                if i == last:
                    if not allow_pending:
                        return i
                    continue
                answered = facts(messages[i + 1]).result_ids
                if any(use_id not in answered for use_id in f.use_ids):
                    return i
        return len(messages)


@dataclass
class _Lane:
    """A lane's previous request and how far its check got (see `RequestCheck.valid`)."""

    messages: list[Message]  # a copy (the caller's list may change)
    allow_pending: bool
    ids: list[object]  # tool_use ids in order, up to the first failing position (each once: a repeat fails)
    before: list[int]  # per position checked: how many of `ids` come before it
    seen: set[object]  # `ids` as a set
    first_bad: int  # the first failing position (len(messages): none)

    def cut_back(self, position: int) -> None:
        """Forget the checks from `position` on (they are made again), in place."""
        if position >= len(self.before):
            return
        keep = self.before[position]
        self.seen.difference_update(self.ids[keep:])
        del self.ids[keep:], self.before[position:]
