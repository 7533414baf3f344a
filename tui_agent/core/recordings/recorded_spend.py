"""What the recorded agent really spent, at list prices, and where its prompt cache missed and why.

Each call is priced from its own logged usage at the model that made it (`models.cost_usd`, as the live
ledger prices a call: the input price, its cache read price, the 5-minute write; OpenAI's models write for
free): `call_figures` (the watch's cards) and `tui-agent report` read it here. A miss is a call that read fewer tokens
from the cache than the previous call left there (its read + its write; with a cache that writes for free,
the whole previous prompt), as the live loop tells it (`core/agent/server_watch.py`); its reason is the
first that holds of: the gap since the previous call was past the cache's
time to live (`ttl_expired`), the agent compacted since (`agent_compaction`), the model changed
(`model_changed`), else `unknown`. A miss costs its tokens written again instead of read.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from tui_agent.core.messages import UsageInfo
from tui_agent.core.models import cost_usd, for_model, model_info
from tui_agent.core.recordings.recorded import Recorded

MISS_REASONS = ("ttl_expired", "agent_compaction", "model_changed", "unknown")


def call_input_usd(usage: Mapping[str, int], model: str) -> float | None:
    """One call's input side in USD at `model`'s list prices (`models.cost_usd`, the live ledger's own
    pricing; None when its price is unknown)."""
    return cost_usd(model, UsageInfo(usage.get("input_tokens", 0), 0, usage.get("cache_creation_input_tokens", 0),
                                     usage.get("cache_read_input_tokens", 0))) if model else None


def call_output_usd(usage: Mapping[str, int], model: str) -> float | None:
    return cost_usd(model, UsageInfo(output_tokens=usage.get("output_tokens", 0))) if model else None


@dataclass
class Misses:
    """Cache misses of one reason: how many calls, the tokens written again, and what that cost over reading
    them (USD; only the calls whose model has a price)."""

    calls: int = 0
    tokens: int = 0
    usd: float = 0.0


@dataclass
class RecordedSpend:
    input_usd: float = 0.0
    output_usd: float = 0.0
    priced: bool = True  # every call's model had a list price (else the USD figures leave those calls out)
    uncached_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    output_tokens: int = 0
    misses: dict[str, Misses] = field(default_factory=lambda: {reason: Misses() for reason in MISS_REASONS})

    @property
    def idle_rewrites_usd(self) -> float:
        return self.misses["ttl_expired"].usd


def recorded_spend(recorded: Recorded, call_models: Sequence[str], compaction_calls: frozenset[int]) -> RecordedSpend:
    """The recorded agent's bill: `call_models[k]` made call k; `compaction_calls` holds the numbers
    (1-based) of the first call after each of the agent's own compactions."""
    out = RecordedSpend()
    writes_cost = any(u.get("cache_creation_input_tokens", 0) for u in recorded.usage)
    expected = 0
    for k, usage in enumerate(recorded.usage[:len(recorded.calls)]):
        model = call_models[k]
        cost, output = call_input_usd(usage, model), call_output_usd(usage, model)
        out.priced &= cost is not None
        out.input_usd += cost or 0.0
        out.output_usd += output or 0.0
        read, write = usage.get("cache_read_input_tokens", 0), usage.get("cache_creation_input_tokens", 0)
        out.uncached_tokens += usage.get("input_tokens", 0)
        out.cache_read_tokens, out.cache_write_tokens = out.cache_read_tokens + read, out.cache_write_tokens + write
        out.output_tokens += usage.get("output_tokens", 0)
        if k and expected > read:
            reason = _reason(recorded, k, call_models, compaction_calls)
            _count(out.misses[reason], expected - read, model)
        expected = read + write if writes_cost else recorded.real[k]
    return out


def _reason(recorded: Recorded, k: int, call_models: Sequence[str], compaction_calls: frozenset[int]) -> str:
    if for_model(call_models[k]).expired(recorded.gap(k)):
        return "ttl_expired"
    if k + 1 in compaction_calls:
        return "agent_compaction"
    if call_models[k] != call_models[k - 1]:
        return "model_changed"
    return "unknown"


def _count(misses: Misses, tokens: int, model: str) -> None:
    misses.calls += 1
    misses.tokens += tokens
    price = model_info(model).input_price if model else None
    if price is not None:
        cache = for_model(model)
        misses.usd += tokens * (cache.write - cache.read) * price / 1_000_000
