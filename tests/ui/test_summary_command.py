"""`/summary` shows the background summary's draft; `/summary edit` opens it in an editor whose text the
next call sends (Pilot, demo model: its extractive summary is ready at once)."""

from __future__ import annotations

from tests.waiting import wait_until
from tests.ui.test_panel_plan import PROMPTS, planned_session
from tui_agent.ui.screens.summary_editor import SummaryEditor
from tui_agent.ui.widgets.notice_line import NoticeLine

from .support import make_app, make_repo, send


def notices(app) -> list[str]:
    return [n.text for n in app.screen.query(NoticeLine)] if app.screen.query(NoticeLine) else []


async def test_summary_shows_and_edits_the_draft(tmp_path) -> None:
    session = planned_session(make_repo(tmp_path))  # the tiered compactor; /summary and /compact registered
    app = make_app(session)
    async with app.run_test(size=(140, 44)) as pilot:
        await send(pilot, "/summary")
        assert any("No summary draft yet" in text for text in notices(app))
        for prompt in PROMPTS[:2]:
            await send(pilot, prompt)
        await send(pilot, "/compact")
        await session.wait_summary()
        await send(pilot, "/summary")
        assert any(text.startswith("Summary draft of call") and "Summary (extractive" in text
                   for text in notices(app))
        await send(pilot, "/summary edit")
        await wait_until(lambda: isinstance(app.screen, SummaryEditor))
        editor = app.screen
        area = editor.query_one("#summary-text")
        assert area.text.startswith("Summary (extractive")
        area.load_text("The user asked about recipes and the cli; both are read.")
        await pilot.press("ctrl+s")
        await wait_until(lambda: not isinstance(app.screen, SummaryEditor))
        await pilot.pause()
        assert session.summary_draft().edited
        plan = session.plan_call()
        assert "The user asked about recipes and the cli" in plan.messages[plan.plan.recap_position]["content"][0]["text"]
        assert any(text.startswith("Summary draft edited") for text in notices(app))
        await send(pilot, "/summary edit")
        await wait_until(lambda: isinstance(app.screen, SummaryEditor))
        await pilot.press("escape")
        await wait_until(lambda: not isinstance(app.screen, SummaryEditor))
        assert "The user asked about recipes" in session.summary_draft().text  # Esc changed nothing
