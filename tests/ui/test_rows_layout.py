"""The panel's rows and the message view keep their columns: error tags, emoji, a line growing above the rows, wrapped code. (Found by a new-user trial, issue 11.)"""

from __future__ import annotations

from rich.cells import cell_len

from tui_agent.core.providers.scripted import text_reply, tool_reply


from .support import demo_session, make_app, make_repo, scripted_session, send


def cut_error_history() -> list:
    from tests.core.helpers import assistant_text
    from tui_agent.core.messages import tool_result_block, user_text

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
        await pilot.pause()  # the history was there before the panel: the engine told its next call on mount
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


async def test_a_line_growing_above_the_rows_never_hides_the_last_row(tmp_path) -> None:
    """The wrapped compaction line and the exact-count note take rows' height: the newest row stays."""
    from tui_agent.core.compaction import CompactOptions
    from tui_agent.ui.widgets.budget_panel import BudgetPanel

    app = make_app(demo_session(make_repo(tmp_path), compact=CompactOptions(max_messages=16)))
    async with app.run_test(size=(140, 44)) as pilot:
        rows = app.screen.query_one(BudgetPanel).rows

        def last_row_visible() -> bool:
            return rows.scroll_offset.y + rows.scrollable_content_region.height >= len(rows.index.rows)

        for line in ("what does the handler do?", "explain the models", "/context"):
            await send(pilot, line)
            await pilot.pause()
            assert len(rows.index.rows) > rows.scrollable_content_region.height or line == "what does the handler do?"
            if line == "/context":  # it focuses the first row not sent as it is (issue 11): End goes back
                assert rows.has_focus and rows.cursor is not None
                await pilot.press("end")
                await pilot.pause()
            assert last_row_visible(), f"after {line!r}: the last row is hidden"


def test_wrapped_code_lines_are_marked_as_continuations() -> None:
    from tui_agent.ui.screens.message_view import hanging_wrap

    text = "[tool_result t1 · 1.2k chars]\n" + f"{1:>6}\tshort\n" + f"{2:>6}\t" + "x = 1  # " + "long " * 12 + "\n" \
        + "plain prose stays for the widget to wrap"
    lines = hanging_wrap(text, 30).split("\n")
    assert lines[0] == "[tool_result t1 · 1.2k chars]" and lines[-1].startswith("plain prose")
    assert lines[1] == "     1  short"
    assert lines[2].startswith("     2  x = 1") and cell_len(lines[2]) <= 30
    continued = [line for line in lines[3:-1]]
    assert continued and all(line.startswith("      ↪ ") and cell_len(line) <= 30 for line in continued)
    assert "".join([lines[2][8:]] + [line[8:] for line in continued]) == "x = 1  # " + "long " * 12
    assert hanging_wrap("     1\t🚀" + "界" * 30, 20).split("\n")[1].startswith("      ↪ ")


async def test_the_message_view_marks_wrapped_code_lines(tmp_path) -> None:
    from tui_agent.core.compaction import CompactOptions
    from tui_agent.ui.screens.message_view import CONTINUATION, MessageScreen
    from tui_agent.ui.widgets.history_rows import HistoryRows

    repo = make_repo(tmp_path)
    (repo / "wide.py").write_text("".join(f"value_{i} = '{'w' * 150}'\n" for i in range(5)))
    session = scripted_session(repo, [tool_reply("Read", {"file_path": "wide.py"}, "t1"), text_reply("Done.")],
                               compact=CompactOptions())
    app = make_app(session)
    async with app.run_test(size=(120, 36)) as pilot:
        await send(pilot, "read wide.py")
        rows = app.screen.query_one(HistoryRows)
        rows.enter_on_purpose()  # F4: the steering mode
        rows.cursor = 2  # the tool_result
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, MessageScreen)
        shown = str(app.screen.query_one("#history-text").render()).split("\n")
        starts = [line for line in shown if line.lstrip().startswith(CONTINUATION.strip())]
        assert len(starts) >= 5, shown[:8]
        assert all(len(line) <= app.screen.query_one("#history-text").content_region.width for line in shown)
