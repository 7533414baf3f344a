"""A user's prompt in the chat. Plain text, never markup: prompts contain brackets (pitfall P6)."""

from __future__ import annotations

from textual.widgets import Static

from tui_agent.core.sanitize import strip_controls


class UserMessage(Static):
    DEFAULT_CSS = """
    UserMessage {
        margin: 1 0 0 0;
        padding: 0 1;
        border-left: thick $primary;
        background: $primary 10%;
        color: $text;
    }
    """

    def __init__(self, text: str, **kwargs) -> None:
        text = strip_controls(text)  # a pasted prompt can carry escape sequences too
        super().__init__(text, markup=False, **kwargs)
        self.text = text
