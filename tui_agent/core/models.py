"""What we know about each model: context window, output limit and list prices, and how a request is
priced in units of its model's uncached input token (model prices are ground-floor data: the budget, the
compaction, the providers and the recorded-session analysis all read them here).

The budget panel and compaction need the window before the first call, and no API tells us cheaply, so the
numbers live here (from the providers' model pages). An unknown model gets a conservative guess that the
user can correct with `CONTEXT_WINDOW_TOKENS` / `MAX_OUTPUT_TOKENS` (or the matching flags).

Prompt-cache prices (one table for every place that prices a request: the economics replay, the
benchmark, replay's running cost, the live meter): the prefix read from the cache costs `read` (0.1 on the
classic models, 0.05 on the 5.5 generation, 0.025 on Fable), the rest is written at `write` (1.25 for the
5-minute cache, 2.0 for the 1-hour one). A prefix idle longer than the cache's time to live is gone: the
next request writes it again in full. Dollar figures multiply those units by the model's base input price.
"""


from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Mapping, Protocol

from tui_agent.core.messages import UsageInfo

DEFAULT_ANTHROPIC_MODEL = "claude-sonnet-5-5"
DEFAULT_OPENAI_BASE_URL = "https://api.deepseek.com"
DEFAULT_OPENAI_MODEL = "deepseek-chat"

# What we ask for per call unless MAX_OUTPUT_TOKENS says otherwise. Reserving a model's full 128K output
# in every request would take that much out of the compaction budget for replies that are rarely over a
# few thousand tokens (Claude Code's default cap is 32K for the same reason).
DEFAULT_OUTPUT_CAP = 32_000


@dataclass(frozen=True)
class ModelInfo:
    """Limits and list prices (USD per million tokens; None when unknown)."""

    context_window: int
    max_output_tokens: int
    input_price: float | None = None
    output_price: float | None = None
    cache_read: float | None = None  # when it differs from the usual 10% of the input price
    long_context_above: int | None = None  # a request over this many tokens is charged more (1M beta)
    cache_write: float = 1.25  # a cache write in input prices (OpenAI caches for free: 1.0)

    def cache_write_price(self) -> float | None:
        return None if self.input_price is None else self.input_price * self.cache_write

    def cache_read_price(self) -> float | None:
        if self.cache_read is not None:
            return self.cache_read
        return None if self.input_price is None else self.input_price * 0.1


_M = 1_000_000
_K200 = 200_000

KNOWN_MODELS: dict[str, ModelInfo] = {
    # Current Claude lineup.
    "claude-sonnet-5-5": ModelInfo(_M, 128_000, 2.0, 10.0, cache_read=0.10),
    "claude-opus-5-5": ModelInfo(_M, 128_000, 4.0, 20.0, cache_read=0.20),
    "claude-haiku-5-5": ModelInfo(_M, 128_000, 0.10, 0.50),
    "claude-fable-5-2": ModelInfo(_M, 128_000, 8.0, 40.0, cache_read=0.20),
    "claude-fable-5-1": ModelInfo(_M, 128_000, 10.0, 50.0, cache_read=0.25),
    "claude-fable-5": ModelInfo(_M, 128_000, 10.0, 50.0, cache_read=0.25),
    # Legacy models that are still served.
    "claude-sonnet-5": ModelInfo(_M, 128_000, 2.0, 10.0),
    "claude-opus-5": ModelInfo(_M, 128_000, 5.0, 25.0),
    "claude-opus-4-8": ModelInfo(_M, 128_000, 5.0, 25.0),
    "claude-opus-4-7": ModelInfo(_M, 128_000, 5.0, 25.0),
    "claude-opus-4-6": ModelInfo(_M, 128_000, 5.0, 25.0),
    "claude-sonnet-4-6": ModelInfo(_M, 128_000, 3.0, 15.0),
    "claude-opus-4-5": ModelInfo(_K200, 64_000, 5.0, 25.0),
    "claude-sonnet-4-5": ModelInfo(_K200, 64_000, 3.0, 15.0, long_context_above=_K200),
    "claude-haiku-4-5": ModelInfo(_K200, 64_000, 1.0, 5.0),
    "claude-opus-4-1": ModelInfo(_K200, 32_000, 15.0, 75.0),
    "claude-opus-4": ModelInfo(_K200, 32_000, 15.0, 75.0),
    "claude-sonnet-4": ModelInfo(_K200, 64_000, 3.0, 15.0, long_context_above=_K200),
    # OpenAI models as the Codex CLI calls them (openai.com/api/pricing; cached input is 10% of input, and
    # OpenAI charges nothing extra to write its cache). The 400K windows hold 128K of output.
    "gpt-5.5": ModelInfo(_M, 128_000, 5.0, 30.0, cache_write=1.0),
    "gpt-5.4": ModelInfo(_M, 128_000, 2.5, 15.0, cache_write=1.0),
    "gpt-5.4-mini": ModelInfo(400_000, 128_000, 0.75, 4.5, cache_write=1.0),
    "gpt-5.3-codex": ModelInfo(400_000, 128_000, 1.75, 14.0, cache_write=1.0),
    "gpt-5.2-codex": ModelInfo(400_000, 128_000, 1.75, 14.0, cache_write=1.0),
    "gpt-5.2": ModelInfo(400_000, 128_000, 1.75, 14.0, cache_write=1.0),
    "gpt-5.1-codex-mini": ModelInfo(400_000, 128_000, 0.25, 2.0, cache_write=1.0),
    "gpt-5.1-codex-max": ModelInfo(400_000, 128_000, 1.25, 10.0, cache_write=1.0),
    "gpt-5.1-codex": ModelInfo(400_000, 128_000, 1.25, 10.0, cache_write=1.0),
    "gpt-5.1": ModelInfo(400_000, 128_000, 1.25, 10.0, cache_write=1.0),
    "gpt-5-codex": ModelInfo(400_000, 128_000, 1.25, 10.0, cache_write=1.0),
    "gpt-5-mini": ModelInfo(400_000, 128_000, 0.25, 2.0, cache_write=1.0),
    "gpt-5-nano": ModelInfo(400_000, 128_000, 0.05, 0.40, cache_write=1.0),
    "gpt-5": ModelInfo(400_000, 128_000, 1.25, 10.0, cache_write=1.0),
    "codex-mini-latest": ModelInfo(200_000, 100_000, 1.5, 6.0, cache_read=0.375, cache_write=1.0),
    # OpenAI-compatible defaults (the seed's DeepSeek endpoint).
    "deepseek-chat": ModelInfo(128_000, 8_192),
    "deepseek-reasoner": ModelInfo(128_000, 32_000),
}

_CLAUDE_FALLBACK = ModelInfo(_K200, 64_000)
_OTHER_FALLBACK = ModelInfo(128_000, 4_096)
_DATE_SUFFIX = re.compile(r"-\d{8}$")


_BEDROCK_ID = re.compile(r"^(?:(?:us|eu|apac|jp|au|global|us-gov)\.)?anthropic\.(?P<id>[a-z0-9.-]+?)"
                         r"(?:-v\d+(?::\d+)?)?$")


def canonical_model(model: str) -> str:
    """The plain Claude id of a platform's model id (for limits and prices): `us.anthropic.claude-x-20250101
    -v1:0` → `claude-x-20250101`, `claude-x@20250101` → `claude-x-20250101`; anything else unchanged."""
    name = model.strip()
    if name.startswith("arn:"):
        name = name.rsplit("/", 1)[-1]
    bedrock = _BEDROCK_ID.match(name)
    if bedrock:
        return bedrock["id"]
    if name.startswith("claude-") and "@" in name:
        base, _, version = name.partition("@")
        return f"{base}-{version}" if version.isdigit() else base
    return model


def model_info(model: str) -> ModelInfo:
    """Known limits for `model`; dated ids (`claude-haiku-4-5-20251001`) map to their alias, and a cloud
    platform's ids (`us.anthropic.claude-…-v1:0`, `claude-…@date`) to the plain one."""
    name = canonical_model(model.strip().lower())
    if name in KNOWN_MODELS:
        return KNOWN_MODELS[name]
    undated = _DATE_SUFFIX.sub("", name)
    if undated in KNOWN_MODELS:
        return KNOWN_MODELS[undated]
    for known in sorted(KNOWN_MODELS, key=len, reverse=True):
        if name.startswith(known + "-") or name.startswith(known + "@"):
            return KNOWN_MODELS[known]
    if name.startswith("claude-"):
        # Generation 5 and later (and the Mythos previews) run a 1M window natively.
        if re.match(r"claude-[a-z]+-(?:[5-9]|\d{2})", name) or "mythos" in name:
            return ModelInfo(_M, 128_000)
        return _CLAUDE_FALLBACK
    return _OTHER_FALLBACK


# Which models count the thinking of earlier turns. The API leaves the thinking blocks of earlier assistant
# turns out of the context (they are neither counted nor billed) on the models before Claude Opus 4.5; only
# the turn in progress (the assistant messages since the last user message that is not only tool results)
# keeps its thinking. From Opus 4.5 on, earlier thinking stays in the model's context and counts. Measured on
# the shared Claude Code logs: the per-call growth of the logged usage fits the stripped count better on
# Sonnet 4 and Sonnet 4.5 (`bench/economics.py --ruler`).
_STRIPS_EARLIER_THINKING = frozenset({"claude-sonnet-4", "claude-opus-4", "claude-opus-4-1", "claude-sonnet-4-5",
                                      "claude-haiku-4-5"})


def keeps_earlier_thinking(model: str | None) -> bool:
    """Whether `model` counts (and sees) the thinking of earlier turns. Unknown or non-Claude models: True
    (what is sent is counted)."""
    if not model:
        return True
    name = _DATE_SUFFIX.sub("", canonical_model(model.strip().lower()))
    return not (name in _STRIPS_EARLIER_THINKING or name.startswith(("claude-3", "claude-2", "claude-instant")))


def _env_int(env: Mapping[str, str], key: str) -> int | None:
    raw = (env.get(key) or "").strip().replace("_", "").replace(",", "")
    if not raw:
        return None
    try:
        value = int(raw)
    except ValueError:
        return None
    return value if value > 0 else None


def resolve_limits(
    model: str,
    env: Mapping[str, str],
    *,
    context_window: int | None = None,
    max_output_tokens: int | None = None,
) -> tuple[int, int]:
    """(context window, max output tokens per call): flag > env > known model > fallback.

    Invalid or non-positive env values are ignored rather than crashing start-up. The output cap never
    exceeds half the window, so a small `CONTEXT_WINDOW_TOKENS` still leaves room for the messages.
    """
    info = model_info(model)
    window = context_window or _env_int(env, "CONTEXT_WINDOW_TOKENS") or info.context_window
    explicit = max_output_tokens or _env_int(env, "MAX_OUTPUT_TOKENS")
    output = explicit or min(info.max_output_tokens, DEFAULT_OUTPUT_CAP)
    output = max(1, min(output, window // 2))
    return window, output


def cost_usd(model: str, usage: UsageInfo) -> float | None:
    """List-price cost of one call (None when the model's price is unknown)."""
    info = model_info(model)
    if info.input_price is None or info.output_price is None:
        return None
    per = 1 / 1_000_000
    hour = min(usage.cache_write_1h, usage.cache_creation_input_tokens)  # 1-hour writes cost 2x the input
    return (
        usage.input_tokens * info.input_price * per
        + usage.output_tokens * info.output_price * per
        + (usage.cache_creation_input_tokens - hour) * (info.cache_write_price() or 0) * per
        + hour * info.input_price * 2 * per
        + usage.cache_read_input_tokens * (info.cache_read_price() or 0) * per
    )


# -- prompt-cache prices ----------------------------------------------------------------------------
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
    """The cache prices of `model`, from its list prices in the table above (the one model table):
    its read multiplier (0.1 unless its page says otherwise), the 5-minute or 1-hour write and expiry (a
    write costs 1.25 on Anthropic's models, 1.0 on OpenAI's, which charge nothing for caching)."""
    info = model_info(model or "")
    read = CLASSIC.read
    if info.input_price and info.cache_read_price() is not None:
        read = round(info.cache_read_price() / info.input_price, 6)  # type: ignore[operator]
    return CachePrice(read=read, write=WRITE_1H if one_hour else info.cache_write,
                      ttl_seconds=ONE_HOUR if one_hour else FIVE_MINUTES)


class CachedModel(Protocol):
    """What the prices ask of a provider (`providers.base.Provider` declares both)."""

    model: str
    cache_ttl: str


def for_provider(provider: CachedModel) -> CachePrice:
    """The cache prices of a provider's model, on the 1-hour cache when the provider asks for it
    (`cache_ttl == "1h"`: ENABLE_PROMPT_CACHING_1H / --cache-1h): writes at 2x, an hour's expiry."""
    return for_model(provider.model, one_hour=provider.cache_ttl == "1h")


def per_token(model: str | None) -> float | None:
    """The model's uncached input list price per token in USD (None when unknown), to turn units into $."""
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
