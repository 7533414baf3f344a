"""Slash-command completion: a small list above the prompt of the commands matching what is typed.

↑/↓ move the selection (the prompt forwards them while a command word is being typed), Tab completes
to the selected command, and Enter on a partial word runs the selected command, or completes it when
it takes arguments, so `/he` Enter shows the help instead of "unknown command /he". Commands with a
known set of values (`/theme NAME`) list and complete those values the same way. Esc closes the list
and keeps what was typed.
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
        self.arguments: dict[str, list[str]] = {}  # "/theme" → the values its argument can take
        self._argument_of = ""  # the command whose values are listed, "" while listing commands

    def completes_argument(self, text: str) -> bool:
        """`/theme ag`: a command with known values, its one argument being typed."""
        command, space, value = text.partition(" ")
        return bool(space) and "\n" not in text and " " not in value and command.lower() in self.arguments

    def hide(self) -> None:
        self.matches, self._found, self._argument_of = [], [], ""
        self.remove_class("-visible")

    def show_for(self, text: str) -> None:
        """List the commands that start with the typed word (or the values of a command's argument);
        hide once free arguments are being typed."""
        self.selected = 0
        if text.startswith("/") and self.completes_argument(text):
            self._show_values(text)
            return
        self._argument_of = ""
        if not text.startswith("/") or " " in text or "\n" in text:
            self.hide()
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

    def _show_values(self, text: str) -> None:
        command, _, value = text.partition(" ")
        command = command.lower()
        self._argument_of = command
        values = [v for v in self.arguments[command] if v.lower().startswith(value.lower())]
        self._found = [(v, "") for v in values]
        self.matches = [f"{command} {v}" for v in values]
        if not values:
            self.update(Content.assemble((f"No value for {command} starts with ", MUTED), (value, "$text-warning")))
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
        keys = "Tab complete · Esc close" if self._argument_of else "Tab complete · Enter run · Esc close"
        lines.append(Content.styled(f"  {more}↑↓ choose · {keys}", MUTED))
        self.update(Content("\n").join(lines))

    def completion(self, text: str) -> str | None:
        if not self.matches:
            return None
        return self.matches[self.selected] + ("" if self._argument_of else " ")

    def choice(self, text: str) -> tuple[str, bool] | None:
        """What Enter on `text` should run instead: (command, takes arguments), or None to send it as is
        (not a command word, already an exact command, or nothing matches)."""
        word = text.strip().lower()
        exact = {name.split(" ")[0] for name, _ in self.commands}
        if not self.matches or word in exact:
            return None
        name = self._found[self.selected][0]
        return name.split(" ")[0], " " in name
