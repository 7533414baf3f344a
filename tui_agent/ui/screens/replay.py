"""Replay mode: step through a recorded session's model calls; the panel draws what we would send.

Read-only: the prompt box is disabled and says so (it only opens for `g`, to type where to jump). `n`/`p`
step one call, `]`/`[` jump between compaction events (the agent's and ours), `g` jumps to a call number
(`12`) or an event (`e3`, or `e` for the next). Each step comes from `core.replay` (made on demand and
kept: the compactor is sticky, so a far jump replays the calls before it first).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Header, Input, Static

from tui_agent.core.sanitize import strip_controls
from tui_agent.ui.widgets.budget_panel import BudgetPanel
from tui_agent.ui.widgets.replay_card import ReplayCard

if TYPE_CHECKING:
    from tui_agent.core.replay import Replay, ReplayStep
    from tui_agent.core.session import Session

PROGRESS_AFTER = 0.5  # seconds: a jump that takes longer shows a progress line
CHUNK = 10  # calls made between two frames while a far jump replays
HINT = "Replay (read-only): nothing is sent. n next call · p previous · g jump · ] [ events · q quit"
JUMP_HINT = "Jump to: a call number (12), an event (e3), or e for the next event; Enter jumps, Esc cancels"


class ReplayPanel(BudgetPanel):
    """The budget panel fed from replay steps instead of a running turn."""

    def ask_first_plan(self) -> None:
        """Replay draws recorded steps; nothing is planned for a next call."""

    def show_step(self, replay: "Replay", step: "ReplayStep") -> None:
        # The session holds the whole recorded history and is never edited: the rows show it up to the call.
        self.shown_upto = step.history_len
        # The panel draws what its budget ledger holds: replay every step up to this one into a fresh ledger,
        # so stepping back shows the calls, events and cost as they stood at this call.
        self.ledger.reset()
        for earlier in replay.steps[: step.number - 1]:
            self.ledger.feed(replay.reported(earlier))
        self.on_compaction(replay.reported(step))

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
        Binding("left_square_bracket", "event(-1)", "Prev event", show=False),
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

    async def go_to(self, k: int) -> None:
        """Show call `k`; when the calls before it are not replayed yet, replay them a few at a time
        between frames, with a progress line once that takes longer than `PROGRESS_AFTER`."""
        import asyncio
        import time

        k = min(max(k, 0), self.replay.calls - 1)
        line = self.query_one("#replay-progress", Static)
        started = time.monotonic()
        try:
            while self.replay.made < k:
                self.replay.step(min(self.replay.made + CHUNK, k) - 1)
                if time.monotonic() - started >= PROGRESS_AFTER:
                    self.last_progress = f"replaying call {self.replay.made}/{k + 1}…"
                    line.update(self.last_progress)
                    line.add_class("-active")
                await asyncio.sleep(0)  # let the progress line draw and keys through
        finally:
            line.remove_class("-active")
        self.show_call(k)

    def jump(self, k: int) -> None:
        self.run_worker(self.go_to(k), group="replay-jump", exclusive=True)

    # -- actions -------------------------------------------------------------------------------
    def action_step(self, delta: int) -> None:
        self.show_call(self.current + delta)

    def action_event(self, direction: int) -> None:
        target = self.next_event(direction)
        if target is None:
            self.notify("No further compaction event" + (" replayed yet" if direction > 0 else ""), timeout=2)
            return
        self.show_call(target)

    def next_event(self, direction: int) -> int | None:
        """The call index of the next (or previous) event; forward, ours are found by replaying on."""
        if direction < 0:
            earlier = [k for k, _ in self.replay.event_calls() if k < self.current]
            return earlier[-1] if earlier else None
        for k in range(self.current + 1, self.replay.calls):
            step = self.replay.step(k)
            if step.event_line or step.agent_compactions:
                return k
        return None

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
        target = self.jump_target(text)
        if target is None:
            self.notify(f"Not a call or an event: {text!r} (calls 1–{self.replay.calls}; e, e3)", severity="warning",
                        timeout=3)
            return
        self.jump(target)

    def jump_target(self, text: str) -> int | None:
        if text.isdigit():
            n = int(text)
            return n - 1 if 1 <= n <= self.replay.calls else None
        if text in ("e", "event"):
            return self.next_event(1)
        if text.startswith("e") and text[1:].isdigit():
            wanted = int(text[1:])
            events = self.replay.event_calls()
            k = self.current
            while len(events) < wanted and k + 1 < self.replay.calls:  # ours are known once replayed
                k += 1
                self.replay.step(k)
                events = self.replay.event_calls()
            return events[wanted - 1][0] if 1 <= wanted <= len(events) else None
        return None

    def action_toggle_panel(self) -> None:
        self.toggle_class("-panel-hidden")
