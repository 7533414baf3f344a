"""What a strategy's session does while it waits, in a replay: the pings before each call and after the last.

A recorded log knows when each call was made, so the replay knows every wait: between two calls of one turn
(a tool running) and between a turn's end and the person's next prompt. A live session of ours decides at
each moment a ping is due (`core/idle.py`); the replay asks the same function at the same moments, with only
what the live session would know then: this session's waits so far (never the later ones) beside the prior
of real sessions. After the last call the person never comes back: a live session would still ping until
its policy stops (the tail), and those pings are priced too.

Modes: `never` (the append-only conversation and the peers as the products are: no pings), `fixed`
(today's keep-warm rule for any client: a ping every 0.9 × TTL, as many as half the rewrite pays for, within
an hour: `cache_clock.keep_warm_for`), and the idle modes of ours (`auto`, `ping`, `compact`, `cold`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from tui_agent.core.cache_clock import NEVER_WARM, PING_OUTPUT_TOKENS, KeepWarm, keep_warm_for
from tui_agent.core.idle import (
    LONG_BREAK_WEIGHT,
    LONG_BREAKS,
    OWN_WEIGHT,
    PRIOR,
    WAIT_SPEND_SHARE,
    IdleChoice,
    IdlePrices,
    IdleSizes,
    Returns,
    idle_prices,
)
from tui_agent.core.messages import opens_turn
from tui_agent.core.models import CachePrice


@dataclass(frozen=True)
class IdleOutcome:
    """One wait, as the session spent it: pings sent, how long the cache had been idle when the next call
    came (since the last ping or the idle event), their price, and the size of the request an idle event
    wrote (None: no event while idle)."""

    pings: int = 0
    idle: float | None = None
    cost: float = 0.0
    compacted: float | None = None
    reads: float = 0.0  # the tokens all those pings read together (each repeats the request warm then)
    prices: IdlePrices | None = None  # the last decision's three prices (what the card shows)
    choice: IdleChoice | None = None  # the last decision made in this wait (None: no decision was due)


NO_WAIT = IdleOutcome()


class IdleReplay:
    """One strategy's waits, call by call (`before(k)`), and its tail after the last call (`tail()`)."""

    def __init__(self, recorded: object, price: CachePrice, mode: str = "never", prior: Returns = PRIOR,
                 minutes: float | None = None) -> None:
        # a cache that writes for free (OpenAI's) is kept by the provider on its own: nothing to ping (a live
        # session never pings there: `keep_warm.keep_warm_of`)
        mode = "never" if price.write <= 1.0 else mode
        self.recorded, self.price, self.mode, self.prior = recorded, price, mode, prior
        self.fixed = keep_warm_for(price, minutes) if mode in ("fixed", "ping") else NEVER_WARM
        self.horizon = keep_warm_for(price, minutes, by_price=False) if mode in ("auto", "compact") else NEVER_WARM
        self._human: list[float] = []  # this session's waits after a turn ended, as they happened
        self._seen = 0  # calls whose waits are in `_human`
        self.decisions: dict[str, int] = {"ping": 0, "compact": 0, "cold": 0}
        self.spent = math.inf  # what the session had cost when the wait began

    def at(self, k: int) -> IdleReplay:
        """A fresh copy that knows what this session knew before call k (a replay made again from a
        checkpoint): the waits of the calls before it, none of the decisions counted since."""
        twin = IdleReplay(self.recorded, self.price, self.mode, self.prior)
        twin.fixed, twin.horizon = self.fixed, self.horizon
        for j in range(1, k):
            twin._learn(j)
        return twin

    def before(self, k: int, previous_tokens: float, sizes: Callable[[], IdleSizes], spent: float = math.inf) -> IdleOutcome:
        """The wait before call k (k ≥ 1): `previous_tokens` is the last request (what a ping reads), `sizes`
        the requests to choose between (asked only when a decision is due), `spent` what the session has
        cost so far (the pings of one wait stay within `WAIT_SPEND_SHARE` of it)."""
        gap = self.recorded.gap(k)  # type: ignore[attr-defined]
        self.spent = spent
        outcome = self._spend(gap, self._is_human(k), previous_tokens, sizes)
        self._learn(k)
        return outcome

    def tail(self, previous_tokens: float, sizes: Callable[[], IdleSizes], spent: float = math.inf) -> IdleOutcome:
        """After the last call: the person never comes back; what the session spends before it stops."""
        calls = self.recorded.calls  # type: ignore[attr-defined]
        if not calls:
            return NO_WAIT
        self.spent = spent
        return self._spend(math.inf, True, previous_tokens, sizes)

    # -- one wait -----------------------------------------------------------------------------------
    def _spend(self, gap: float | None, human: bool, prefix: float, sizes: Callable[[], IdleSizes]) -> IdleOutcome:
        if gap is None:
            return IdleOutcome(0, gap)
        if self.mode in ("fixed", "ping") or (self.mode in ("auto", "compact") and not human):
            # a tool still running will call again: keep warm as any client would (as long as it runs); a live
            # session never compacts then (its request would end in an unanswered tool_use: `idle_policy.py`)
            keep = self.fixed if self.mode in ("fixed", "ping") else keep_warm_for(self.price)
            pings = keep.pings(gap)
            return IdleOutcome(pings, keep.idle_after_pings(gap), pings * self._ping(prefix),
                               choice="ping" if pings else None, reads=pings * prefix)
        if self.mode in ("auto", "compact") and gap > self.horizon.interval_seconds:
            return self._decide(gap, prefix, sizes)
        return IdleOutcome(0, gap)

    def _decide(self, gap: float, prefix: float, sizes: Callable[[], IdleSizes]) -> IdleOutcome:
        """Slot by slot, as the live warmer would: ping, compact, or stop; the person comes back at `gap`."""
        interval, returns = self.horizon.interval_seconds, self._returns()
        known = sizes()
        pings, cost, at, reads = 0, 0.0, 0.0, 0.0
        prices: IdlePrices | None = None
        compacted: float | None = None
        choice: IdleChoice | None = None
        for j in range(1, self.horizon.max_pings + 1):
            moment = j * interval
            if moment >= gap:
                break
            left = KeepWarm(interval, min(self.horizon.max_pings - j + 1, self._affordable(cost, known.prefix)))
            if self.mode == "compact" and compacted is None:
                choice = "compact"
            else:
                current = known if compacted is None else IdleSizes(compacted, compacted, compacted, None)
                prices = idle_prices(moment, current, self.price, left, returns)
                choice = prices.choice
                if choice == "compact" and compacted is not None:
                    choice = "ping"  # already compacted: keep the small request warm
            self.decisions[choice] += 1
            if choice == "cold":
                break
            if choice == "compact":
                compacted = known.compacted
                cost += self.price.write * compacted + self._summary(known)
            else:
                pings += 1
                cost += self._ping(prefix if compacted is None else compacted)
                reads += prefix if compacted is None else compacted
            at = moment
        return IdleOutcome(pings, gap - at, cost, compacted, choice=choice, reads=reads, prices=prices)

    def _affordable(self, spent_here: float, prefix: float) -> int:
        """The pings this wait may still send within `WAIT_SPEND_SHARE` of what the session cost so far."""
        room = WAIT_SPEND_SHARE * self.spent - spent_here
        return max(int(room // self._ping(prefix)), 0) if math.isfinite(room) else self.horizon.max_pings

    def _ping(self, prefix: float) -> float:
        return self.price.read * prefix + self.price.output * PING_OUTPUT_TOKENS

    def _summary(self, sizes: IdleSizes) -> float:
        if sizes.summary is None:
            return 0.0
        return self.price.read * sizes.summary[0] + self.price.output * sizes.summary[1]

    # -- what the session knows of the person ------------------------------------------------------------
    def _is_human(self, k: int) -> bool:
        """Whether the wait before call k followed a turn's end (the request ends with a new prompt)."""
        recorded = self.recorded
        index = recorded.calls[k]  # type: ignore[attr-defined]
        return index > 0 and opens_turn(recorded.history[index - 1])  # type: ignore[attr-defined]

    def _learn(self, k: int) -> None:
        """The wait before call k is known once call k came (a live session learns it then too)."""
        if k >= self._seen:
            gap = self.recorded.gap(k)  # type: ignore[attr-defined]
            if gap is not None and gap > 0 and self._is_human(k):
                self._human.append(gap)
            self._seen = k + 1

    def _returns(self) -> Returns:
        return self.prior.with_waits(self._human, OWN_WEIGHT)


def session_waits(recorded: object) -> list[float]:
    """A recorded session's waits after each turn ended, and one that never ended (it stopped there): what
    a prior of how long people stay away is made of (`core.idle.Returns`; the bench builds the prior of
    each held-out session from the others')."""
    calls = recorded.calls  # type: ignore[attr-defined]
    history = recorded.history  # type: ignore[attr-defined]
    out: list[float] = []
    for k in range(1, len(calls)):
        gap = recorded.gap(k)  # type: ignore[attr-defined]
        if gap is not None and gap > 0 and calls[k] > 0 and opens_turn(history[calls[k] - 1]):
            out.append(gap)
    return [*out, math.inf] if calls else out


def prior_of(waits: list[float]) -> Returns:
    """The return model of waits already read (`session_waits` of each session, joined), with the long breaks
    of `core.idle`: a leave-one-out over many sessions reads each session's waits once, not once per fold."""
    return Returns(tuple(waits), (1.0,) * len(waits)).with_waits(LONG_BREAKS, LONG_BREAK_WEIGHT)
