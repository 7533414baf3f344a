"""The chat transcript: user turns, streamed replies, tool cards and notices, in order.

It follows new output (anchored to the bottom) unless the user scrolls up (Up, the wheel, or Tab to a
card scrolled into view); then new output raises a "↓ new output" line pinned at the bottom of the pane,
and clicking it, End, or scrolling back down follows again. Submitting anything from the prompt jumps
back to the end too: the user is looking for the answer to what they just sent.

Anchoring only starts once the content overflows, so a short chat reads top-down instead of sitting at
the bottom of the pane (pitfall P5). That check always waits for the layout: right after a mount (or
after `/clear` removed everything) `max_scroll_y` still describes the old content.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from textual import events
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widget import Widget
from textual.widgets import Static

from tui_agent.ui.widgets.notice_line import NoticeLine
from tui_agent.ui.widgets.tool_card import ToolCard
from tui_agent.ui.widgets.type_through import forward, typed_text
from tui_agent.ui.widgets.user_message import UserMessage

if TYPE_CHECKING:
    from tui_agent.ui.widgets.assistant_reply import AssistantReply

NEW_OUTPUT = "↓ new output below · click or End to follow"


class NewOutputHint(Static):
    """Pinned to the bottom of the chat (docked, so it does not scroll) while output arrives unseen."""

    DEFAULT_CSS = """
    NewOutputHint {
        dock: bottom; display: none; height: 1; padding: 0 1; margin: 0 4;
        background: $primary; color: $text; text-style: bold;
    }
    NewOutputHint.-visible { display: block; }
    """

    def on_click(self, event: events.Click) -> None:
        event.stop()
        parent = self.parent
        if isinstance(parent, ChatPane):
            parent.jump_to_end()


class ChatPane(VerticalScroll):
    """One Tab stop for the whole chat: Tab does not walk through every tool card (there can be
    hundreds). With the chat focused, Enter steps into the cards (↑/↓ between them, Enter opens one)."""

    DEFAULT_CSS = """
    ChatPane { padding: 0 1 1 1; background: $background; scrollbar-size-vertical: 1; }
    ChatPane:focus { background-tint: $foreground 3%; }
    """
    BINDINGS = [Binding("enter", "enter_cards", "Tool cards", show=False)]

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._anchored = False  # Textual's own flag: we decide when anchoring starts (see the docstring)
        self.cards: dict[str, ToolCard] = {}
        self.hint = NewOutputHint(NEW_OUTPUT, id="new-output", markup=False)
        self._output_pending = False
        self.forwarding = False  # text typed here is on its way to the prompt (see type_through.forward)

    def compose(self):
        yield self.hint

    def allow_focus_children(self) -> bool:
        """Cards join the focus chain only while the focus is already among them (see the class)."""
        focused = self.screen.focused if self.is_attached else None
        return isinstance(focused, ToolCard) and focused.parent is self

    def on_key(self, event: events.Key) -> None:
        """Text typed on the chat belongs to the prompt (Space too); Enter steps into the cards."""
        text = typed_text(event)
        if text is not None and (text != "\n" or self.forwarding):  # an Enter after text sends it
            event.stop()
            event.prevent_default()
            forward(self, text)

    def on_focus(self) -> None:
        self.forwarding = False

    def action_enter_cards(self) -> None:
        """Focus the lowest tool card on screen (or the newest one)."""
        cards = list(self.query_children(ToolCard))
        if not cards:
            return
        bottom = self.scroll_offset.y + self.scrollable_content_region.height
        visible = [card for card in cards if card.virtual_region.y < bottom]
        (visible or cards)[-1].enter_on_purpose()

    @property
    def following(self) -> bool:
        """True while new output keeps the view at the end (or the content still fits)."""
        return not self._anchor_released or self.scroll_y >= self.max_scroll_y

    @property
    def has_new_output(self) -> bool:
        return self.hint.has_class("-visible")

    async def add(self, widget: Widget) -> Widget:
        await self.mount(widget, before=self.hint)
        self._new_output()
        return widget

    def follow(self) -> None:
        """Called as streamed text grows."""
        self._new_output()

    def _new_output(self) -> None:
        if not self._output_pending:  # one check per refresh, however many deltas streamed in
            self._output_pending = True
            self.call_after_refresh(self._after_output)

    def _after_output(self) -> None:
        self._output_pending = False
        if not self._anchored:
            if self.max_scroll_y > 0:  # the content overflows now: start following it
                self._anchored = True
                self.anchor()
            return
        if self._anchor_released and self.scroll_y < self.max_scroll_y:
            self.hint.add_class("-visible")

    def watch_virtual_size(self) -> None:
        """The content grew after the last output's check had found it fitting (a reply lays out after the
        refresh that checked, under load): the first overflow starts following here too. Without it the
        chat stayed at its top while the answer went on below (seen in CI under load)."""
        if not self._anchored and self.max_scroll_y > 0:
            self._new_output()

    def watch_scroll_y(self, old: float, new: float) -> None:
        super().watch_scroll_y(old, new)
        if new >= self.max_scroll_y:
            self.hint.remove_class("-visible")

    def jump_to_end(self) -> None:
        """Back to the newest output, following it again (a submitted prompt, the hint, End)."""
        self.hint.remove_class("-visible")
        if self._anchored:
            self.scroll_end(animate=False, immediate=True)  # also re-arms Textual's released anchor
        else:
            self._new_output()

    def action_scroll_end(self) -> None:
        self.jump_to_end()

    async def add_user(self, text: str) -> UserMessage:
        self.jump_to_end()
        return await self.add(UserMessage(text))  # type: ignore[return-value]

    async def add_reply(self) -> "AssistantReply":
        # Imported here: Markdown pulls in markdown-it (~80 ms), which the first frame does not need.
        from tui_agent.ui.widgets.assistant_reply import AssistantReply

        return await self.add(AssistantReply())  # type: ignore[return-value]

    async def add_notice(self, text: str, level: Literal["info", "warning", "error"] = "info") -> NoticeLine:
        return await self.add(NoticeLine(text, level))  # type: ignore[return-value]

    def add_notice_nowait(self, text: str, level: Literal["info", "warning", "error"] = "info") -> None:
        """For cancellation paths, where awaiting a mount is not safe."""
        self.mount(NoticeLine(text, level), before=self.hint)
        self._new_output()

    async def add_tool(self, card: ToolCard) -> ToolCard:
        self.cards[card.tool_use_id] = card
        await self.add(card)
        return card

    async def clear_all(self) -> None:
        self.cards.clear()
        self._anchored = False
        self._anchor_released = False
        self.hint.remove_class("-visible")
        await self.remove_children([child for child in self.children if child is not self.hint])
        self.scroll_to(y=0, animate=False, immediate=True)
