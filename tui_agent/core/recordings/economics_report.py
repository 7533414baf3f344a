"""The economics report of a recorded session: the estimator measured against recorded usage, and the
table `bench/economics.py` and `tui-agent replay FILE --report` print.

`core/recordings/economics.py` replays the strategies and prices each request; this module adds how well our token
estimator guessed each request the recorded agent sent (only where a provider reported usage) and puts
every number in one table.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from tui_agent.core.compaction import CompactPolicy
from tui_agent.core.compaction.estimator import RequestEstimator
from tui_agent.core.recordings.counted import RulerError, ruler_errors
from tui_agent.core.recordings.economics import replay
from tui_agent.core.recordings.strategy_table import STRATEGIES
from tui_agent.core.recordings.strategy_result import StrategyResult
from tui_agent.core.recordings.recorded import Recorded, TokenModel, load_recorded
from tui_agent.core.models import CLASSIC, CachePrice
from tui_agent.core.formats import plural


@dataclass
class EstimateError:
    median: float
    p90: float
    after_event: float  # the worst relative error on the first call after a recorded compaction
    after_event_calls: int
    after_events: tuple[float, ...] = ()
    compared: int = 0  # calls whose recorded usage the estimate was compared with


@dataclass
class SessionReport:
    name: str
    calls: int
    messages: int
    model: TokenModel
    results: dict[str, StrategyResult]
    estimate: EstimateError
    estimate_v1: EstimateError
    price: CachePrice = CLASSIC  # the cache prices the strategies' costs were computed at
    ruler: RulerError | None = None  # the replay's ruler against each call's logged usage (`counted.py`)


@dataclass(frozen=True, slots=True)  # one per call a watch keeps: no dict each
class EstimateStep:
    """Both estimators' guess of one request the recorded agent really sent, before its usage was known."""

    real: int
    ours: float  # `RequestEstimator`
    v1: float  # one calibration ratio for the whole request
    event: bool  # the first call after a recorded compaction

    @property
    def error(self) -> float:
        return abs(self.ours - self.real) / self.real if self.real else 0.0

    @property
    def error_v1(self) -> float:
        return abs(self.v1 - self.real) / self.real if self.real else 0.0


class EstimatorRun:
    """The estimators stepping through the recorded requests (the agent's own, after its compactions),
    each learning from the logged usage of the call before, as they would in a live session."""

    def __init__(self, recorded: Recorded, baseline_estimate: int | None = None) -> None:
        self.recorded = recorded
        if baseline_estimate is None:
            baseline_estimate = round(recorded.model.baseline / recorded.model.ratio)
        self.baseline_estimate = baseline_estimate
        self.ledger = RequestEstimator(baseline_estimate)
        self.k = 0
        self._start, self._end = 0, 0
        self._calibration = 1.0
        self._v1 = 0  # the estimates of [_start, _end) summed as they are added (a call adds, never re-sums)

    def copy(self) -> EstimatorRun:
        """An independent copy between two calls, for a replay's checkpoint (`RequestEstimator.copy`)."""
        twin = EstimatorRun(self.recorded, self.baseline_estimate)
        twin.ledger = self.ledger.copy()
        twin.k, twin._start, twin._end, twin._calibration = self.k, self._start, self._end, self._calibration
        twin._v1 = self._v1
        return twin

    def step(self) -> EstimateStep:
        # the sizes a live session's estimators see: every block as sent (the API's count of thinking is the
        # ruler's business, `counted.py`); read at each step, since a watch's growth replaces the lists
        recorded, ledger, est, k = self.recorded, self.ledger, self.recorded.sent_estimates(), self.k
        index, start = recorded.calls[k], recorded.segment_start[k]
        event = start != self._start
        if event:
            for i in range(self._start, self._end):
                ledger.remove(i)
            self._start, self._end, self._v1 = start, start, 0
        if index < self._end:  # (a request shorter than the one before, in one segment: summed again)
            self._v1 = sum(est[start:index])
        for i in range(self._end, index):
            ledger.add(i, est[i])
            self._v1 += est[i]
        self._end = index
        real = recorded.real[k]
        last_v1 = self.baseline_estimate + self._v1  # the request v1 sizes, uncalibrated
        v1_estimate = last_v1 * self._calibration
        out = EstimateStep(real, ledger.estimate(), v1_estimate, event)
        if recorded.is_measured(k):  # only usage the provider reported teaches the estimators
            ledger.observe(real)
            self._calibration = real / last_v1 if last_v1 else 1.0
        self.k += 1
        return out


def estimator_error(recorded: Recorded, baseline_estimate: int | None = None) -> tuple[EstimateError, EstimateError]:
    """The estimator on the requests the recorded agent really sent, against their logged real size:
    ours (`RequestEstimator`) and v1's (one calibration ratio for the whole request)."""
    run = EstimatorRun(recorded, baseline_estimate)
    errors: list[float] = []
    errors_v1: list[float] = []
    after: list[float] = []
    after_v1: list[float] = []
    for k in range(len(recorded.calls)):
        step = run.step()
        if k > 0 and recorded.is_measured(k):  # an estimate is measured only against recorded usage
            (after if step.event else errors).append(step.error)
            (after_v1 if step.event else errors_v1).append(step.error_v1)
    return _summary(errors, after), _summary(errors_v1, after_v1)


def _summary(errors: list[float], after: list[float]) -> EstimateError:
    compared = len(errors) + len(after)
    if not errors:
        return EstimateError(0.0, 0.0, max(after, default=0.0), len(after), tuple(after), compared)
    ordered = sorted(errors)
    return EstimateError(statistics.median(ordered), ordered[min(int(len(ordered) * 0.9), len(ordered) - 1)],
                         max(after, default=0.0), len(after), tuple(after), compared)


def session_report(path: str | Path, strategies: Sequence[str] = STRATEGIES,
                   policy: CompactPolicy | None = None, check_memory: bool = True, *,
                   price: CachePrice = CLASSIC, recorded: Recorded | None = None) -> SessionReport:
    """One session's table at one cache price (`recorded`: the session already loaded from `path`)."""
    recorded = recorded or load_recorded(path)
    results = replay(recorded, strategies, policy, check_memory=check_memory, price=price)
    ours, v1 = estimator_error(recorded)
    return SessionReport(recorded.name, len(recorded.calls), len(recorded.history), recorded.model, results, ours, v1,
                         price, ruler_errors(recorded))


def format_report(reports: Sequence[SessionReport]) -> str:
    """The economics table: per session and in total, each strategy beside the append-only conversation."""
    lines: list[str] = []
    head = (f"{'strategy':<8} {'calls':>5} {'over':>4} {'peak':>7} {'avg':>7} {'price':>7} {'÷none':>6} "
            f"{'cost÷none':>9} {'hit%':>5} {'cover':>5} {'newest':>7} {'prompts✗':>8} {'paths✗':>6} {'bad':>4} {'events':>6} "
            f"{'t med':>7} {'t max':>7}")
    totals: dict[str, StrategyResult] = {}
    for report in reports:
        expired = max((r.expired for r in report.results.values()), default=0)
        lines.append(f"== {report.name}: {plural(report.messages, 'message')}, {plural(report.calls, 'call')}; tokens ≈ "
                     f"{report.model.baseline:,.0f} + {report.model.ratio:.2f} × chars/4; cache {report.price.label}"
                     + (f" ({plural(expired, 'call')} after the cache went cold)" if report.price.ttl_seconds else ""))
        lines.append(head)
        base = report.results.get("none")
        for name, r in report.results.items():
            lines.append(_row(r, base))
            t = totals.setdefault(name, StrategyResult(name))
            for attr in ("calls", "over_window", "tokens", "cost", "cached", "newest_intact", "prompts_missing",
                         "paths_missing", "invalid", "events", "expired"):
                setattr(t, attr, getattr(t, attr) + getattr(r, attr))
            t.peak = max(t.peak, r.peak)
            t.times += r.times
            t.coverage.merge(r.coverage)
        if base is not None and base.cost:
            written = base.tokens - base.cached  # new content: every strategy writes it at least once
            floor = report.price.write * written + report.price.read * max(50_000 * base.calls - written, 0)
            lines.append(f"cost floor at an average request of 50k (new content written once, the rest read "
                         f"from cache): {floor / base.cost:.3f} × append-only")
        e, v = report.estimate, report.estimate_v1
        if not e.compared:
            lines.append("estimate error: no recorded usage to compare with (the provider reported none; "
                         "the journal's sizes are our own estimates)")
        else:
            lines.append(f"estimate error vs logged usage ({plural(e.compared, 'call')}): ours median {e.median:.2%} p90 {e.p90:.2%} first-after-event "
                         f"{_each(e.after_events)} | v1 median {v.median:.2%} p90 {v.p90:.2%} "
                         f"first-after-event {_each(v.after_events)}")
        if report.ruler is not None:
            lines.append(report.ruler.line())
        lines.append("")
    if len(reports) > 1:
        lines.append("== total")
        lines.append(head)
        for name, r in totals.items():
            lines.append(_row(r, totals.get("none")))
        prices = {name: [rep.results[name].price / rep.results["none"].price for rep in reports
                         if "none" in rep.results and rep.results["none"].price] for name in totals}
        lines.append("mean price ÷ none per session: " + ", ".join(
            f"{name} {statistics.fmean(v):.3f}" for name, v in prices.items() if v))
        lines.append("future-entity coverage (next 10 replies' entities still in the request), per session: "
                     + "; ".join(f"{name} " + " ".join(f"{rep.results[name].coverage.value:.3f}" for rep in reports
                                                       if name in rep.results) for name in totals))
    return "\n".join(lines)


def _each(values: Sequence[float]) -> str:
    return ", ".join(f"{v:.2%}" for v in values) if values else "no recorded compaction"


def _row(r: StrategyResult, base: StrategyResult | None) -> str:
    price_ratio = r.price / base.price if base and base.price else 0.0
    cost_ratio = r.cost / base.cost if base and base.cost else 0.0
    t_med = statistics.median(r.times) * 1000 if r.times else 0.0
    t_max = max(r.times) * 1000 if r.times else 0.0
    return (f"{r.strategy:<8} {r.calls:>5} {r.over_window:>4} {r.peak / 1000:>6.1f}k {r.average / 1000:>6.1f}k "
            f"{r.price:>7.4f} {price_ratio:>6.3f} {cost_ratio:>9.3f} {r.hit_share * 100:>5.1f} {r.coverage.value:>5.3f} "
            f"{r.newest_intact:>3}/{r.calls:<3} {r.prompts_missing:>8} {r.paths_missing:>6} {r.invalid:>4} "
            f"{r.events:>6} {t_med:>6.2f}ms {t_max:>6.1f}ms")
