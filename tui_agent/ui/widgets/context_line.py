"""The one-line context meter shown whenever the budget panel is folded or hidden.

`ctx 62% · 14 dropped · $0.12`: the core ledger's `context_line()`, so a user who folded the panel
(under 100 columns, or F2) still sees how full the next request is and what compaction left out.
"""

from __future__ import annotations

from textual.reactive import reactive
from textual.widgets import Static


class ContextLine(Static):
    """Above the footer; visible only while the panel is not."""

    SCOPED_CSS = False  # the rules below name the screen's classes
    DEFAULT_CSS = """
    ContextLine { height: 1; padding: 0 1; color: $foreground 78%; background: $panel; display: none; }
    MainScreen.-narrow ContextLine { display: block; }
    MainScreen.-narrow.-panel-open ContextLine { display: none; }
    MainScreen.-panel-hidden ContextLine { display: block; }
    """

    text: reactive[str] = reactive("")

    def watch_text(self, text: str) -> None:
        self.update(text)
