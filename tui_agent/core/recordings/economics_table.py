"""The economics table of `bench/economics.py`, as `shared/reference/coverage-measure.md` defines it.

Why apart from `economics_report` (the per-session table `replay --report` prints): the benchmark compares
strategies across sessions, windows and price models at once: cost ÷ append-only pooled over sessions
(marked infeasible where append-only itself would go over the window), cost per call, the price per prompt
token's ratio (mean and worst session), coverage pooled and as the per-call mean, without and with the
recap, and the frontier (a point is on it when nothing cheaper keeps at least as much).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from tui_agent.core.recordings.cost_causes import cost_by_cause
from tui_agent.core.recordings.coverage import Coverage
from tui_agent.core.recordings.strategy_result import StrategyResult
from tui_agent.core.models import CachePrice
from tui_agent.core.recordings.recorded import Recorded


def cost_at(result: StrategyResult, recorded: Recorded, price: CachePrice) -> float:
    """The strategy's requests of one replay priced at `price` (the same requests, another price model; its
    waits as they were decided, the tail after the last call included): the sum of its causes
    (`cost_causes.cost_by_cause`, the one repricing)."""
    return cost_by_cause(result, price).total


@dataclass
class Point:
    """One strategy over every session, at one window and one price model."""

    name: str
    cost: float  # Σ cost ÷ Σ append-only cost
    per_call: float  # cost per call, in units of one uncached input token
    price_mean: float  # (cost/tokens) ÷ append-only's, mean over sessions
    price_worst: float
    coverage: Coverage  # without the recap
    coverage_recap: Coverage
    over: int
    invalid: int
    prompts_missing: int
    paths_missing: int
    events: int
    pings: int  # requests that only kept a cache warm while the session was idle (priced in `cost`)
    sessions: list[tuple[float, float]]  # per session: cost ÷ append-only, pooled coverage (no recap)
    infeasible: bool  # append-only went over the window on some session
    cost_warm: float | None = None  # Σ cost ÷ Σ the cost of append-only that keeps warm by the fixed rule


WARM_BASE = "none+warm"  # append-only that keeps its cache warm by the rule any client could follow


def points(runs: Sequence[tuple[Recorded, dict[str, StrategyResult]]], price: CachePrice,
           window: int) -> list[Point]:
    """Each strategy's point: `runs` holds, per session, every strategy's replay (append-only as `none`;
    `none+warm`, when replayed, is the second base: what any client that keeps warm pays)."""
    names = list(runs[0][1]) if runs else []
    warm_base = sum(cost_at(results[WARM_BASE], recorded, price) for recorded, results in runs
                    if WARM_BASE in results) if runs and WARM_BASE in runs[0][1] else 0.0
    out = []
    for name in names:
        costs, bases, tokens, calls, ratios, sessions = 0.0, 0.0, 0.0, 0, [], []
        coverage, recap = Coverage(), Coverage()
        over = invalid = prompts = paths = events = pings = 0
        infeasible = False
        for recorded, results in runs:
            r, base = results[name], results["none"]
            cost, base_cost = cost_at(r, recorded, price), cost_at(base, recorded, price)
            costs, bases, tokens, calls = costs + cost, bases + base_cost, tokens + r.tokens, calls + r.calls
            if r.tokens and base.tokens and base_cost:
                ratios.append((cost / r.tokens) / (base_cost / base.tokens))
            sessions.append((cost / base_cost if base_cost else 0.0, r.coverage.pooled))
            coverage.merge(r.coverage)
            recap.merge(r.coverage_recap)
            over, invalid, events, pings = over + r.over_window, invalid + r.invalid, events + r.events, pings + r.pings
            prompts, paths = prompts + r.prompts_missing, paths + r.paths_missing
            infeasible |= base.over_window > 0
        out.append(Point(name, costs / bases if bases else 0.0, costs / calls if calls else 0.0,
                         statistics.fmean(ratios) if ratios else 0.0, max(ratios, default=0.0), coverage, recap,
                         over, invalid, prompts, paths, events, pings, sessions, infeasible,
                         costs / warm_base if warm_base else None))
    return out


def on_frontier(point: Point, others: Sequence[Point]) -> bool:
    """Nothing cheaper (or as cheap) keeps at least as much (and strictly better on one axis)."""
    for other in others:
        if other is point:
            continue
        cheaper = other.cost <= point.cost and other.coverage.pooled >= point.coverage.pooled
        if cheaper and (other.cost < point.cost or other.coverage.pooled > point.coverage.pooled):
            return False
    return True


def head(width: int = 21) -> str:
    """The table's header line, its first column `width` wide (the longest strategy name)."""
    return (f"{'strategy':<{width + 1}} {'cost÷none':>10} {'÷warm':>6} {'per call':>9} {'price÷none':>10} {'worst':>6} {'cover':>6} "
            f"{'mean':>6} {'+recap':>6} {'over':>5} {'bad':>4} {'prompts✗':>8} {'paths✗':>6} {'events':>6} "
            f"{'pings':>5}  per session (cost÷none / cover)")


def format_points(title: str, found: Sequence[Point]) -> str:
    """One block of the table: a row per strategy, `*` on the frontier, `!` where append-only is infeasible."""
    width = max([21, *(len(p.name) for p in found)])
    lines = [title, head(width)]
    for p in found:
        mark = "*" if on_frontier(p, found) else " "
        cost = f"{p.cost:.3f}{'!' if p.infeasible else ' '}"
        per_session = "  ".join(f"{c:.3f}/{v:.3f}" for c, v in p.sessions)
        warm = f"{p.cost_warm:.3f}" if p.cost_warm is not None else "-"
        lines.append(f"{mark}{p.name:<{width}} {cost:>10} {warm:>6} {p.per_call / 1000:>8.1f}k {p.price_mean:>10.3f} "
                     f"{p.price_worst:>6.3f} {p.coverage.pooled:>6.3f} {p.coverage.value:>6.3f} "
                     f"{p.coverage_recap.pooled:>6.3f} {p.over:>5} {p.invalid:>4} {p.prompts_missing:>8} "
                     f"{p.paths_missing:>6} {p.events:>6} {p.pings:>5}  {per_session}")
    return "\n".join(lines)
