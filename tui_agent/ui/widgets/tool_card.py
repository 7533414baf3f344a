"""A compact card per tool call: name, key input, status, duration, result size; expands to the result.

The result is shown as plain text (tool output is untrusted: `[/backup]` would crash a markup parser,
pitfall P6) and capped, because a 400 kB file should not become a 10,000-line widget in the chat.
"""

from __future__ import annotations

from typing import Any

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.reactive import reactive
from textual.widgets import Static

from tui_agent.core.agent.budget import CONTEXT_TOOL
from tui_agent.core.sanitize import strip_controls
from tui_agent.core.tokens import tokens_for_chars
from tui_agent.ui.budget_model import fmt_k
from tui_agent.ui.themes import MUTED
from tui_agent.ui.widgets.type_through import OnPurpose

RESULT_PREVIEW_CHARS = 8000
STATUS = {"running": ("…", "$text-warning"), "done": ("✓", "$text-success"), "error": ("✗", "$text-error"),
          "cancelled": ("✗", "$text-warning")}
CANCELLED = "(cancelled: the turn was stopped before this tool finished; the model got an error result)"


class ToolCard(OnPurpose, Vertical, can_focus=True):
    """Enter / Space open the card only once the cards were entered on purpose (Enter from the chat, a
    click): reached otherwise, text typed here goes to the prompt, spaces and Enter included."""

    ARMED_KEYS = frozenset({"enter", "space"})
    DEFAULT_CSS = """
    ToolCard { height: auto; margin: 1 0 0 0; padding: 0 1; background: $boost; }
    ToolCard:focus { background: $primary 15%; }
    ToolCard > .tool-head { height: 1; }
    ToolCard > .tool-result {
        display: none; max-height: 16; overflow-y: auto; color: $text-muted;
        border-left: solid $panel; padding: 0 1;
    }
    ToolCard.-expanded > .tool-result { display: block; }
    """
    BINDINGS = [
        Binding("enter,space", "toggle", "Expand", show=False),
        Binding("up", "step(-1)", "Previous card", show=False),
        Binding("down", "step(1)", "Next card", show=False),
    ]

    status: reactive[str] = reactive("running")
    expanded: reactive[bool] = reactive(False)

    def __init__(self, tool_use_id: str, name: str, summary: str, show_duration: bool = True, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.tool_use_id = tool_use_id
        self.tool_name = strip_controls(name)
        self.summary = strip_controls(summary)
        self.show_duration = show_duration
        self.duration: float | None = None
        self.chars: int | None = None
        self.result = ""

    def compose(self) -> ComposeResult:
        yield Static(self._head(), classes="tool-head")
        yield Static("", classes="tool-result", markup=False)

    def finish(self, content: Any, is_error: bool, duration: float | None, chars: int) -> None:
        self.result = strip_controls(content if isinstance(content, str) else _join_text(content))
        self.duration, self.chars = duration, chars
        shown = self.result if len(self.result) <= RESULT_PREVIEW_CHARS else (
            self.result[:RESULT_PREVIEW_CHARS] + f"\n… ({fmt_k(len(self.result) - RESULT_PREVIEW_CHARS)} more chars)")
        self.query_one(".tool-result", Static).update(shown or "(empty result)")
        self.status = "error" if is_error else "done"

    def cancel(self) -> None:
        """The turn ended (Esc, an error) while this tool still ran: never left "running" for good."""
        if self.status == "running":
            self.result = CANCELLED
            self.query_one(".tool-result", Static).update(CANCELLED)
            self.status = "cancelled"

    def watch_status(self) -> None:
        if self.is_mounted:
            self.query_one(".tool-head", Static).update(self._head())

    def watch_expanded(self, expanded: bool) -> None:
        self.set_class(expanded, "-expanded")
        if self.is_mounted:
            self.query_one(".tool-head", Static).update(self._head())

    def _head(self) -> Content:
        icon, style = STATUS.get(self.status, STATUS["running"])
        parts: list[Any] = [(icon + " ", style), (self.tool_name, "bold"), " "]
        summary = self.summary if len(self.summary) <= 60 else self.summary[:59] + "…"
        parts.append((summary, "$text-primary"))
        details = [self.status]
        if self.duration is not None and self.show_duration:
            details.append(f"{self.duration:.2f}s")
        if self.chars is not None:
            details.append(f"{fmt_k(self.chars)} chars")
            if self.tool_name == CONTEXT_TOOL:  # what the model took back into its context costs tokens
                details.append(f"≈{fmt_k(tokens_for_chars(self.chars))} tok into the context")
        parts.append(("  " + " · ".join(details), MUTED))
        if self.status != "running":
            parts.append(("  ▾" if self.expanded else "  ▸", MUTED))
        return Content.assemble(*parts)

    def action_toggle(self) -> None:
        if self.status != "running":
            self.expanded = not self.expanded

    def action_step(self, delta: int) -> None:
        """↑/↓ between the chat's cards; past the first or last one, the chat scrolls instead."""
        cards = [card for card in self.parent.children if isinstance(card, ToolCard)] if self.parent else []
        at = cards.index(self) + delta if self in cards else -1
        if 0 <= at < len(cards):
            if self.armed:
                cards[at].enter_on_purpose()
            else:
                cards[at].focus()
        elif self.parent is not None:
            self.parent.focus()

    def on_click(self, event: events.Click) -> None:
        event.stop()
        self.arm()
        self.action_toggle()


def _join_text(content: list) -> str:
    return "".join(b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text")
