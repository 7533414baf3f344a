"""The watch screen on a `tui-agent proxy` recording: the watch, plus the exact request of the call shown.

A recording holds each request whole, so beside the history (the union of what the agent sent, the panel)
this screen shows the call's own request (its message count in the card's first line too) (`RequestCard`: system, tools, messages, cache breakpoints, side
calls) and, on `r`, the whole request as JSON. The request is read from the recording by
`core.recordings.proxy_index.RequestIndex` (the same side-call rule as the replay, so step k is the same call).
"""

from __future__ import annotations

import json
import threading

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Footer, Static

from tui_agent.core.recordings.proxy_index import RequestIndex, RequestView, describe
from tui_agent.core.sanitize import strip_controls
from tui_agent.ui.screens.watch import WatchScreen
from tui_agent.ui.widgets.replay_card import ReplayCard
from tui_agent.ui.widgets.request_card import RequestCard

SHOWN_AT_MOST = 400_000  # characters of a request shown whole (a larger one is cut, saying so)


class ProxyWatchScreen(WatchScreen):
    BINDINGS = [Binding("r", "request", "Request")]
    # the panel shows the usage the API reported for a call whose request ours is (neither compacted): the
    # recording holds the exact request, so that usage is the usage of what the panel shows
    REPORTS_API_USAGE = True

    def on_mount(self) -> None:  # (WatchScreen's own on_mount runs too: Textual calls each class's handler)
        self.requests = RequestIndex(self.path)
        self._reading = threading.Lock()  # one reader of the index at a time (workers may overlap)
        self.query_one("#replay-left").mount(RequestCard(id="request-card"))

    def show_call(self, k: int) -> None:
        super().show_call(k)
        if self.replay is not None and self.is_mounted:
            # reading a long recording's new lines is not the UI thread's work: a thread, then the card
            self.run_worker(lambda at=self.current: self._read_request(at), thread=True, group="request-card")

    def _read_request(self, k: int) -> None:
        record = self._record(k)
        view = describe(record) if record else None
        self.app.call_from_thread(self._show_request, k, view, list(self.requests.side))

    def _record(self, k: int) -> dict | None:
        with self._reading:
            self.requests.refresh()
            return self.requests.request(k)

    def _show_request(self, k: int, view: RequestView | None, side: list) -> None:
        card = self.query("#request-card")
        if card and k == self.current:  # (a later call shown meanwhile draws its own)
            card.first(RequestCard).show(view, side, k)
            replay = self.replay
            if view is not None and replay is not None and 0 <= k < replay.calls and self.view.held(k):
                # the card's count is the exact request's, as the request card below lists it
                self.query_one(ReplayCard).show(replay, replay.step(k), len(view.messages))

    def action_request(self) -> None:
        if self.replay is None:
            return
        record = self._record(self.current)
        if record is not None:
            self.app.push_screen(WholeRequest(self.current, record))


class WholeRequest(ModalScreen):
    """The call's request as recorded (redacted like the journal), pretty-printed; Escape or q closes."""

    DEFAULT_CSS = """
    WholeRequest { align: center middle; }
    WholeRequest > VerticalScroll { width: 95%; height: 90%; border: round $accent; background: $surface; }
    """
    BINDINGS = [Binding("escape,q,r", "dismiss", "Close")]

    def __init__(self, step: int, record: dict) -> None:
        super().__init__()
        self.step, self.record = step, record

    def compose(self) -> ComposeResult:
        text = json.dumps(self.record.get("request"), indent=2, ensure_ascii=False)
        if len(text) > SHOWN_AT_MOST:
            text = text[:SHOWN_AT_MOST] + f"\n… cut: {len(text) - SHOWN_AT_MOST:,} more characters in the recording"
        with VerticalScroll() as scroll:
            scroll.border_title = f"call {self.step + 1} · proxy call {self.record.get('call')} · the exact request"
            yield Static(strip_controls(text), markup=False)
        yield Footer()
