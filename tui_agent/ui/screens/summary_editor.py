"""`/summary edit`: the summary draft in an editor, so the user can correct it before a call sends it.

The draft is the model's text (untrusted: a TextArea shows it as plain text). Ctrl+S saves it through
the session (`Session.edit_summary_draft`), Esc leaves the draft as it was. The engine decides what an
edit means (a draft already sent cannot be edited); this screen only returns the text.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalGroup
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Footer, Static, TextArea

from tui_agent.core.sanitize import strip_controls
from tui_agent.ui.themes import MUTED


class SummaryEditor(ModalScreen[str | None]):
    """Returns the edited text (Ctrl+S), or None (Esc)."""

    DEFAULT_CSS = """
    SummaryEditor { align: center middle; }
    SummaryEditor #summary-dialog { width: 80%; height: 70%; border: round $accent; background: $surface;
                                    padding: 0 1; }
    SummaryEditor #summary-text { height: 1fr; }
    """
    BINDINGS = [Binding("ctrl+s", "save", "Save"), Binding("escape", "cancel", "Cancel")]

    def __init__(self, title: str, text: str) -> None:
        super().__init__()
        self.title_line = strip_controls(title)
        self.text = strip_controls(text)

    def compose(self) -> ComposeResult:
        with VerticalGroup(id="summary-dialog"):
            yield Static(Content.styled(self.title_line, "bold"), id="summary-title")
            yield TextArea(self.text, id="summary-text", soft_wrap=True)
            yield Static(Content.styled("Ctrl+S use this text · Esc leave the draft as it is", MUTED))
        yield Footer()  # this editor's own keys, not the main screen's under it

    def on_mount(self) -> None:
        self.query_one(TextArea).focus()

    def action_save(self) -> None:
        self.dismiss(self.query_one(TextArea).text)

    def action_cancel(self) -> None:
        self.dismiss(None)
