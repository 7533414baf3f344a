"""Slash-command completion: a small list above the prompt of the commands matching what is typed."""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Static

from tui_agent.ui.themes import MUTED

MAX_HINTS = 6


class CommandHints(Static):
    DEFAULT_CSS = """
    CommandHints { display: none; height: auto; padding: 0 1; background: $panel; color: $text-muted; }
    CommandHints.-visible { display: block; }
    """

    def __init__(self, **kwargs) -> None:
        super().__init__("", **kwargs)
        self.commands: list[tuple[str, str]] = []  # (name with slash and args hint, description)
        self.matches: list[str] = []

    def show_for(self, text: str) -> None:
        """List the commands that start with the typed word; hide once arguments are being typed."""
        if not text.startswith("/") or " " in text or "\n" in text:
            self.matches = []
            self.remove_class("-visible")
            return
        word = text.lower()
        found = [(name, help_) for name, help_ in self.commands if name.split(" ")[0].startswith(word)]
        self.matches = [name.split(" ")[0] for name, _ in found]
        if not found:
            self.update(Content.assemble(("No command starts with ", MUTED), (text, "$text-warning"),
                                         (" — /help lists them", MUTED)))
        else:
            lines = []
            for i, (name, help_) in enumerate(found[:MAX_HINTS]):
                lines.append(Content.assemble((f"{name:<18}", "bold $text-primary" if i == 0 else "$text-primary"),
                                              (help_, MUTED)))
            if len(found) > MAX_HINTS:
                lines.append(Content(f"… {len(found) - MAX_HINTS} more (Tab completes the first)"))
            self.update(Content("\n").join(lines))
        self.add_class("-visible")

    def completion(self, text: str) -> str | None:
        return self.matches[0] + " " if self.matches else None
