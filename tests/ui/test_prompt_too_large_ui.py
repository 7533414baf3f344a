"""A prompt too large for the window is refused before it is sent and stays in the prompt box (issue 40): it
is not shown as said in the chat, the history is unchanged, the error line says what to do, and the session
goes on with the next prompt."""

from __future__ import annotations

from tui_agent.ui.widgets.notice_line import NoticeLine
from tui_agent.ui.widgets.user_message import UserMessage

from .support import demo_session, make_app, make_repo, send

HUGE = "Please look at this log:\n" + "a log line that goes on and on\n" * 4_000  # ≈31k tokens, the window is 16k


async def test_a_prompt_too_large_stays_in_the_prompt_box(tmp_path) -> None:
    session = demo_session(make_repo(tmp_path))
    app = make_app(session)
    async with app.run_test(size=(120, 36)) as pilot:
        await send(pilot, HUGE.strip())
        prompt = app.screen.query_one("PromptArea")
        assert prompt.text == HUGE.strip()  # back for the user to shorten, nothing lost
        assert session.history == [] and not list(app.screen.query(UserMessage))
        errors = [n.text for n in app.screen.query(NoticeLine) if n.level == "error"]
        assert len(errors) == 1 and "Not sent" in errors[0] and "back in the prompt box" in errors[0], errors
        await send(pilot, "what is in this repo?")
        assert len(session.history) >= 2 and [m.text for m in app.screen.query(UserMessage)] == [
            "what is in this repo?"]
