"""Terminal escape injection in the TUI (issue 9, item 4): no control character reaches the screen."""

from __future__ import annotations

import re
from pathlib import Path

from tests.ui.support import make_app, scripted_session, send
from tui_agent.core.providers.scripted import text_reply, tool_reply
from tui_agent.ui.screens.main import MainScreen

OSC52 = "\x1b]52;c;SGVsbG8=\x07"
TITLE = "\x1b]0;OWNED\x07"
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def screen_text(app) -> str:
    """Every character the compositor would send for the current screen (segments, not escapes)."""
    return "".join(seg.text for strip in app.screen._compositor.render_update(full=True).strips for seg in strip)


async def test_tui_shows_no_escape_but_the_history_keeps_it(tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text(f"secret notes {OSC52}{TITLE}\n")
    replies = [tool_reply("Read", {"file_path": "notes.md"}, "r1", text=f"Reading {TITLE}"),
               text_reply(f"The notes say {OSC52} hello\x1b[2J."),]
    session = scripted_session(tmp_path, replies)
    app = make_app(session)
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, f"read the notes {TITLE}")
        screen = app.screen
        assert isinstance(screen, MainScreen)
        card = next(iter(screen.chat.cards.values()))
        card.expanded = True
        await pilot.pause()
        rendered = screen_text(app)
        assert "The notes say ]52;c;SGVsbG8= hello[2J." in rendered
        assert "secret notes" in rendered
        assert "\x1b" not in rendered and not CONTROL.search(rendered)
        screen.focus_panel()
        await pilot.press("end", "enter")  # open the last message in the message view
        await pilot.pause()
        rendered = screen_text(app)
        assert "hello" in rendered and "\x1b" not in rendered
    texts = [b.get("text", "") for m in session.history for b in (m["content"] if isinstance(m["content"], list) else [])
             if isinstance(b, dict)]
    assert any(OSC52 in t for t in texts)  # what the model said is kept as it was
