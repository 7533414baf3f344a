"""Turns engine events into chat and panel updates, one event at a time.

The turn worker (on `MainScreen`) owns the loop and the permission modal; everything else that an
event means for the screen lives here, so the screen and app stay thin. Each model call gets its own
`AssistantReply` and Markdown stream, created on the first text delta and stopped when the call's
message arrives (or in `close`, which also runs on cancellation).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tui_agent.core import events as ev
from tui_agent.core.sanitize import strip_controls
from tui_agent.ui.widgets.tool_card import ToolCard

if TYPE_CHECKING:
    from collections.abc import Callable

    from textual.widgets.markdown import MarkdownStream

    from tui_agent.ui.widgets.assistant_reply import AssistantReply
    from tui_agent.ui.widgets.budget_panel import BudgetPanel
    from tui_agent.ui.widgets.chat_pane import ChatPane

END_MESSAGES = {
    "denied": ("Stopped: a tool call was denied. Say what to do instead.", "warning"),
}


def limit_message(calls: int) -> str:
    """The per-turn limit reached: how many calls, which limit, and the one key that goes on."""
    return (f"Stopped after {calls} model call{'s' if calls != 1 else ''} (the per-turn limit, --max-turns). "
            "Enter on /continue (in the prompt now) goes on with the same turn.")


class TurnRenderer:
    def __init__(self, chat: "ChatPane", panel: "BudgetPanel", show_durations: bool = True,
                 on_cost: "Callable[[], None] | None" = None) -> None:
        self.chat = chat
        self.panel = panel
        self.on_cost = on_cost  # the title's price, redrawn with the panel's (a posted message came a call late)
        self.show_durations = show_durations
        self.reply: AssistantReply | None = None
        self.stream: MarkdownStream | None = None
        self.cards: list[ToolCard] = []  # this turn's, so the end of the turn can close the open ones

    async def handle(self, event: ev.EngineEvent) -> None:
        match event:
            case ev.TurnStarted():
                self.panel.sync_history()
            case ev.CompactionReported():
                self.panel.on_compaction(event)
            case ev.TextDelta(text=text):
                if self.stream is None:
                    self.reply = await self.chat.add_reply()
                    self.stream = self.reply.get_stream(self.reply)
                assert self.reply is not None
                text = strip_controls(text)  # model text is untrusted: no ESC reaches the terminal
                self.reply.text += text
                await self.stream.write(text)
                self.chat.follow()
            case ev.AssistantMessage(message=message):
                reply = self.reply
                await self.close()
                await self.show_thinking(message, reply)
                self.panel.sync_history()
            case ev.Usage():
                self.panel.on_usage(event)
                if self.on_cost is not None:
                    self.on_cost()
            case ev.ServerEdited() | ev.CacheMissed():
                self.panel.on_server(event)
                if isinstance(event, ev.ServerEdited) and event.continued:
                    pass  # the same clearing told again: its line in the events list moves on, no new chat line
                elif not (isinstance(event, ev.CacheMissed) and event.reason == "our_compaction"):
                    await self.chat.add_notice(event.line(), "info")  # (our own event was told in the chat)
            case ev.ToolStarted(tool_use_id=tool_id, name=name, summary=summary):
                await self.close()
                shown = summary or _short_input(event.input)
                self.cards.append(await self.chat.add_tool(ToolCard(tool_id, name, shown,
                                                                    show_duration=self.show_durations)))
            case ev.ToolFinished(tool_use_id=tool_id):
                card = self.chat.cards.get(tool_id)
                if card is None:
                    card = await self.chat.add_tool(ToolCard(tool_id, event.name, "", self.show_durations))
                card.finish(event.content, event.is_error, event.duration, event.chars)
                self.panel.on_tool_finished(event)
            case ev.ToolResultsAppended():
                self.panel.sync_history()
            case ev.Notice(text=text, level=level):
                await self.chat.add_notice(text, level)
            case ev.TurnEnded(reason=reason, error=error):
                await self.close()
                self.cancel_open_cards()
                if reason == "error":
                    await self.chat.add_notice(error or "The turn failed.", "error")
                elif reason == "max_turns":
                    await self.chat.add_notice(limit_message(event.turn_calls), "warning")
                elif reason in END_MESSAGES:
                    text, level = END_MESSAGES[reason]
                    await self.chat.add_notice(text, level)  # type: ignore[arg-type]

    async def close(self) -> None:
        """Stop the current Markdown stream, flushing what it holds (also on cancel, pitfall P4)."""
        stream, self.stream = self.stream, None
        self.reply = None
        if stream is not None:
            await stream.stop()


    async def show_thinking(self, message: dict, reply: "AssistantReply | None") -> None:
        """The reply's thinking blocks, folded, above the text they led to (it streamed first)."""
        blocks = [b for b in message.get("content") or [] if isinstance(b, dict)
                  and b.get("type") in ("thinking", "redacted_thinking")]
        if not blocks:
            return
        from tui_agent.ui.widgets.thinking_fold import ThinkingFold

        for block in blocks:
            fold = ThinkingFold(block)
            if reply is not None and reply.parent is self.chat:
                await self.chat.mount(fold, before=reply)
            else:
                await self.chat.add(fold)

    def cancel_open_cards(self) -> None:
        """Cards still running when the turn ends (Esc, an error) are closed as cancelled: the core
        answered their tool_use with an error result, and no card stays "running" in yellow for good."""
        for card in self.cards:
            card.cancel()


def _short_input(tool_input: dict) -> str:
    from tui_agent.ui.budget_model import key_input

    return key_input(tool_input)
