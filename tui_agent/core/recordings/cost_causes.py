"""A strategy's replayed cost split by cause: the conversation itself, the pings that kept its cache warm,
the rewrites after the cache went cold while idle, and the summary calls a strategy made.

Why a module of its own: `tui-agent report` shows where each strategy's money went, and teams act on the
rewrites after idle; the table (`economics_table.cost_at`) prices the same requests at another price.
Both read a run's per-call figures (`StrategyResult.per_call`) through this one function, so the parts add
up to exactly what the replay charged (`StrategyRun.step`), and a change to the pricing is made here once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tui_agent.core.cache_clock import PING_OUTPUT_TOKENS
from tui_agent.core.models import CachePrice
from tui_agent.core.recordings.strategy_result import StrategyResult


@dataclass
class CostCauses:
    """Units of one uncached input token (the replay's), by cause; `spared` and the missed tokens are
    beside the bill, not in it."""

    conversation: float = 0.0  # each request as if its cached prefix were warm (the first call written whole)
    idle_rewrites: float = 0.0  # what a prefix gone cold while idle cost over reading it warm
    summaries: float = 0.0  # the summary calls (a peer's autocompact), reading and writing
    pings: float = 0.0  # what keeping the cache warm cost while idle: the pings, an idle event's written request
    spared: float = 0.0  # the rewrites the pings spared: the prefix they kept warm, written again otherwise
    missed_idle_tokens: float = 0.0  # a warm prefix gone cold (read again from nothing: written)
    missed_compaction_tokens: float = 0.0  # the previous request's tokens this one no longer starts with

    @property
    def total(self) -> float:
        return self.conversation + self.idle_rewrites + self.summaries + self.pings


def cost_by_cause(result: StrategyResult, price: CachePrice, gaps: Sequence[float | None] = ()) -> CostCauses:
    """`result`'s requests priced at `price`, by cause, the wait after the last call (its tail) included.
    `gaps[k]`: the recorded seconds before call k (what tells whether a call after pings would have found the
    cache cold without them; empty: not known)."""
    out = CostCauses()
    previous = 0.0
    for k, (tokens, warm, summary_read, summary_out, pings, idle, ping_reads, idle_write) in enumerate(result.per_call):
        cold = k == 0 or price.expired(idle)
        warm_cost = price.cost(tokens, warm)
        out.conversation += warm_cost
        if cold and k:
            out.idle_rewrites += price.cost(tokens, 0.0) - warm_cost
            out.missed_idle_tokens += warm
        elif k:
            out.missed_compaction_tokens += max(previous - warm, 0.0)
        if summary_read or summary_out:
            out.summaries += price.cost(summary_read, 0.0 if cold else summary_read) + price.output * summary_out
        if pings or idle_write:
            out.pings += waited(price, pings, ping_reads, idle_write)
            gap = gaps[k] if k < len(gaps) else None
            if not cold and price.expired(gap):
                out.spared += price.cost(tokens, 0.0) - warm_cost
        previous = tokens
    out.pings += waited(price, *result.tail)
    return out


def waited(price: CachePrice, pings: int, reads: float, written: float) -> float:
    """A wait's price: its pings read `reads` tokens together (each repeats a request) with a few output
    tokens each; an idle event wrote one request."""
    return price.read * reads + pings * price.output * PING_OUTPUT_TOKENS + price.write * written


@dataclass
class Floor:
    """The least a strategy that sends the base on every call can cost on a session (units of one uncached
    input token): the base (system prompt, tools, project context) written at the first call and read warm
    at each after, and each call's new messages written once. No compaction that sends each new message as it
    came gets below it (one that clips a huge result before it is ever sent writes a little less): a cost
    target leaves, above it, all that reading kept conversation, events' rewrites and pings may cost together."""

    base: float = 0.0
    new: float = 0.0

    @property
    def total(self) -> float:
        return self.base + self.new


def floor_cost(append_only: StrategyResult, base_tokens: float, price: CachePrice) -> Floor:
    """The `Floor` of a session from its append-only replay (each request's new part is what it adds to the
    previous one): a request of the base and the call's new messages alone, as if the cache never went cold
    and no ping were needed; `base_tokens` on the session's ruler (`Recorded.model.request(0)`)."""
    out = Floor()
    for k, call in enumerate(append_only.per_call):
        tokens, shared = call[0], call[1] if k else base_tokens
        out.base += (price.read if k else price.write) * base_tokens
        out.new += price.write * max(tokens - shared, 0.0)
    return out
