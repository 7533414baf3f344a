"""One model call's streamed text, as Markdown.

Always created EMPTY and filled only through `Markdown.get_stream` (pitfall P3: a first fragment given
to the constructor broke code fences). A stream is single-use (P4), so every call gets a new widget.
"""

from __future__ import annotations

from textual.widgets import Markdown


class AssistantReply(Markdown):
    DEFAULT_CSS = """
    AssistantReply { margin: 1 0 0 0; padding: 0 1; background: transparent; }
    AssistantReply > MarkdownBlock:last-child { margin-bottom: 0; }
    """

    def __init__(self, **kwargs) -> None:
        super().__init__("", **kwargs)
        self.text = ""  # the exact streamed text, for tests and copy-out
