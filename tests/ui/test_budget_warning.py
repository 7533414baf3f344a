"""An impossible budget is said in the chat, not found out at the first call. (Found by a new-user trial, issue 11.)"""

from __future__ import annotations


from tui_agent.core.agent.factory import build_session
from tui_agent.ui.widgets.notice_line import NoticeLine


from .support import make_app, make_repo, wait_for


async def test_an_impossible_budget_is_warned_in_the_chat(tmp_path) -> None:
    session, notices = build_session(make_repo(tmp_path), model="demo", context_window=100)
    app = make_app(session, startup_notices=notices)
    async with app.run_test(size=(120, 36)) as pilot:
        def warnings() -> list[str]:
            return [n.text for n in app.screen.query(NoticeLine) if n.level == "warning"]

        await wait_for(pilot, lambda: any("Impossible budget" in w for w in warnings()), "the budget warning")
        assert any("context window (100 tokens)" in w for w in warnings())
