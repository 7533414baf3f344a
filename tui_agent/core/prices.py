"""Prompt-cache prices: one table for every place that prices a request (the economics replay, the
benchmark, replay's running cost, the live meter).

A request is priced in units of one uncached input token of its model: the prefix read from the cache
costs `read` (0.1 on the classic models, 0.05 on the 5.5 generation, 0.025 on Fable), the rest is written
at `write` (1.25 for the 5-minute cache, 2.0 for the 1-hour one). A prefix idle longer than the cache's
time to live is gone: the next request writes it again in full. Dollar figures multiply those units by the
model's base input price (`ModelPrice`).
"""

from __future__ import annotations

from dataclasses import dataclass

FIVE_MINUTES = 300.0
ONE_HOUR = 3600.0
WRITE_5M = 1.25
WRITE_1H = 2.0
PER_MILLION = 1_000_000


@dataclass(frozen=True)
class CachePrice:
    """How a request's tokens are priced, in units of one uncached input token."""

    read: float = 0.1
    write: float = WRITE_5M
    ttl_seconds: float | None = None  # None: the cache never goes cold (the classic benchmark)

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


@dataclass(frozen=True)
class ModelPrice:
    """A model family's list prices in dollars per million tokens, and its cache read multiplier."""

    prefix: str  # the model ids it applies to start with this
    input_usd: float
    output_usd: float
    read: float  # cache read as a multiple of `input_usd`

    def cache(self, one_hour: bool = False) -> CachePrice:
        ttl = ONE_HOUR if one_hour else FIVE_MINUTES
        return CachePrice(read=self.read, write=WRITE_1H if one_hour else WRITE_5M, ttl_seconds=ttl)

    def usd(self, units: float) -> float:
        """Dollars for `units` uncached-input-token units (what `CachePrice.cost` returns)."""
        return units * self.input_usd / PER_MILLION

    def output(self, tokens: float) -> float:
        return tokens * self.output_usd / PER_MILLION


# Longest prefix first wins; ids not listed fall back to DEFAULT_MODEL_PRICE (say so where it is shown).
MODEL_PRICES: tuple[ModelPrice, ...] = (
    ModelPrice("claude-opus-5-5", 4.0, 20.0, 0.05),
    ModelPrice("claude-sonnet-5-5", 2.0, 10.0, 0.05),
    ModelPrice("claude-haiku-5-5", 0.10, 0.50, 0.1),
    ModelPrice("claude-fable-5", 10.0, 50.0, 0.025),
    ModelPrice("claude-opus-5", 5.0, 25.0, 0.1),
    ModelPrice("claude-opus-4-5", 5.0, 25.0, 0.1),
    ModelPrice("claude-opus-4", 15.0, 75.0, 0.1),
    ModelPrice("claude-sonnet-4", 3.0, 15.0, 0.1),
    ModelPrice("claude-3-7-sonnet", 3.0, 15.0, 0.1),
    ModelPrice("claude-3-5-sonnet", 3.0, 15.0, 0.1),
    ModelPrice("claude-haiku-4", 1.0, 5.0, 0.1),
    ModelPrice("claude-3-5-haiku", 0.80, 4.0, 0.1),
)
DEFAULT_MODEL_PRICE = ModelPrice("", 3.0, 15.0, 0.1)


def model_price(model: str | None) -> ModelPrice:
    """The list price of `model` (a Sonnet-class default for unknown ids)."""
    name = (model or "").lower()
    best = DEFAULT_MODEL_PRICE
    for price in MODEL_PRICES:
        if name.startswith(price.prefix) and len(price.prefix) > len(best.prefix):
            best = price
    return best
