"""One recorded session in figures for `tui-agent report`: what it spent, what ours and the peers would have
spent on the same calls, by cause, and what each forgot.

The per-session task of the report, run in a worker process or on a Ray cluster: a pure function of the
file's bytes (its name only names it), so its result can be kept by content hash and is the same value
wherever it ran. The engine is `replay`'s own: the session loaded by `recorded.load_recorded`, the
strategies stepped by `economics.strategy_runs` at the recorded model's cache prices with the cache's time
to live (so our idle policy, pings or a cold cache, is priced), their bills split by `cost_causes`; the
recorded agent's bill is `recorded_spend`'s. Nothing is priced here.
"""

from __future__ import annotations

import datetime
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from tui_agent.core.models import for_model, model_info
from tui_agent.core.recordings.cost_causes import cost_by_cause
from tui_agent.core.recordings.coverage import Coverage, IdentifierIndex
from tui_agent.core.recordings.economics import StrategyRun, strategy_runs
from tui_agent.core.recordings.strategy_table import DEFAULT_REPLAY_WINDOW, default_policy
from tui_agent.core.recordings.forgot import forgotten
from tui_agent.core.recordings.recorded import Recorded, load_recorded
from tui_agent.core.recordings.recorded_spend import MISS_REASONS, recorded_spend
from tui_agent.core.recordings.replay import agent_compactions, main_model

# The report's columns per strategy: append-only, ours (under the idle policy), and the peers' documented
# rules (`core.recordings.peers`): Claude Code's autocompact as observed in its logs, opencode's prune,
# Anthropic's context editing.
PEERS = {"cc-77": "claude_code", "opencode": "opencode", "clear-100k": "context_editing"}
IDLE_POLICIES = ("auto", "ping", "compact", "cold")


def ours_strategy(idle: str) -> str:
    """Our replayed strategy under an idle policy (`core/idle.py`): the priced choice at each moment a ping is
    due (`auto`: `v2`), the fixed keep-warm rule (`ping`), an event while idle (`compact`), a cache left to go
    cold (`cold`)."""
    if idle not in IDLE_POLICIES:
        raise ValueError(f"idle policy {idle!r} is not one of {', '.join(IDLE_POLICIES)}")
    return {"auto": "v2", "ping": "v2-ping", "compact": "v2-compact", "cold": "v2-cold"}[idle]


@dataclass(frozen=True)
class StrategyFigures:
    """One strategy over one session: its bill in units of one uncached input token, by cause."""

    name: str  # the report's column prefix: append_only, ours, claude_code, opencode, context_editing
    units: float
    conversation: float
    idle_rewrites: float
    summaries: float
    pings_units: float
    spared_units: float  # rewrites the pings spared
    pings: int
    expired: int  # calls that found the cache cold
    events: int  # compaction events
    summary_calls: int
    missed_idle_tokens: float
    missed_compaction_tokens: float
    coverage_wanted: int  # future-entity coverage, pooled: what the next replies used …
    coverage_present: int  # … and how much of it the request still held
    coverage_mean: float
    prompts_missing: int
    paths_missing: int
    peak_tokens: float
    over_window: int


@dataclass(frozen=True)
class SessionFigures:
    """Everything the report shows of one session (an `error` and nothing else for a log it cannot read)."""

    agent: str = ""  # claude-code, codex, proxy, journal
    model: str = ""
    started: str = ""  # ISO 8601 UTC of the first call with a time ("" when the log has none)
    ended: str = ""
    calls: int = 0
    messages: int = 0
    skipped_lines: int = 0
    unit_usd: float | None = None  # USD per uncached input token of the model (None: price unknown)
    input_usd: float | None = None  # the recorded agent's input side at list prices
    output_usd: float | None = None  # its output (the same replies under every strategy)
    idle_rewrites_usd: float | None = None  # its misses after the cache's time to live
    priced: bool = False  # every recorded call's model had a price
    uncached_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    output_tokens: int = 0
    miss_calls: tuple[int, ...] = ()  # per `MISS_REASONS`
    miss_tokens: tuple[int, ...] = ()
    miss_usd: tuple[float, ...] = ()
    agent_compactions: int = 0
    forgot_prompts: int = 0  # prompts before the agent's summaries that the summaries no longer name
    forgot_paths: int = 0
    prompts_before: int = 0
    paths_before: int = 0
    coverage_wanted: int = 0  # the recorded agent's own requests (after its compactions)
    coverage_present: int = 0
    strategies: tuple[StrategyFigures, ...] = ()
    error: str = ""

    def strategy(self, name: str) -> StrategyFigures | None:
        return next((s for s in self.strategies if s.name == name), None)

    def usd(self, units: float) -> float | None:
        return None if self.unit_usd is None else units * self.unit_usd

    def json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SessionFigures:
        """The value `json()` made (a cache entry); raises TypeError/KeyError on anything else."""
        values = dict(data)
        values["strategies"] = tuple(StrategyFigures(**s) for s in values.get("strategies", ()))
        for name in ("miss_calls", "miss_tokens", "miss_usd"):
            values[name] = tuple(values.get(name, ()))
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in values.items() if k in known})


def session_figures(path: str | Path, idle: str = "auto", window: int | None = None) -> SessionFigures:
    """The figures of the session at `path` (raises what loading it raises: OSError, ValueError…)."""
    from tui_agent.core.recordings.codex_logs import log_kind, logged_window

    path = Path(path)
    recorded = load_recorded(path)
    if not recorded.calls:
        raise ValueError("no recorded model call with usage to replay")
    model = main_model(recorded)
    price = for_model(model)
    policy = default_policy(window or logged_window(path) or DEFAULT_REPLAY_WINDOW)
    names = {"none": "append_only", ours_strategy(idle): "ours", **PEERS}
    runs = strategy_runs(recorded, list(names), policy, check_memory=True, price=price)
    for run in runs.values():
        for _ in recorded.calls:
            run.step()
    gaps = [recorded.gap(k) for k in range(len(recorded.calls))]
    strategies = tuple(_strategy(names[name], run, price, gaps) for name, run in runs.items())
    compactions = agent_compactions(recorded)
    call_models = [recorded.models.get(index) or model for index in recorded.calls]
    spend = recorded_spend(recorded, call_models, frozenset(c.call for c in compactions if c.call))
    lost = _forgotten(recorded)
    coverage = _recorded_coverage(recorded, runs["none"])
    info = model_info(model).input_price if model else None
    times = [t for t in recorded.times if t is not None]
    misses = [spend.misses[reason] for reason in MISS_REASONS]
    return SessionFigures(
        "journal" if recorded.journal is not None else log_kind(path), model, _iso(min(times, default=None)),
        _iso(max(times, default=None)), len(recorded.calls), len(recorded.history), recorded.skipped_lines,
        info / 1_000_000 if info is not None else None, spend.input_usd if spend.priced else None,
        spend.output_usd if spend.priced else None, spend.idle_rewrites_usd if spend.priced else None,
        spend.priced, spend.uncached_tokens, spend.cache_read_tokens, spend.cache_write_tokens, spend.output_tokens,
        tuple(m.calls for m in misses), tuple(m.tokens for m in misses), tuple(m.usd for m in misses),
        len(compactions), *lost, coverage.wanted, coverage.present, strategies)


def _strategy(name: str, run: StrategyRun, price: Any, gaps: list[float | None]) -> StrategyFigures:
    r = run.result
    causes = cost_by_cause(r, price, gaps)
    return StrategyFigures(name, r.cost, causes.conversation, causes.idle_rewrites, causes.summaries, causes.pings,
                           causes.spared, r.pings, r.expired, r.events, r.summary_calls, causes.missed_idle_tokens,
                           causes.missed_compaction_tokens, r.coverage.wanted, r.coverage.present, r.coverage.value,
                           r.prompts_missing, r.paths_missing, r.peak, r.over_window)


def _forgotten(recorded: Recorded) -> tuple[int, int, int, int]:
    """(prompts forgotten, paths forgotten, prompts before, paths before) over the agent's summaries."""
    prompts = paths = prompts_before = paths_before = 0
    start = 0
    for index in recorded.summaries:
        lost = forgotten(recorded.history, index, start)
        prompts, paths = prompts + len(lost.prompts), paths + len(lost.paths)
        prompts_before, paths_before = prompts_before + lost.prompts_before, paths_before + lost.paths_before
        start = index
    return prompts, paths, prompts_before, paths_before


def _recorded_coverage(recorded: Recorded, whole: StrategyRun) -> Coverage:
    """The recorded agent's own future-entity coverage: its request at call k was its last summary and the
    history after it; before any, the whole history (which holds everything). Its summary is not counted,
    as no strategy's is (`core.coverage`: the honest measure, traces left out)."""
    out = Coverage()
    future = whole.future
    if future is None:
        return out
    index = IdentifierIndex(recorded.history) if any(recorded.segment_start) else None
    for k, wanted in enumerate(future):
        start = recorded.segment_start[k]
        if not start or index is None:
            out.add(len(wanted), len(wanted))
        else:
            out.add(len(wanted), index.present(wanted, recorded.history[start + 1:recorded.calls[k]], recap=False))
    return out


def _iso(stamp: float | None) -> str:
    if stamp is None:
        return ""
    return datetime.datetime.fromtimestamp(stamp, tz=datetime.timezone.utc).isoformat(timespec="seconds")
