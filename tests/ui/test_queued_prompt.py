"""Enter while a turn runs: the text is queued (shown above the prompt), never lost, and sent as the next
prompt when the turn ends; ↑ on an empty prompt takes it back to edit; Esc puts it back in the prompt."""

from __future__ import annotations

import asyncio
from typing import Any

from tests.waiting import wait_until
from tui_agent.core.messages import protocol_errors
from tui_agent.core.providers.scripted import text_reply, tool_reply
from tui_agent.core.tools import ToolOutput
from tui_agent.core.tools.base import Tool, ToolContext
from tui_agent.ui.widgets.queued_prompts import QueuedPrompts

from .support import make_app, make_repo, scripted_session


class Gate(Tool):
    """A read-only tool that returns when the test opens its gate (or never, until cancelled)."""

    name = "Gate"
    description = "Wait for the test (test double)."
    input_schema: dict[str, Any] = {"type": "object", "properties": {}}
    read_only = True

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.gate = asyncio.Event()

    async def call(self, tool_input: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        self.started.set()
        await self.gate.wait()
        return ToolOutput("opened")


def user_prompts(history: list[dict]) -> list[str]:
    return [b["text"] for m in history if m["role"] == "user" and isinstance(m["content"], list)
            for b in m["content"] if b.get("type") == "text"]


async def type_and_enter(pilot: Any, text: str) -> None:
    prompt = pilot.app.screen.query_one("PromptArea")
    prompt.focus()
    await pilot.press(*[("space" if ch == " " else ch) for ch in text])
    await pilot.press("enter")
    await pilot.pause()


async def test_enter_during_a_turn_queues_the_text_and_sends_it_when_the_turn_ends(tmp_path) -> None:
    gate = Gate()
    session = scripted_session(make_repo(tmp_path), [tool_reply("Gate", {}, "t1", "Waiting."), text_reply("First."),
                                                     text_reply("Second.")], extra_tools=[gate])
    app = make_app(session)
    async with app.run_test(size=(120, 36)) as pilot:
        await type_and_enter(pilot, "first question")
        await wait_until(gate.started.is_set, what="the tool to start")
        await type_and_enter(pilot, "and then this")
        queued = app.screen.query_one(QueuedPrompts)
        assert queued.texts == ["and then this"] and queued.display
        assert "queued: and then this" in str(queued.render())
        assert app.screen.query_one("PromptArea").text == ""
        assert user_prompts(session.history) == ["first question"]  # not sent mid-turn
        gate.gate.set()
        await wait_until(lambda: user_prompts(session.history) == ["first question", "and then this"]
                         and not app.screen.turn_running, what="the queued prompt sent as the next turn")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert queued.texts == [] and not queued.display
        shown = [str(m.render()) for m in app.screen.query("UserMessage")]
        assert shown == ["first question", "and then this"]
        assert not protocol_errors(session.history)


async def test_up_takes_a_queued_prompt_back_and_escape_returns_it_to_the_prompt(tmp_path) -> None:
    gate = Gate()
    session = scripted_session(make_repo(tmp_path), [tool_reply("Gate", {}, "t1", "Waiting."), text_reply("-")],
                               extra_tools=[gate])
    app = make_app(session)
    async with app.run_test(size=(120, 36)) as pilot:
        prompt = app.screen.query_one("PromptArea")
        await type_and_enter(pilot, "first question")
        await wait_until(gate.started.is_set, what="the tool to start")
        await type_and_enter(pilot, "one")
        await type_and_enter(pilot, "two")
        queued = app.screen.query_one(QueuedPrompts)
        assert queued.texts == ["one", "two"]
        await pilot.press("up")  # the newest one comes back to be edited
        assert prompt.text == "two" and queued.texts == ["one"]
        await pilot.press("!", "enter")
        await pilot.pause()
        assert queued.texts == ["one", "two!"]
        await pilot.press("escape")  # cancel the turn: nothing queued is sent, all of it is back in the prompt
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert queued.texts == []
        assert prompt.text == "one\ntwo!"
        assert user_prompts(session.history) == ["first question"]
        notices = " ".join(str(n.render()) for n in app.screen.query("NoticeLine"))
        assert "queued 2 prompts are back in the prompt" in notices
        assert not protocol_errors(session.history)


async def test_a_failed_turn_puts_the_queued_prompt_back_instead_of_sending_it(tmp_path) -> None:
    from tui_agent.core.providers.base import ProviderError

    gate = Gate()
    session = scripted_session(make_repo(tmp_path), [tool_reply("Gate", {}, "t1", "Waiting."),
                                                     ProviderError("The API is down.")], extra_tools=[gate])
    app = make_app(session)
    async with app.run_test(size=(120, 36)) as pilot:
        await type_and_enter(pilot, "first question")
        await wait_until(gate.started.is_set, what="the tool to start")
        await type_and_enter(pilot, "next one")
        gate.gate.set()
        prompt = app.screen.query_one("PromptArea")
        await wait_until(lambda: prompt.text == "next one", what="the queued prompt back in the prompt")
        await app.workers.wait_for_complete()
        assert user_prompts(session.history) == ["first question"]
        notices = " ".join(str(n.render()) for n in app.screen.query("NoticeLine"))
        assert "The turn failed: your queued prompt is back in the prompt" in notices


async def test_quitting_with_a_queued_prompt_warns_and_keeps_it_for_the_next_start(tmp_path) -> None:
    """Issue 28 §5: Ctrl+C twice during a turn lost the queued prompt silently. The first Ctrl+C says it
    is not sent, quitting keeps it, and the next start has it one ↑ away (and says so)."""
    gate = Gate()
    config = tmp_path / "config"
    session = scripted_session(make_repo(tmp_path), [tool_reply("Gate", {}, "t1", "Waiting."), text_reply("First.")],
                               extra_tools=[gate])
    app = make_app(session, config_base=config)
    async with app.run_test(size=(120, 36)) as pilot:
        await type_and_enter(pilot, "first question")
        await wait_until(gate.started.is_set, what="the tool to start")
        await type_and_enter(pilot, "and then this")
        await pilot.press("ctrl+c")
        await pilot.pause()
        warned = [n.message for n in app._notifications]
        assert any("Your queued prompt is not sent: quitting keeps it in the prompt history" in m for m in warned), warned
        await pilot.press("ctrl+c")
        await wait_until(lambda: not app.is_running, what="the app to quit")
    assert app.unsent_note == "Your queued prompt is not sent: kept in the prompt history (↑ at the next start)."
    again = make_app(scripted_session(make_repo(tmp_path / "again"), [text_reply("Hi.")]), config_base=config)
    async with again.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        prompt = again.screen.query_one("PromptArea")
        notes = [line.text for line in again.screen.query("NoticeLine")]
        assert any("queued when you last quit was not sent" in n for n in notes), notes
        prompt.focus()
        await pilot.press("up")
        assert prompt.text == "and then this"
    third = make_app(scripted_session(make_repo(tmp_path / "third"), [text_reply("Hi.")]), config_base=config)
    async with third.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        assert not any("last quit" in line.text for line in third.screen.query("NoticeLine")), "said once"
