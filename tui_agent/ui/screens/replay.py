"""Replay mode: step through a recorded session's model calls; the panel draws what we would send.

Read-only: the prompt box is disabled and says so (it only opens for `g`, to type where to jump). `n`/`p`
step one call, `]`/`[` jump between compaction events (the agent's and ours), `g` jumps to a call number
(`12`) or an event (`e3`, or `e` for the next). Each step comes from `core.replay` (made on demand and
kept: the compactor is sticky, so a far jump replays the calls before it first).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Header, Input, Static

from tui_agent.core.recordings.replay import OURS, sends_as_recorded, step_cost
from tui_agent.core.sanitize import strip_controls
from tui_agent.ui.widgets.budget_panel import BudgetPanel
from tui_agent.ui.widgets.replay_card import ReplayCard

if TYPE_CHECKING:
    from tui_agent.core.agent.budget import EventEntry
    from tui_agent.core.recordings.replay import Replay, ReplayStep
    from tui_agent.core.agent.session import Session

PROGRESS_AFTER = 0.5  # seconds: a jump that takes longer shows a progress line
CHUNK = 10  # calls made between two frames while a far jump replays
HINT = "Replay (read-only): nothing is sent. n next call · p previous · g jump · ] [ events · q quit"
JUMP_HINT = "Jump to: a call number (12), an event (e3), or e for the next event; Enter jumps, Esc cancels"


class ReplayPanel(BudgetPanel):
    """The budget panel fed from replay steps instead of a running turn."""

    READ_ONLY = True
    _fed: tuple | None = None  # (replay, last step fed, its number): what the ledger holds
    # A watch lets old requests go: given an event, the event with its two requests, or None while they
    # are made again (the watch opens it itself then). None: every request is at hand (a replay).
    full_event: Callable[["EventEntry"], "EventEntry | None"] | None = None

    def open_event(self, entry: "EventEntry") -> None:
        if self.full_event is not None:
            found = self.full_event(entry)
            if found is None:
                return
            entry = found
        super().open_event(entry)

    def ask_first_plan(self) -> None:
        """Replay draws recorded steps; nothing is planned for a next call."""

    def on_mount(self) -> None:
        self.rows.read_only = True  # no p / x / e: a replay changes nothing

    def show_step(self, replay: "Replay", step: "ReplayStep") -> None:
        # The session holds the whole recorded history and is never edited: the rows show it up to the call.
        self.shown_upto = step.history_len
        # The panel draws what its budget ledger holds: every step up to this one fed in order, so stepping
        # back shows the calls, events and cost as they stood at this call. Stepping forward (a watch that
        # follows new calls) feeds only the steps since the last one shown; anything else starts afresh.
        # A watch's log truncated or replaced starts its calls again in the same view: a step number past
        # the calls there now (or another step at that number) means the ledger's calls are gone.
        fed = self._fed
        steps = replay.steps
        if (fed is None or fed[0] is not replay or fed[2] > len(steps) or fed[1] is not steps[fed[2] - 1]
                or step.number <= fed[2]):
            self.ledger.reset()
            fed = (replay, None, 0)
        for earlier in steps[fed[2]: step.number - 1]:
            self.ledger.feed_earlier(replay.reported(earlier))  # the shown step's figures replace theirs
        self.on_compaction(replay.reported(step))
        ours = step.costs.get(OURS)  # the meter prices the call as its card does (one function, one unit)
        self.ledger.priced_as(step_cost(replay, step), ours.cached if ours is not None else 0.0)
        if getattr(self.screen, "REPORTS_API_USAGE", False) and sends_as_recorded(step):
            self.ledger.reported_as(step.usage)  # the exact request is the agent's own: the API said what it took
        self.meter.meter = self.ledger.current
        self._fed = (replay, step, step.number)

    def _update_sizes(self) -> None:
        """History and sent on the replay's one ruler (the fitted token model of `Replay.reported`): the
        rows' chars/4 total beside a fitted "sent" showed more sent than held."""
        super()._update_sizes()
        figures = self.ledger.current
        if figures is not None and figures.history_tokens:
            self.meter.history = (figures.history_tokens, *self.meter.history[1:])

    def action_count_exact(self) -> None:
        from textual.content import Content

        from tui_agent.ui.themes import MUTED

        self.meter.exact = Content.styled("exact count: replay mode sends nothing", MUTED)


class ReplayScreen(Screen):
    AUTO_FOCUS = None
    BINDINGS = [
        Binding("n", "step(1)", "Next call"),
        Binding("p", "step(-1)", "Previous"),
        Binding("g", "jump", "Jump"),
        Binding("right_square_bracket", "event(1)", "Next event"),
        Binding("left_square_bracket", "event(-1)", "Prev event"),
        Binding("escape", "cancel_jump", "Cancel", show=False),
        Binding("f2", "toggle_panel", "Budget panel", show=False),
        Binding("q", "app.quit", "Quit"),
    ]
    DEFAULT_CSS = """
    ReplayScreen #replay-body { height: 1fr; }
    ReplayScreen #replay-left { width: 1fr; }
    ReplayScreen #replay-prompt { margin: 0 1; }
    ReplayScreen #replay-progress { margin: 0 1; color: $text-muted; display: none; }
    ReplayScreen #replay-progress.-active { display: block; }
    ReplayScreen.-panel-hidden #panel { display: none; }
    """

    def __init__(self, replay: "Replay", session: "Session", start: int = 0) -> None:
        super().__init__()
        self.replay = replay
        self.session = session
        self.current = min(max(start, 0), replay.calls - 1)
        self.last_progress = ""  # the last progress line shown (a far jump's)

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False, icon="◆")
        with Horizontal(id="replay-body"):
            with VerticalScroll(id="replay-left"):
                yield ReplayCard(id="replay-card")
            yield ReplayPanel(self.session, id="panel")
        yield Static("", id="replay-progress", markup=False)
        yield Input(placeholder=HINT, id="replay-prompt", disabled=True)
        yield Footer()

    @property
    def panel(self) -> ReplayPanel:
        return self.query_one(ReplayPanel)

    @property
    def card(self) -> ReplayCard:
        return self.query_one(ReplayCard)

    @property
    def prompt(self) -> Input:
        return self.query_one("#replay-prompt", Input)

    def on_mount(self) -> None:
        self.show_call(self.current)
        # the rows follow the newest message, which needs the laid-out height: once more after the frame
        self.call_after_refresh(self.panel.rows.rows_changed)

    def show_call(self, k: int) -> None:
        k = min(max(k, 0), self.replay.calls - 1)
        step = self.replay.step(k)
        self.current = k
        self.card.show(self.replay, step)
        self.panel.show_step(self.replay, step)
        name = self.replay.path.name
        self.title = "tui-agent replay"
        model = self.replay.model or "unknown model"
        self.sub_title = strip_controls(f"call {step.number}/{self.replay.calls} · {model} · {name}")  # names are untrusted

    async def replay_on(self, calls: range, found: Callable[[int, "ReplayStep"], bool] | None = None,
                        target: int | None = None) -> int | None:
        """Step through `calls` until `found(k, step)` holds (its k; None when it never does). Calls not
        replayed yet are made a few at a time between frames, with a progress line once that takes longer
        than `PROGRESS_AFTER` (a far jump, or an event search that replays on): "replaying call N/target"
        (`target`: the call number aimed at; the end of `calls` by default)."""
        import asyncio
        import time

        line = self.query_one("#replay-progress", Static)
        started = time.monotonic()
        made = 0
        try:
            for k in calls:
                fresh = k >= self.replay.made
                step = self.replay.step(k)
                if found is not None and found(k, step):
                    return k
                made += fresh
                if fresh and made % CHUNK == 0:
                    if time.monotonic() - started >= PROGRESS_AFTER:
                        self.last_progress = f"replaying call {k + 1}/{target or calls.stop}…"
                        line.update(self.last_progress)
                        line.add_class("-active")
                    await asyncio.sleep(0)  # let the progress line draw and keys through
            return None
        finally:
            line.remove_class("-active")

    async def go_to(self, k: int) -> None:
        """Show call `k`, replaying the calls before it first when they are not yet (`replay_on`)."""
        k = min(max(k, 0), self.replay.calls - 1)
        await self.replay_on(range(self.replay.made, k), target=k + 1)
        self.show_call(k)

    def jump(self, k: int) -> None:
        self.run_worker(self.go_to(k), group="replay-jump", exclusive=True)

    # -- actions -------------------------------------------------------------------------------
    def action_step(self, delta: int) -> None:
        self.show_call(self.current + delta)

    def action_event(self, direction: int) -> None:
        self.run_worker(self._event(direction), group="replay-jump", exclusive=True)

    async def _event(self, direction: int) -> None:
        target = await self.next_event(direction)
        if target is None:
            self.notify("No further compaction event" + (" replayed yet" if direction > 0 else ""), timeout=2)
            return
        self.show_call(target)

    async def next_event(self, direction: int) -> int | None:
        """The call index of the next (or previous) event; forward, ours are found by replaying on."""
        if direction < 0:
            earlier = [k for k, _ in self.replay.event_calls() if k < self.current]
            return earlier[-1] if earlier else None
        return await self.replay_on(range(self.current + 1, self.replay.calls),
                                    lambda k, step: bool(step.event_line or step.agent_compactions))

    def action_jump(self) -> None:
        prompt = self.prompt
        prompt.disabled = False
        prompt.placeholder = JUMP_HINT
        prompt.value = ""
        prompt.focus()

    def action_cancel_jump(self) -> None:
        self._close_prompt()

    def _close_prompt(self) -> None:
        prompt = self.prompt
        prompt.value = ""
        prompt.placeholder = HINT
        prompt.disabled = True
        self.set_focus(None)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        text = event.value.strip().lower()
        self._close_prompt()
        self.run_worker(self._submit(text), group="replay-jump", exclusive=True)

    async def _submit(self, text: str) -> None:
        target = await self.jump_target(text)
        if target is None:
            self.notify(f"Not a call or an event: {text!r} (calls 1–{self.replay.calls}; e, e3)", severity="warning",
                        timeout=3)
            return
        await self.go_to(target)

    async def jump_target(self, text: str) -> int | None:
        if text.isdigit():
            n = int(text)
            return n - 1 if 1 <= n <= self.replay.calls else None
        if text in ("e", "event"):
            return await self.next_event(1)
        if text.startswith("e") and text[1:].isdigit():
            wanted = int(text[1:])
            # ours are known once replayed: replay on until the wanted event is known (or the end)
            if len(self.replay.event_calls()) < wanted:
                await self.replay_on(range(self.current + 1, self.replay.calls),
                                     lambda k, step: len(self.replay.event_calls()) >= wanted)
            events = self.replay.event_calls()
            return events[wanted - 1][0] if 1 <= wanted <= len(events) else None
        return None

    def action_toggle_panel(self) -> None:
        self.toggle_class("-panel-hidden")
