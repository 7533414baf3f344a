"""Slash-command completion: a small list above the prompt of the commands matching what is typed.

↑/↓ move the selection (the prompt forwards them while a command word is being typed), Tab completes
to the selected command, and Enter on a partial word runs the selected command, or completes it when
it takes arguments, so `/he` Enter shows the help instead of "unknown command /he".
"""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Static

from tui_agent.core.sanitize import strip_controls
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
        self.selected = 0
        self._found: list[tuple[str, str]] = []

    def show_for(self, text: str) -> None:
        """List the commands that start with the typed word; hide once arguments are being typed."""
        self.selected = 0
        if not text.startswith("/") or " " in text or "\n" in text:
            self.matches, self._found = [], []
            self.remove_class("-visible")
            return
        word = text.lower()
        self._found = [(name, help_) for name, help_ in self.commands if name.split(" ")[0].startswith(word)]
        self.matches = [name.split(" ")[0] for name, _ in self._found]
        if not self._found:
            self.update(Content.assemble(("No command starts with ", MUTED), (text, "$text-warning"),
                                         (" — /help lists them", MUTED)))
        else:
            self._render_list()
        self.add_class("-visible")

    def move(self, delta: int) -> bool:
        """Move the selection (wrapping); False when there is no list to move in."""
        if not self.matches or not self.has_class("-visible"):
            return False
        self.selected = (self.selected + delta) % len(self.matches)
        self._render_list()
        return True

    def _render_list(self) -> None:
        first = min(max(self.selected - MAX_HINTS + 1, 0), max(len(self._found) - MAX_HINTS, 0))
        lines = []
        for i, (name, help_) in enumerate(self._found[first:first + MAX_HINTS], first):
            chosen = i == self.selected
            lines.append(Content.assemble(("▸ " if chosen else "  ", "bold $text-accent"),
                                          (f"{name:<18}", "bold $text-primary" if chosen else "$text-primary"),
                                          (strip_controls(help_), MUTED)))  # skill descriptions: repo text
        hidden = len(self._found) - MAX_HINTS
        more = f"{hidden} more · " if hidden > 0 else ""
        lines.append(Content.styled(f"  {more}↑↓ choose · Tab complete · Enter run", MUTED))
        self.update(Content("\n").join(lines))

    def completion(self, text: str) -> str | None:
        return self.matches[self.selected] + " " if self.matches else None

    def choice(self, text: str) -> tuple[str, bool] | None:
        """What Enter on `text` should run instead: (command, takes arguments), or None to send it as is
        (not a command word, already an exact command, or nothing matches)."""
        word = text.strip().lower()
        exact = {name.split(" ")[0] for name, _ in self.commands}
        if not self.matches or word in exact:
            return None
        name = self._found[self.selected][0]
        return name.split(" ")[0], " " in name
