"""Replay a recorded session call by call through compaction strategies and price each request.

Used by `bench/economics.py` and `tui-agent replay FILE --report`. For every recorded model call (an
assistant message in the loaded transcript), each strategy is asked for the request it would send with
the history before that message. A request is priced with Anthropic's caching prices in units of one
uncached input token: the longest message prefix identical to the strategy's previous request is read
from the cache (0.1), the rest is written (1.25); the first call is all written. The append-only
conversation (`none`) never changes its prefix: it is the physical limit of the price per prompt token.

Token counts come from one linear model per session, fitted to the recorded real usage
(real ≈ baseline + ratio × chars/4), so every strategy is measured with the same ruler.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

from tui_agent.core import tokens as tk
from tui_agent.core.compaction import CompactPolicy, Compactor, SeedCompactor
from tui_agent.core.compaction.estimator import TokenLedger
from tui_agent.core.compaction.ledger import request_text
from tui_agent.core.coverage import Coverage, EntityIndex, future_entities
from tui_agent.core.prices import CLASSIC, CachePrice
from tui_agent.core.messages import Message, is_user_text, protocol_errors, text_of, to_json, tool_results, tool_uses
from tui_agent.core.transcripts import TranscriptLoad, load_transcript

PROMPT_MAX_CHARS, PROMPTS_BUDGET = 2_000, 80_000
PATH_KEYS = ("file_path", "path", "notebook_path")
STRATEGIES = ("none", "seed-v1", "v1", "v2")


@dataclass(frozen=True)
class TokenModel:
    """real tokens ≈ baseline + ratio × chars/4 estimate, fitted on one session's recorded calls."""

    baseline: float
    ratio: float

    def request(self, message_estimate: int) -> float:
        return self.baseline + self.ratio * message_estimate


@dataclass
class Recorded:
    """One session ready to replay: its history, the calls, and the real usage of each call."""

    name: str
    history: list[Message]
    calls: list[int]  # history index of each call's reply (the request is history[:index])
    real: list[int]  # recorded real input size of each call
    segment_start: list[int]  # where the recorded agent's own request began (after its compactions)
    model: TokenModel
    estimates: list[int] = field(default_factory=list)  # chars/4 of each history message
    skipped_lines: int = 0
    usage: list[dict[str, int]] = field(default_factory=list)  # the logged usage of each call
    summaries: list[int] = field(default_factory=list)  # history indices of the agent's own summaries
    boundaries: list[int] = field(default_factory=list)  # where the agent compacted (compact_boundary)
    models: dict[int, str] = field(default_factory=dict)  # history index → the model that wrote it
    journal: object | None = None  # the `JournalLoad`, when the file is one of our journals
    # per call: `real` is usage the provider reported (False: our own estimate stood in, e.g. the demo
    # model's journal; nothing to measure an estimator against). Empty: every call was measured.
    measured: list[bool] = field(default_factory=list)
    times: list[float | None] = field(default_factory=list)  # when each call was logged (None: unknown)

    def is_measured(self, k: int) -> bool:
        return not self.measured or self.measured[k]

    def gap(self, k: int) -> float | None:
        """Seconds between call k-1 and call k (None when either time is unknown)."""
        if k <= 0 or k >= len(self.times) or self.times[k] is None or self.times[k - 1] is None:
            return None
        return self.times[k] - self.times[k - 1]  # type: ignore[operator]


@dataclass
class StrategyResult:
    strategy: str
    calls: int = 0
    over_window: int = 0
    peak: float = 0.0
    tokens: float = 0.0
    cost: float = 0.0
    cached: float = 0.0
    newest_intact: int = 0
    prompts_missing: int = 0
    paths_missing: int = 0
    invalid: int = 0
    events: int = 0
    times: list[float] = field(default_factory=list)
    coverage: Coverage = field(default_factory=Coverage)  # future-entity coverage (`core.coverage`)
    expired: int = 0  # calls whose cached prefix had gone cold (idle past the cache's time to live)

    @property
    def price(self) -> float:
        return self.cost / self.tokens if self.tokens else 0.0

    @property
    def average(self) -> float:
        return self.tokens / self.calls if self.calls else 0.0

    @property
    def hit_share(self) -> float:
        return self.cached / self.tokens if self.tokens else 0.0


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
    price: CachePrice = CLASSIC


def load_recorded(path: str | Path, fit_calls: int | None = None) -> Recorded:
    """A Claude Code JSONL log, or one of our session journals (told apart by its header record).
    `fit_calls`: fit the token ruler on the first calls only (`tui-agent watch` fixes its ruler early)."""
    if is_journal(path):
        return _recorded_journal(path)
    return recorded_transcript(load_transcript(path), Path(path).name, fit_calls)


def recorded_transcript(load: TranscriptLoad, name: str, fit_calls: int | None = None) -> Recorded:
    """A loaded Claude Code log ready to replay; the ruler is fitted on its first `fit_calls` calls
    (all of them when None)."""
    history = load.history
    estimates = [tk.message_tokens(m) for m in history]
    cumulative = [0]
    for e in estimates:
        cumulative.append(cumulative[-1] + e)
    summaries = sorted(load.compaction_summaries)
    calls, real, starts, usages = [], [], [], []
    for index, usage in load.call_usage:
        total = _input_total(usage)
        if total <= 0 or index == 0:
            continue
        start = max((s for s in summaries if s < index), default=0)
        calls.append(index)
        real.append(total)
        starts.append(start)
        usages.append(usage)
    fit_on = len(calls) if fit_calls is None else max(fit_calls, 1)
    model = _fit([cumulative[i] - cumulative[s] for i, s in zip(calls[:fit_on], starts[:fit_on])], real[:fit_on])
    return Recorded(name, history, calls, real, starts, model, estimates, load.skipped_lines,
                    usages, summaries, sorted(load.compaction_boundaries), load.message_models,
                    times=[load.call_times.get(i) for i in calls])


def _input_total(usage: dict[str, int]) -> int:
    return usage.get("input_tokens", 0) + usage.get("cache_creation_input_tokens", 0) + usage.get(
        "cache_read_input_tokens", 0)


def is_journal(path: str | Path) -> bool:
    """True when the first record of `path` is a tui-agent journal header."""
    import json

    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            for line in handle:
                if line.strip():
                    record = json.loads(line)
                    return isinstance(record, dict) and record.get("type") == "header"
    except (OSError, ValueError):
        return False
    return False


def _recorded_journal(path: str | Path) -> Recorded:
    """Our own journal: each `call` record knows its history length, its usage record the real size.
    The agent (tui-agent itself) compacted by its own plans, so no request is a contiguous segment: the
    ruler is fitted on the calls that sent every message (all calls when none did)."""
    from tui_agent.core.journal.reader import read_journal

    load = read_journal(Path(path))
    history = load.history
    estimates = [tk.message_tokens(m) for m in history]
    cumulative = [0]
    for e in estimates:
        cumulative.append(cumulative[-1] + e)
    calls, real, usages, whole, measured = [], [], [], [], []
    for record in load.calls:
        usage = record.usage
        if not 0 < record.history_len <= len(history):
            continue
        if usage is None:  # a provider that reports no usage (the demo model): its own estimate stands in
            numbers, total = {}, record.estimated_tokens
        else:
            numbers = {"input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens,
                       "cache_creation_input_tokens": usage.cache_creation_input_tokens,
                       "cache_read_input_tokens": usage.cache_read_input_tokens}
            total = _input_total(numbers)
        if total <= 0:
            continue
        calls.append(record.history_len)
        real.append(total)
        usages.append(numbers)
        measured.append(usage is not None)
        whole.append(not record.dropped and record.event is None)
    fit_on = [k for k, w in enumerate(whole) if w] or list(range(len(calls)))
    model = _fit([cumulative[calls[k]] for k in fit_on], [real[k] for k in fit_on])
    return Recorded(Path(path).name, history, calls, real, [0] * len(calls), model, estimates,
                    len(load.warnings), usages, journal=load, measured=measured)


def _fit(xs: Sequence[int], ys: Sequence[int]) -> TokenModel:
    if len(xs) < 2:
        return TokenModel(float(ys[0]) * 0.5 if ys else 0.0, 1.0)
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    var = sum((x - mx) ** 2 for x in xs)
    ratio = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / var if var else 1.0
    ratio = min(max(ratio, 0.5), 3.0)
    return TokenModel(max(my - ratio * mx, 0.0), ratio)


def make_strategy(name: str, policy: CompactPolicy, baseline_estimate: int):
    if name == "none":
        return None
    if name == "seed-v1":
        return SeedCompactor(policy, baseline_estimate, mode="seed")
    if name == "v1":
        return SeedCompactor(policy, baseline_estimate, mode="v1")
    return Compactor(policy, baseline_tokens=baseline_estimate)


@dataclass(frozen=True)
class CallPrice:
    """One strategy's request for one recorded call, and what it costs (units of one uncached input token)."""

    messages: list[Message]
    plan: object | None  # the compactor's `CompactPlan` (None for the append-only conversation)
    tokens: float  # the request's size on the session's fitted ruler
    cached: float  # the part read from the cache (the prefix shared with this strategy's previous request)
    cost: float


class StrategyRun:
    """One strategy stepping through the recorded calls in order, accumulating its `StrategyResult`.

    `replay` runs it to the end for the table; `core.replay` steps several in lockstep, one call at a
    time, so a face can show the running cost of each strategy at every call with the very same numbers.
    """

    def __init__(self, name: str, recorded: Recorded, policy: CompactPolicy, compactor: object | None,
                 required: list[tuple[list[str], list[str]]] | None = None,
                 future: list[frozenset[str]] | None = None, price: CachePrice = CLASSIC) -> None:
        self.name, self.recorded, self.policy, self.compactor = name, recorded, policy, compactor
        self.required = required
        self.future = future  # per call: the entities the agent's next replies use (`core.coverage`)
        self._entities = EntityIndex()
        self.price = price
        self.result = StrategyResult(name)
        self.k = 0  # the next call to run
        self._previous: list[Message] = []
        self._previous_keys: list[str] = []
        self._sized: dict[int, tuple[Message, int]] = {}  # id → (message, chars/4): requests repeat their messages

    def step(self) -> CallPrice:
        """Run the next recorded call; raises IndexError past the last one."""
        recorded, result, compactor, k = self.recorded, self.result, self.compactor, self.k
        index = recorded.calls[k]
        model = recorded.model
        prefix = recorded.history[:index]
        started = time.perf_counter()
        if compactor is None:
            messages = prefix
            plan = None
        else:
            compacted = compactor.compact(prefix, k + 1)  # the call number is the caller's (one counter)
            messages, plan = compacted.messages, compacted.plan
        result.times.append(time.perf_counter() - started)
        if plan is not None and plan.event is not None and plan.event.major:
            result.events += 1
        sizes = [_estimate(m, self._sized) for m in messages]
        total = model.request(sum(sizes))
        if compactor is not None:
            compactor.observe_usage(round(total))
        cached_n = _common_prefix(self._previous, messages, self._previous_keys)
        self._previous_keys = self._previous_keys[:cached_n] + [to_json(m) for m in messages[cached_n:]]
        self._previous = messages
        if k == 0:
            cached = 0.0
        elif self.price.expired(recorded.gap(k)):  # the whole prefix went cold: written again in full
            cached = 0.0
            result.expired += 1
        else:
            cached = model.baseline + model.ratio * sum(sizes[:cached_n])
        cost = self.price.cost(total, cached)
        result.calls += 1
        result.tokens += total
        result.cost += cost
        result.cached += cached
        result.peak = max(result.peak, total)
        result.over_window += total > self.policy.context_window
        result.invalid += bool(protocol_errors(messages))
        result.newest_intact += _newest_intact(prefix, messages)
        if self.required is not None and compactor is not None:  # the whole history holds everything
            text = request_text(messages)
            prompts, paths = self.required[k]
            result.prompts_missing += sum(1 for p in prompts if p not in text)
            result.paths_missing += sum(1 for p in paths if p not in text)
        if self.future is not None:
            wanted = self.future[k]
            result.coverage.add(len(wanted), self._entities.present(wanted, messages))
        self.k += 1
        return CallPrice(messages, plan, total, cached, cost)


DEFAULT_REPLAY_WINDOW = 200_000
MAX_OUTPUT_SHARE = 4  # a replayed window keeps at most a quarter of itself for the reply (32k at most)


def default_policy(context_window: int = DEFAULT_REPLAY_WINDOW) -> CompactPolicy:
    """The policy a replay compacts with: the recorded model's window (`replay --context-window`)."""
    return CompactPolicy(context_window=context_window, max_output_tokens=min(32_000, context_window // MAX_OUTPUT_SHARE),
                         enabled=True)


def strategy_runs(recorded: Recorded, strategies: Sequence[str] = STRATEGIES, policy: CompactPolicy | None = None,
                  *, check_memory: bool = True, factories: dict[str, Callable[[], object]] | None = None,
                  price: CachePrice = CLASSIC) -> dict[str, StrategyRun]:
    """A fresh `StrategyRun` per strategy, each at call 0."""
    policy = policy or default_policy()
    model = recorded.model
    baseline_estimate = round(model.baseline / model.ratio)
    required = _required(recorded) if check_memory else None
    future = future_entities(recorded.history, recorded.calls) if check_memory else None
    out: dict[str, StrategyRun] = {}
    for name in strategies:
        compactor = factories[name]() if factories and name in factories else make_strategy(
            name, policy, baseline_estimate)
        out[name] = StrategyRun(name, recorded, policy, compactor, required, future, price)
    return out


def replay(recorded: Recorded, strategies: Sequence[str] = STRATEGIES, policy: CompactPolicy | None = None,
           *, check_memory: bool = True, factories: dict[str, Callable[[], object]] | None = None,
           price: CachePrice = CLASSIC) -> dict[str, StrategyResult]:
    """Run each strategy over the recorded calls; `check_memory` counts prompts/paths missing and the
    future-entity coverage (slower)."""
    out: dict[str, StrategyResult] = {}
    for name, run in strategy_runs(recorded, strategies, policy, check_memory=check_memory,
                                   factories=factories, price=price).items():
        for _ in recorded.calls:
            run.step()
        out[name] = run.result
    return out


def _estimate(message: Message, sized: dict[int, tuple[Message, int]]) -> int:
    known = sized.get(id(message))
    if known is not None and known[0] is message:
        return known[1]
    estimate = tk.message_tokens(message)
    sized[id(message)] = (message, estimate)
    return estimate


def _common_prefix(previous: list[Message], current: list[Message], previous_keys: list[str]) -> int:
    n = 0
    for old, new in zip(previous, current):
        if old is not new and previous_keys[n] != to_json(new):
            break
        n += 1
    return n


def _newest_intact(prefix: list[Message], messages: list[Message]) -> bool:
    if not prefix or not messages:
        return False
    last = prefix[-1]
    if to_json(messages[-1]) != to_json(last):
        return False
    if tool_results(last) and len(prefix) >= 2:
        return len(messages) >= 2 and to_json(messages[-2]) == to_json(prefix[-2])
    return True


def _required(recorded: Recorded) -> list[tuple[list[str], list[str]]]:
    """Per call: the user prompts (text-only, ≤ 2,000 chars, newest first within 80k chars) and the touched
    file paths of earlier tool calls, which must appear somewhere in the request."""
    history = recorded.history
    prompts_so_far: list[str] = []
    paths_so_far: list[str] = []
    seen_paths: set[str] = set()
    out = []
    scanned = 0
    for index in recorded.calls:
        for i in range(scanned, index):
            message = history[i]
            if is_user_text(message):
                text = text_of(message)
                if text.strip() and len(text) <= PROMPT_MAX_CHARS:
                    prompts_so_far.append(text)
            for use in tool_uses(message):
                tool_input = use.get("input")
                if isinstance(tool_input, dict):
                    for key in PATH_KEYS:
                        value = tool_input.get(key)
                        if isinstance(value, str) and value and value not in seen_paths:
                            seen_paths.add(value)
                            paths_so_far.append(value)
        scanned = index
        chosen, used = [], 0
        for text in reversed(prompts_so_far):
            if used + len(text) > PROMPTS_BUDGET:
                break
            chosen.append(text)
            used += len(text)
        out.append((chosen, list(paths_so_far)))
    return out


@dataclass(frozen=True)
class EstimateStep:
    """Both estimators' guess of one request the recorded agent really sent, before its usage was known."""

    real: int
    ours: float  # `TokenLedger`
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
        self.ledger = TokenLedger(baseline_estimate)
        self.k = 0
        self._start, self._end = 0, 0
        self._calibration = 1.0

    def step(self) -> EstimateStep:
        recorded, ledger, est, k = self.recorded, self.ledger, self.recorded.estimates, self.k
        index, start = recorded.calls[k], recorded.segment_start[k]
        event = start != self._start
        if event:
            for i in range(self._start, self._end):
                ledger.remove(i)
            self._start, self._end = start, start
        for i in range(self._end, index):
            ledger.add(i, est[i])
        self._end = index
        real = recorded.real[k]
        v1_estimate = (self.baseline_estimate + sum(est[start:index])) * self._calibration
        out = EstimateStep(real, ledger.estimate(), v1_estimate, event)
        if recorded.is_measured(k):  # only usage the provider reported teaches the estimators
            ledger.observe(real)
            last_v1 = self.baseline_estimate + sum(est[start:index])
            self._calibration = real / last_v1 if last_v1 else 1.0
        self.k += 1
        return out


def estimator_error(recorded: Recorded, baseline_estimate: int | None = None) -> tuple[EstimateError, EstimateError]:
    """The estimator on the requests the recorded agent really sent, against their logged real size:
    ours (`TokenLedger`) and v1's (one calibration ratio for the whole request)."""
    run = EstimatorRun(recorded, baseline_estimate)
    errors, errors_v1, after, after_v1 = [], [], [], []
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
                         price)


def format_report(reports: Sequence[SessionReport]) -> str:
    """The economics table: per session and in total, each strategy beside the append-only conversation."""
    lines: list[str] = []
    head = (f"{'strategy':<8} {'calls':>5} {'over':>4} {'peak':>7} {'avg':>7} {'price':>7} {'÷none':>6} "
            f"{'cost÷none':>9} {'hit%':>5} {'cover':>5} {'newest':>7} {'prompts✗':>8} {'paths✗':>6} {'bad':>4} {'events':>6} "
            f"{'t med':>7} {'t max':>7}")
    totals: dict[str, StrategyResult] = {}
    for report in reports:
        expired = max((r.expired for r in report.results.values()), default=0)
        lines.append(f"== {report.name}: {report.messages} messages, {report.calls} calls; tokens ≈ "
                     f"{report.model.baseline:,.0f} + {report.model.ratio:.2f} × chars/4; cache {report.price.label}"
                     + (f" ({expired} calls after the cache went cold)" if report.price.ttl_seconds else ""))
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
            lines.append(f"estimate error vs logged usage ({e.compared} calls): ours median {e.median:.2%} p90 {e.p90:.2%} first-after-event "
                         f"{_each(e.after_events)} | v1 median {v.median:.2%} p90 {v.p90:.2%} "
                         f"first-after-event {_each(v.after_events)}")
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
        lines.append("future-entity coverage (next 10 replies' entities still in the request), per session: " + "; ".join(
            f"{name} " + " ".join(f"{rep.results[name].coverage.value:.3f}" for rep in reports if name in rep.results)
            for name in totals))
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
