"""When the prompt cache goes cold in a live session, and what the next call will then write.

The provider keeps a request's prefix for its time to live (5 minutes, or an hour on the 1-hour cache,
`core.models`) after the last call that read or wrote it. Within it the next call reads the prefix at the
read price and writes only what is new; past it the prefix is gone and the next call writes the whole
request again at the write price. A person who stops to think for six minutes pays that rewrite without
seeing it: the meter says, from the clock since the last call, how long the cache stays warm and what the
next call will write either way. Pure: the clock and the figures come in as arguments.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal, Protocol

from tui_agent.core.models import CachePrice, for_model

# Keep warm: while the agent waits (for the person, or for a long tool), one request that repeats the last
# one exactly (`max_tokens: 0`: nothing generated) reads the prefix and starts its time to live again. A ping costs
# `read` per prefix token; the rewrite it spares costs `write - read` more than the read the next call makes
# anyway. So warmth is kept for as many pings as half that rewrite pays for (at 0.05/1.25: 12 pings, 54
# minutes; at 0.1: 5 pings, 22.5 minutes), and never past an hour of idleness (someone gone that long is
# not about to type). A ping leaves `PING_MARGIN` of the time to live unused: a network round trip late is
# still warm.
PING_MARGIN = 0.1
PING_OUTPUT_TOKENS = 5  # a ping stops reading its answer at the first event: a few output tokens at most
WARM_AT_MOST_SECONDS = 3600.0


@dataclass(frozen=True)
class KeepWarm:
    """How a live session keeps its prompt cache warm while idle: a ping every `interval_seconds`, at most
    `max_pings` in a row (0: never). Pure figures, from the price (`keep_warm_for`)."""

    interval_seconds: float
    max_pings: int

    def pings(self, idle_seconds: float | None) -> int:
        """Pings sent during an idle stretch of `idle_seconds` (the next call comes at its end)."""
        if idle_seconds is None or self.max_pings <= 0 or idle_seconds <= self.interval_seconds:
            return 0
        if math.isinf(idle_seconds):  # the person never comes back: every ping allowed is sent
            return self.max_pings
        return min(self.max_pings, math.ceil(idle_seconds / self.interval_seconds) - 1)

    def idle_after_pings(self, idle_seconds: float | None) -> float | None:
        """What the cache has been idle when the next call comes: since the last ping, or the whole gap."""
        pings = self.pings(idle_seconds)
        return idle_seconds if idle_seconds is None or not pings else idle_seconds - pings * self.interval_seconds


NEVER_WARM = KeepWarm(interval_seconds=math.inf, max_pings=0)


@dataclass(frozen=True)
class IdleMoment:
    """What a live session knows when a keep-warm ping is due: the pings sent so far for this prefix, the
    schedule (`keep`), the prefix a ping reads, how long the cache has been idle since the last call was
    sent, and the model (its prices). The one question asked of it: ping now, or stop? (The priced idle policy,
    `core/agent/idle_policy.py`, may also answer "compact": an event now, whose request the next ping writes.)"""

    pings_sent: int
    keep: KeepWarm
    cached_tokens: int
    idle_seconds: float
    model: str = ""


PingOrStop = Literal["ping", "stop"]


def until_the_limit(moment: IdleMoment) -> PingOrStop:
    """The fixed rule: ping until the schedule's most (`KeepWarm.max_pings`: what the price pays for). The
    priced idle policy (`--idle`: ping / compact while idle / let it go cold) answers the same question."""
    return "ping" if moment.pings_sent < moment.keep.max_pings else "stop"


def keep_warm_for(price: CachePrice, minutes: float | None = None, by_price: bool = True) -> KeepWarm:
    """The pings `price` pays for (see `PING_MARGIN` above), or at most `minutes` of idleness when the
    person set it (0: never). No expiry, or reads that cost as much as writes: no pings. `by_price=False`:
    only the time limit (the priced idle policy, `core/idle.py`, decides each ping itself)."""
    ttl = price.ttl_seconds
    if ttl is None or price.read <= 0 or price.read >= price.write:
        return NEVER_WARM
    interval = ttl * (1 - PING_MARGIN)
    paid = int((price.write - price.read) / (2 * price.read) + 1e-9)  # (1.25 - 0.05) / 0.1 is 11.999…
    most = WARM_AT_MOST_SECONDS if minutes is None else max(minutes, 0.0) * 60
    limit = int(most // interval)
    return KeepWarm(interval_seconds=interval, max_pings=max(min(paid, limit) if by_price else limit, 0))


@dataclass(frozen=True)
class CacheOutlook:
    """The cache as the next call will find it."""

    idle_seconds: float  # since the last call
    ttl_seconds: float
    cold: bool
    next_write_tokens: int  # what the next call writes to the cache (≈, from the last request's figures)
    next_read_tokens: int  # what it reads from the cache
    next_units: float  # its input price in units of one uncached input token
    cold_units: float  # the same request's price once the cache is cold (the whole of it written)
    uncached: bool = False  # the last call read and wrote nothing from the cache: no clock runs at all

    @property
    def seconds_left(self) -> float:
        return max(self.ttl_seconds - self.idle_seconds, 0.0)


def cache_outlook(idle_seconds: float, price: CachePrice, cached_tokens: int, new_tokens: int,
                  nothing_cached: bool = False) -> CacheOutlook | None:
    """The outlook `idle_seconds` after a call whose request was `cached_tokens` read + `new_tokens` new
    (the next request starts with that whole request when nothing changes); None when the price has no
    expiry (nothing to say). `nothing_cached`: the API reported neither a cache read nor a cache write for
    that call (no breakpoint, a prefix under the minimum): there is no warm cache to count down, and the
    next call is priced as it was, every token uncached."""
    ttl = price.ttl_seconds
    if ttl is None:
        return None
    whole = max(cached_tokens, 0) + max(new_tokens, 0)
    if nothing_cached:
        return CacheOutlook(idle_seconds=max(idle_seconds, 0.0), ttl_seconds=ttl, cold=True, next_write_tokens=0,
                            next_read_tokens=0, next_units=float(whole), cold_units=float(whole), uncached=True)
    cold = price.expired(idle_seconds)
    read = 0 if cold else whole
    write = whole - read
    return CacheOutlook(idle_seconds=max(idle_seconds, 0.0), ttl_seconds=ttl, cold=cold, next_write_tokens=write,
                        next_read_tokens=read, next_units=price.cost(whole, read), cold_units=price.cost(whole, 0))


class CacheUsage(Protocol):
    """A call's usage as far as the cache goes (`events.Usage`, `messages.UsageInfo`)."""

    @property
    def cache_read_input_tokens(self) -> int: ...

    @property
    def cache_creation_input_tokens(self) -> int: ...


def caches_nothing(usage: CacheUsage | None, price: CachePrice | None = None) -> bool:
    """The last call's usage reported neither a cache read nor a cache write: nothing is cached (a server
    without caching, a prefix under the minimum). The one value every cache figure follows: the next call's
    "cached" is then 0 and priced uncached, the clock says "nothing cached", and no ping is sent. Where writes
    are free (`price.write` ≤ 1: OpenAI caches on its own and reports reads only) no write is ever reported,
    so a call without a read says nothing of the next one."""
    if price is not None and price.write <= 1.0:
        return False
    return usage is not None and not usage.cache_read_input_tokens and not usage.cache_creation_input_tokens


def _clock(seconds: float) -> str:
    whole = int(seconds)
    return f"{whole // 60}:{whole % 60:02d}"


def _k(tokens: int) -> str:
    return f"{tokens / 1000:.1f}k" if tokens >= 1000 else str(tokens)


def outlook_line(outlook: CacheOutlook, input_price_per_token: float | None = None) -> str:
    """One line for the meter: "cache warm 3:12 more (5-min) · next call reads ≈40k, writes only what is
    new; cold after that: writes ≈40k (≈$0.15)"; or, once cold, what the next call writes again."""
    ttl = f"{outlook.ttl_seconds / 60:g}-min"
    whole = outlook.next_write_tokens + outlook.next_read_tokens
    money = f" (≈${outlook.cold_units * input_price_per_token:.4f})" if input_price_per_token else ""
    if outlook.uncached:
        return (f"nothing cached: the API reported no cache write · the next call sends "
                f"≈{_k(round(outlook.next_units))} uncached{money}")
    if outlook.cold:
        return (f"cache cold (idle {_clock(outlook.idle_seconds)} > {ttl} TTL): "
                f"the next call writes ≈{_k(whole)} again{money}")
    return (f"cache warm {_clock(outlook.seconds_left)} more ({ttl} TTL) · then the next call "
            f"writes ≈{_k(whole)} again{money}")


def went_cold(since: float | None, model: str | None, now: float | None = None) -> bool:
    """Whether the prompt cache of `model` has expired since `since` (`time.monotonic()` when the last
    request that read or wrote it was sent: a call, or a keep-warm ping): then the next request is written
    again in full, and a compaction event there costs no extra write (`Compactor.cache_expired`)."""
    import time

    if since is None:
        return False
    ttl = for_model(model).ttl_seconds
    return ttl is not None and (time.monotonic() if now is None else now) - since > ttl
