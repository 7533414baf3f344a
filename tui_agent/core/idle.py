"""What a session does while it waits, priced: ping the cache, compact now, or let the cache go cold.

When a turn ends the prompt cache holds the last request for its time to live (5 minutes; an hour on the
1-hour cache). If the person is back before it expires the next call reads that prefix at the read price;
after it, the next call writes its request again at the write price. Three things can be done meanwhile,
each with its price in units of one uncached input token (`models.CachePrice`):

- **ping**: repeat the request just before the cache expires (`core/agent/keep_warm.py`): each ping reads the
  prefix (0.05 × prefix at today's prices) and starts the time to live again; worth it while the person is
  likely enough to come back soon. Wasted when they do not come back at all.
- **compact**: make the compaction event now, while the prefix is still warm, and keep the smaller request
  warm from then on: it writes the compacted request now, and an event's summary call (when summaries are on)
  reads the warm prefix instead of writing it again. Claude Code compacts a large idle session this way
  before its 1-hour cache expires.
- **cold**: do nothing; if the person comes back, the next call writes what the compactor then sends (a cache
  gone cold lets it compact at no extra write: `Compactor.cache_expired`).

Which is cheapest depends on when the person comes back. `Returns` is what is known of that: past waits
after a turn ended (this session's, the journal's past sessions', and a prior from real sessions), where a
session that ended is a wait that never ended (`math.inf`). At each moment a ping would be due, `idle_prices`
prices the three with the best choices after it (a small dynamic programme over the remaining ping slots:
stopping early is always allowed, so pinging goes on exactly while its expected saving beats its price).
Pure: everything comes in as arguments; the live warmer and the replay ask the same function.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from tui_agent.core.cache_clock import WARM_AT_MOST_SECONDS, KeepWarm
from tui_agent.core.models import CachePrice

IdleChoice = Literal["ping", "compact", "cold"]
IDLE_MODES = ("auto", "ping", "compact", "cold")
ENV = "TUI_AGENT_IDLE"  # the default of --idle


@dataclass(frozen=True)
class Returns:
    """When the person comes back once a turn has ended: past waits in seconds (`math.inf`: they never came
    back, the session ended there), each with a weight. A wait is smoothed over its neighbourhood in log-time
    (`spread`, in natural-log units) so that a handful of waits draw no cliffs."""

    waits: tuple[float, ...] = ()
    weights: tuple[float, ...] = ()
    spread: float = 0.35

    def with_waits(self, waits: Iterable[float], weight: float = 1.0) -> Returns:
        more = [w for w in waits if w > 0]
        return Returns(self.waits + tuple(more), self.weights + (weight,) * len(more), self.spread)

    @property
    def total(self) -> float:
        return sum(self.weights)

    def survival(self, seconds: float) -> float:
        """The weight of the waits longer than `seconds` (not normalised: ratios are what count)."""
        if seconds <= 0:
            return self.total
        log_t = math.log(seconds)
        out = 0.0
        for wait, weight in zip(self.waits, self.weights):
            if math.isinf(wait):
                out += weight
            else:
                out += weight * 0.5 * math.erfc((log_t - math.log(wait)) / (self.spread * math.sqrt(2)))
        return out

    @property
    def never(self) -> float:
        """The weight of the waits that never ended (sessions that stopped there)."""
        return sum(w for wait, w in zip(self.waits, self.weights) if math.isinf(wait))


# Waits after a turn ended, from the real Claude Code sessions the economics bench replays (the three shared
# logs and the public ones listed in docs/compaction.md; `recordings.idle_replay.session_waits` reads them), in
# seconds; `inf` for each session that ended. Most turns are answered within a minute or two; a few waits
# last tens of minutes; about one wait in four past the first ping is a session that ended.
PRIOR_WAITS: tuple[float, ...] = (
    4, 8, 10, 11, 13, 15, 16, 17, 19, 25, 28, 30, 39, 41, 43, 44, 45, 48, 51, 57, 59, 63, 65, 67, 69, 77, 83,
    88, 91, 97, 103, 122, 131, 159, 171, 214, 287, 293, 314, 335, 423, 439, 483, 688, 1310, 1495,
    math.inf, math.inf, math.inf)
# Beside the waits seen, a person who has been away past the first ping may still come back within the hour:
# half a wait each at 8, 12, 20, 30 and 45 minutes. Without it a prior from a few sessions says nobody comes
# back after the longest wait it happens to hold; chosen on the other sessions, it stopped pinging a session
# whose person came back after 22 minutes, and cost more than the fixed rule (0.480 vs 0.476 of append-only,
# left out; with it 0.472).
LONG_BREAKS = tuple(minutes * 60.0 for minutes in (8, 12, 20, 30, 45))
LONG_BREAK_WEIGHT = 0.5
PRIOR = Returns(PRIOR_WAITS, (1.0,) * len(PRIOR_WAITS)).with_waits(LONG_BREAKS, LONG_BREAK_WEIGHT)
OWN_WEIGHT = 3.0  # a wait of this person's own counts as this many of the prior's
# The pings of one wait never cost more than this share of what the session has cost so far: the return
# model is an estimate, and a session that has ended (a scripted run, a person gone for the day) pays every
# ping it sends after its last call. On a small session without pressure the tail was 19 % of its bill
# (price 1.19 × append-only's); at 12 % it is 11 %, and no wait of the other sessions reaches the cap.
WAIT_SPEND_SHARE = 0.12


@dataclass(frozen=True)
class IdleSizes:
    """The requests the choice is between, in tokens: `prefix` is the last request (what a ping reads, and
    what a call reads if the person is back while it is warm); `cold` what the next call writes once the
    cache is gone; `compacted` what an event made now would send. `summary`: an event's summary call
    (tokens it reads, tokens it writes), or None when summaries are off."""

    prefix: float
    cold: float
    compacted: float
    summary: tuple[float, float] | None = None


@dataclass(frozen=True)
class IdlePrices:
    """Each choice's expected price from now on (units of one uncached input token), and the cheapest."""

    ping: float
    compact: float
    cold: float
    choice: IdleChoice
    back: float = 0.0  # the chance the person comes back at all, from now

    def line(self, per_token: float | None = None) -> str:
        """"idle: ping (≈$0.012) · compact ≈$0.031 · cold ≈$0.020 · back 74 %"."""
        def money(units: float) -> str:
            return f"≈${units * per_token:.4f}" if per_token else f"≈{units / 1000:.1f}k units"

        others = [f"{name} {money(getattr(self, name))}" for name in ("ping", "compact", "cold") if name != self.choice]
        return (f"idle: {self.choice} ({money(getattr(self, self.choice))}) · " + " · ".join(others)
                + f" · back {self.back:.0%}")


@dataclass(frozen=True)
class _Slots:
    """The ping moments still ahead (seconds idle at each) and the return model's weight past each."""

    times: list[float] = field(default_factory=list)
    alive: list[float] = field(default_factory=list)
    never: float = 0.0


def idle_prices(idle_seconds: float, sizes: IdleSizes, price: CachePrice, keep: KeepWarm,
                returns: Returns) -> IdlePrices:
    """The three choices priced at the moment a ping is due, `idle_seconds` after the turn ended, with the
    best decisions after it. `keep` gives the ping interval and how many pings remain allowed at most
    (`keep.max_pings` from now); with no expiry or no pings allowed, pinging is not a choice."""
    slots = _slots(idle_seconds, keep, returns)
    if not slots.times or slots.alive[0] <= 0:
        return IdlePrices(math.inf, math.inf, 0.0, "cold", 0.0)
    back = max(slots.alive[0] - slots.never, 0.0) / slots.alive[0]
    cold = _cold(0, sizes, price, slots)
    ping = _keep_warming(0, sizes.prefix, sizes.cold, sizes, price, slots)
    summary = 0.0
    if sizes.summary is not None:  # read warm now, instead of written again by the event at a cold return
        summary = price.read * sizes.summary[0] + price.output * sizes.summary[1]
    compact = summary + price.write * sizes.compacted + _warm_rest(
        0, sizes.compacted, sizes.compacted, replace_summary(sizes), price, slots)
    options = {"ping": ping, "cold": cold, "compact": compact}
    choice: IdleChoice = min(("ping", "cold", "compact"), key=lambda k: (options[k] - (1e-9 if k == "ping" else 0)))
    return IdlePrices(ping, compact, cold, choice, back)


def replace_summary(sizes: IdleSizes) -> IdleSizes:
    return IdleSizes(sizes.compacted, sizes.compacted, sizes.compacted, None)


def _slots(idle_seconds: float, keep: KeepWarm, returns: Returns) -> _Slots:
    interval = keep.interval_seconds
    if keep.max_pings <= 0 or not math.isfinite(interval) or interval <= 0:
        return _Slots()
    horizon = min(keep.max_pings, int(WARM_AT_MOST_SECONDS // interval) + 1)
    times = [idle_seconds + j * interval for j in range(horizon + 1)]
    return _Slots(times, [returns.survival(t) for t in times], returns.never)


def _cold(j: int, sizes: IdleSizes, price: CachePrice, slots: _Slots) -> float:
    """Stop at slot j: if the person comes back, the next call writes the cold request (and a summary is
    made from a cold prefix)."""
    alive = slots.alive[j]
    if alive <= 0:
        return 0.0
    back = max(alive - slots.never, 0.0) / alive
    summary = 0.0 if sizes.summary is None else price.write * sizes.summary[0] + price.output * sizes.summary[1]
    return back * (price.write * sizes.cold + summary)


def _keep_warming(j: int, prefix: float, cold: float, sizes: IdleSizes, price: CachePrice, slots: _Slots) -> float:
    """Ping at slot j, then decide well at each later slot."""
    return price.read * prefix + _warm_rest(j, prefix, cold, sizes, price, slots)


def _warm_rest(j: int, prefix: float, cold: float, sizes: IdleSizes, price: CachePrice, slots: _Slots) -> float:
    """The prefix is warm from slot j: the person comes back before slot j+1 (and the call reads it), or the
    next slot decides again (stop, or ping once more). Past the last slot warming must stop."""
    best_after = 0.0
    last = len(slots.times) - 1
    for i in range(last, j, -1):  # backwards: the value of being warm and undecided at slot i
        stop = _cold(i, IdleSizes(prefix, cold, cold, sizes.summary), price, slots)
        if i == last:
            best_after = stop
            continue
        alive, later = slots.alive[i], slots.alive[i + 1]
        come = (alive - later) / alive if alive > 0 else 0.0
        go_on = price.read * prefix + come * price.read * prefix + (1 - come) * best_after
        best_after = min(stop, go_on)
    alive, later = slots.alive[j], slots.alive[j + 1] if j + 1 <= last else slots.alive[j]
    come = (alive - later) / alive if alive > 0 else 0.0
    return come * price.read * prefix + (1 - come) * best_after


def choice_from(mode: str, prices: IdlePrices) -> IdleChoice:
    """The choice a mode makes: `auto` the cheapest, the others what they say."""
    if mode == "auto":
        return prices.choice
    if mode not in IDLE_MODES:
        raise ValueError(f"--idle takes {', '.join(IDLE_MODES)}, not {mode[:40]!r}")
    return mode  # type: ignore[return-value]


def mode_from(env: Mapping[str, str] | None, flag: str | None = None) -> str:
    """The idle mode asked for: the flag, else `TUI_AGENT_IDLE`, else auto; a ValueError names a wrong one."""
    raw = (flag or (env or {}).get(ENV, "") or "auto").strip().lower()
    if raw not in IDLE_MODES:
        raise ValueError(f"--idle / {ENV} takes {', '.join(IDLE_MODES)}, not {raw[:40]!r}")
    return raw


def waits_between(times: Iterable[float | None]) -> list[float]:
    """The waits between consecutive known times (a helper for journals and logs)."""
    out: list[float] = []
    previous = None
    for t in times:
        if t is not None and previous is not None and t > previous:
            out.append(t - previous)
        previous = t if t is not None else previous
    return out


__all__ = ["ENV", "IDLE_MODES", "OWN_WEIGHT", "PRIOR", "IdleChoice", "IdlePrices", "IdleSizes", "Returns",
           "choice_from", "idle_prices", "mode_from", "waits_between"]
