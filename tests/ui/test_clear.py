"""`/clear` starts over: counters, session id, a top-down chat. (Found by a new-user trial, issue 11.)"""

from __future__ import annotations


from tui_agent.ui.widgets.notice_line import NoticeLine


from .support import demo_session, make_app, make_repo, send


async def test_clear_starts_over_counters_session_id_and_a_top_down_chat(tmp_path) -> None:
    from tui_agent.ui.widgets.budget_panel import BudgetPanel
    from tui_agent.ui.widgets.chat_pane import ChatPane

    from tui_agent.core.journal.writer import start_journal

    session = demo_session(make_repo(tmp_path))
    start_journal(session)  # as the CLI does: the session has an id (tests' data dir: conftest)
    app = make_app(session)
    async with app.run_test(size=(140, 36)) as pilot:
        chat = app.screen.query_one(ChatPane)
        panel = app.screen.query_one(BudgetPanel)
        await send(pilot, "what does the handler do?")
        old_id = session.session_id
        assert chat.max_scroll_y > 0 and f"session {old_id}" in app.screen.sub_title
        await send(pilot, "/clear")
        assert session.session_id != old_id
        assert f"session {session.session_id}" in app.screen.sub_title and old_id not in app.screen.sub_title
        notice = chat.query(NoticeLine).last()
        assert "Cleared" in notice.text and session.session_id in notice.text
        await pilot.pause()
        assert chat.scroll_y == 0 and notice.region.y <= chat.region.y + 2, "the chat reads top-down again"

        await send(pilot, "explain the models")
        spark = str(panel.query_one("#budget-spark").render())
        assert spark.startswith(f"calls {len(panel.calls)} ")
        assert sorted(panel.calls) == list(range(1, session.state.calls + 1)), "call numbers restart at #1"
