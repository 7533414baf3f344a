"""The approval bar: a compaction event is due and the user decides (approve-before-compacting).

Why a widget of its own: the panel shows the next request as it would be (the usual preview, with the event
applied) and this bar, under it, asks — approve, edit (the steering mode: pin or exclude rows, then approve)
or postpone (this call goes out uncompacted; the engine says when it cannot, the window being too small).
The engine waits on `answer`, a future this bar resolves.

Nothing here takes the keyboard (the bar once focused its own button, and the next question's letters
approved, edited or postponed the event and were lost). Neither the bar nor its buttons can be focused, and
no letter answers: a click on a button does, or the screen's keys (Alt+Y, F4, Alt+L) and
`/approve yes|edit|later`, which no question typed into the prompt can produce.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Literal

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.message import Message
from textual.widgets import Button, Static

Answer = Literal["approve", "postpone"]
BUTTONS = (("approval-approve", "Approve (Alt+Y)"), ("approval-edit", "Edit (F4)"),
           ("approval-postpone", "Later (Alt+L)"))  # the question above says what each does


class ApprovalBar(Vertical, can_focus=False):
    """"Compaction due at call #12: …" with Approve · Edit · Later; `answer` resolves with the choice."""

    DEFAULT_CSS = """
    ApprovalBar { height: auto; padding: 0 1; background: $warning 12%; border-top: hkey $warning; }
    ApprovalBar > #approval-text { width: 1fr; height: auto; }
    ApprovalBar > Horizontal { height: auto; width: 1fr; }
    ApprovalBar Button { min-width: 10; width: auto; height: 1; border: none; margin: 0 1 0 0; }
    """

    class EditWanted(Message):
        """Edit: the screen enters the steering mode (pin / exclude), the bar waits for Approve."""

    @dataclass
    class Chosen(Message):
        """A button was clicked: the screen answers as `/approve <word>` would ("yes", "edit", "later")."""

        word: str

    def __init__(self, question: str, **kwargs) -> None:
        super().__init__(**kwargs)
        self.question = question
        self.answer: asyncio.Future[Answer] = asyncio.get_running_loop().create_future()

    def compose(self) -> ComposeResult:
        yield Static(Content.assemble(("‖ waiting: ", "bold $text-warning"), self.question), id="approval-text")
        with Horizontal():
            for number, (button_id, label) in enumerate(BUTTONS):
                button = Button(label, id=button_id, variant="primary" if number == 0 else "default", compact=True)
                button.can_focus = False  # a click answers; a key typed for the prompt never does
                yield button

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        words = {"approval-approve": "yes", "approval-edit": "edit", "approval-postpone": "later"}
        self.post_message(self.Chosen(words[str(event.button.id)]))

    def decide(self, answer: Answer) -> bool:
        """Resolve the wait (False when it was already answered)."""
        if self.answer.done():
            return False
        self.answer.set_result(answer)
        return True


__all__ = ["Answer", "ApprovalBar", "BUTTONS"]
