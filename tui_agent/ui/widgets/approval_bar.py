"""The approval bar: a compaction event is due and the user decides (approve-before-compacting, issue 30).

Why a widget of its own: the panel shows the next request as it would be (the usual preview, with the event
applied) and this bar, under it, asks — approve, edit (the steering mode: pin or exclude rows, then approve)
or postpone (this call goes out uncompacted; the engine says when it cannot, the window being too small).
The engine waits on `answer`, a future this bar resolves; nothing is decided by a key typed as text.
"""

from __future__ import annotations

import asyncio
from typing import Literal

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.message import Message
from textual.widgets import Button, Static

Answer = Literal["approve", "postpone"]


class ApprovalBar(Vertical, can_focus=False):
    """"Compaction due at call #12: …" with Approve · Edit · Postpone; `answer` resolves with the choice."""

    DEFAULT_CSS = """
    ApprovalBar { height: auto; padding: 0 1; background: $warning 12%; border-top: hkey $warning; }
    ApprovalBar > #approval-text { width: 1fr; height: auto; }
    ApprovalBar > Horizontal { height: 1; width: 1fr; }
    ApprovalBar Button { min-width: 12; height: 1; border: none; margin: 0 1 0 0; }
    """
    BINDINGS = [Binding("a", "decide('approve')", "Approve"), Binding("e", "edit", "Edit"),
                Binding("p", "decide('postpone')", "Postpone")]

    class EditWanted(Message):
        """Edit: the panel enters its steering mode (pin / exclude), the bar waits for Approve."""

    def __init__(self, question: str, **kwargs) -> None:
        super().__init__(**kwargs)
        self.question = question
        self.answer: asyncio.Future[Answer] = asyncio.get_running_loop().create_future()

    def compose(self) -> ComposeResult:
        yield Static(Content.assemble(("‖ waiting: ", "bold $text-warning"), self.question), id="approval-text")
        with Horizontal():
            yield Button("a Approve", id="approval-approve", variant="primary", compact=True)
            yield Button("e Edit (pin/exclude)", id="approval-edit", compact=True)
            yield Button("p Postpone (send whole)", id="approval-postpone", compact=True)

    def on_mount(self) -> None:
        self.focus_approve()

    def focus_approve(self) -> None:
        self.query_one("#approval-approve", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        match event.button.id:
            case "approval-approve":
                self.action_decide("approve")
            case "approval-postpone":
                self.action_decide("postpone")
            case "approval-edit":
                self.action_edit()

    def action_decide(self, answer: str) -> None:
        if not self.answer.done():
            self.answer.set_result("postpone" if answer == "postpone" else "approve")

    def action_edit(self) -> None:
        self.post_message(self.EditWanted())


__all__ = ["Answer", "ApprovalBar"]
