"""The TUI on the real stack: a fake Claude over real HTTP (the real anthropic SDK), the real tools and a
real MCP server process. What a user with ANTHROPIC_API_KEY sees: the reply, tool cards, real token counts
and cache hits in the panel, and the MCP server in /mcp."""

from __future__ import annotations

import os


from tests.fakes.fake_anthropic import text, tool_use
from tests.mcp.helpers import demo_entry, write_config
from tests.ui.support import make_app, send
from tui_agent.core.agent.factory import build_session
from tui_agent.core.messages import protocol_errors
from tui_agent.ui.widgets.budget_meter import BudgetMeter


def chat_text(app) -> str:
    from textual.widgets import Markdown, Static

    parts = [str(w.source) for w in app.screen.query(Markdown)]
    parts += [str(w.render()) for w in app.screen.query(Static)]
    return "\n".join(parts)


async def test_claude_session_in_the_tui_with_real_usage_and_mcp(tmp_path, fake):
    workspace = tmp_path / "repo"
    workspace.mkdir()
    (workspace / "notes.txt").write_text("the answer is 42\n" * 200)
    write_config(workspace / ".mcp.json", {"demo": demo_entry()})
    env = {**{k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_"))},
           "ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": fake.base_url,
           "TUI_AGENT_CONFIG_DIR": str(tmp_path / "config"), "MODEL_MAX_RETRIES": "1"}
    session, notices = build_session(workspace, env=env)
    assert session.provider.name != "demo" and session.provider.reports_usage
    fake.replies += [
        tool_use("Read", {"file_path": "notes.txt"}, "toolu_1", say="Reading the notes."),
        tool_use("mcp__demo__echo", {"message": "42"}, "toolu_2"),
        text("The notes say **42**; the demo server agrees."),
    ]
    app = make_app(session, startup_notices=notices)
    async with app.run_test(size=(130, 40)) as pilot:
        from tui_agent.ui.screens.trust import TrustScreen

        for _ in range(200):  # the project's server asks first (a modal after the first frame)
            await pilot.pause(0.05)
            if isinstance(app.screen, TrustScreen):
                break
        assert isinstance(app.screen, TrustScreen), "the project's MCP server did not ask for approval"
        assert [item.name for item in app.screen.question.items] == ["demo"]
        await pilot.press("a")
        for _ in range(200):  # the MCP server starts in a worker after the first frame
            await pilot.pause(0.05)
            await app.workers.wait_for_complete()
            if "mcp__demo__echo" in session.tools.names():
                break
        assert "mcp__demo__echo" in session.tools.names()
        await send(pilot, "what do the notes say?")
        shown = chat_text(app)
        assert "The notes say **42**; the demo server agrees." in shown
        assert "Reading the notes." in shown
        assert "mcp__demo__echo" in shown and "notes.txt" in shown
        meter = str(app.screen.query_one(BudgetMeter).render())
        assert "cached" in meter, meter  # the API's cache split of the last call, not an estimate
        assert len(session.usage_history) == 3
        assert session.usage_history[-1].cache_read_input_tokens > 0
        await send(pilot, "/mcp")
        shown = chat_text(app)
        assert "demo" in shown and "echo" in shown and "demo: approved" in shown
    assert protocol_errors(session.history) == []
    assert len(fake.message_requests) == 3
