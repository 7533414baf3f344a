"""One call's request in numbers (`CallFigures`): the headline of the meter and the one-line context meter.

The budget ledger (`core/agent/budget.py`) makes one for the call being made or the next one between turns;
every face reads it as it is (sizes, the cached / new split, the price, the water marks in words).
"""

from __future__ import annotations

from dataclasses import dataclass

from tui_agent.core.formats import fmt_tokens
from tui_agent.core.models import InputCost


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


__all__ = ["CallFigures"]
