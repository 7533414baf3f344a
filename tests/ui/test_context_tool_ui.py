"""The chat and the panel show every use of the Context tool and what it cost (its result in tokens)."""

from __future__ import annotations

from tui_agent.core.providers.scripted import text_reply, tool_reply
from tui_agent.core.tools.context import ContextTool
from tui_agent.ui.widgets.budget_meter import BudgetMeter
from tui_agent.ui.widgets.tool_card import ToolCard

from .support import make_app, make_repo, scripted_session, send


async def test_each_context_use_shows_its_cost_on_its_card_and_in_the_meter(tmp_path) -> None:
    replies = [tool_reply("Context", {"action": "status"}, "toolu_c1", "Checking my context."),
               tool_reply("Context", {"action": "recall", "search": "zzz\x1b[31m"}, "toolu_c2"),
               text_reply("Done.")]
    session = scripted_session(make_repo(tmp_path), replies, extra_tools=[ContextTool()])
    app = make_app(session)
    async with app.run_test(size=(140, 44)) as pilot:
        await send(pilot, "what is in your context?")
        cards = [c for c in app.screen.query(ToolCard) if c.tool_name == "Context"]
        assert [c.status for c in cards] == ["done", "error"]  # a recall of nothing is a clear error
        head = str(cards[0].query_one(".tool-head").render())
        assert "status" in head and "tok into the context" in head
        status_tokens = -(-len(cards[0].result) // 4)
        meter = app.screen.query_one(BudgetMeter)
        assert meter.tool_line.startswith("Context tool: 2 uses · ≈")
        assert "recall 'zzz" in meter.tool_line and "failed" in meter.tool_line
        rendered = str(meter.render())
        assert "Context tool: 2 uses" in rendered and "\x1b" not in rendered
        ledger = app.screen.query_one("BudgetPanel").ledger
        assert [u.summary for u in ledger.context_uses][0] == "status"
        assert ledger.context_uses[0].tokens == status_tokens
