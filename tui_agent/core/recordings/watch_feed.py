"""The watch's work as messages: what a follower's batch adds, as one immutable `Arrival`, and the
face-side `CallsView` that is built from arrivals alone.

Why: parsing a growing log and stepping its new calls takes a quarter of a second and more per growth on
a long session, too long for a UI thread. So a worker thread owns everything that changes (`WatchFeed`:
the `LiveReplay`, its compactors, the running cost) and hands out only results: the new calls' steps and
figures, the history messages that are new or were read again, and the few facts a screen asks of a
replay. The face applies them to its `CallsView` and never touches the live replay, so no lock is needed
and a key press is answered while the next chunk is being parsed.

Memory: a view keeps every call's figures and step, but our request in full (`ReplayStep.messages` and the
per-message parts of its plan) only for the newest `KEEP_REQUESTS` calls, the call shown and the few calls
the screen asked for (an event view being opened): a constant, however many calls and compaction events
the session has. An older call's slim step keeps what the card and the panel read without being asked
(its sizes, marks, its event and the event's line); shown again, or its event opened, it is made again by
the worker from its replay's nearest checkpoint (`WatchFeed.remake`) and handed back. The coverage after a
recorded compaction reads our requests at its next `HORIZON` calls: the view keeps only their entity sets
(`coverage.request_entities`), narrowed to what those calls' replies can ask once the replies are final.

A `generation` counts the times the calls start again from call 1 (the ruler was refitted before call
`FIT_CALLS`, the file was truncated or replaced, or a new parse disagreed with the steps made): an arrival
of a new generation replaces the view's calls instead of extending them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from tui_agent.core.recordings.call_figures import CallFigures, FiguresRun
from tui_agent.core.compaction import CompactPolicy
from tui_agent.core.compaction.plan import CompactPlan
from tui_agent.core.recordings.coverage import HORIZON, EntityIndex, entities, mentioned_text, request_entities
from tui_agent.core.recordings.recorded import TokenModel
from tui_agent.core.events import CompactionReported
from tui_agent.core.recordings.follow import Batch
from tui_agent.core.messages import Message
from tui_agent.core.models import CLASSIC, CachePrice
from tui_agent.core.recordings.replay import AgentCompaction, Replay, ReplayStep, reported_on
from tui_agent.core.recordings.watch import LiveReplay, stable_index


KEEP_REQUESTS = 64  # the newest calls whose request a view keeps in full
COVERAGE_CALLS = HORIZON  # the calls from a recorded compaction on whose requests its coverage reads


def slim_plan(plan: CompactPlan) -> CompactPlan:
    """`plan` without its per-message parts (what goes with a request let go): its sizes, marks and event
    stay, which is all the panel's ledger and the events list read of an older call."""
    return replace(plan, outbound_indices=(), blocks={}, recap=None, protected_indices=None)


@dataclass(frozen=True)
class Arrival:
    """What one batch changed, as data a face can apply without the live replay."""

    generation: int
    path: Path
    steps: tuple[ReplayStep, ...]  # the new calls' steps, in order (from call 1 on a new generation)
    figures: tuple[CallFigures, ...]  # one per step
    history_from: int  # the view's history from here on is replaced by `history_tail`
    history_tail: tuple[Message, ...]
    calls: tuple[int, ...]  # every call's history index (the recorded request ends there)
    segment_start: tuple[int, ...]  # where every recorded request began
    agent_compactions: tuple[AgentCompaction, ...]
    token_model: TokenModel | None  # the ruler (None: no call yet)
    model: str
    usd_per_unit: float | None
    fixed: bool  # the ruler is fixed: these figures are final
    fit_calls: int
    reset: bool = False  # the file was truncated or replaced
    restarted: bool = False  # a new parse disagreed with the steps made: the calls again from call 1
    behind_calls: int = 0  # calls read and not made yet (the follower is behind the log)
    behind_bytes: int = 0  # bytes of the log not read yet
    price: CachePrice = CLASSIC  # the cache prices the replay prices at (the recorded model's own)


class WatchFeed:
    """Worker side: feed it the follower's batches; each change comes back as an `Arrival`."""

    def __init__(self, path: Path, policy: CompactPolicy | None, strategies: Sequence[str],
                 tracer: Callable[[Replay, ReplayStep], object] | None = None) -> None:
        self.path = path
        self.tracer = tracer  # told each call once its figures are final (`core.recordings.spans.StepTracer`)
        self._traced = 0  # calls told to the tracer in this generation
        self.live = LiveReplay(path, policy, strategies)
        self.generation = 0
        self._replay: Replay | None = None  # the replay the arrivals so far came from
        self._run = FiguresRun()
        self._sent = 0  # calls handed out in this generation
        self._history_sent = 0  # history messages handed out in this generation

    @staticmethod
    def _made(replay: Replay, k: int, progress: Callable[[int, int], object] | None) -> ReplayStep:
        step = replay.step(k)
        if progress is not None:
            progress(k + 1, replay.calls)
        return step

    def remake(self, generation: int, k: int) -> ReplayStep | None:
        """Call index `k`'s step again (a view let its request go), None when `generation` is gone."""
        replay = self._replay
        if generation != self.generation or replay is None or not 0 <= k < self._sent:
            return None
        return replay.step(k)

    @property
    def pending(self) -> int:
        """Calls read and not handed out yet (made on the next feeds, `limit` at a time)."""
        replay = self.live.replay
        return replay.calls - self._sent if replay is not None and replay is self._replay else 0

    def feed(self, batch: Batch, progress: Callable[[int, int], object] | None = None,
             stop: Callable[[], bool] | None = None, limit: int | None = None,
             unread_bytes: int = 0) -> Arrival | None:
        """The arrival of `batch` (None: nothing changed). At most `limit` calls are made, `stop()` asked
        before each: the others stay `pending` for the next feeds (an empty batch makes them), so a log
        far ahead never holds the thread for long. `progress(done, total)` is told each call made (a face
        shows it when a large batch, the first read of a long log, takes a while); `unread_bytes` (the
        follower's `behind`) goes into the arrival with the calls still pending."""
        live = self.live
        old = live.replay
        stable = stable_index(old) if old is not None else 0
        restarts = live.restarts
        if not live.feed(batch) and not self.pending:
            return None
        replay = live.replay
        fresh = replay is not self._replay or batch.reset
        if fresh:
            self.generation += 1
            self._replay, self._run, self._sent, self._history_sent = replay, FiguresRun(), 0, 0
            self._traced = 0 if batch.reset or live.restarts != restarts else self._traced
        if replay is None:
            return Arrival(self.generation, self.path, (), (), 0, (), (), (), (), None, "", None, False,
                           live.fit_calls, batch.reset, live.restarts != restarts, 0, unread_bytes)
        steps = self._make_steps(replay, progress, stop, limit)
        pre = live.pre_tokens()
        figures = tuple(self._run.figures(replay, step, pre) for step in steps)
        if self.tracer is not None and live.fixed:  # final figures only: before call FIT_CALLS they move
            for step in steps:
                if step.number > self._traced:
                    self.tracer(replay, step)
                    self._traced = step.number
        start = 0 if fresh else min(self._history_sent, stable)
        self._sent += len(steps)
        self._history_sent = len(replay.history)
        recorded = replay.recorded
        return Arrival(self.generation, self.path, steps, figures, start, tuple(replay.history[start:]),
                       tuple(recorded.calls), tuple(recorded.segment_start), tuple(replay.agent_compactions),
                       recorded.model, replay.model, replay.unit_price_usd(), live.fixed, live.fit_calls,
                       batch.reset, live.restarts != restarts, self.pending, unread_bytes, replay.price)

    def _make_steps(self, replay: Replay, progress: Callable[[int, int], object] | None,
                    stop: Callable[[], bool] | None, limit: int | None) -> tuple[ReplayStep, ...]:
        steps: list[ReplayStep] = []
        for k in range(self._sent, replay.calls):
            if (limit is not None and len(steps) >= limit) or (stop is not None and stop()):
                break
            steps.append(self._made(replay, k, progress))
        return tuple(steps)


@dataclass(frozen=True)
class ViewRecorded:
    """The parts of `recorded.Recorded` a face reads (the ruler and where each request began and ended)."""

    calls: tuple[int, ...] = ()
    segment_start: tuple[int, ...] = ()
    model: TokenModel = TokenModel(0.0, 1.0)


class CallsView:
    """Face side: the calls as the arrivals so far describe them. It answers what the replay screen,
    its card and its panel ask of a `core.replay.Replay` (steps, history, events, prices), from data the
    worker handed over."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.generation = 0
        self.steps: list[ReplayStep] = []
        self.figures: list[CallFigures] = []
        self.history: list[Message] = []
        self.recorded = ViewRecorded()
        self.agent_compactions: list[AgentCompaction] = []
        self.model = ""
        self.usd_per_unit: float | None = None
        self.price: CachePrice = CLASSIC
        self.fixed = False
        self.fit_calls = 0
        self.pinned: int | None = None  # the call shown: its request is kept whatever its age
        self.wanted: set[int] = set()  # calls the screen asked to keep a while (an event view being opened)
        self._full: set[int] = set()  # calls whose request is held in full
        self._entities: dict[int, frozenset[str]] = {}  # coverage calls: what our request there holds
        self._narrowed: set[int] = set()  # ... already narrowed to what the coverage can ask of it
        self._indexes: dict[int, EntityIndex] = {}  # per recorded compaction whose calls are arriving

    def held(self, k: int) -> bool:
        """Whether call index `k`'s request is held in full (else `WatchFeed.remake` it)."""
        return k in self._full

    def restore(self, generation: int, step: ReplayStep) -> bool:
        """Put a remade step back (False: it belongs to calls that are gone); held until `let_go`."""
        k = step.number - 1
        if generation != self.generation or not 0 <= k < self.calls:
            return False
        self.steps[k] = step
        self._full.add(k)
        self._note_entities(k)
        return True

    def _needed(self, k: int) -> bool:
        """A request kept in full: the newest ones, the call shown and the calls the screen asked for. An
        event's call and the one before it (its diff) are made again when the event is opened, and the
        coverage after a recorded compaction reads the entity sets kept for it (`coverage_request`)."""
        return k >= self.calls - KEEP_REQUESTS or k == self.pinned or k in self.wanted

    def _covers(self, k: int) -> bool:
        """Whether call index `k` is one of the `COVERAGE_CALLS` from a recorded compaction on."""
        return any(c.call - 1 <= k < c.call - 1 + COVERAGE_CALLS for c in self.agent_compactions)

    def _note_entities(self, k: int, index: EntityIndex | None = None) -> None:
        """Keep what the coverage reads of call `k`'s request (held now) before the request goes."""
        if k not in self._entities and self._covers(k):
            self._entities[k] = request_entities(self.steps[k].messages, index)

    def _note_coverage(self) -> None:
        """The new calls' entity sets, for each recorded compaction whose calls are still arriving. One
        `EntityIndex` per such compaction: its calls' requests share most messages (a tenth of the time on
        athena), and it goes once its last call is in."""
        for c in self.agent_compactions:
            first, end = max(c.call - 1, 0), c.call - 1 + COVERAGE_CALLS
            pending = [k for k in range(first, min(end, self.calls)) if k in self._full and k not in self._entities]
            if pending:
                index = self._indexes.setdefault(c.call, EntityIndex())
                for k in pending:
                    self._entities[k] = request_entities(self.steps[k].messages, index)
            if self.calls >= end:
                self._indexes.pop(c.call, None)

    def _narrow(self) -> None:
        """An entity set only ever meets what the replies of its call and the `HORIZON - 1` after it mention
        (`coverage.future_entities`): once those replies are final (a later call was made, so the history
        before it stays as it is), keep only that part of it."""
        calls, history = self.recorded.calls, self.history
        for k in [k for k in self._entities if k not in self._narrowed and self.calls > k + HORIZON]:
            mentioned: set[str] = set()
            for j in range(k, min(k + HORIZON, len(calls))):
                if calls[j] < len(history):
                    mentioned |= entities(mentioned_text(history[calls[j]]))
            self._entities[k] = self._entities[k] & mentioned
            self._narrowed.add(k)

    def coverage_request(self, k: int) -> frozenset[str] | None:
        """What the coverage reads of our request at call index `k`: its entity set (None: the request was
        let go before its set was kept; make the call again)."""
        if k in self._entities:
            return self._entities[k]
        return request_entities(self.steps[k].messages) if k in self._full else None

    def let_go(self) -> None:
        """Let go of the requests no longer needed (each arrival does; the screen after a remade step is
        used, so browsing a finished log, with no arrival to let go at, gathers no requests either)."""
        for k in [k for k in self._full if not self._needed(k)]:
            step = self.steps[k]
            # what the panel's ledger reads of an older call stays (sizes, marks, event); the per-message
            # parts of the plan go with the request (the call is made again before it is shown)
            self.steps[k] = replace(step, messages=[], plan=slim_plan(step.plan))
            self._full.discard(k)

    def apply(self, arrival: Arrival) -> bool:
        """Take one arrival; True when it started the calls again (a new generation)."""
        fresh = arrival.generation != self.generation
        if fresh:
            self.generation = arrival.generation
            self.steps, self.figures, self.history, self._full, self.pinned = [], [], [], set(), None
            self.wanted, self._entities, self._narrowed, self._indexes = set(), {}, set(), {}
        self.path = arrival.path
        self._full.update(range(len(self.steps), len(self.steps) + len(arrival.steps)))
        self.steps += arrival.steps
        self.figures += arrival.figures
        self.history[arrival.history_from:] = arrival.history_tail
        if arrival.token_model is not None:
            self.recorded = ViewRecorded(arrival.calls, arrival.segment_start, arrival.token_model)
        self.agent_compactions = list(arrival.agent_compactions)
        self.model, self.usd_per_unit, self.price = arrival.model, arrival.usd_per_unit, arrival.price
        self.fixed, self.fit_calls = arrival.fixed, arrival.fit_calls
        self._note_coverage()
        self._narrow()
        self.let_go()
        return fresh

    @property
    def calls(self) -> int:
        return len(self.steps)

    @property
    def made(self) -> int:
        return len(self.steps)  # every call the view holds is made: nothing to replay on

    def step(self, k: int) -> ReplayStep:
        return self.steps[k]

    def event_calls(self, upto: int | None = None) -> list[tuple[int, str]]:
        out = [(c.call - 1, f"agent {c.kind}") for c in self.agent_compactions if 0 < c.call <= self.calls]
        out += [(k, "ours") for k, step in enumerate(self.steps) if step.event_line]
        out.sort()
        return out if upto is None else [e for e in out if e[0] <= upto]

    def reported(self, step: ReplayStep) -> CompactionReported:
        return reported_on(self.recorded.model, step)

    def unit_price_usd(self) -> float | None:
        return self.usd_per_unit

    def cost_usd(self, units: float) -> float | None:
        return units * self.usd_per_unit if self.usd_per_unit is not None else None
