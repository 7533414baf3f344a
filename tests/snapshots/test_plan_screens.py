"""SVG snapshots of the panel drawing the compaction plan: every mark (cut, masked, dropped, pinned,
excluded, the recap row, the cached band) in each theme, the loss report of an event, the folded
one-line meter at 80 columns and a loaded transcript's next-call plan before any call.

Deterministic like the others: the demo model (no clock), fixed files, a fixed system prompt. A loaded
history far over the demo model's 16k window makes one call cut, mask and drop at once.
"""

from __future__ import annotations

import pytest
from textual.pilot import Pilot

from tui_agent.ui.widgets.budget_panel import BudgetPanel
from tui_agent.ui.widgets.history_rows import HistoryRows
from tests.ui.support import make_app, make_repo, send
from tests.ui.test_panel_plan import SCENE_POLICY, oversized_history, planned_session


def transcript_app(tmp_path, theme: str = "agent-dark"):
    session = planned_session(make_repo(tmp_path), SCENE_POLICY)  # every mark at once (see SCENE_POLICY)
    session.history.extend(oversized_history(24))
    app = make_app(session)
    app.theme = theme
    return app


def steady_cursor(pilot: Pilot) -> None:
    """The prompt's cursor blinks on a timer and the chat may still be scrolling to its end when the
    screen is taken (its top is steady): fix both, so the snapshot shows the panel's state and nothing of the timing."""
    prompt = pilot.app.screen.query_one("PromptArea")
    prompt.cursor_blink = False
    prompt._cursor_visible = prompt.has_focus
    chat = pilot.app.screen.query_one("#chat")
    chat.scroll_home(animate=False, immediate=True)
    chat.styles.scrollbar_size_vertical = 0  # its thumb moves with the chat's height (not this test's)


def show_marks_at(pilot: Pilot, line: int) -> None:
    pilot.app.screen.query_one(HistoryRows).scroll_to(y=max(line, 0), animate=False, immediate=True)


def show_marks(pilot: Pilot) -> None:
    """Scroll the rows so the recap's neighbours, masked and cut rows and the newest round are in view."""
    rows = pilot.app.screen.query_one(HistoryRows)
    view = rows.view
    masked = next(i for i in range(view.history_len) if view.kind(i) == "masked")
    rows.scroll_to(y=max(masked - 4, 0), animate=False, immediate=True)


@pytest.mark.parametrize("theme", ["agent-dark", "agent-light", "agent-high-contrast"])
def test_plan_marks(snap_compare, tmp_path, theme: str) -> None:
    """A loaded transcript and one demo prompt: dropped rows (·, grey) behind the ≡ recap row, a ▒
    masked result sending its placeholder, ✂ cut results, the ┃ band over the cached prefix, mem and
    sent tokens per row, the cached/new meter in cache-units, the event line and its sparkline tick."""
    app = transcript_app(tmp_path, theme)

    async def run_before(pilot: Pilot) -> None:
        await send(pilot, "what does the handler do?")
        steady_cursor(pilot)
        show_marks(pilot)
        await pilot.pause()

    assert snap_compare(app, terminal_size=(160, 50), run_before=run_before)


def test_row_actions(snap_compare, tmp_path) -> None:
    """p on a dropped row (● pinned, sent again with its partner), x on a sent one (⊘ excluded), e on
    the masked one (sent whole): the next-call plan, its price and the pending event at once."""
    app = transcript_app(tmp_path)

    async def run_before(pilot: Pilot) -> None:
        await send(pilot, "what does the handler do?")
        panel = pilot.app.screen.query_one(BudgetPanel)
        rows = panel.rows
        view = rows.view
        masked = next(i for i in range(view.history_len) if view.kind(i) == "masked")
        rows.enter_on_purpose()  # F4: the steering mode
        for index, key in ((masked - 2, "p"), (masked + 2, "x"), (masked, "e")):
            rows.cursor = index
            await pilot.press(key)
        steady_cursor(pilot)
        show_marks_at(pilot, masked - 5)
        await pilot.pause()

    assert snap_compare(app, terminal_size=(160, 50), run_before=run_before)


def test_event_loss_report(snap_compare, tmp_path) -> None:
    """Enter on an event line: what left the request, what was masked, what the recap kept, the diff."""
    app = transcript_app(tmp_path)

    async def run_before(pilot: Pilot) -> None:
        await send(pilot, "what does the handler do?")
        steady_cursor(pilot)
        events = pilot.app.screen.query_one(BudgetPanel).events
        events.take_focus()
        events.highlighted = 0
        await pilot.press("enter")
        await pilot.pause()

    assert snap_compare(app, terminal_size=(140, 44), run_before=run_before)


def test_folded_one_line_meter(snap_compare, tmp_path) -> None:
    """80 columns: the panel is folded; the line above the footer says ctx %, dropped rows (and cost)."""
    app = transcript_app(tmp_path)

    async def run_before(pilot: Pilot) -> None:
        await send(pilot, "what does the handler do?")
        steady_cursor(pilot)
        await pilot.pause()

    assert snap_compare(app, terminal_size=(80, 30), run_before=run_before)


def test_transcript_preview(snap_compare, tmp_path) -> None:
    """A loaded history that cannot fit: before any call the panel shows the next call's plan (the drop
    and masks it will make, listed as "next call · …"), never "every message is sent whole"."""
    app = transcript_app(tmp_path)

    async def run_before(pilot: Pilot) -> None:
        await pilot.pause()
        steady_cursor(pilot)
        show_marks(pilot)
        await pilot.pause()

    assert snap_compare(app, terminal_size=(160, 50), run_before=run_before)
