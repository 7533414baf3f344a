"""The priced idle policy, live (`--idle auto|ping|compact|cold`, `TUI_AGENT_IDLE`): what a waiting session does.

`core/idle.py` prices the three choices (ping the cache, compact now while it is warm, let it go cold) and the
replay asks it at each moment a ping is due (`core/recordings/idle_replay.py`); this is the same question asked
by the live warmer (`keep_warm.Warmer`, through its `choose` hook) with what the session knows then:

- the prefix a ping reads (what the API said the last call left cached), the request the next call would write
  once the cache is cold and the request an event now would send (the compactor's what-ifs, `preview_with`);
- the model's cache prices and time to live (`models.for_provider`), the pings still allowed (within the hour;
  within `idle.WAIT_SPEND_SHARE` of what the session has cost; within the organisation's `pingSpendCapUsd`);
- how long this person stays away: this session's own waits after a turn ended (each counts `OWN_WEIGHT` times)
  over a prior, the real sessions' waits (`idle.PRIOR`) beside the waits of this user's past sessions read from
  the journal (`idle_waits.py`, once, off the event loop).

The modes, as the replay has them: `auto` takes the cheapest at each moment (a tool still running: the fixed
rule, as any client would); `ping` pings by the fixed rule (what the price pays for: today's keep-warm);
`compact` makes the event at the first moment after a turn ended (when an event has something to drop), then
decides as auto; `cold` never pings. An idle event is the compactor's own (`request_event("idle")`, planned by
the one call plan, kept, traced as `compact.event`, told as `NextRequestChanged` with its event): the journal
saves the state it leaves, so a resumed session sends what this one would have. While a tool runs the session
never compacts (the request would end in an unanswered tool_use): it pings by the fixed rule in every mode but
`cold`.

Each decision is told (`events.IdleChosen`: the choice, the three prices, the wait so far): the meter shows it,
the chat says it once when the choice changes, the journal keeps an `idle` record. It changes nothing that is
sent later except through the compactor's state, which the journal saves.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tui_agent.core import events as ev
from tui_agent.core import trace
from tui_agent.core.agent.call import plan_call
from tui_agent.core.agent.keep_warm import Warmer, install_keep_warm
from tui_agent.core.agent.system_prompt import base_breakdown
from tui_agent.core.agent.warm_prefix import IDLE_PING_LINE
from tui_agent.core.cache_clock import NEVER_WARM, PING_OUTPUT_TOKENS, IdleMoment, KeepWarm, keep_warm_for
from tui_agent.core.idle import (
    OWN_WEIGHT,
    PRIOR,
    WAIT_SPEND_SHARE,
    IdleChoice,
    IdlePrices,
    IdleSizes,
    Returns,
    choice_from,
    idle_prices,
)
from tui_agent.core.models import CachePrice, for_provider, per_token

if TYPE_CHECKING:
    from tui_agent.core.providers.base import ModelRequest, Provider

@dataclass
class IdlePolicy:
    """One session's idle policy: `choose` (the warmer's hook), `compact` (the event it may ask for), `schedule`
    (the pings a provider gets in this mode) and `heard` (a session listener: the waits, the turn's end)."""

    session: Any
    mode: str = "auto"
    prior: Returns | Callable[[], Returns] = PRIOR  # a callable: read once, in a thread, at the first decision
    ping_cap_usd: float | None = None
    own: list[float] = field(default_factory=list)  # this session's waits after a turn ended, in seconds
    last: ev.IdleChosen | None = None  # the last choice told
    warmer: Warmer | None = None
    _sent: float | None = None  # when the last call was sent
    _ended: float | None = None  # when the last call of the last finished turn was sent
    _wait: tuple[int, float, float] = (0, 0.0, 0.0)  # this wait's call, the session's cost then, pings' cost then
    _compacted: int = -1  # the call whose wait already made its idle event

    # -- the warmer's hooks --------------------------------------------------------------------------
    def schedule(self, provider: "Provider", minutes: float | None) -> KeepWarm:
        """`ping`: what the price pays for (today's keep-warm); `auto`/`compact`: every slot within the hour
        (each one decided); `cold`, or a provider that cannot ping or caches nothing: none."""
        if self.mode == "cold" or not provider.can_ping or not provider.prompt_caching:
            return NEVER_WARM
        return keep_warm_for(for_provider(provider), minutes, by_price=self.mode == "ping")

    async def choose(self, moment: IdleMoment) -> str:
        """Ping, compact or stop at `moment` (a ping is due), told as `IdleChosen`."""
        price = for_provider(self.session.provider)
        if self.session.running:  # a tool runs: the turn calls again soon, keep warm as any client would
            return "ping" if moment.pings_sent < keep_warm_for(price).max_pings and self._room(moment, False) > 0 \
                else "stop"
        returns = await self._returns()
        prices, can_compact = self._prices(moment, price, returns)
        choice = self._choice(prices, can_compact)
        self._tell(prices, choice, moment.idle_seconds, ahead=False, compact_offered=can_compact)
        return "stop" if choice == "cold" else choice

    def compact(self) -> "ModelRequest | None":
        """The idle compaction event, planned and kept through the one call plan; the request a ping writes
        (None: nothing to drop, or the session cannot compact now)."""
        session = self.session
        if session.running or not session.history or not getattr(session.compactor, "steerable", False):
            return None
        session.compactor.request_event("idle")
        planned = plan_call(session.compactor, session.provider, session.system_prompt(), session.tools.schemas(),
                            session.history, session.next_call, keep=True)
        session.state.last_plan = None
        self._compacted = self._wait[0]
        event = planned.plan.event
        if event is None or "drop" not in event.kinds:
            session.announce_next("idle")  # (what it kept besides is the next call's decision anyway)
            return None
        trace.trace("compact.event", call=planned.call, kinds=",".join(event.kinds), reason=event.reason,
                    tokens=f"{event.tokens_before}->{event.tokens_after}", idle="true")
        session.emit(ev.NextRequestChanged(planned, base_breakdown(session), "idle compact"))
        request = planned.request
        if request.messages and request.messages[-1].get("role") == "assistant":
            line = {"role": "user", "content": [{"type": "text", "text": IDLE_PING_LINE}]}
            request = _with_messages(request, [*request.messages, line], len(request.messages))
        return request

    # -- a session listener --------------------------------------------------------------------------
    def heard(self, event: Any) -> None:
        match event:
            case ev.ModelCallStarted(turn_call=1) if self._ended is not None:
                self.own.append(max(self._clock() - self._ended, 0.0))  # the person came back after this
                self._ended, self._sent = None, self._clock()
            case ev.ModelCallStarted():
                self._sent = self._clock()
            case ev.Usage(purpose="call"):
                ledger = self.session.ledger
                self._wait = (event.call, ledger.cost, ledger.ping_cost)
            case ev.TurnClosed():
                self._ended = self._sent
                self.ahead()
            case ev.CacheKeptWarm(expected=0) if event.cache_creation_input_tokens and self._compacted == self._wait[0]:
                self.session.announce_next("idle compact written")  # the next call reads that write: told so
            case ev.SessionCleared():
                self.own.clear()
                self._ended = self._sent = None

    def ahead(self) -> None:
        """The turn ended: the choice for the first moment a ping would be due, told now (nothing done yet)."""
        warmer, session = self.warmer, self.session
        prefix = warmer.prefix if warmer is not None else None
        if prefix is None or session.running or not session.provider.can_ping \
                or not session.provider.prompt_caching:
            return
        price = for_provider(session.provider)
        keep = keep_warm_for(price, warmer.minutes if warmer is not None else None, by_price=self.mode == "ping")
        if keep.max_pings <= 0 and self.mode != "cold":
            return
        if self.mode == "cold":
            keep = keep_warm_for(price, warmer.minutes if warmer is not None else None, by_price=False)
        moment = IdleMoment(0, keep, prefix.cached_tokens, keep.interval_seconds, prefix.request.model)
        returns = self.prior if isinstance(self.prior, Returns) else PRIOR  # (the journal's: once read)
        prices, can_compact = self._prices(moment, price, returns.with_waits(self.own, OWN_WEIGHT))
        self._tell(prices, self._choice(prices, can_compact), moment.idle_seconds, ahead=True,
                   compact_offered=can_compact)

    # -- pieces ----------------------------------------------------------------------------------------
    def _clock(self) -> float:
        return float(self.session.state.clock())

    async def _returns(self) -> Returns:
        if not isinstance(self.prior, Returns):
            loader = self.prior
            try:
                self.prior = await asyncio.to_thread(loader)
            except Exception:  # noqa: BLE001 - an unreadable journal folder leaves the prior of real sessions
                self.prior = PRIOR
        return self.prior.with_waits(self.own, OWN_WEIGHT)

    def _sizes(self, moment: IdleMoment) -> tuple[IdleSizes, bool]:
        """The requests to choose between, and whether an event now has anything to drop."""
        prefix = float(moment.cached_tokens)
        session, compactor = self.session, self.session.compactor
        what_if = getattr(compactor, "preview_with", None)
        if what_if is None or not getattr(compactor, "steerable", False) or self._compacted == self._wait[0]:
            return IdleSizes(prefix, prefix, prefix), False
        call = session.next_call
        cold = what_if(session.history, ("cold",), call).plan.estimated_tokens
        dropped = what_if(session.history, ("idle",), call).plan
        compacted = dropped.estimated_tokens
        can = dropped.event is not None and "drop" in dropped.event.kinds and compacted < prefix
        return IdleSizes(prefix, min(cold, prefix), min(compacted, prefix)), can

    def _room(self, moment: IdleMoment, share: bool) -> int:
        """The pings this wait may still send: within the schedule's slots, `WAIT_SPEND_SHARE` of what the
        session had cost when the wait began (`share`: the priced modes, as the replay has it; `ping` is the
        fixed rule), and the organisation's ping spend cap (all in USD; a model without a price: no cap)."""
        left = moment.keep.max_pings - moment.pings_sent
        unit = per_token(self.session.model)
        if unit is None:
            return max(left, 0)
        price = for_provider(self.session.provider)
        ping = (price.read * moment.cached_tokens + price.output * PING_OUTPUT_TOKENS) * unit
        _, spent, pings_then = self._wait
        ledger = self.session.ledger
        room = WAIT_SPEND_SHARE * spent - (ledger.ping_cost - pings_then) if share else math.inf
        if self.ping_cap_usd is not None:
            room = min(room, self.ping_cap_usd - ledger.ping_cost)
        return max(min(left, int(room // ping) if ping > 0 and math.isfinite(room) else left), 0)

    def _prices(self, moment: IdleMoment, price: CachePrice, returns: Returns) -> tuple[IdlePrices, bool]:
        sizes, can_compact = self._sizes(moment)
        keep = KeepWarm(moment.keep.interval_seconds, self._room(moment, self.mode in ("auto", "compact")))
        prices = idle_prices(moment.idle_seconds, sizes, price, keep, returns)
        if not can_compact and prices.choice == "compact":  # nothing to drop: the cheaper of the other two
            best: IdleChoice = "ping" if prices.ping <= prices.cold else "cold"
            prices = IdlePrices(prices.ping, prices.compact, prices.cold, best, prices.back)
        return prices, can_compact

    def _choice(self, prices: IdlePrices, can_compact: bool) -> str:
        if self.mode == "compact" and (not can_compact or math.isinf(prices.compact)):  # (no write allowed now)
            return prices.choice if prices.choice != "compact" else "ping"
        if self.mode == "ping" and math.isinf(prices.ping):
            return "cold"  # no ping allowed any more (the spend share, the cap, the hour)
        return choice_from(self.mode, prices)

    def _tell(self, prices: IdlePrices, choice: str, waited: float, ahead: bool, compact_offered: bool) -> None:
        unit = per_token(self.session.model)
        scale = unit if unit is not None else 1.0
        compact = prices.compact if compact_offered else math.inf
        said = ev.IdleChosen(choice, self.mode, prices.ping * scale, compact * scale, prices.cold * scale, waited,
                             prices.back, unit is not None, ahead, self.last is None or self.last.choice != choice,
                             self.warmer.prefix.call if self.warmer is not None and self.warmer.prefix else 0)
        self.last = said
        trace.trace("idle.choice", choice=choice, mode=self.mode, waited=f"{waited:.0f}", ahead=str(ahead).lower())
        self.session.emit(said)


def _with_messages(request: "ModelRequest", messages: list[Any], stable: int) -> "ModelRequest":
    from dataclasses import replace

    return replace(request, messages=messages, stable_prefix=stable, notice="")


def install_idle_policy(session: Any, mode: str = "auto", minutes: float | None = None,
                        prior: Returns | Callable[[], Returns] = PRIOR, ping_cap_usd: float | None = None,
                        sleep: Callable[[float], Any] | None = None) -> IdlePolicy:
    """The session's keep-warm, decided by the idle policy in `mode` (the door calls this for every face but
    `-p`); `prior`: the return model before this session's own waits (the door's reads the journal)."""
    policy = IdlePolicy(session, mode, prior, ping_cap_usd)
    policy.warmer = install_keep_warm(session, minutes, sleep=sleep, choose=policy.choose, compact=policy.compact,
                                      schedule=policy.schedule)
    session.listeners.append(policy.heard)
    return policy


__all__ = ["IDLE_PING_LINE", "IdlePolicy", "install_idle_policy"]
