"""Prompt-cache prices: one table for every place that prices a request (the economics replay, the
benchmark, replay's running cost, the live meter).

A request is priced in units of one uncached input token of its model: the prefix read from the cache
costs `read` (0.1 on the classic models, 0.05 on the 5.5 generation, 0.025 on Fable), the rest is written
at `write` (1.25 for the 5-minute cache, 2.0 for the 1-hour one). A prefix idle longer than the cache's
time to live is gone: the next request writes it again in full. Dollar figures multiply those units by the
model's base input price (`providers.models`, the one table of model limits and list prices).
"""

from __future__ import annotations

from dataclasses import dataclass

FIVE_MINUTES = 300.0
ONE_HOUR = 3600.0
WRITE_5M = 1.25
WRITE_1H = 2.0


@dataclass(frozen=True)
class CachePrice:
    """How a request's tokens are priced, in units of one uncached input token."""

    read: float = 0.1
    write: float = WRITE_5M
    ttl_seconds: float | None = None  # None: the cache never goes cold (the classic benchmark)
    output: float = 5.0  # an output token (a summary call's answer), in the same units

    @property
    def label(self) -> str:
        expiry = f", {self.ttl_seconds / 60:g}-minute expiry" if self.ttl_seconds else ", no expiry"
        return f"read {self.read:g}, write {self.write:g}{expiry}"

    def expired(self, gap_seconds: float | None) -> bool:
        """Whether a prefix idle for `gap_seconds` is gone from the cache (unknown gaps: it is not)."""
        return self.ttl_seconds is not None and gap_seconds is not None and gap_seconds > self.ttl_seconds

    def cost(self, total: float, cached: float) -> float:
        """The price of a request of `total` tokens whose first `cached` tokens are read from the cache."""
        return self.read * cached + self.write * (total - cached)


CLASSIC = CachePrice(read=0.1, write=WRITE_5M)
NEWER = CachePrice(read=0.05, write=WRITE_5M, ttl_seconds=FIVE_MINUTES)
CHEAPEST = CachePrice(read=0.025, write=WRITE_5M, ttl_seconds=FIVE_MINUTES)  # Fable / Mythos 5.1
ONE_HOUR_CACHE = CachePrice(read=0.1, write=WRITE_1H, ttl_seconds=ONE_HOUR)
PRICE_MODELS = (CLASSIC, NEWER, CHEAPEST, ONE_HOUR_CACHE)  # the economics table's columns


def for_model(model: str | None, one_hour: bool = False) -> CachePrice:
    """The cache prices of `model`, from its list prices in `providers.models` (the one model table):
    its read multiplier (0.1 unless its page says otherwise), the 5-minute or 1-hour write and expiry (a
    write costs 1.25 on Anthropic's models, 1.0 on OpenAI's, which charge nothing for caching)."""
    from tui_agent.core.providers.models import model_info

    info = model_info(model or "")
    read = CLASSIC.read
    if info.input_price and info.cache_read_price() is not None:
        read = round(info.cache_read_price() / info.input_price, 6)  # type: ignore[operator]
    return CachePrice(read=read, write=WRITE_1H if one_hour else info.cache_write,
                      ttl_seconds=ONE_HOUR if one_hour else FIVE_MINUTES)


def for_provider(provider: object) -> CachePrice:
    """The cache prices of a provider's model, on the 1-hour cache when the provider asks for it
    (`cache_ttl == "1h"`: ENABLE_PROMPT_CACHING_1H / --cache-1h): writes at 2x, an hour's expiry."""
    return for_model(getattr(provider, "model", None), one_hour=getattr(provider, "cache_ttl", None) == "1h")


def per_token(model: str | None) -> float | None:
    """The model's uncached input list price per token in USD (None when unknown), to turn units into $."""
    from tui_agent.core.providers.models import model_info

    price = model_info(model or "").input_price
    return None if price is None else price / 1_000_000


@dataclass(frozen=True)
class InputCost:
    """One request's input price: in units of one uncached input token of its model (what every face can
    say), and in USD when the model's list price is known. The one figure the meter, the replay card and
    the watch card show for a call, so that two faces of one call never disagree on it or its unit."""

    units: float
    usd: float | None
    read: float = CLASSIC.read  # the multipliers the units were weighed with
    write: float = WRITE_5M

    def note(self) -> str:
        """What one unit weighs: "an uncached input token counts 1, a cache read 0.1, a cache write 1.25"."""
        return UNIT_NOTE.format(read=self.read, write=self.write)

    def text(self) -> str:
        """"≈$0.0123" at list price, or "≈15.2k new-token equivalents" when the model has no known price."""
        from tui_agent.core.formats import fmt_tokens, fmt_usd

        return f"≈{fmt_usd(self.usd)}" if self.usd is not None else f"≈{fmt_tokens(round(self.units))} {UNIT_NAME}"


UNIT_NAME = "new-token equivalents"
UNIT_NOTE = "a cache read counts {read:g}, a write {write:g}"


def input_cost(model: str | None, *, read: float, write: float, uncached: float = 0.0,
               price: CachePrice | None = None) -> InputCost:
    """The input price of a request that reads `read` tokens from the cache, writes `write` to it and
    sends `uncached` without caching, at `model`'s cache prices (`for_model`, or `price` when given)."""
    price = price or for_model(model)
    units = uncached + price.read * read + price.write * write
    unit = per_token(model)
    return InputCost(units, units * unit if unit is not None else None, price.read, price.write)
