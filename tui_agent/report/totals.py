"""Every session's figures added up: what the terminal and the HTML page of `tui-agent report` show.

Money is summed over the sessions whose model has a list price (the others are counted apart: their bills
are in units only). Each agent's bill is split by cause: the conversation itself, pings that kept a cache
warm, rewrites after the cache went cold while idle, and summary calls; the recorded agent's own bill has
the first and the third (its logs show no pings, and Claude Code does not log its summary calls' usage).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from tui_agent.core.formats import plural
from tui_agent.core.recordings.recorded_spend import MISS_REASONS
from tui_agent.report.table import STRATEGIES, Row

CAUSES = ("conversation", "pings", "idle rewrites", "summaries")
RECORDED = "recorded"
MISS_KEY = {"agent_compaction": "compaction"}  # the recorded agent's compactions, under the strategies' word
LABELS = {RECORDED: "recorded agent", "append_only": "append-only", "ours": "tui-agent",
          "claude_code": "Claude Code autocompact", "opencode": "opencode prune", "context_editing": "context editing"}


@dataclass
class AgentTotals:
    """One agent (the recorded one or a replayed strategy) over every priced session, in USD."""

    causes: dict[str, float] = field(default_factory=lambda: dict.fromkeys(CAUSES, 0.0))
    spared: float = 0.0  # the rewrites its pings spared
    pings: int = 0
    events: int = 0
    misses: dict[str, float] = field(default_factory=dict)  # reason → tokens written again
    wanted: int = 0
    present: int = 0

    @property
    def usd(self) -> float:
        return sum(self.causes.values())

    @property
    def coverage(self) -> float:
        return self.present / self.wanted if self.wanted else 1.0


@dataclass(frozen=True)
class Costly:
    path: str
    recorded_usd: float
    ours_usd: float
    why: str


@dataclass
class Totals:
    sessions: int = 0
    unreadable: list[Row] = field(default_factory=list)
    unpriced: int = 0  # sessions whose model has no list price (left out of the money)
    calls: int = 0
    output_usd: float = 0.0
    agents: dict[str, AgentTotals] = field(default_factory=lambda: {n: AgentTotals() for n in (RECORDED, *STRATEGIES)})
    miss_usd: dict[str, float] = field(default_factory=lambda: dict.fromkeys(MISS_REASONS, 0.0))
    forgot_prompts: int = 0
    forgot_paths: int = 0
    prompts_before: int = 0
    paths_before: int = 0
    by_day: dict[str, dict[str, float]] = field(default_factory=dict)  # day → agent → USD
    costly: list[Costly] = field(default_factory=list)

    @property
    def spent(self) -> float:
        return self.agents[RECORDED].usd


def totals(rows: Sequence[Row], top: int = 10) -> Totals:
    out = Totals()
    ranked: list[tuple[float, Row]] = []
    for row in sorted(rows, key=lambda r: r.path):
        figures = row.figures
        if figures is None:
            out.unreadable.append(row)
            continue
        out.sessions += 1
        out.calls += figures.calls
        if not figures.priced or figures.unit_usd is None:
            out.unpriced += 1
            continue
        _add(out, row)
        ranked.append((figures.input_usd or 0.0, row))
    ranked.sort(key=lambda item: (-item[0], item[1].path))
    out.costly = [_costly(row) for _, row in ranked[:top]]
    return out


def _add(out: Totals, row: Row) -> None:
    f = row.figures
    assert f is not None and f.input_usd is not None
    out.output_usd += f.output_usd or 0.0
    recorded = out.agents[RECORDED]
    idle = f.idle_rewrites_usd or 0.0
    recorded.causes["conversation"] += f.input_usd - idle
    recorded.causes["idle rewrites"] += idle
    recorded.wanted, recorded.present = recorded.wanted + f.coverage_wanted, recorded.present + f.coverage_present
    for i, reason in enumerate(MISS_REASONS):
        key = MISS_KEY.get(reason, reason)
        recorded.misses[key] = recorded.misses.get(key, 0.0) + f.miss_tokens[i]
        out.miss_usd[reason] += f.miss_usd[i]
    out.forgot_prompts, out.forgot_paths = out.forgot_prompts + f.forgot_prompts, out.forgot_paths + f.forgot_paths
    out.prompts_before, out.paths_before = out.prompts_before + f.prompts_before, out.paths_before + f.paths_before
    day = out.by_day.setdefault(f.started[:10] or "unknown", {})
    day[RECORDED] = day.get(RECORDED, 0.0) + f.input_usd
    for s in f.strategies:
        agent = out.agents[s.name]
        for cause, units in zip(CAUSES, (s.conversation, s.pings_units, s.idle_rewrites, s.summaries)):
            agent.causes[cause] += units * f.unit_usd  # type: ignore[operator]
        agent.spared += s.spared_units * f.unit_usd  # type: ignore[operator]
        agent.pings, agent.events = agent.pings + s.pings, agent.events + s.events
        agent.misses["ttl_expired"] = agent.misses.get("ttl_expired", 0.0) + s.missed_idle_tokens
        agent.misses["compaction"] = agent.misses.get("compaction", 0.0) + s.missed_compaction_tokens
        agent.wanted, agent.present = agent.wanted + s.coverage_wanted, agent.present + s.coverage_present
        day[s.name] = day.get(s.name, 0.0) + s.units * f.unit_usd  # type: ignore[operator]


def _costly(row: Row) -> Costly:
    """A costly session and why, in a few words: its size, its misses, and what ours did instead."""
    f = row.figures
    assert f is not None and f.input_usd is not None and f.unit_usd is not None
    ours = f.strategy("ours")
    ours_usd = ours.units * f.unit_usd if ours is not None else 0.0
    average = (f.uncached_tokens + f.cache_read_tokens + f.cache_write_tokens) / max(f.calls, 1)
    parts = [f"{plural(f.calls, 'call')} averaging {average / 1000:.0f}k tokens"]
    named = {"ttl_expired": "after idle", "agent_compaction": "after its compactions", "model_changed":
             "after a model switch", "unknown": "unexplained"}
    for i, reason in enumerate(MISS_REASONS):
        if f.miss_calls[i]:
            parts.append(f"{plural(f.miss_calls[i], 'cache miss', 'cache misses')} {named[reason]} (${f.miss_usd[i]:.2f})")
    if ours is not None:
        did = [plural(ours.events, "compaction")] if ours.events else []
        did += [plural(ours.pings, "ping")] if ours.pings else []
        parts.append(f"ours ${ours_usd:.2f}" + (f" ({', '.join(did)})" if did else ""))
    return Costly(row.path, f.input_usd, ours_usd, "; ".join(parts))
