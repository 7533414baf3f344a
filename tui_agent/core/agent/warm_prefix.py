"""What a keep-warm ping keeps warm, and whether the next call will still read it.

The warmer only keeps what the API said it holds: a `WarmPrefix` is the last request sent whose usage
reported a cache read or write, with the tokens it left cached (read + written: what a ping of it must read
again) and the clock of the last request that touched it (the call when it was SENT, then each ping).
A server that reports no caching leaves nothing to keep, so it gets no ping: each would be a full-price
request.

After a change of the next request (`/compact`, a pin / exclude / expand, `/clear`, `/model`, a turn whose
next call will compact), the warmer asks `still_read_by`: does the next request, as the engine plans it
(`NextRequestChanged`), start with the cached one, as the cache keys it (model, system, tools, context
management, then the messages)? Then the pings go on with the cached request, which is the cheapest way to
keep that prefix: a ping of it reads only, and the next call reads all of it. Otherwise warming stops.

Why not warm the new request instead: its prefix was never written, so its first ping is a write at 1.25×
(2× on the hour cache), paid now for a call that may never come (a person who compacts and leaves), or
that a second change replaces (pin after pin); the next call writes exactly that anyway when it comes, at
the same price. And pinging the old, replaced request keeps a prefix that nothing will read (the bug this
replaces: after `/compact` the warmer re-sent the old request for an hour). The one thing stopping forgoes
is the part the two requests share (system and tools, and messages before the change): whether that is
worth pings of its own is the idle policy's price to weigh (`cache_clock.IdleMoment`), not this rule's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from tui_agent.core.events import MISS_WORDS

if TYPE_CHECKING:
    from tui_agent.core.compaction.plan import CompactPlan
    from tui_agent.core.providers.base import ModelRequest

STEERING = ("pin", "exclude", "expand")
# An idle compaction's request ends with the assistant's last answer; a request may not end there on every
# model (prefill is refused with thinking on, and by the newest models), so the ping that writes it carries
# this one line after it (`idle_policy.IdlePolicy.compact`). The next call's request holds the same messages
# up to the answer, with a cache breakpoint at its end (the plan's stable prefix): it reads what the ping wrote.
IDLE_PING_LINE = "(tui-agent keeps the prompt cache warm while the person is away; nothing to answer.)"


@dataclass
class WarmPrefix:
    """The request whose cached prefix the pings keep, what it left cached, and the cache clock."""

    request: "ModelRequest"
    cached_tokens: int  # read + written by the call: what each ping must read again
    since: float  # when the last request that read or wrote it was sent (the call, then each ping)
    call: int  # the call that sent it
    sent: float  # when that call was sent (how long the session has been idle is counted from there)
    pings: int = 0  # pings sent for it so far


def still_read_by(next_request: "ModelRequest", cached: "ModelRequest") -> bool:
    """Whether `next_request` starts with `cached` as the prompt cache keys it: the same model, system,
    tools and context management, and `cached`'s messages as its first messages."""
    if (next_request.model, next_request.system, next_request.context_management) != \
            (cached.model, cached.system, cached.context_management) or next_request.tools != cached.tools:
        return False
    count = len(cached.messages) - _idle_line(cached)  # the line an idle compaction's ping adds: not sent later
    return len(next_request.messages) >= count and next_request.messages[:count] == cached.messages[:count]


def _idle_line(request: "ModelRequest") -> int:
    last = request.messages[-1] if request.messages else {}
    content = last.get("content")
    return int(last.get("role") == "user" and isinstance(content, list) and len(content) == 1
               and content[0].get("text") == IDLE_PING_LINE)


def change_cause(why: str, next_request: "ModelRequest", cached: "ModelRequest",
                 plan: "CompactPlan | None" = None) -> str:
    """Why the next request no longer starts with the cached one, in words ("/compact replaced it")."""
    if not next_request.messages:
        return f"{why if why.startswith('/') else 'the conversation'} left no request to keep warm"
    if next_request.model != cached.model:
        return f"the next call goes to {next_request.model}, whose cache holds none of this one"
    if why == "/compact":
        return "/compact replaced the next request"
    if why in STEERING:
        return f"{'an' if why[0] in 'ae' else 'a'} {why} changed the next request"
    if plan is not None and plan.event is not None:
        return "the next call compacts (it sends another request)"
    return f"the next request changed ({why})"


def miss_detail(read: int, written: int, expected: int, api_reason: str = "") -> str:
    """What a ping that read less than the prefix did: "read 3,110 of the 6,269 cached tokens (wrote 3,159
    again; the API says: …)"."""
    what = "nothing" if read <= 0 else f"{read:,}"
    words = f"read {what} of the {expected:,} cached tokens (wrote {written:,} again"
    if api_reason:
        words += f"; the API says: {MISS_WORDS.get(api_reason, api_reason.replace('_', ' '))}"
    return words + ")"


__all__ = ["IDLE_PING_LINE", "WarmPrefix", "change_cause", "miss_detail", "still_read_by"]
