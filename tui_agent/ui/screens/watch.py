"""Watch mode: the replay screen on a log that is still being written (`tui-agent watch`).

A timer polls the follower (a stat and a read: near idle while nothing is written); each batch of whole
lines goes to `core.watch.LiveReplay`, and the view moves to the newest call unless the user stepped
back (`n`/`p`/`g` as in replay; `f` or End follows the newest call again). With `--latest` a session
that starts later in the project folder is followed instead, with a notice that says so.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Header, Input, Static

from tui_agent.core.sanitize import strip_controls
from tui_agent.ui.screens.replay import HINT, ReplayPanel, ReplayScreen
from tui_agent.ui.widgets.replay_card import ReplayCard
from tui_agent.ui.widgets.watch_card import WatchCard

if TYPE_CHECKING:
    from pathlib import Path

    from tui_agent.core.call_figures import CallFigures
    from tui_agent.core.compaction import CompactPolicy
    from tui_agent.core.session import Session
    from tui_agent.watch_cli import LogSource

POLL_SECONDS = 0.25


class WatchScreen(ReplayScreen):
    BINDINGS = [Binding("f", "follow", "Follow newest"), Binding("end", "follow", "Follow", show=False)]

    def __init__(self, source: LogSource, path: Path, policy: CompactPolicy, session: Session) -> None:
        Screen.__init__(self)  # the replay screen's own start needs a replay with calls; a watch may have none yet
        self.source, self.policy, self.session = source, policy, session
        self.current = -1
        self.following = True
        self.figures: list[CallFigures] = []
        self._open(path)

    def _open(self, path: Path) -> None:
        from tui_agent.core.call_figures import FiguresRun
        from tui_agent.core.follow import Follower
        from tui_agent.core.watch import LiveReplay

        self.path = path
        self.follower = Follower(path)
        self.live = LiveReplay(path, self.policy, ("none", "v2"))
        self.replay = None
        self.run = FiguresRun()
        self.figures = []
        self.current, self.following = -1, True

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False, icon="◆")
        with Horizontal(id="replay-body"):
            with VerticalScroll(id="replay-left"):
                yield Static(f"Waiting for the first model call in {strip_controls(self.path.name)} …",
                             id="watch-waiting", markup=False)
                yield ReplayCard(id="replay-card")
                yield WatchCard(id="watch-card")
            yield ReplayPanel(self.session, id="panel")
        yield Input(placeholder=HINT, id="replay-prompt", disabled=True)
        yield Footer()

    def on_mount(self) -> None:
        self.title = "tui-agent watch"
        self.sub_title = strip_controls(f"waiting · {self.path.name}")
        self.poll()
        self.set_interval(POLL_SECONDS, self.poll)

    def on_unmount(self) -> None:
        self.follower.close()

    # -- following --------------------------------------------------------------------------------
    def poll(self) -> None:
        if self.source.due() and (newer := self.source.newer(self.path)) is not None:
            self.follower.close()
            self.notify(f"A newer session started: {strip_controls(newer.name)}; following it", timeout=5)
            self._open(newer)
        batch = self.follower.poll()
        if batch.reset:
            self.notify(f"{strip_controls(self.path.name)} was truncated or replaced: reading it again", timeout=4)
        if not self.live.feed(batch) or self.live.replay is None:
            return
        if self.live.replay is not self.replay:  # a new replay (the ruler moved, or a reset): start over
            self.replay = self.live.replay
            self.run = type(self.run)()
            self.figures = []
            self.following = self.following or self.current < 0
        self.session.history = self.replay.history  # the panel's rows come from the recorded history
        self.query_one("#watch-waiting").display = False
        if self.following or self.current < 0:
            self.show_call(self.replay.calls - 1)
        else:
            self.show_call(min(self.current, self.replay.calls - 1))

    def figures_at(self, k: int) -> CallFigures:
        while len(self.figures) <= k:
            step = self.replay.step(len(self.figures))
            self.figures.append(self.run.figures(self.replay, step, self.live.pre_tokens()))
        return self.figures[k]

    def show_call(self, k: int) -> None:
        if self.replay is None:
            return
        super().show_call(k)
        self.following = self.current == self.replay.calls - 1
        figures = self.figures_at(self.current)
        after = None
        if figures.agent_compaction and figures.forgot:
            from tui_agent.core.forgot import coverage_after

            recorded = self.replay.recorded
            upto = min(self.current + 10, self.replay.calls)
            ours = [self.replay.step(j).messages for j in range(upto)]
            after = coverage_after(self.replay.history, recorded.calls, recorded.segment_start, self.current + 1, ours)
        ruler = "" if self.live.fixed else (f"provisional ruler: refitted on each call until call "
                                            f"{self.live.fit_calls}, then fixed")
        self.query_one(WatchCard).show(figures, after, ruler)
        self.title = "tui-agent watch"
        state = "following" if self.following else "stepped back (f follows the newest call)"
        self.sub_title = strip_controls(f"call {self.current + 1}/{self.replay.calls} · {state} · "
                                        f"{self.replay.model or 'unknown model'} · {self.path.name}")

    def action_follow(self) -> None:
        if self.replay is not None:
            self.show_call(self.replay.calls - 1)

    def action_step(self, delta: int) -> None:
        if self.replay is not None:
            super().action_step(delta)
