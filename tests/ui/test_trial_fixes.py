"""Defects a new-user trial found (issue 11, "Fix what the new-user trial found"), one test each."""

from __future__ import annotations

from rich.cells import cell_len

from tui_agent.core.factory import build_session
from tui_agent.ui.widgets.notice_line import NoticeLine

from .support import make_app, make_repo, scripted_session


async def wait_for(pilot, condition, what: str, tries: int = 200) -> None:
    """Pause until `condition()` holds; fail saying `what` did not happen (bounded, never a bare loop)."""
    for _ in range(tries):
        if condition():
            return
        await pilot.pause(0.01)
    raise AssertionError(f"timed out waiting for {what}")


async def test_an_impossible_budget_is_warned_in_the_chat(tmp_path) -> None:
    session, notices = build_session(make_repo(tmp_path), model="demo", context_window=100)
    app = make_app(session, startup_notices=notices)
    async with app.run_test(size=(120, 36)) as pilot:
        def warnings() -> list[str]:
            return [n.text for n in app.screen.query(NoticeLine) if n.level == "warning"]

        await wait_for(pilot, lambda: any("Impossible budget" in w for w in warnings()), "the budget warning")
        assert any("context window (100 tokens)" in w for w in warnings())


def cut_error_history() -> list:
    from tui_agent.core.messages import assistant_text, tool_result_block, user_text

    use = {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Read",
                                             "input": {"file_path": "src/app.py"}}]}
    return [user_text("read it"), use, {"role": "user", "content": [tool_result_block("t1", "E" * 9000, is_error=True)]},
            assistant_text("It failed."), user_text("🚀🎉 ship it 🚀🎉 " * 6), assistant_text("plain ascii " * 8)]


def strip_columns(strip) -> tuple[int, str]:
    """(cells before the token column, the rendered text) of one row: the token figure is the segment
    just before the size bar, whatever the row holds."""
    segments = [s for s in strip if s.text]
    cells, offsets = 0, []
    for segment in segments:
        offsets.append(cells)
        cells += cell_len(segment.text)
    return offsets[-2], strip.text


async def test_a_cut_error_result_keeps_its_error_tag_and_states_its_size_once(tmp_path) -> None:
    from tui_agent.core.compaction import CompactOptions
    from tui_agent.ui.widgets.budget_panel import BudgetPanel

    session = scripted_session(make_repo(tmp_path), [], compact=CompactOptions(max_tool_result_chars=500,
                                                                               protect_recent_rounds=0))
    session.history.extend(cut_error_history())
    app = make_app(session)
    async with app.run_test(size=(140, 36)) as pilot:
        panel = app.screen.query_one(BudgetPanel)
        panel.show_next_call()
        await pilot.pause()
        assert 2 in panel.rows.view.truncated
        line = panel.rows.render_line(2).text
        assert "tool_result Read error ✂ 9.0k →" in line, line
        assert line.count("9.0k") == 1, line


async def test_an_emoji_preview_does_not_shift_the_columns(tmp_path) -> None:
    from tui_agent.ui.widgets.budget_panel import BudgetPanel

    session = scripted_session(make_repo(tmp_path), [])
    session.history.extend(cut_error_history())
    app = make_app(session)
    async with app.run_test(size=(140, 36)) as pilot:
        panel = app.screen.query_one(BudgetPanel)
        panel.sync_history()
        await pilot.pause()
        rows = panel.rows
        width = rows.scrollable_content_region.width
        emoji_col, emoji_text = strip_columns(rows.render_line(4))
        ascii_col, ascii_text = strip_columns(rows.render_line(5))
        assert "🚀" in emoji_text and "…" in emoji_text
        assert emoji_col == ascii_col, (emoji_text, ascii_text)
        assert rows.render_line(4).cell_length == rows.render_line(5).cell_length == width
