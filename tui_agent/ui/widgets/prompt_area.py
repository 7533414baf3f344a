"""The multi-line prompt: Enter sends, Shift+Enter / Ctrl+J (or a trailing backslash) adds a line.

Up/Down at the first/last line walk the input history, like a shell (Up on an empty prompt first takes
back a prompt queued during a running turn, see `QueuedPrompts`). Typing `/` asks the
`CommandHints` above it to list matching slash commands; while a command word is typed, Up/Down move
in that list (`HintMove`), Tab completes (`Complete`) and Enter asks the screen first (`CommandEntered`)
so a partial word runs the selected command.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from textual import events
from textual.message import Message
from textual.widgets import TextArea

from tui_agent.ui.widgets.type_through import typed_first


class PromptArea(TextArea):
    DEFAULT_CSS = """
    PromptArea { height: auto; max-height: 8; min-height: 3; border: tall $primary 40%; background: $surface; }
    PromptArea:focus { border: tall $primary; }
    PromptArea > .text-area--placeholder { color: $foreground 78%; }  /* Textual's 40% is ≈3.7:1: AA needs 4.5 */
    """

    @dataclass
    class Submitted(Message):
        """Enter sent the draft: `text` (stripped, kept in the input history) is the screen's to run."""

        text: str

    class Complete(Message):
        """Tab was pressed on a slash command: the hints answer with `complete_to`."""

    @dataclass
    class HintMove(Message):
        """Up/Down while a command word is typed: move the completion selection."""

        delta: int

    class EndAgain(Message):
        """End with the cursor already at the end of its line: the chat may jump to new output."""

    @dataclass
    class CommandEntered(Message):
        """Enter on a bare `/word`: the screen runs the selected command, or calls `submit`."""

        text: str

    def __init__(self, **kwargs) -> None:
        super().__init__(soft_wrap=True, tab_behavior="focus", show_line_numbers=False,
                         highlight_cursor_line=False,
                         placeholder="Ask about this repository…  (/ for commands, Enter to send)", **kwargs)
        self.input_history: list[str] = []
        self.completable_arguments: frozenset[str] = frozenset()  # commands whose argument is listed (/theme)
        self._history_pos: int | None = None
        self._draft = ""
        self.recall_queued: Callable[[], str | None] | None = None  # ↑ on an empty prompt: edit a queued one

    async def _on_key(self, event: events.Key) -> None:
        if typed_first(self.screen, event):  # typed on the panel or a card, still on its way here: after it
            return
        key = event.key
        if key == "enter":
            event.stop()
            event.prevent_default()
            self.press_enter()
            return
        if key.startswith("alt+") and len(key) == 5:  # Alt+Y (approve) when nothing waits: a shortcut, no "y"
            return
        if key in ("shift+enter", "ctrl+j"):
            event.stop()
            event.prevent_default()
            self.insert("\n")
            return
        if key == "tab" and self.completes_on_tab:
            event.stop()
            event.prevent_default()
            self.post_message(self.Complete())
            return
        if key in ("up", "down") and self.completing and self._history_pos is None:
            event.stop()  # walking the history stays possible: a recalled command is not re-listed
            event.prevent_default()
            self.post_message(self.HintMove(-1 if key == "up" else 1))
            return
        if key == "up" and not self.text and self.recall_queued is not None:
            recalled = self.recall_queued()
            if recalled is not None:
                event.stop()
                event.prevent_default()
                self.complete_to(recalled)
                return
        if key == "up" and self.cursor_location[0] == 0 and self.input_history:
            event.stop()
            event.prevent_default()
            self._walk(-1)
            return
        if key == "down" and self.cursor_location[0] == self.document.line_count - 1 and self._history_pos is not None:
            event.stop()
            event.prevent_default()
            self._walk(1)
            return
        if key == "end" and self.cursor_location[1] == len(self.document.get_line(self.cursor_location[0])):
            self.post_message(self.EndAgain())
        await super()._on_key(event)

    def press_enter(self) -> None:
        """Enter: a trailing backslash continues the line, a bare `/word` asks the screen, else send.
        Also what an Enter typed on a card or the panel does (it was meant for the prompt)."""
        row, col = self.cursor_location
        line = self.document.get_line(row)
        if col > 0 and line[:col].endswith("\\"):
            self.replace("\n", (row, col - 1), (row, col))
            return
        if self.command_word:
            self.post_message(self.CommandEntered(self.text))
            return
        self.submit()

    @property
    def completes_on_tab(self) -> bool:
        """Tab completes a slash command (one line starting with `/`) instead of moving the focus."""
        return self.text.startswith("/") and "\n" not in self.text

    @property
    def command_word(self) -> bool:
        """A slash command's name is being typed (no arguments yet): completion keys apply."""
        text = self.text
        return text.startswith("/") and " " not in text and "\n" not in text

    @property
    def completing(self) -> bool:
        """A command word, or the value of a command that lists its values: ↑/↓ choose in the hints."""
        text = self.text
        if not text.startswith("/") or "\n" in text:
            return False
        command, space, value = text.partition(" ")
        return not space or (command.lower() in self.completable_arguments and " " not in value)

    def _walk(self, step: int) -> None:
        if self._history_pos is None:
            self._draft = self.text
            pos = len(self.input_history)
        else:
            pos = self._history_pos
        pos = min(max(pos + step, 0), len(self.input_history))
        self._history_pos = None if pos == len(self.input_history) else pos
        self.load_text(self.input_history[pos] if pos < len(self.input_history) else self._draft)
        self.move_cursor(self.document.end)

    def submit(self) -> None:
        text = self.text.strip()
        if not text:
            return
        if not self.input_history or self.input_history[-1] != text:
            self.input_history.append(text)
        self._history_pos = None
        self._draft = ""
        self.load_text("")
        self.post_message(self.Submitted(text))

    def clear_draft(self) -> bool:
        """Empty the prompt, keeping the draft one ↑ away; False if there was nothing to clear."""
        text = self.text.strip()
        if not text:
            return False
        if not self.input_history or self.input_history[-1] != text:
            self.input_history.append(text)
        self._history_pos = None
        self._draft = ""
        self.load_text("")
        return True

    def complete_to(self, text: str) -> None:
        self.load_text(text)
        self.move_cursor(self.document.end)
