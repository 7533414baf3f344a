"""The chat transcript: user turns, streamed replies, tool cards and notices, in order.

It follows new output (anchored to the bottom) unless the user scrolls up; scrolling back to the end
re-anchors. Anchoring only starts once the content overflows, so a short chat reads top-down instead
of sitting at the bottom of the pane (pitfall P5).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from textual.containers import VerticalScroll
from textual.widget import Widget

from tui_agent.ui.widgets.notice_line import NoticeLine
from tui_agent.ui.widgets.tool_card import ToolCard
from tui_agent.ui.widgets.user_message import UserMessage

if TYPE_CHECKING:
    from tui_agent.ui.widgets.assistant_reply import AssistantReply


class ChatPane(VerticalScroll):
    DEFAULT_CSS = """
    ChatPane { padding: 0 1 1 1; background: $background; scrollbar-size-vertical: 1; }
    """

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._anchored = False
        self.cards: dict[str, ToolCard] = {}

    async def add(self, widget: Widget) -> Widget:
        await self.mount(widget)
        if not self._anchored and self.max_scroll_y > 0:
            self._anchored = True
            self.anchor()
        elif not self._anchored:
            self.call_after_refresh(self._maybe_anchor)
        return widget

    def follow(self) -> None:
        """Called as streamed text grows: start anchoring once the chat overflows."""
        if not self._anchored:
            self.call_after_refresh(self._maybe_anchor)

    def _maybe_anchor(self) -> None:
        if not self._anchored and self.max_scroll_y > 0:
            self._anchored = True
            self.anchor()
            self.scroll_end(animate=False, immediate=True)

    async def add_user(self, text: str) -> UserMessage:
        return await self.add(UserMessage(text))  # type: ignore[return-value]

    async def add_reply(self) -> "AssistantReply":
        # Imported here: Markdown pulls in markdown-it (~80 ms), which the first frame does not need.
        from tui_agent.ui.widgets.assistant_reply import AssistantReply

        return await self.add(AssistantReply())  # type: ignore[return-value]

    async def add_notice(self, text: str, level: Literal["info", "warning", "error"] = "info") -> NoticeLine:
        return await self.add(NoticeLine(text, level))  # type: ignore[return-value]

    def add_notice_nowait(self, text: str, level: Literal["info", "warning", "error"] = "info") -> None:
        """For cancellation paths, where awaiting a mount is not safe."""
        self.mount(NoticeLine(text, level))
        self.call_after_refresh(self._maybe_anchor)

    async def add_tool(self, card: ToolCard) -> ToolCard:
        self.cards[card.tool_use_id] = card
        await self.add(card)
        return card

    async def clear_all(self) -> None:
        self.cards.clear()
        self._anchored = False
        self.release_anchor()
        await self.remove_children()
