"""Chat pane: streamed replies, tool cards, notices and errors in the flow, cancelling with Esc."""

from __future__ import annotations

import asyncio

import pytest

from tests.waiting import wait_until
from tui_agent.core.messages import protocol_errors
from tui_agent.core.providers.base import ProviderError
from tui_agent.core.providers.scripted import text_reply, tool_reply
from tui_agent.ui.widgets.assistant_reply import AssistantReply
from tui_agent.ui.widgets.notice_line import NoticeLine
from tui_agent.ui.widgets.tool_card import ToolCard
from tui_agent.ui.widgets.user_message import UserMessage

from .support import make_app, make_repo, scripted_session, send

REPLY = "# Plan\n\nRead `src/app.py` then [bold]answer[/].\n\n```python\ndef f():\n    return [1]\n```\n"


async def test_prompt_streams_markdown_reply(tmp_path) -> None:
    session = scripted_session(make_repo(tmp_path), [text_reply(REPLY)])
    app = make_app(session)
    async with app.run_test(size=(120, 36)) as pilot:
        await send(pilot, "make a plan [/backup]")
        user = app.screen.query_one(UserMessage)
        assert user.text == "make a plan [/backup]"  # brackets shown as typed, never parsed as markup
        reply = app.screen.query_one(AssistantReply)
        assert reply.text == REPLY
        assert reply.source == REPLY  # every fragment reached the Markdown widget: no lost text
        fences = [b for b in reply.children if type(b).__name__ == "MarkdownFence"]
        assert len(fences) == 1  # the code fence survived streaming intact (pitfall P3)
        assert session.history[-1]["content"][0]["text"] == REPLY


async def test_tool_cards_show_status_size_and_plain_result(tmp_path) -> None:
    repo = make_repo(tmp_path)
    (repo / "notes.txt").write_text("cp a.txt [/backup] and [bold]not bold[/bold]\n", encoding="utf-8")
    replies = [tool_reply("Read", {"file_path": "notes.txt"}, "toolu_1", "Reading."), text_reply("Done.")]
    app = make_app(scripted_session(repo, replies))
    async with app.run_test(size=(120, 36)) as pilot:
        await send(pilot, "read the notes")
        card = app.screen.query_one(ToolCard)
        assert card.tool_name == "Read" and card.summary == "notes.txt"
        assert card.status == "done" and card.chars and card.chars > 0
        assert "[/backup]" in card.result
        head = str(card.query_one(".tool-head").render())
        assert "Read" in head and "notes.txt" in head and "chars" in head
        assert "s ·" not in head  # durations hidden in tests (they are wall-clock)
        card.enter_on_purpose()  # Enter from the chat, a click: entered on purpose
        await pilot.press("enter")
        await pilot.pause()
        assert card.expanded
        body = card.query_one(".tool-result")
        assert "[/backup]" in str(body.render())  # plain text, not markup


async def test_provider_error_is_shown_in_the_flow(tmp_path) -> None:
    app = make_app(scripted_session(make_repo(tmp_path), [ProviderError("the model is overloaded")]))
    async with app.run_test(size=(120, 36)) as pilot:
        await send(pilot, "hello")
        errors = [n for n in app.screen.query(NoticeLine) if n.level == "error"]
        assert errors and "overloaded" in errors[-1].text


async def test_escape_cancels_the_turn_and_history_stays_valid(tmp_path) -> None:
    long = " ".join(f"word{i}" for i in range(2000))  # ~20 s of streaming: Esc lands mid-stream even under load
    replies = [tool_reply("Read", {"file_path": "README.md"}, "toolu_1", "Looking."), text_reply(long)]
    session = scripted_session(make_repo(tmp_path), replies, delay=0.01)
    app = make_app(session)
    async with app.run_test(size=(120, 36)) as pilot:
        prompt = app.screen.query_one("PromptArea")
        prompt.load_text("explain everything")
        await pilot.press("enter")
        await wait_until(lambda: len(shown := app.screen.query(AssistantReply)) >= 2 and shown.last().text,
                         what="the second call's streaming to begin")
        await pilot.press("escape")
        await app.workers.wait_for_complete()
        await pilot.pause()
        notices = [n.text for n in app.screen.query(NoticeLine)]
        assert any("Cancelled" in text for text in notices)
        assert protocol_errors(session.history) == []
        assert "[interrupted]" in session.history[-1]["content"][0]["text"]
        assert not session.running
        # the app keeps working after a cancel
        session.provider.replies.append(text_reply("Still here."))
        await send(pilot, "are you there?")
        assert app.screen.query(AssistantReply).last().text == "Still here."


ESC_ROUND = [
    {"type": "text", "text": "Reading two files."},
    {"type": "tool_use", "id": "r1", "name": "Read", "input": {"file_path": "README.md"}},
    {"type": "tool_use", "id": "r2", "name": "Read", "input": {"file_path": "pyproject.toml"}},
]
# (event type, how many of that type to let through first): moments across the whole turn, each one
# where the screen is busy with an event when Esc arrives (issue 9 item 7: 8 of 30 presses broke it).
ESC_MOMENTS = [("TextDelta", 0), ("AssistantMessage", 0), ("ToolStarted", 0), ("ToolStarted", 1),
               ("ToolFinished", 0), ("ToolFinished", 1), ("ToolResultsAppended", 0), ("TextDelta", 4),
               ("AssistantMessage", 1)]


@pytest.mark.parametrize("kind,skip", ESC_MOMENTS, ids=[f"{k}{n}" for k, n in ESC_MOMENTS])
async def test_escape_while_the_screen_renders_an_event_leaves_a_valid_history(tmp_path, monkeypatch, kind, skip):
    from tui_agent.ui.turn import TurnRenderer

    busy = asyncio.Event()
    seen: dict[str, int] = {}
    handle = TurnRenderer.handle

    async def slow_handle(self, event) -> None:
        name = type(event).__name__
        seen[name] = seen.get(name, 0) + 1
        if name == kind and seen[name] == skip + 1 and not busy.is_set():
            busy.set()
            await asyncio.Event().wait()  # the screen is still busy with this event when Esc comes
        await handle(self, event)

    monkeypatch.setattr(TurnRenderer, "handle", slow_handle)
    session = scripted_session(make_repo(tmp_path), [ESC_ROUND, text_reply("Both files describe the demo repo.")])
    app = make_app(session)
    async with app.run_test(size=(120, 36)) as pilot:
        prompt = app.screen.query_one("PromptArea")
        prompt.load_text("read both")
        await pilot.press("enter")
        await wait_until(busy.is_set, what=f"the screen to handle {kind} #{skip + 1}")
        await pilot.press("escape")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert protocol_errors(session.history) == [], session.history  # before any next prompt
        assert not session.running
        assert any("Cancelled" in n.text for n in app.screen.query(NoticeLine))
        monkeypatch.setattr(TurnRenderer, "handle", handle)
        session.provider.replies = [text_reply("Still here.")]
        await send(pilot, "are you there?")
        assert app.screen.query(AssistantReply).last().text == "Still here."
        assert protocol_errors(session.provider.requests[-1].messages) == []
        assert protocol_errors(session.history) == []
