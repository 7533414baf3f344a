"""One call's request in numbers (`CallFigures`): the headline of the meter and the one-line context meter.

The budget ledger (`core/agent/budget.py`) has one made (`call_figures`: the plan's sizes split into cached
and new, and priced) for the call being made or the next one between turns; every face reads it as it is
(sizes, the cached / new split, the price, the water marks in words).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tui_agent.core.compaction.plan import CompactPlan
from tui_agent.core.formats import fmt_tokens
from tui_agent.core.messages import Message
from tui_agent.core.models import InputCost, input_cost
from tui_agent.core.tokens import message_tokens


@dataclass(frozen=True)
class CallFigures:
    """One call's request in numbers: the headline of the meter and the one-line context meter."""

    label: str
    call: int | None  # None: the next call (a preview)
    window: int
    reserve: int
    base: int  # system + tools, chars/4
    messages: int  # sent messages, chars/4 (the rows' sent column sums to this)
    total: int  # the engine's estimate of the whole request (calibrated on usage when known)
    cached: int  # of `total`: the prefix the provider reads from its cache
    new: int  # of `total`: what it reads for the first time (and writes to the cache)
    cached_messages: int  # leading outbound messages in the cached prefix
    high: int
    low: int
    cost: InputCost  # this request's input price (`models.input_cost`: the one figure every face shows)
    exact_total: int | None = None  # the API's count, once the call reported usage
    history_tokens: int = 0
    dropped: int = 0
    calibrated: bool = False  # the estimate is scaled by what the API reported for earlier calls
    budget: int = 0  # the working budget the marks are shares of (0: none, e.g. v1 or compaction off)
    budget_source: str = ""  # where it came from (default for this model, flag, env, /budget, learned, window)
    quiet: str = ""  # over the high mark and no event: why (the plan's `quiet_reason`)

    @property
    def shown_total(self) -> int:
        return self.exact_total if self.exact_total is not None else self.total

    @property
    def room(self) -> int:
        """The one denominator of the percentage: the working budget compaction follows (its marks are shares
        of it), or the window less the answer's reserve for a strategy without one. Not the window: a meter at
        11 % of a 1M window was at 70 % of the 168k budget, where compaction starts."""
        return self.budget if self.budget else max(self.window - self.reserve, 1)

    @property
    def room_name(self) -> str:
        """What `room` is, in the words every face uses beside it."""
        return "budget" if self.budget else "window less the answer's reserve"

    @property
    def percent(self) -> int:
        return self.shown_total * 100 // self.room if self.room else 0

    @property
    def price_usd(self) -> float | None:
        """The input price at list price (None: the model has no known price)."""
        return self.cost.usd

    @property
    def budget_line(self) -> str:
        """"budget 168k (default for this model) · window 1M": the budget and the window, apart."""
        if not self.budget:
            return ""
        return f"budget {fmt_tokens(self.budget)} ({self.budget_source}) · window {fmt_tokens(self.window)}"

    @property
    def mark_warning(self) -> str:
        """"⚠ passed the 7.7k mark (≈9.9k) · no event: <why>", or "" (under the mark, or an event happened)."""
        if not self.quiet or not self.high or self.shown_total <= self.high:
            return ""
        return f"⚠ passed the {fmt_tokens(self.high)} mark (≈{fmt_tokens(self.shown_total)}) · no event: {self.quiet}"

    @property
    def water_marks(self) -> str:
        if not self.high:
            return "compaction off"
        if self.low >= self.high:  # one threshold (v1, seed): no separate low-water mark
            return f"compacts at {fmt_tokens(self.high)}"
        return f"compacts at {fmt_tokens(self.high)} → {fmt_tokens(self.low)}"


def call_figures(label: str, call: int | None, plan: CompactPlan, messages: Sequence[Message], base: int, *,
                 model: str, window: int, reserve: int, cache_warm: bool, caches: bool, calibrated: bool,
                 history_tokens: int = 0) -> CallFigures:
    """`plan`'s request in figures: its size (the engine's estimate, calibrated), split into what the cache
    holds and what is new, and priced. `cache_warm`: a previous request put the base in the cache (a cold
    first call reads nothing from it); `caches`: the last usage did not say nothing is cached; `calibrated`:
    the API reported usage for some call."""
    total = plan.estimated_tokens
    raw = base + plan.message_tokens_after
    scale = total / raw if raw else 1.0  # the engine's calibration on real usage
    cached_count = min(plan.cached_messages, len(messages))
    new_raw = sum(message_tokens(m) for m in messages[cached_count:])
    new_messages = round(new_raw * scale)
    if cache_warm:
        new = new_messages
    else:  # a cold first call reads nothing from the cache: all of it is new (it read "cached ≈4" once)
        new = total
    uncached = not caches
    new = total if uncached else min(new, total)
    cached = total - new
    price = input_cost(model, read=cached, write=0 if uncached else new, uncached=new if uncached else 0)
    return CallFigures(label, call, window, reserve, base, plan.message_tokens_after, total, cached,
                       new, cached_count, plan.high_tokens, plan.low_tokens, price,
                       history_tokens=history_tokens or plan.message_tokens_before, dropped=plan.dropped_count,
                       calibrated=calibrated and abs(scale - 1.0) > 1e-6,
                       budget=plan.budget_room, budget_source=plan.budget_source, quiet=plan.quiet_reason)


__all__ = ["CallFigures", "call_figures"]
