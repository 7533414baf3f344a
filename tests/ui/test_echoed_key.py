"""The TUI shows a gateway's 401 without the key it echoes (issue 40: ~85 characters of it on the chat line
and the panel's line). Real SDK, the fake Anthropic server, the app under Pilot."""

from __future__ import annotations

from tests.fakes.fake_anthropic import FakeAnthropic, error_reply
from tests.providers.test_echoed_key import GATEWAY_401, KEY, leaked, session_for
from tui_agent.ui.widgets.notice_line import NoticeLine

from .support import make_app, send


async def test_the_chat_and_the_panel_show_the_401_without_the_key(tmp_path):
    with FakeAnthropic(api_key=KEY) as fake:
        fake.replies.append(error_reply(401, "authentication_error", GATEWAY_401))
        session = session_for(fake, tmp_path)
        app = make_app(session)
        async with app.run_test(size=(160, 45)) as pilot:
            await send(pilot, "hello")
            notices = [str(n.render()) for n in app.screen.query(NoticeLine)]
            screen = app.export_screenshot()
        await session.aclose()
    assert any("401" in n and "[redacted]" in n for n in notices), notices
    assert not leaked("\n".join(notices)) and not leaked(screen.replace("&#160;", " "))
