"""Watch mode: the replay screen on a log that is still being written (`tui-agent watch`).

A thread worker follows the log (`core.follow`: a stat and a read, sleeping while nothing is written)
and does the slow part off the UI thread: each batch of whole lines goes to `core.watch_feed.WatchFeed`
(parse, replay the new calls, their figures), whose `Arrival` is posted to the screen as a message. The
screen applies it to its `CallsView` (the only replay it reads) and moves to the newest call unless the
user stepped back (`n`/`p`/`g` as in replay; `f` or End follows the newest call again). With `--latest`
a session that starts later in the project folder is followed instead, with a notice that says so.

The view keeps a constant number of our requests in full (`CallsView`): a call whose request it let go is
made again by the follower thread (`WatchFeed.remake`, posted back as `StepRemade`) before it is shown,
before its event is explained (the event's call and the one before it: the loss report's recap and the
diff), and before the coverage after a recorded compaction is drawn when a set it reads was not kept.
The panel's ledger lets those requests go with the view (`BudgetLedger.let_go`).
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer, Header, Input, Static

from tui_agent.core.sanitize import strip_controls
from tui_agent.ui.screens.replay import CHUNK, HINT, PROGRESS_AFTER, ReplayPanel, ReplayScreen
from tui_agent.ui.widgets.replay_card import ReplayCard
from tui_agent.ui.widgets.watch_card import WatchCard

if TYPE_CHECKING:
    from pathlib import Path

    from tui_agent.core.agent.budget import EventEntry
    from tui_agent.core.recordings.call_figures import CallFigures
    from tui_agent.core.compaction import CompactPolicy
    from tui_agent.core.recordings.replay import ReplayStep
    from tui_agent.core.recordings.watch_feed import Arrival
    from tui_agent.core.agent.session import Session
    from tui_agent.core.recordings.log_source import LogSource

STRATEGIES = ("none", "v2")  # the append-only conversation (the card's ÷append) and ours
STEP_CALLS = 25  # calls made per arrival (the stop flag is asked before each)
PENDING_CALLS = 400  # calls read and not made yet, at most: past it the log is not read further for now
# Behind the log, arrivals come as fast as calls are made: drawing each (the card, the panel, a layout)
# kept the UI thread busy and a key waited its turn (q took 2 s under load). Drawn once a second then.
DRAW_EVERY_BEHIND = 1.0


@dataclass
class CallsArrived(Message):
    """The follower thread's results for one batch (an immutable `Arrival`)."""

    arrival: Arrival


@dataclass
class SessionSwitched(Message):
    """`--latest`: a newer session started and is followed from now on."""

    path: Path


@dataclass
class StepRemade(Message):
    """A call whose request the view had let go, made again by the follower thread."""

    generation: int
    step: ReplayStep


@dataclass
class NotAFile(Message):
    """The followed path is no longer a regular file (a FIFO, a device): not read, waited on."""

    path: Path


@dataclass
class FeedProgress(Message):
    """The follower thread is still making the calls of one large batch (shown after `PROGRESS_AFTER`)."""

    done: int
    total: int


class WatchScreen(ReplayScreen):
    BINDINGS = [Binding("f", "follow", "Follow newest"), Binding("end", "follow", "Follow", show=False)]

    def __init__(self, source: LogSource, path: Path, policy: CompactPolicy, session: Session) -> None:
        from tui_agent.core.recordings.watch_feed import CallsView

        Screen.__init__(self)  # the replay screen's own start needs a replay with calls; a watch may have none yet
        self.source, self.policy, self.session = source, policy, session
        self.path = path
        self.view = CallsView(path)
        self.replay: CallsView | None = None  # what the replay screen reads: the view, once a call is in
        self.current = -1
        self.following = True
        self.last_progress = ""
        self._stop = threading.Event()
        self.follower_ended = threading.Event()  # the follower thread returned (the process may end now)
        self._wake = threading.Event()  # cuts the follower's sleep short: a stop, or a call to make again
        self._remakes: queue.SimpleQueue[tuple[int, int]] = queue.SimpleQueue()  # (generation, call index)
        self._opening: EventEntry | None = None  # an event to explain once its calls are made again
        self._asked: set[tuple[int, int]] = set()  # (generation, call index) asked of the follower, not back yet
        self._refused = False  # the follower found the path is not a regular file (said once)
        self._applied = threading.Event()  # the last arrival was applied: the follower may post the next
        self._applied.set()
        self.behind = (0, 0)  # calls read and not made yet, bytes not read yet: how far behind the log
        self._drawn_at = 0.0  # when an arrival was last drawn (behind the log: once a second)

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False, icon="◆")
        with Horizontal(id="replay-body"):
            with VerticalScroll(id="replay-left"):
                yield Static(f"Waiting for the first model call in {strip_controls(self.path.name)} …",
                             id="watch-waiting", markup=False)
                yield ReplayCard(id="replay-card")
                yield WatchCard(id="watch-card")
            yield ReplayPanel(self.session, id="panel")
        yield Static("", id="replay-progress", markup=False)  # the replay screen's jumps write to it
        yield Input(placeholder=HINT, id="replay-prompt", disabled=True)
        yield Footer()

    def on_mount(self) -> None:
        self.title = "tui-agent watch"
        self.sub_title = strip_controls(f"waiting · {self.path.name}")
        self.panel.full_event = self.full_event
        self.run_worker(self._follow, thread=True, group="watch-follow", exclusive=True)

    def on_unmount(self) -> None:
        self._stop.set()
        self._wake.set()

    def _nap(self, seconds: float) -> None:
        """The follower's sleep while nothing is written (in its thread), ended early by `_wake`."""
        self._wake.wait(seconds)
        self._wake.clear()

    # -- the follower thread: everything slow happens here ------------------------------------------
    def _follow(self) -> None:
        from textual.worker import get_current_worker

        worker = get_current_worker()  # cancelled when the app ends for any reason (a crash included)
        path = self.path
        try:
            tracer = self._tracer()
            try:
                self._follow_until(lambda: self._stop.is_set() or worker.is_cancelled, path, tracer)
            finally:
                if tracer is not None:
                    tracer.close()
        finally:
            self.follower_ended.set()

    def _tracer(self):  # noqa: ANN202 - a core.recordings.spans.StepTracer or None
        """A span per call when OTEL_EXPORTER_OTLP_ENDPOINT is set (`core.agent.telemetry`; nothing otherwise)."""
        from tui_agent.core.agent import telemetry
        from tui_agent.core.recordings.spans import step_tracer

        if not telemetry.enabled():
            return None
        try:
            return step_tracer("watch")
        except RuntimeError as error:  # the [otel] extra is missing: say so on screen, and watch on
            self.app.call_from_thread(self.notify, str(error), severity="warning", timeout=6)
            return None

    def _follow_until(self, stop: Callable[[], bool], path: Path, tracer) -> None:  # noqa: ANN001
        """Read a capped batch, make at most `STEP_CALLS` calls (the stop flag asked before each), post the
        arrival, repeat: `q` far behind a fast log is obeyed within a call, and the calls read ahead are
        bounded (`PENDING_CALLS`) whatever the log's size."""
        from tui_agent.core.recordings.follow import Batch, Follower
        from tui_agent.core.recordings.watch_feed import WatchFeed

        def wake() -> bool:
            return stop() or self.source.due() or not self._remakes.empty()

        while not stop():
            feed = WatchFeed(path, self.policy, STRATEGIES, tracer)
            with Follower(path, sleep=self._nap) as follower:
                while not stop():
                    if feed.pending >= PENDING_CALLS:  # far behind: make calls before reading more
                        batch = Batch()
                    elif feed.pending:
                        batch = follower.poll()
                    else:
                        batch = follower.wait(stop=wake)
                    if stop():
                        return
                    while not self._remakes.empty():
                        generation, k = self._remakes.get()
                        if (step := feed.remake(generation, k)) is not None:
                            self.post_message(StepRemade(generation, step))
                    if self.source.due() and (newer := self.source.newer(path)) is not None:
                        path = newer
                        self.post_message(SessionSwitched(newer))
                        break
                    if batch.not_regular and not self._refused:
                        self.post_message(NotAFile(path))
                    self._refused = batch.not_regular
                    arrival = feed.feed(batch, self._progress(), stop, STEP_CALLS, follower.behind)
                    if arrival is not None and self._applied_or_stopped(stop):
                        self._applied.clear()
                        self.post_message(CallsArrived(arrival))

    def _applied_or_stopped(self, stop: Callable[[], bool]) -> bool:
        """Wait (in the follower thread) until the screen applied the last arrival: a screen slower than
        the follower never gathers a queue of arrivals (each holds requests in full). False: stopped."""
        while not self._applied.wait(0.05):
            if stop():
                return False
        return not stop()

    def _progress(self):  # noqa: ANN202 - a callback for WatchFeed.feed, run in the follower thread
        """Post 'replaying call N/M' every `CHUNK` calls once a batch has taken `PROGRESS_AFTER` seconds."""
        started = time.monotonic()

        def tell(done: int, total: int) -> None:
            if done % CHUNK == 0 and time.monotonic() - started >= PROGRESS_AFTER:
                self.post_message(FeedProgress(done, total))

        return tell

    # -- the UI thread: apply results ---------------------------------------------------------------
    def on_feed_progress(self, message: FeedProgress) -> None:
        self.last_progress = f"replaying call {message.done}/{message.total}…"
        line = self.query_one("#replay-progress", Static)
        line.update(self.last_progress)
        line.add_class("-active")

    def on_session_switched(self, message: SessionSwitched) -> None:
        from tui_agent.core.recordings.watch_feed import CallsView

        self.notify(f"A newer session started: {strip_controls(message.path.name)}; following it", timeout=5)
        self.path = message.path
        self.view, self.replay = CallsView(message.path), None
        self._asked, self._opening = set(), None  # a new feed counts its generations from 1 again
        self.current, self.following = -1, True

    def on_not_a_file(self, message: NotAFile) -> None:
        self.notify(f"{strip_controls(message.path.name)} is not a regular file now: not read; waiting for a "
                    "regular file there", severity="warning", timeout=6)

    def on_calls_arrived(self, message: CallsArrived) -> None:
        try:
            self._apply(message.arrival)
        finally:
            self._applied.set()

    def _apply(self, arrival: Arrival) -> None:
        self.query_one("#replay-progress", Static).remove_class("-active")
        if arrival.path != self.path:
            return  # a batch of the session followed before a switch
        self.behind = (arrival.behind_calls, arrival.behind_bytes)
        if arrival.reset:  # followed from its new start: the newest call again
            self.notify(f"{strip_controls(self.path.name)} was truncated or replaced: reading it again", timeout=4)
            self.following = True
        fresh = self.view.apply(arrival)
        if fresh:  # the calls start again (the ruler moved, or a reset)
            self.following = self.following or self.current < 0
        if not self.view.calls:
            self.replay = None
            return
        self.replay = self.view
        self.panel.ledger.model = self.view.model or self.panel.ledger.model  # the log's model prices the panel
        self.session.history = self.view.history  # the panel's rows come from the recorded history
        self.query_one("#watch-waiting").display = False
        now = time.monotonic()
        if any(self.behind) and not fresh and self.current >= 0 and now - self._drawn_at < DRAW_EVERY_BEHIND:
            self._ledger_lets_go()  # behind the log: the calls are in the view, drawn at the next redraw
            return
        self._drawn_at = now
        if self.following or self.current < 0:
            self.show_call(self.view.calls - 1)
        else:
            self.show_call(min(self.current, self.view.calls - 1))
        self._ledger_lets_go()

    def _ledger_lets_go(self) -> None:
        """The panel's ledger lets go of the requests the view let go (its events held them all)."""
        from tui_agent.core.recordings.watch_feed import slim_plan

        view = self.view
        self.panel.ledger.let_go(lambda call: view.held(call - 1), slim_plan)

    def _remake(self, calls: list[int]) -> None:
        """Ask the follower thread to make these calls again (their requests were let go), each once."""
        for k in calls:
            if (asked := (self.view.generation, k)) not in self._asked:
                self._asked.add(asked)
                self._remakes.put(asked)
        self._wake.set()

    def on_step_remade(self, message: StepRemade) -> None:
        from tui_agent.core.recordings.watch_feed import COVERAGE_CALLS

        view = self.view
        self._asked.discard((message.generation, message.step.number - 1))
        if not view.restore(message.generation, message.step):
            return
        k = message.step.number - 1
        if self.current == k or (0 <= self.current <= k < self.current + COVERAGE_CALLS
                                 and view.figures[self.current].agent_compaction):
            self.show_call(self.current)  # the call shown, or a call its coverage reads
        opening = self._opening
        if opening is not None and view.wanted and all(map(view.held, view.wanted)) and self.app.screen is self:
            self.panel.open_event(opening)
        view.let_go()  # the step was used: unless it is shown or asked for, its request goes again
        self._ledger_lets_go()

    def full_event(self, entry: EventEntry) -> EventEntry | None:
        """`entry` with the requests of its call and of the call before it (what its loss report's recap
        and its diff read), as the events list would hold them had nothing been let go; None while they
        are made again (the event opens once they are back, `on_step_remade`)."""
        from tui_agent.core.agent.budget import EventEntry

        view = self.view
        k = entry.event.call - 1
        if not 0 <= k < view.calls:
            return entry
        calls = [j for j in (k - 1, k) if j >= 0]
        missing = [j for j in calls if not view.held(j)]
        if missing:
            self._opening, view.wanted = entry, set(calls)
            self._remake(missing)
            self.notify(f"Making call {k + 1} again from a checkpoint to explain its event…", timeout=3)
            return None
        self._opening, view.wanted = None, set()
        now = view.reported(view.step(k))
        before = view.reported(view.step(k - 1)) if k > 0 else None
        return EventEntry(entry.event, now.plan, now.messages, before.plan if before is not None else None,
                          before.messages if before is not None else ())

    def figures_at(self, k: int) -> CallFigures:
        return self.view.figures[k]

    def show_call(self, k: int) -> None:
        if self.replay is None:
            return
        view = self.view
        k = min(max(k, 0), view.calls - 1)
        view.pinned = k
        if not view.held(k):  # its request was let go: the follower thread makes it again, then it is shown
            self.current, self.following = k, False
            self._remake([k])
            self.sub_title = strip_controls(f"call {k + 1}/{view.calls} · making it again from a checkpoint… · "
                                            f"{self.path.name}")
            return
        super().show_call(k)
        self.following = self.current == view.calls - 1
        figures = self.figures_at(self.current)
        after = None
        note = "" if view.fixed else f"provisional ruler: refitted on each call until call {view.fit_calls}, then fixed"
        if figures.agent_compaction and figures.forgot:
            from tui_agent.core.recordings.forgot import coverage_after
            from tui_agent.core.recordings.watch_feed import COVERAGE_CALLS

            upto = min(self.current + COVERAGE_CALLS, view.calls)
            # what the coverage reads of our requests at its calls (kept as entity sets, not requests)
            ours = [view.coverage_request(j) if j >= self.current else frozenset() for j in range(upto)]
            missing = [j for j in range(self.current, upto) if ours[j] is None]
            if missing:  # let go before their sets were kept: made again, then drawn (`on_step_remade`)
                self._remake(missing)
                note = "\n".join(filter(None, ["coverage: making its calls again from a checkpoint…", note]))
            else:
                after = coverage_after(view.history, view.recorded.calls, view.recorded.segment_start,
                                       self.current + 1, ours)
        self.query_one(WatchCard).show(figures, after, note)
        self.title = "tui-agent watch"
        state = "following" if self.following else "stepped back (f follows the newest call)"
        if any(self.behind):
            from tui_agent.core.recordings.log_source import behind_text

            state += f" · behind the log: {behind_text(*self.behind)}"
        self.sub_title = strip_controls(f"call {self.current + 1}/{view.calls} · {state} · "
                                        f"{view.model or 'unknown model'} · {self.path.name}")

    def action_follow(self) -> None:
        if self.replay is not None:
            self.show_call(self.replay.calls - 1)

    def action_step(self, delta: int) -> None:
        if self.replay is not None:
            super().action_step(delta)
