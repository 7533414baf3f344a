"""The trust prompt: the repository wants to start its MCP servers or apply its own allow rules.

Shown once after the first frame (the app's background start-up awaits it, the first frame does not),
and only for what is new or changed since the user last answered for this project. `a` approves and
`r` refuses (both remembered in the user's config dir); Esc decides nothing now, so the next start
asks again. Everything shown comes from the repository, so it is plain, control-stripped text.
"""

from __future__ import annotations

from pathlib import Path

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import HorizontalGroup, VerticalGroup, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Footer, Static

from tui_agent.core.sanitize import strip_controls
from tui_agent.core.access.trust import Answer, TrustQuestion
from tui_agent.ui.themes import MUTED


def trust_body(question: TrustQuestion) -> Content:
    """One block per item: its name and source, then what it would run or allow."""
    parts: list[Content] = []
    for item in question.items:
        parts.append(Content.assemble((strip_controls(item.name), "bold"), "  ",
                                      (strip_controls(str(item.source)), MUTED)))
        parts.append(Content("  " + strip_controls(item.summary)))
    return Content("\n").join(parts)


class TrustScreen(ModalScreen[Answer]):
    """Returns "approved", "refused" or "later" to the start-up worker awaiting it."""

    CSS_PATH = Path(__file__).parent / "trust.tcss"
    BINDINGS = [
        Binding("a", "decide('approved')", "Approve"),
        Binding("r", "decide('refused')", "Refuse"),
        Binding("escape", "decide('later')", "Not now"),
    ]

    def __init__(self, question: TrustQuestion) -> None:
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        with VerticalGroup(id="trust-dialog"):
            yield Static(Content.styled(self.question.title, "bold $text-warning"), id="trust-title")
            yield Static(self.question.explanation, id="trust-explanation", markup=False)
            with VerticalScroll(id="trust-body"):
                yield Static(trust_body(self.question))
            with HorizontalGroup(id="trust-buttons"):
                yield Button(Content("a  Approve"), id="approved", variant="warning")
                yield Button(Content("r  Refuse"), id="refused", variant="error")
                yield Button(Content("Esc  Not now"), id="later")
        yield Footer()  # this modal's own keys, not the main screen's under it

    def on_mount(self) -> None:
        self.query_one("#refused", Button).focus()  # the safe answer is the default

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id:
            self.action_decide(event.button.id)

    def action_decide(self, choice: str) -> None:
        self.dismiss(choice)  # type: ignore[arg-type]
