"""After each answer: what the server did on its own, and why the prompt cache missed, as engine events.

The provider reads the server's part of the response (`providers/server_report.ServerReport`); this turns
it into `ServerEdited` (context edits applied, a compaction block) and decides whether the call missed the
cache: it read fewer tokens than the previous request left cached (that request's read + written). Then
it says why — the API's `cache_miss_reason` when the cache-diagnosis beta answered, and ours beside it:
the cache's time to live ran out (the clock since the last answer), our own compaction rewrote the request
from message N (the plan's stable prefix), the server edited the context — and what the miss cost: the
missed tokens written again instead of read. A miss neither the API nor we can explain is not told.

`CacheTrack` is the memory it needs between calls (the previous message id, which the next request sends
for the diagnosis, and what the previous call left cached); the journal keeps both for a resumed session.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Protocol

from tui_agent.core.agent.answer_stream import checked_usage, usage_event

from tui_agent.core import events as ev
from tui_agent.core.models import for_provider, per_token
from tui_agent.core.providers.server_report import ServerReport

if TYPE_CHECKING:
    from tui_agent.core.compaction.protocol import CompactorProtocol
    from tui_agent.core.compaction.plan import CompactPlan
    from tui_agent.core.providers.base import Provider, StreamDone, UsageInfo


@dataclass
class CacheTrack:
    message_id: str = ""  # the previous answer's id (sent as `diagnostics.previous_message_id`)
    cached: int = 0  # tokens the previous call left in the cache (what it read + what it wrote)
    edited: bool = False  # the server edited the previous call's context (its prefix moved)
    compacted: bool = False  # the server compacted once: from then on it reads less than we send
    pings: int = 0  # keep-warm pings since the previous call (`keep_warm.py` counts them here)
    clearing_since: int = 0  # the call the server's clearing began at, while each call since cleared (0: none)


class Counters(Protocol):
    """What `answered` reads and moves of the loop's state (`loop.LoopState`)."""

    calls: int
    warm_since: float | None
    sent_at: float | None
    cache: CacheTrack

    @property
    def clock(self) -> "Callable[[], float]": ...


def our_reason(plan: "CompactPlan | None", track: CacheTrack, cold: bool, acted: bool) -> tuple[str, int | None]:
    """Our own reading of a miss: (reason, the first message rewritten where we know it). Pings since the
    previous call that read its prefix, and nothing else to blame: the server let it go early."""
    if cold:
        return "ttl_expired", None
    if plan is not None and plan.event is not None:
        return "our_compaction", plan.cached_messages
    if track.edited or acted:
        return "server_edit", None
    if track.pings:
        return "kept_warm_missed", None
    return "unknown", None


def _extra_cost(provider: "Provider", missed: int) -> float | None:
    """Writing `missed` tokens again instead of reading them, in USD (None when the price is unknown)."""
    unit = per_token(provider.model)
    if unit is None:
        return None
    price = for_provider(provider)
    return round(missed * (price.write - price.read) * unit, 6)


def after_answer(done: "StreamDone", usage: "UsageInfo | None", plan: "CompactPlan | None", track: CacheTrack,
                 idle: float | None, provider: "Provider", call: int, history_index: int) -> list[ev.EngineEvent]:
    """The events of call `call`'s answer beyond the answer itself; `track` moves on to this call.
    `idle`: how long the cache had been idle when this call was sent (since the last request that touched
    it), None when nothing did."""
    report = done.server or ServerReport()
    told: list[ev.EngineEvent] = []
    clearing = bool(report.edits) and not report.compacted
    since = track.clearing_since if clearing and track.edited and track.clearing_since else None
    track.clearing_since = (since or call) if clearing else 0
    if report.acted:
        told.append(ev.ServerEdited(call, history_index, report.edits, report.compacted,
                                    report.compaction_summary, report.compaction_usage, since))
    if usage is not None:
        read = usage.cache_read_input_tokens
        api = report.cache_miss
        # A miss is what usage shows (the API's diagnosis compares request structure, whether or not the cache
        # hit anyway); only when we know nothing of the previous call (a resumed old journal) does the API's
        # estimate of the tokens after the divergence stand in.
        expected = track.cached if track.cached else (read + api.missed_tokens if api is not None else 0)
        # the provider's own time to live (an hour on the 1-hour cache), by the clock since the last answer
        cold = idle is not None and for_provider(provider).expired(idle)
        ours, start = our_reason(plan, track, cold, report.acted)
        # Without the API's word, only a miss we can explain is told: providers that cache by chunks (OpenAI's
        # 128-token steps) or a best-effort cache read a little less all the time, and "unknown" on every
        # call would bury the misses that matter.
        if expected > read and (api is not None or ours != "unknown"):
            source: ev.CacheMissSource = "api" if api is not None else "ours"
            told.append(ev.CacheMissed(call, expected, read, api.kind if api is not None else ours, source,
                                       start, ours if api is not None else "", _extra_cost(provider, expected - read),
                                       track.pings))
        track.cached = read + usage.cache_creation_input_tokens
        track.pings = 0
    track.message_id = report.message_id or track.message_id
    track.edited = report.acted
    track.compacted = track.compacted or report.compacted
    return told


def answered(done: "StreamDone", plan: "CompactPlan | None", compactor: "CompactorProtocol", provider: "Provider",
             state: Counters, history_index: int) -> list[ev.EngineEvent]:
    """Everything the loop says after an answer was appended: its usage (or a notice that it is unreadable;
    the compactor learns the real size, and whether the server edited or compacted what it read: then real
    and estimate are of different requests, which each strategy reads its own way; the cache clock restarts
    from when the call was sent), then `after_answer`'s events."""
    usage, unreadable = checked_usage(done.usage) if done.usage is not None else (None, None)
    told: list[ev.EngineEvent] = [ev.Notice(unreadable, "warning")] if unreadable else []
    sent = state.sent_at if state.sent_at is not None else state.clock()
    idle = sent - state.warm_since if state.warm_since is not None else None
    later = after_answer(done, usage, plan, state.cache, idle, provider, state.calls, history_index)
    if usage is not None:
        u = usage
        total = u.input_tokens + u.cache_creation_input_tokens + u.cache_read_input_tokens
        compactor.observe_usage(total, server_edited=state.cache.edited)  # edited: it read less than we sent
        state.warm_since = sent
        told.append(usage_event(state.calls, u))
    return told + later
