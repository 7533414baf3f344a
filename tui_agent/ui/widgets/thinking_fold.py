"""A reply's thinking in the chat, folded: one line ("thinking · ≈N tokens") that opens on a click or
Enter. The thinking is the model's working, not its answer: it is shown on demand, never as markup (it is
untrusted text), and what it costs is counted on the panel like any other block."""

from __future__ import annotations

from textual.widgets import Collapsible, Static

from tui_agent.core.sanitize import strip_controls
from tui_agent.core.tokens import block_tokens


def thinking_title(block: dict) -> str:
    """The fold's line: how much the model thought, or that its thinking was redacted."""
    if block.get("type") == "redacted_thinking":
        return "thinking (redacted by the API)"
    return f"thinking · ≈{block_tokens(block):,} tokens"


class ThinkingFold(Collapsible):
    DEFAULT_CSS = """
    ThinkingFold { margin: 0 0 0 2; padding: 0; border: none; background: transparent; }
    ThinkingFold .thought { color: $text-muted; }
    """

    def __init__(self, block: dict) -> None:
        text = "" if block.get("type") == "redacted_thinking" else strip_controls(str(block.get("thinking") or ""))
        super().__init__(Static(text, markup=False, classes="thought"), title=thinking_title(block),
                         collapsed=True)
