"""What we know about each model: context window, output limit and price, plus the env overrides.

The budget panel and compaction need the window before the first call, and no API tells us cheaply, so the
numbers live here (from the providers' model pages). An unknown model gets a conservative guess that the
user can correct with `CONTEXT_WINDOW_TOKENS` / `MAX_OUTPUT_TOKENS` (or the matching flags).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Mapping

from tui_agent.core.providers.base import UsageInfo

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


def model_info(model: str) -> ModelInfo:
    """Known limits for `model`; dated ids (`claude-haiku-4-5-20251001`) map to their alias, and a cloud
    platform's ids (`us.anthropic.claude-…-v1:0`, `claude-…@date`) to the plain one."""
    from tui_agent.core.providers.cloud import canonical_model

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
