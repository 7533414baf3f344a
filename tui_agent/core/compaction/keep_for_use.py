"""Keep what the agent will name: the exchanges an event leaves in the request although they are old.

Why: what a contiguous tail loses is long-range and the agent's own. On the shared sessions, of the
identifiers the default failed to carry, 40 % were last seen in the agent's own Write inputs, most of them
50–199 calls earlier: no head and no recent tail keeps those, and the agent goes on naming what it wrote
(the functions, paths and keys of its own files). So at a drop the newest Write of each file (its
exchange: the call and its result, never split) stays in place as an island, newest first, within a share
of what the drop keeps; a file written again supersedes its older write. The choice is made once per event
and is sticky until the next one (the cached prefix changes only at events), and whatever leaves keeps the
recap's trace and the Context tool's recall like any dropped message.
"""

from __future__ import annotations

import heapq
from bisect import bisect_left
from collections.abc import Callable, Mapping, Sequence

from tui_agent.core.compaction.facts import pinned_with
from tui_agent.core.messages import Message, tool_uses

KEEP_TOOLS = ("Write",)  # the agent's own writes: what it names most after it wrote them
RECURRING_SEARCH = 1_000  # messages before the kept tail that "keep what recurs" looks at (`choose_recurring`)
OWN_WORDS_RECENCY = 60  # messages back at which an exchange's own words weigh half (`choose_own_words`)


def written_path(message: Message, tools: Sequence[str]) -> list[str]:
    """The files `message` writes with one of `tools` (a call without a path counts by its id)."""
    out = []
    for use in tool_uses(message):
        if use.get("name") in tools:
            found = use.get("input")
            tool_input: dict = found if isinstance(found, dict) else {}
            path = tool_input.get("file_path") or tool_input.get("notebook_path") or use.get("id", "")
            out.append(str(path))
    return out


def choose_kept(history: Sequence[Message], lo: int, hi: int, size_of: Callable[[int], float], budget: float,
                tools: Sequence[str] = KEEP_TOOLS, protected: frozenset[int] = frozenset(),
                tools_of: Callable[[int], Sequence[str]] | None = None,
                writers: Sequence[int] | None = None) -> frozenset[int]:
    """The message indices in [lo, hi) to keep: the exchanges of the newest write of each file that no
    later message in the history writes again, newest first, while their tokens fit `budget`.
    `protected`: indices never kept here (they go out anyway, or must not go out); `tools_of(i)`: the
    tool names message i calls, when the caller knows them already (an event at 10,000 messages reads
    each message's own facts instead of its blocks); `writers`: the sorted indices of the only messages
    that may write (`Facts.writers`), so the rest are never looked at."""
    if budget <= 0 or hi <= lo:
        return frozenset()
    wanted = frozenset(tools)

    def writes(i: int) -> list[str]:
        if tools_of is not None and wanted.isdisjoint(tools_of(i)):
            return []
        return written_path(history[i], tools)

    at = bisect_left(writers, hi) if writers is not None else 0
    after = writers[at:] if writers is not None else range(hi, len(history))
    inside = reversed(writers[bisect_left(writers, lo):at]) if writers is not None else range(hi - 1, lo - 1, -1)
    seen: set[str] = set()
    for i in after:  # files written again after the span: superseded
        seen.update(writes(i))
    kept: set[int] = set()
    used = 0.0
    for i in inside:
        paths = [p for p in writes(i) if p not in seen]
        if not paths:
            continue
        seen.update(paths)
        partners = {k for k in pinned_with(history, i) if lo <= k < hi} - kept
        if not partners or partners & protected:
            continue
        cost = sum(size_of(k) for k in partners)
        if used + cost > budget:
            continue  # a smaller, older one may still fit
        kept |= partners
        used += cost
    return frozenset(kept)



def recurrence(history: Sequence[Message], entities_of: Callable[[int], frozenset[str]]) -> dict[str, int]:
    """In how many messages of the history each identifier occurs."""
    counts: dict[str, int] = {}
    for i in range(len(history)):
        for name in entities_of(i):
            counts[name] = counts.get(name, 0) + 1
    return counts


def choose_recurring(history: Sequence[Message], lo: int, tail_from: int, size_of: Callable[[int], float],
                     budget: float, entities_of: Callable[[int], frozenset[str]], kept: frozenset[int],
                     protected: frozenset[int] = frozenset(), counts: Mapping[str, int] | None = None) -> frozenset[int]:
    """More exchanges of [lo, tail_from) to keep beside `kept` (`CompactPolicy.keep_recurring_share`):
    those holding the most identifiers that recur in the session and that neither the tail from
    `tail_from` nor what is kept already holds, per token, while they fit `budget`.

    Why: an identifier the session keeps coming back to is one the agent will name again, and one the tail
    holds is covered already; so each identifier weighs its recurrence (messages it occurs in, less one)
    once, and an exchange is worth the new ones it brings. Greedy by worth per token, lazily (a worth only
    falls as more is kept, so an exchange whose worth, computed again, still leads the heap is the best).
    `counts`: the recurrence already counted (`Facts.recurrence_of`). Only the newest `RECURRING_SEARCH`
    messages before the tail are looked at: an event searching a 16,000-message session whole took 0.13 s
    (a watch far into a long log fell from 1,000 to 330 calls a second); the shared sessions, under 1,000
    messages, choose the same."""
    if budget <= 0 or tail_from <= lo:
        return frozenset()
    if counts is None:
        counts = recurrence(history, entities_of)
    covered: set[str] = set()
    for i in [*range(tail_from, len(history)), *kept]:
        covered |= entities_of(i)

    def worth(unit: frozenset[int]) -> float:
        names = set().union(*(entities_of(k) for k in unit)) - covered
        return float(sum(counts.get(name, 1) - 1 for name in names))

    heap: list[tuple[float, int, frozenset[int], float]] = []
    for i in range(max(lo, tail_from - RECURRING_SEARCH), tail_from):
        if history[i].get("role") != "assistant" or i in kept:
            continue
        unit = frozenset(pinned_with(history, i))
        if not all(lo <= k < tail_from for k in unit):
            continue  # its partner lies past the span: kept alone it would split a tool_use from its result
        size = sum(size_of(k) for k in unit)
        if unit and not unit & (protected | kept) and size <= budget and (value := worth(unit)) > 0:
            heapq.heappush(heap, (-value / max(size, 1.0), i, unit, size))
    chosen: set[int] = set()
    used = 0.0
    while heap:
        _, i, unit, size = heapq.heappop(heap)
        if used + size > budget or unit & chosen:
            continue
        value = worth(unit) / max(size, 1.0)
        if heap and value < -heap[0][0]:
            if value > 0:
                heapq.heappush(heap, (-value, i, unit, size))  # fell behind: weighed again later
            continue
        if value <= 0:
            break
        chosen |= unit
        used += size
        for k in unit:
            covered |= entities_of(k)
    return frozenset(chosen)


def choose_own_words(history: Sequence[Message], lo: int, tail_from: int, size_of: Callable[[int], float],
                     budget: float, entities_of: Callable[[int], frozenset[str]], kept: frozenset[int],
                     protected: frozenset[int] = frozenset(), counts: Mapping[str, int] | None = None,
                     recency: float | None = None) -> frozenset[int]:
    """Exchanges of [lo, tail_from) to keep as the agent's own words: the assistant message (its text and its
    calls' inputs: the commands it ran, the paths it named) with the results beside it cleared to a
    placeholder (`tiers.mask_islands`). `size_of(i)`: the message's size as it would then be sent.

    Why: after an event what the agent goes on to name is most often in its own earlier answers and calls
    (on the shared and held-out sessions, its text and its Bash commands were a third of the misses, most of
    them from the last 50 calls), and those are small beside the results they came with. Worth is each
    identifier the tail and the other islands lack, weighed by how often it recurs in the session and by how
    recent the exchange is (half weight `recency` messages back); greedy by worth per token, newest first
    among equals, within `budget`."""
    if budget <= 0 or tail_from <= lo:
        return frozenset()
    recency = OWN_WORDS_RECENCY if recency is None else recency
    counts = counts if counts is not None else recurrence(history, entities_of)
    covered: set[str] = set()
    for i in [*range(tail_from, len(history)), *kept]:
        covered |= entities_of(i)
    scored: list[tuple[float, int, frozenset[int], float]] = []
    for i in range(max(lo, tail_from - RECURRING_SEARCH), tail_from):
        if history[i].get("role") != "assistant" or i in kept:
            continue
        unit = frozenset(pinned_with(history, i))
        if not all(lo <= k < tail_from for k in unit) or unit & (protected | kept):
            continue
        names = entities_of(i) - covered
        if not names:
            continue
        size = sum(size_of(k) for k in unit)
        weight = 0.5 ** ((tail_from - i) / recency)
        value = weight * sum(min(counts.get(name, 1), 4) for name in names)
        scored.append((-value / max(size, 1.0), -i, unit, size))
    chosen: set[int] = set()
    used = 0.0
    for _, _, unit, size in sorted(scored):
        if used + size > budget or unit & chosen:
            continue
        chosen |= unit
        used += size
    return frozenset(chosen)
