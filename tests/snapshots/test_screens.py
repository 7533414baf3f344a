"""SVG snapshots of the main states. Deterministic: scripted/demo replies (no clock), fixed files and
mtimes, a fixed session label, durations hidden, no blinking cursor, animations off.

Review a failure in snapshot_report.html, then `pytest tests/snapshots --snapshot-update`.
"""

from __future__ import annotations

import asyncio

import pytest
from textual.pilot import Pilot

from tui_agent.core.compaction import CompactOptions
from tui_agent.core.providers.scripted import text_reply, tool_reply
from tui_agent.ui.screens.permission import PermissionScreen
from tui_agent.ui.widgets.history_rows import HistoryRows
from tests.ui.support import FakeEdit, demo_session, make_app, make_repo, scripted_session, send

SMALL = CompactOptions(max_messages=16)
PROMPTS = ("what does the handler do?", "explain the models", "where are the helpers?")


def test_start_screen(snap_compare, tmp_path) -> None:
    """Header (model · workspace · session), a welcome line, an empty panel, the prompt and footer."""
    app = make_app(demo_session(make_repo(tmp_path)))
    assert snap_compare(app, terminal_size=(120, 36))


@pytest.mark.parametrize("theme", ["agent-dark", "agent-light", "agent-high-contrast"])
def test_demo_session_with_compaction(snap_compare, tmp_path, theme: str) -> None:
    """Three demo prompts: old rows greyed (dropped), two ✂ cut Read results, the compact.run line,
    the sparkline of per-call tokens and the next-call meter, in each bundled theme."""
    app = make_app(demo_session(make_repo(tmp_path), compact=SMALL))
    app.theme = theme

    async def run_before(pilot: Pilot) -> None:
        for prompt in PROMPTS:
            await send(pilot, prompt)

    assert snap_compare(app, terminal_size=(140, 44), run_before=run_before)


def test_selected_row(snap_compare, tmp_path) -> None:
    """A cut tool_result opened from the panel: the full result left, the ✂ outbound copy right."""
    app = make_app(demo_session(make_repo(tmp_path), compact=SMALL))

    async def run_before(pilot: Pilot) -> None:
        for prompt in PROMPTS[:2]:
            await send(pilot, prompt)
        rows = pilot.app.screen.query_one(HistoryRows)
        rows.focus()
        rows.cursor = next(iter(rows.view.truncated))
        await pilot.press("enter")
        await pilot.pause()

    assert snap_compare(app, terminal_size=(140, 44), run_before=run_before)


def test_permission_modal(snap_compare, tmp_path) -> None:
    """An Edit waiting for consent: a unified diff and the three keyboard choices."""
    edit = tool_reply("Edit", {"file_path": "src/app.py", "old_string": "def handler_1(request):\n    return {'status': 1}",
                               "new_string": "def handler_1(request):\n    return {'status': 200}"},
                      "toolu_edit", "I will fix the status code.")
    app = make_app(scripted_session(make_repo(tmp_path), [edit, text_reply("Done.")], extra_tools=[FakeEdit()]))

    async def run_before(pilot: Pilot) -> None:
        await pilot.pause()  # first layout before any key (stack-check §1 pitfall 3)
        prompt = pilot.app.screen.query_one("PromptArea")
        prompt.load_text("fix the status code of handler_1")
        prompt.focus()
        await pilot.press("enter")
        for _ in range(300):
            if isinstance(pilot.app.screen, PermissionScreen):
                break
            await asyncio.sleep(0.01)
        await pilot.pause()

    assert snap_compare(app, terminal_size=(120, 36), run_before=run_before)


def test_narrow_layout(snap_compare, tmp_path) -> None:
    """80 columns: the panel is folded away; the footer offers F2 for it."""
    app = make_app(scripted_session(make_repo(tmp_path), [text_reply("The handler returns a **status**.")]))

    async def run_before(pilot: Pilot) -> None:
        await send(pilot, "what does the handler do?")

    assert snap_compare(app, terminal_size=(80, 30), run_before=run_before)


def test_narrow_layout_panel_open(snap_compare, tmp_path) -> None:
    """80 columns after F2: the panel takes the whole width."""
    app = make_app(demo_session(make_repo(tmp_path), compact=SMALL))

    async def run_before(pilot: Pilot) -> None:
        await send(pilot, PROMPTS[0])
        await pilot.press("f2")
        await pilot.pause()

    assert snap_compare(app, terminal_size=(80, 30), run_before=run_before)
