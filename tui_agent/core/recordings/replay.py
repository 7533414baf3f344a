"""Replay a recorded session call by call: what our compactor would have sent at each recorded model call,
beside what the recorded agent really sent and what each strategy would have cost so far.

No model is called: every number comes from the file (the logged usage) or from running compaction on
the recorded history. The pricing is `core.economics`' own (`StrategyRun`, `EstimatorRun`), stepped in
lockstep, so the running cost at the last call is exactly the `--report` table's cost. Steps are made
on demand and kept (the compactor is sticky, so call k needs calls 1..k-1 first; stepping back is a
lookup); checkpoints every `CHECKPOINT_EVERY` calls (the compaction state as data) let a replay keep
only some steps and make the others again nearby. Nothing here knows about a screen: `tui-agent replay`
draws these steps, `--json` prints them.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Protocol, Sequence

from tui_agent.core.compaction import CompactPlan, CompactPolicy
from tui_agent.core.recordings.agent_compactions import AgentCompaction, agent_compactions
from tui_agent.core.recordings.economics import StrategyRun, strategy_runs
from tui_agent.core.recordings.run_state import RunState
from tui_agent.core.recordings.strategy_table import default_policy, make_strategy
from tui_agent.core.recordings.recorded import Recorded, TokenModel, load_recorded
from tui_agent.core.recordings.counted import ruler_errors
from tui_agent.core.recordings.idle_replay import IdleOutcome
from tui_agent.core.recordings.economics_report import EstimateStep, EstimatorRun, SessionReport, estimator_error
from tui_agent.core.events import CompactionReported
from tui_agent.core.messages import Message
from tui_agent.core.models import model_info
from tui_agent.core.formats import plural
from tui_agent.core.models import CLASSIC, CachePrice, InputCost, for_model

# The strategies a replay runs side by side: the append-only conversation, the seed article's v1, ours.
REPLAY_STRATEGIES = ("none", "seed-v1", "v2")
OURS = "v2"
LABELS = {"none": "append-only", "seed-v1": "seed v1", "v1": "v1", "v2": "ours"}
CHECKPOINT_EVERY = 25  # calls between two checkpoints: a step made again replays at most this many calls


@dataclass(frozen=True)
class Checkpoint:
    """Every run of a replay before call `call` (0-based), as data."""

    call: int
    runs: dict[str, RunState]
    estimator: EstimatorRun  # an independent copy (`EstimatorRun.copy`)


@dataclass(frozen=True, slots=True)  # one per call a watch keeps: no dict each
class StrategyCost:
    """One strategy at one call: this call's request and price, and the running totals."""

    strategy: str
    tokens: float
    cached: float
    cost: float
    total_cost: float
    total_tokens: float


@dataclass(frozen=True, slots=True)  # one per call a watch keeps: no dict each
class ReplayStep:
    number: int  # 1-based call number
    history_len: int  # the call's request was built from history[:history_len]; its reply is next
    recorded_start: int  # the recorded agent's request began here (after its own compactions)
    real_tokens: int  # the logged input size (uncached + cache written + cache read)
    usage: dict[str, int]
    estimate: EstimateStep  # our estimator's guess of the request the agent really sent
    plan: CompactPlan  # what our compactor would send
    messages: list[Message]  # our request
    ours_tokens: float  # our request's size on the session's fitted ruler
    costs: dict[str, StrategyCost]
    agent_compactions: tuple[AgentCompaction, ...] = ()  # the agent's compactions since the previous call
    coverage: float | None = None  # our running future-entity coverage (memory checks on; None: not measured)
    miss_reason: tuple[str, int | None] | None = None  # the API's logged reason the call's cache missed
    idle: str | None = None  # how our session spent the wait before the call (`IdlePrices.line`), when it chose

    @property
    def event_line(self) -> str | None:
        event = self.plan.event
        return event.line() if event is not None and event.major else None

    @property
    def estimate_error(self) -> float:
        return self.estimate.error


@dataclass
class Replay:
    """A recorded session and its steps, made on demand (`step(k)`).

    The compactor is sticky, so call k needs calls 1..k-1 first: the runs at the frontier step on from the
    last call made. Every `checkpoint_every` calls the runs are kept as data (each compactor's exported
    state and the accumulators, `run_state.RunState`), so a step no longer kept (`keep_steps` bounds how
    many are, for a long session) is made again from the checkpoint before it, never from call 1, with the
    same figures. `progress(done, target)` (when set) is told each call made on the way to a far step.
    """

    path: Path
    recorded: Recorded
    model: str
    agent_compactions: list[AgentCompaction]
    strategies: tuple[str, ...] = REPLAY_STRATEGIES
    policy: CompactPolicy = field(default_factory=default_policy)
    check_memory: bool = False  # count prompts/paths missing per strategy too (what the report needs)
    checkpoint_every: int = CHECKPOINT_EVERY
    keep_steps: int | None = None  # at most this many steps kept (None: all); older ones are made again
    max_checkpoints: int | None = None  # at most this many kept (None: all): past it they are thinned
    progress: Callable[[int, int], None] | None = None
    # the cache prices every strategy is priced at (`open_replay`: the recorded model's own, with its time
    # to live, so a wait past it is a rewrite, or a ping, or an idle event: `idle_replay.py`)
    price: CachePrice = CLASSIC
    _runs: dict[str, StrategyRun] = field(default_factory=dict)
    _estimator: EstimatorRun | None = None
    _kept: OrderedDict[int, ReplayStep] = field(default_factory=OrderedDict)
    _events: list[str | None] = field(default_factory=list)  # per call made: our event line (None: none)
    _checkpoints: dict[int, Checkpoint] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._runs = strategy_runs(self.recorded, self.strategies, self.policy, check_memory=self.check_memory,
                                   price=self.price)
        self._estimator = EstimatorRun(self.recorded)
        self._checkpoints[0] = self._checkpoint()

    @property
    def calls(self) -> int:
        return len(self.recorded.calls)

    @property
    def made(self) -> int:
        """How many calls the frontier runs have made."""
        return len(self._events)

    @property
    def steps(self) -> list[ReplayStep]:
        """The steps kept, in call order (every step made so far when `keep_steps` is None)."""
        return [self._kept[k] for k in sorted(self._kept)]

    @property
    def history(self) -> list[Message]:
        return self.recorded.history

    @property
    def kind(self) -> str:
        from tui_agent.core.recordings.codex_logs import log_kind  # claude-code, codex or proxy

        return "journal" if self.recorded.journal is not None else log_kind(self.path)

    def step(self, k: int) -> ReplayStep:
        """The step of call index `k` (0-based), running every call before it first if needed."""
        if not 0 <= k < self.calls:
            raise IndexError(f"call {k + 1} is not in this session (it has {plural(self.calls, 'call')})")
        kept = self._kept.get(k)
        if kept is not None:
            self._kept.move_to_end(k)
            return kept
        if k < self.made:
            return self._remake(k)
        step = None
        while self.made <= k:
            if self.made % self.checkpoint_every == 0 and self.made not in self._checkpoints:
                self._checkpoints[self.made] = self._checkpoint()
                self._thin_checkpoints()
            assert self._estimator is not None  # made with the runs, in __post_init__
            step = self._make(self.made, self._runs, self._estimator)
            self._events.append(step.event_line)
            self._keep(step)
            if self.progress is not None:
                self.progress(step.number, k + 1)
        assert step is not None
        return step

    def bound(self, keep_steps: int, max_checkpoints: int) -> None:
        """Keep at most `keep_steps` steps and `max_checkpoints` checkpoints, and no per-call lists in the
        runs (the compaction times and per-call prices only a `report()` reads): what a watch, which runs
        for hours and never reports, needs for its memory not to grow with every call it replays."""
        self.keep_steps, self.max_checkpoints = keep_steps, max_checkpoints
        for run in self._runs.values():
            run.keeps_per_call = False

    def grown(self, start: int) -> None:
        """The history from `start` on is new (a watch's growth): the runs take the sizes its load measured,
        so each new message is measured once."""
        recorded = self.recorded
        for run in self._runs.values():
            run.seed_sizes(recorded.history[start:], recorded.estimates[start:])

    def _checkpoint(self) -> Checkpoint:
        assert self._estimator is not None
        return Checkpoint(self.made, {name: run.state() for name, run in self._runs.items()},
                          self._estimator.copy())

    def _thin_checkpoints(self) -> None:
        """Past `max_checkpoints`, keep every other one (call 0 always) and take them twice as far apart:
        a long watch keeps O(log) more of them, not one per 25 calls, and a step made again replays at
        most `checkpoint_every` (now doubled) calls."""
        if self.max_checkpoints is None or len(self._checkpoints) <= max(self.max_checkpoints, 2):
            return
        self.checkpoint_every *= 2
        self._checkpoints = {c: point for c, point in self._checkpoints.items() if c % self.checkpoint_every == 0}

    def _remake(self, k: int) -> ReplayStep:
        """Call `k` again from the checkpoint before it (a step no longer kept)."""
        start = max(c for c in self._checkpoints if c <= k)
        checkpoint = self._checkpoints[start]
        baseline = baseline_estimate(self)
        runs = {name: self._runs[name].resume(state, make_strategy(name, self.policy, baseline))
                for name, state in checkpoint.runs.items()}
        estimator = checkpoint.estimator.copy()
        step = None
        for j in range(start, k + 1):
            step = self._make(j, runs, estimator)
            self._keep(step)
        assert step is not None
        return step

    def _keep(self, step: ReplayStep) -> None:
        self._kept[step.number - 1] = step
        self._kept.move_to_end(step.number - 1)
        while self.keep_steps is not None and len(self._kept) > max(self.keep_steps, 1):
            self._kept.popitem(last=False)

    def _make(self, k: int, runs: dict[str, StrategyRun], estimator: EstimatorRun) -> ReplayStep:
        recorded = self.recorded
        prices = {name: run.step() for name, run in runs.items()}
        estimate = estimator.step()
        costs = {name: StrategyCost(name, p.tokens, p.cached, p.cost, runs[name].result.cost,
                                    runs[name].result.tokens) for name, p in prices.items()}
        ours = prices[OURS]
        assert isinstance(ours.plan, CompactPlan)  # ours always compacts (only "none" sends the history as it is)
        index = recorded.calls[k]
        since = tuple(c for c in self.agent_compactions if c.call == k + 1)
        coverage = runs[OURS].result.coverage.value if runs[OURS].future is not None else None
        return ReplayStep(k + 1, index, recorded.segment_start[k], recorded.real[k],
                          recorded.usage[k] if k < len(recorded.usage) else {}, estimate, ours.plan,
                          ours.messages, ours.tokens, costs, since, coverage, recorded.miss_reason(k),
                          _idle_line(ours.wait, self.unit_price_usd()))

    def run_all(self) -> list[ReplayStep]:
        if self.calls:
            self.step(self.calls - 1)
        return self.steps

    def report(self) -> SessionReport:
        """The economics report of the calls replayed so far (all of them after `run_all`): the same
        `StrategyResult`s the table prints, from the very runs the steps came from."""
        if self.made == self.calls:  # the session is over: its tail (the pings after the last call) counts
            for run in self._runs.values():
                run.finish()
        ours, v1 = estimator_error(self.recorded)
        return SessionReport(self.recorded.name, self.made, len(self.recorded.history), self.recorded.model,
                             {name: run.result for name, run in self._runs.items()}, ours, v1,
                             self._runs[next(iter(self._runs))].price, ruler_errors(self.recorded))

    # -- navigation helpers for faces ---------------------------------------------------------------
    def event_calls(self, upto: int | None = None) -> list[tuple[int, str]]:
        """(call index, what) of every compaction event known so far: the agent's, and ours among the
        steps already made (ours are only known once replayed)."""
        out = [(c.call - 1, f"agent {c.kind}") for c in self.agent_compactions if c.call > 0]
        out += [(k, "ours") for k, line in enumerate(self._events) if line]
        out.sort()
        return out if upto is None else [e for e in out if e[0] <= upto]

    def reported(self, step: ReplayStep) -> CompactionReported:
        """The step as the engine's own call event, for a face's budget ledger, measured with the one ruler
        of the replay: the session's fitted token model (real ≈ baseline + ratio × chars/4), the unit the
        card and the cost table use. So the meter's total is the step's `ours_tokens`, and its lines (base
        + messages sent) add up to it; the compactor's own calibrated estimate is not shown beside it."""
        return reported_on(self.recorded.model, step)

    def unit_price_usd(self) -> float | None:
        """USD per uncached input token of the recorded model (None when its price is unknown)."""
        price = model_info(self.model).input_price if self.model else None
        return price / 1_000_000 if price is not None else None

    def cost_usd(self, units: float) -> float | None:
        price = self.unit_price_usd()
        return units * price if price is not None else None


def _idle_line(wait: "IdleOutcome", per_token: float | None) -> str | None:
    """What the session did while it waited before a call, priced (None: no decision was due)."""
    if wait.prices is None:
        return None
    return f"{wait.pings} ping{'' if wait.pings == 1 else 's'} · " + wait.prices.line(per_token)


def strategy_cost(replay: "Replay | UnitPriced", units: float) -> InputCost:
    """A strategy's price at one call as every face says it (the replay card, the watch card, the meter):
    units of one uncached input token on the replay's cache prices, and USD at the recorded model's price."""
    return InputCost(units, replay.cost_usd(units), replay.price.read, replay.price.write)


def step_cost(replay: "Replay | UnitPriced", step: ReplayStep) -> InputCost:
    """Our request's price at `step`: the one figure the cards and the budget meter show for that call."""
    ours = step.costs.get(OURS)
    return strategy_cost(replay, ours.cost if ours is not None else 0.0)


class UnitPriced(Protocol):
    price: CachePrice

    def cost_usd(self, units: float) -> float | None: ...


def reported_on(model: TokenModel, step: ReplayStep) -> CompactionReported:
    """`Replay.reported` on the ruler `model` (a face that holds steps without their replay uses it too)."""
    total = round(step.ours_tokens)
    base = round(model.baseline)
    plan = replace(step.plan, estimated_tokens=total, message_tokens_after=total - base,
                   message_tokens_before=round(model.ratio * step.plan.message_tokens_before))
    return CompactionReported(step.number, plan, step.history_len, base, 0, step.messages)


def sends_as_recorded(step: ReplayStep) -> bool:
    """Whether our request at this call is the recorded agent's own: neither compacted (ours sends every
    message whole, with nothing in place of any; the agent's request starts at the history's start) and the
    API reported the call's usage, which is then the usage of our request too."""
    plan = step.plan
    return (bool(step.usage) and step.recorded_start == 0 and plan.drop_until <= plan.drop_from
            and plan.recap is None and not any(plan.blocks.values()) and not plan.excluded and not plan.lead_placeholder)


def open_replay(path: str | Path, strategies: Sequence[str] = REPLAY_STRATEGIES,
                policy: CompactPolicy | None = None, *, check_memory: bool = False,
                fit_calls: int | None = None, price: CachePrice | None = None) -> Replay:
    """Load `path` (a Claude Code log or one of our journals). Raises OSError when it cannot be read,
    `JournalError` for an unusable journal, ValueError when it holds no recorded model call.
    `fit_calls`: the token ruler is fitted on the first calls only (as `tui-agent watch` does)."""
    path = Path(path)
    return replay_of(path, load_recorded(path, fit_calls), strategies, policy, check_memory=check_memory,
                     price=price)


def replay_of(path: Path, recorded: Recorded, strategies: Sequence[str] = REPLAY_STRATEGIES,
              policy: CompactPolicy | None = None, *, check_memory: bool = False,
              price: CachePrice | None = None) -> Replay:
    """A replay of a session already loaded (`tui-agent watch` loads a growing log from its lines); priced
    at `price`, by default the recorded model's own cache prices (`models.for_model`)."""
    if not recorded.history:
        raise ValueError(f"{path} has no user or assistant messages (is it a Claude Code .jsonl log?)")
    if not recorded.calls:
        raise ValueError(f"{path} has {plural(len(recorded.history), 'message')} but no recorded model call with usage "
                         "to replay")
    compactions = agent_compactions(recorded)
    model = main_model(recorded)
    return Replay(path, recorded, model, compactions, tuple(strategies), policy or default_policy(), check_memory,
                  price=price if price is not None else for_model(model))


def main_model(recorded: Recorded) -> str:
    """The model that made most of the session's calls (a journal's own), which ours is priced at."""
    if recorded.journal is not None:
        return str(getattr(recorded.journal, "model", "") or "")
    counts: dict[str, int] = {}
    for model in recorded.models.values():
        counts[model] = counts.get(model, 0) + 1
    return max(counts, key=lambda model: counts[model]) if counts else ""




def baseline_estimate(replay: Replay) -> int:
    """The system prompt + tools of the recorded agent, in chars/4 tokens (from the fitted ruler)."""
    model = replay.recorded.model
    return round(model.baseline / model.ratio) if model.ratio else 0
