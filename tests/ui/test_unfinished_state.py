"""Issue 18, state that is never finished: Esc during a tool closes its card as cancelled (no card stays
"running" for good), and a resumed chat shows its tool calls as cards that open."""

from __future__ import annotations

import asyncio
from typing import Any

from tests.waiting import wait_until
from tui_agent.core.journal.writer import start_journal
from tui_agent.core.messages import protocol_errors
from tui_agent.core.providers.scripted import text_reply, tool_reply
from tui_agent.core.tools import ToolOutput
from tui_agent.core.tools.base import Tool, ToolContext
from tui_agent.ui.widgets.tool_card import ToolCard

from .support import make_app, make_repo, scripted_session


class Hang(Tool):
    """A read-only tool that never returns (until the turn is cancelled)."""

    name = "Hang"
    description = "Wait forever (test double)."
    input_schema: dict[str, Any] = {"type": "object", "properties": {}}
    read_only = True

    async def call(self, tool_input: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        await asyncio.Event().wait()
        return ToolOutput("never")


async def test_escape_during_a_tool_closes_its_card_as_cancelled(tmp_path) -> None:
    session = scripted_session(make_repo(tmp_path), [tool_reply("Hang", {}, "t1", "Waiting."), text_reply("-")],
                               extra_tools=[Hang()])
    app = make_app(session)
    async with app.run_test(size=(120, 36)) as pilot:
        prompt = app.screen.query_one("PromptArea")
        prompt.load_text("wait for it")
        await pilot.press("enter")
        card = await wait_until(lambda: next(iter(app.screen.query(ToolCard)), None), what="the Hang card")
        assert card.status == "running"
        await wait_until(lambda: "escape" in app.screen.active_bindings, what="Esc to cancel the turn")
        await pilot.press("escape")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert card.status == "cancelled" and "cancelled" in str(card.query_one(".tool-head").render())
        assert not protocol_errors(session.history)


async def test_a_resumed_chat_shows_its_tool_calls_as_cards_that_open(tmp_path) -> None:
    repo = make_repo(tmp_path)
    old = scripted_session(repo, [tool_reply("Read", {"file_path": "README.md"}, "toolu_1", "Reading it."),
                                  text_reply("It is a demo.")])
    start_journal(old)
    async for _ in old.run_turn("what is this?"):
        pass
    session = scripted_session(repo, [text_reply("Yes.")])
    start_journal(session)
    app = make_app(session)
    async with app.run_test(size=(130, 40)) as pilot:
        from tui_agent.core.journal.reader import read_journal
        from tui_agent.core.journal.writer import journal_of
        from tui_agent.ui.session_actions import resume_load

        await resume_load(app.screen, read_journal(journal_of(old).path))
        await pilot.pause()
        cards = list(app.screen.query(ToolCard))
        assert [(c.tool_name, c.summary, c.status) for c in cards] == [("Read", "README.md", "done")]
        assert "demo-repo" in cards[0].result
        notices = " ".join(str(n.render()) for n in app.screen.query("NoticeLine"))
        assert "tool call" not in notices
        cards[0].enter_on_purpose()
        await pilot.press("enter")
        assert cards[0].expanded
