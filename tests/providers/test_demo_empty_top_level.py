"""The demo's overview of a repository whose top level holds folders only: Glob's "No files found" is the
tool saying there are none, not a loose file (a new user's first question showed it as one)."""

from __future__ import annotations

from tui_agent.core import events as ev
from tui_agent.core.agent.factory import build_session


async def test_an_empty_top_level_lists_no_loose_files(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "guide.md").write_text("# Guide\n\nsome words\n")
    session, _ = build_session(tmp_path, model="demo", headless=True)
    events = [e async for e in session.run_turn("what is in this repo?")]
    answer = "".join(e.text for e in events if isinstance(e, ev.TextDelta))
    assert "docs/" in answer and "No files found" not in answer and "Loose files" not in answer
