"""One recorded call in figures: what the recorded agent really paid, and what ours would send and pay.

`tui-agent watch` prints these (`--json`, one object per call) and draws them. The recorded side is the
log's own usage (uncached input, cache read, cache write), priced at the model that made the call
(`core.models.for_model`: its read multiplier, the 5-minute write); the gap since the previous call is
flagged when it is longer than that cache's time to live (the prefix had gone cold, so the agent paid a
write for it again). Our side is the replay step's own request and price (`core.replay`, the same numbers
as `replay --json`: tokens on the session's ruler, cost in uncached-input-token units), in dollars at the
same model's input price.
"""

from __future__ import annotations

from dataclasses import dataclass

from tui_agent.core.recordings.forgot import Forgotten, forgotten
from tui_agent.core.models import CLASSIC, CachePrice, InputCost, for_model
from tui_agent.core.recordings.recorded_spend import call_input_usd
from tui_agent.core.recordings.replay import OURS, Replay, ReplayStep, step_cost


@dataclass(frozen=True, slots=True)  # one per call a watch keeps: no dict each
class AgentCompactionFigures:
    kind: str  # "boundary" | "summary" | "event"
    index: int  # history index
    pre_tokens: int | None  # the boundary's logged `preTokens` (the context it compacted from)
    text: str  # the summary's opening words


@dataclass(frozen=True, slots=True)  # one per call a watch keeps: no dict each
class CallFigures:
    call: int
    model: str
    input_tokens: int
    cache_read: int
    cache_write: int
    recorded_tokens: int
    hit_share: float  # cache_read / recorded_tokens
    gap_seconds: float | None
    cache_expired: bool  # the gap was longer than the cache's time to live
    recorded_cost_usd: float | None  # None: the model's price is unknown
    recorded_total_usd: float | None
    ours_tokens: float
    ours_cost_units: float
    ours_cost_usd: float | None
    ours_total_usd: float | None
    agent_compactions: tuple[AgentCompactionFigures, ...]
    forgot: tuple[Forgotten, ...] = ()  # per recorded summary before this call: what it no longer names
    cache_miss_reason: str | None = None  # the API's own reason, when the log holds it (Claude Code 2.1.233+)
    cache_missed_tokens: int | None = None
    price: CachePrice = CLASSIC  # the cache prices ours is priced at (the replay's)

    @property
    def ours_cost(self) -> InputCost:
        """Our request's price at this call, as the budget meter says it (`replay.step_cost`)."""
        return InputCost(self.ours_cost_units, self.ours_cost_usd, self.price.read, self.price.write)

    @property
    def agent_compaction(self) -> bool:
        """True on the first call after a recorded compaction."""
        return bool(self.agent_compactions)

    def json(self) -> dict:
        def usd(value: float | None) -> float | None:
            return round(value, 6) if value is not None else None

        return {
            "call": self.call, "model": self.model,
            "recorded_tokens": self.recorded_tokens, "input_tokens": self.input_tokens,
            "cache_read_tokens": self.cache_read, "cache_write_tokens": self.cache_write,
            "cache_hit_share": round(self.hit_share, 6),
            "gap_seconds": round(self.gap_seconds, 3) if self.gap_seconds is not None else None,
            "cache_expired": self.cache_expired,
            "recorded_cost_usd": usd(self.recorded_cost_usd), "recorded_total_usd": usd(self.recorded_total_usd),
            "ours_tokens": round(self.ours_tokens, 1), "ours_cost_units": round(self.ours_cost_units, 3),
            "ours_cost_usd": usd(self.ours_cost_usd), "ours_total_usd": usd(self.ours_total_usd),
            "agent_compaction": self.agent_compaction,
            "agent_compactions": [{"kind": c.kind, "index": c.index, "pre_tokens": c.pre_tokens, "text": c.text}
                                  for c in self.agent_compactions],
            "cache_miss_reason": self.cache_miss_reason, "cache_missed_tokens": self.cache_missed_tokens,
            "agent_forgot": [{"prompts": list(f.prompts), "paths": list(f.paths), "prompts_before": f.prompts_before,
                              "paths_before": f.paths_before} for f in self.forgot],
        }


class FiguresRun:
    """Figures of calls in order, keeping the recorded agent's running cost (one call at a time)."""

    def __init__(self) -> None:
        self.recorded_total = 0.0
        self.priced = True  # every call so far had a known price
        self.done = 0

    def figures(self, replay: Replay, step: ReplayStep, pre_tokens: dict[int, int | None] | None = None) -> CallFigures:
        if step.number != self.done + 1:
            raise ValueError(f"call {step.number} out of order (expected {self.done + 1})")
        self.done += 1
        recorded = replay.recorded
        k = step.number - 1
        model = recorded.models.get(step.history_len) or replay.model
        usage = step.usage
        uncached = usage.get("input_tokens", 0)
        read, write = usage.get("cache_read_input_tokens", 0), usage.get("cache_creation_input_tokens", 0)
        price = for_model(model)
        gap = recorded.gap(k)
        cost = call_input_usd(usage, model)  # the one formula `tui-agent report` sums too
        if cost is None:
            self.priced = False
        else:
            self.recorded_total += cost
        ours = step.costs.get(OURS)
        ours_units = step_cost(replay, step).units  # the figure the meter shows for this call too
        ours_unit = replay.unit_price_usd()  # ours at the price the meter and the replay card use
        compactions = tuple(AgentCompactionFigures(c.kind, c.index, (pre_tokens or {}).get(c.index)
                                                   if c.kind == "boundary" else None, c.text)
                            for c in step.agent_compactions)
        start = recorded.segment_start[k - 1] if k > 0 else 0  # where its request began before this
        forgot = tuple(forgotten(recorded.history, c.summary, start) for c in step.agent_compactions
                       if c.summary is not None)
        reason = step.miss_reason
        return CallFigures(
            step.number, model, uncached, read, write, step.real_tokens,
            read / step.real_tokens if step.real_tokens else 0.0, gap, price.expired(gap),
            cost, self.recorded_total if self.priced else None, step.ours_tokens, ours_units,
            ours_units * ours_unit if ours_unit is not None else None,
            ours.total_cost * ours_unit if ours_unit is not None and ours is not None else None, compactions, forgot,
            reason[0] if reason else None, reason[1] if reason else None, replay.price)
