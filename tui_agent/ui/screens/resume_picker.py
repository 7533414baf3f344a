"""`/resume` (and a bare `tui-agent --resume`): pick a saved session to continue.

One row per session of this workspace, newest activity first: first prompt, last activity, messages,
tokens of the last call, model. Typing filters the rows (every word must appear in the prompt, id or
model); ↑/↓ choose, Enter resumes, Esc goes back. The session texts are untrusted: plain text only.
"""

from __future__ import annotations

from typing import Sequence

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Footer, Input, OptionList, Static
from textual.widgets.option_list import Option

from tui_agent.core.journal.store import SessionInfo, short_time
from tui_agent.core.sanitize import strip_controls
from tui_agent.ui.budget_model import counted


def row_text(info: SessionInfo, width: int = 100) -> str:
    """One line of `width` cells: the first prompt, cut to fit, then when, size and model."""
    tokens = f"{info.tokens / 1000:.1f}k" if info.tokens >= 1000 else str(info.tokens)
    tail = f"  {short_time(info.last_activity)}  {counted(info.messages, 'msg'):>9}  {tokens:>6} tok  {info.model[:24]}"
    room = max(width - len(tail), 12)
    prompt = " ".join((info.first_prompt or "(no prompt)").split())
    if len(prompt) > room:
        prompt = prompt[: room - 1] + "…"
    return f"{prompt:<{room}}{tail}"


def matches(info: SessionInfo, query: str) -> bool:
    haystack = f"{info.first_prompt} {info.session_id} {info.model}".lower()
    return all(word in haystack for word in query.lower().split())


class ResumePicker(ModalScreen["SessionInfo | None"]):
    DEFAULT_CSS = """
    ResumePicker { align: center middle; background: $background 60%; }
    ResumePicker #resume-dialog {
        width: 110; max-width: 95%; height: auto; max-height: 90%;
        padding: 1 2; background: $surface; border: thick $accent;
    }
    ResumePicker #resume-title { height: 1; margin-bottom: 1; text-style: bold; }
    ResumePicker #resume-filter { margin-bottom: 1; }
    ResumePicker #resume-list { height: auto; max-height: 20; }
    ResumePicker #resume-empty { color: $text-muted; }
    """
    BINDINGS = [
        Binding("escape", "dismiss_none", "Back"),
        Binding("down", "move(1)", "Down", show=False, priority=True),
        Binding("up", "move(-1)", "Up", show=False, priority=True),
    ]

    def __init__(self, sessions: Sequence[SessionInfo]) -> None:
        super().__init__()
        self.sessions = list(sessions)
        self.shown: list[SessionInfo] = list(sessions)

    def compose(self) -> ComposeResult:
        with Vertical(id="resume-dialog"):
            yield Static(f"Resume a session ({len(self.sessions)} saved in this workspace) · ↑/↓ choose · "
                         "Enter resume · Esc back", id="resume-title", markup=False)
            yield Input(placeholder="type to filter: prompt, id or model", id="resume-filter")
            yield OptionList(*self._options(), id="resume-list")
            yield Static("No saved session matches." if self.sessions else "No saved sessions in this workspace yet.",
                         id="resume-empty", markup=False)
        yield Footer()  # this modal's own keys, not the main screen's under it

    def on_mount(self) -> None:
        self.call_after_refresh(self._refill)  # rows fitted to the dialog's real width
        self._refresh_empty()
        self.query_one(Input).focus()
        if self.shown:
            self.query_one(OptionList).highlighted = 0

    def _options(self) -> list[Option]:
        width = self.query_one("#resume-dialog").content_region.width - 4 if self.is_mounted else 100
        return [Option(strip_controls(row_text(info, max(width, 40))), id=info.session_id) for info in self.shown]

    def on_resize(self) -> None:
        self._refill()

    def _refresh_empty(self) -> None:
        self.query_one("#resume-empty").display = not self.shown
        self.query_one(OptionList).display = bool(self.shown)

    def on_input_changed(self, event: Input.Changed) -> None:
        self.shown = [info for info in self.sessions if matches(info, event.value)]
        self._refill()

    def _refill(self) -> None:
        options = self.query_one(OptionList)
        options.clear_options()
        options.add_options(self._options())
        if self.shown:
            options.highlighted = 0
        self._refresh_empty()

    def action_move(self, delta: int) -> None:
        options = self.query_one(OptionList)
        if self.shown:
            current = options.highlighted or 0
            options.highlighted = max(0, min(len(self.shown) - 1, current + delta))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self._choose(self.query_one(OptionList).highlighted)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self._choose(event.option_index)

    def _choose(self, index: int | None) -> None:
        if index is not None and 0 <= index < len(self.shown):
            self.dismiss(self.shown[index])

    def action_dismiss_none(self) -> None:
        self.dismiss(None)
