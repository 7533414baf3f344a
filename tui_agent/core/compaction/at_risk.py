"""What an event puts at risk: the identifiers that left the request with it, most recently used first.

The loss report's prompts and paths say whether the *user's* words and the touched files are still named
somewhere; "at risk" says what else the model can no longer see: the entities (paths, dotted names,
snake_case and camelCase identifiers, flags: `core.coverage.entities`, the same measure as the benchmark's
future-entity coverage) that the messages dropped, masked or cut at this event held and that appear nowhere
in the request that follows. Ordered by the last message that used them, newest first: what the agent
touched last is what it most likely needs next (and what the Context tool's recall is for).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence, Set

from tui_agent.core.compaction.names.entities import entities, held_text
from tui_agent.core.compaction.names.found_in import found_in
from tui_agent.core.messages import Message

AT_RISK_MAX = 60  # a longer list is no use to read
SCAN_CHARS = 200_000  # the newest changed messages read for it: older ones would not make the list anyway


def at_risk(history: Sequence[Message], changed: Iterable[int], request: str, limit: int = AT_RISK_MAX,
            entities_of: Callable[[int], Set[str]] | None = None) -> tuple[str, ...]:
    """The entities of the history messages `changed` (left, masked or cut at this event) that `request`
    (the whole new request's text) no longer holds, the most recently used first; at most `limit`, read
    from the newest `SCAN_CHARS` of those messages (`entities_of(i)`: message i's, memoized by the caller)."""
    scanned: list[Set[str]] = []  # the entities of the newest changed messages, within SCAN_CHARS
    budget = SCAN_CHARS
    for i in sorted(set(changed), reverse=True):  # newest first: the first message holding one is its last use
        if not 0 <= i < len(history):
            continue
        text = held_text(history[i])
        budget -= len(text)
        scanned.append(entities(text) if entities_of is None else entities_of(i))
        if budget <= 0:
            break
    # every entity looked for in the request in one pass (one search each was most of an event on a long watch)
    found = found_in(request, set().union(*scanned))
    out: list[str] = []
    seen: set[str] = set()
    for held in scanned:
        fresh = [e for e in sorted(held) if e not in seen and e not in found]  # in the order listed
        seen.update(fresh)
        out += fresh
        if len(out) >= limit:
            break
    return tuple(out[:limit])
