"""The keep-warm events (`core/agent/keep_warm.py`): armed, each ping, stopped, and the idle policy's choice
(`core/agent/idle_policy.py`). Re-exported by `core/events`.

A ping is real money (the ledger and the journal price it like a call) but no call of the conversation;
warming that stops on its own is said once, quietly, with its reason. The fields only grow (the journal's
`ping` record and the lead's replay read them): a new figure is a new field with a default.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

StopReason = Literal["limit", "failed", "missed", "changed", "policy"]


@dataclass(frozen=True)
class KeepWarmArmed:
    """A call was answered, the API reported that its prefix is cached, and the idle session will be kept
    warm: a ping every `interval_seconds` (counted from when the request was sent), at most `max_pings`
    (told before the face sees the call's usage, so its meter can say so from the start). `cached_tokens`:
    the prefix each ping should read."""

    max_pings: int
    interval_seconds: float
    cached_tokens: int = 0


@dataclass(frozen=True)
class CacheKeptWarm:
    """A keep-warm ping sent the last request again to read its cached prefix: its time to live starts over
    (if it read it all: `missed` says otherwise). Its usage is paid for like a call's (the ledger adds it to
    the session's cost) but it is no call of the conversation: nothing it sent or got joins the history."""

    ping: int  # 1 for the first ping of this idle stretch
    max_pings: int
    interval_seconds: float  # until the next ping (if `ping < max_pings`)
    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0
    cache_write_1h: int = 0
    expected: int = 0  # the cached prefix the ping should have read (0: unknown, an old journal)
    max_tokens: int = 0  # what the ping sent: 0, or the smallest form an endpoint refusing 0 takes
    note: str = ""  # said once: the endpoint refused `max_tokens: 0`, pings go in the smallest form it takes
    after_call: int = 0  # the call whose prefix it kept warm (pings after a session's last call: its tail)
    cache_miss: str = ""  # the API's cache_miss_reason for the ping, when the cache diagnosis named one

    @property
    def missed(self) -> bool:
        """The ping read less than the prefix it was sent to keep (it wrote it again, or part of it)."""
        return bool(self.expected) and self.cache_read_input_tokens < self.expected


@dataclass(frozen=True)
class KeepWarmStopped:
    """Keeping the cache warm stopped on its own (not by a new call), said once, quietly: the pings the
    price pays for were sent ("limit"); a ping failed ("failed", no retry); a ping read less than the
    prefix ("missed"); the next request no longer starts with the cached one ("changed": `/compact`, a pin,
    `/clear`, `/model`…); the idle policy chose to stop ("policy"). `detail` says how."""

    reason: StopReason
    pings: int
    detail: str = ""

    @property
    def line(self) -> str:
        pings = f"{self.pings} ping{'s' * (self.pings != 1)}"
        if self.reason == "limit":
            return (f"Stopped keeping the prompt cache warm after {pings} (the most the price pays for); it goes "
                    "cold when its time to live runs out.")
        if self.reason == "failed":
            return (f"Stopped keeping the prompt cache warm: a ping failed ({self.detail}). The next call "
                    "works as usual.")
        if self.reason == "missed":
            return (f"Stopped keeping the prompt cache warm: ping {self.pings} {self.detail}. The server did not "
                    "keep the prefix for its time to live; more pings could pay for writes.")
        if self.reason == "changed":
            return (f"Stopped keeping the prompt cache warm: {self.detail}. The cache holds none of the new "
                    "request; warming it would first write it, which the next call does anyway if it comes.")
        return f"Stopped keeping the prompt cache warm after {pings}: {self.detail or 'the idle policy chose to'}."


@dataclass(frozen=True)
class IdleChosen:
    """The idle policy chose what the waiting session does (`--idle`, `core/idle.py`): `ping` the cache, `compact`
    now (an event while the prefix is warm, so the next call sends and reads the smaller request), or let it go
    `cold`. Each choice's expected price from this moment on (in USD when the model has a list price, else in
    units of one uncached input token: `usd`; `math.inf`: not a choice here), how long the session had waited
    (`waited`, seconds since the last call was sent) and the chance the person comes back at all (`back`).
    `ahead`: said when the turn ended, for the first moment a ping is due (nothing done yet); `news`: the choice
    differs from the last one said (a face says it in the chat once). The journal's `idle` record."""

    choice: str  # ping | compact | cold
    mode: str  # auto | ping | compact | cold (--idle)
    ping: float
    compact: float
    cold: float
    waited: float = 0.0
    back: float = 0.0
    usd: bool = True
    ahead: bool = False
    news: bool = False
    after_call: int = 0  # the call whose prefix the choice is about

    def price(self, choice: str) -> str:
        units = getattr(self, choice)
        if math.isinf(units):
            return "n/a (nothing to drop)" if choice == "compact" else "n/a (no ping allowed now)"
        return f"≈${units:.4f}" if self.usd else f"≈{units / 1000:.1f}k units"

    @property
    def cheapest(self) -> str:
        return min(("ping", "compact", "cold"), key=lambda name: getattr(self, name))

    @property
    def line(self) -> str:
        """The meter's line: "idle: ping ≈$0.0021 (cheapest) · compact ≈$0.0105 · cold ≈$0.0310 · back 74 %"."""
        why = "cheapest" if self.mode == "auto" or self.choice == self.cheapest else f"--idle {self.mode}"
        others = " · ".join(f"{name} {self.price(name)}" for name in ("ping", "compact", "cold") if name != self.choice)
        return f"idle: {self.choice} {self.price(self.choice)} ({why}) · {others} · back {self.back:.0%}"

    @property
    def said(self) -> str:
        """The chat's quiet line when the choice changes."""
        what = {"ping": "keeps the prompt cache warm", "compact": "compacts now, while the cache is warm",
                "cold": "lets the prompt cache go cold"}[self.choice]
        when = "At the next idle moment the session" if self.ahead else "While idle the session"
        others = " and ".join(f"{name} {self.price(name)}" for name in ("ping", "compact", "cold") if name != self.choice)
        why = "the cheapest" if self.choice == self.cheapest else f"--idle {self.mode}"
        return f"{when} {what}: {self.price(self.choice)} expected ({why}; {others})."


__all__ = ["CacheKeptWarm", "IdleChosen", "KeepWarmArmed", "KeepWarmStopped", "StopReason"]
