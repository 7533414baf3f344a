"""Prompts sent while a turn runs: kept in order, shown above the prompt, sent when the turn ends.

Enter during a turn used to clear the prompt and then refuse the text ("a turn is still running"), so the
text was gone. Now, as in Claude Code and Codex, it waits here: the screen sends the oldest one as the next
turn once the running turn completes; ↑ on an empty prompt takes the newest one back to edit it; a turn
that is cancelled (Esc) or fails puts every queued prompt back into the prompt, since sending it then is
not what the user decided. Nothing typed is ever dropped.
"""

from __future__ import annotations

from textual.widgets import Static

from tui_agent.core.sanitize import strip_controls

SHOWN_CHARS = 100
HINT = "sent when this turn ends · ↑ on an empty prompt edits · Esc cancels the turn and puts it back"


class QueuedPrompts(Static):
    DEFAULT_CSS = """
    QueuedPrompts {
        display: none; height: auto; max-height: 6; padding: 0 1; margin: 0 1;
        border-left: thick $secondary; background: $secondary 10%; color: $text;
    }
    QueuedPrompts.-visible { display: block; }
    """

    def __init__(self, **kwargs) -> None:
        super().__init__("", markup=False, **kwargs)
        self.texts: list[str] = []

    def add(self, text: str) -> None:
        self.texts.append(text)
        self._redraw()

    def pop_oldest(self) -> str | None:
        """The next prompt to send (the turn ended well), or None."""
        return self._take(0)

    def pop_newest(self) -> str | None:
        """The last one queued, to edit (↑ on an empty prompt), or None."""
        return self._take(-1)

    def take_all(self) -> list[str]:
        """Every queued prompt, oldest first (the turn was cancelled or failed: back to the prompt)."""
        texts, self.texts = self.texts, []
        self._redraw()
        return texts

    def _take(self, index: int) -> str | None:
        if not self.texts:
            return None
        text = self.texts.pop(index)
        self._redraw()
        return text

    def _redraw(self) -> None:
        lines = [f"» queued: {_one_line(text)}" for text in self.texts]
        self.update("\n".join([*lines, HINT]) if lines else "")
        self.set_class(bool(self.texts), "-visible")


def _one_line(text: str) -> str:
    flat = " ".join(strip_controls(text).split())
    return flat if len(flat) <= SHOWN_CHARS else flat[: SHOWN_CHARS - 1] + "…"
