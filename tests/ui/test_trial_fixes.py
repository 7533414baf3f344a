"""Defects a new-user trial found (issue 11, "Fix what the new-user trial found"), one test each."""

from __future__ import annotations

from rich.cells import cell_len

from tui_agent.core.agent.factory import build_session
from tui_agent.core.providers.scripted import text_reply, tool_reply
from tui_agent.ui.widgets.notice_line import NoticeLine

from tests.waiting import wait_until

from .support import demo_session, make_app, make_repo, scripted_session, send


async def wait_for(pilot, condition, what: str) -> None:
    """The one bounded wait (tests/waiting.py), then a pause so the screen shows what was waited for."""
    await wait_until(condition, what=what)
    await pilot.pause()


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


async def test_the_chat_follows_again_after_the_user_scrolled(tmp_path) -> None:
    """Scrolled up (here: PageUp in the chat), new output raises the hint instead of being lost; End or
    a click on it jumps down; a submitted prompt always brings the view back to the end."""
    from tui_agent.ui.widgets.chat_pane import ChatPane

    app = make_app(demo_session(make_repo(tmp_path)))
    async with app.run_test(size=(100, 30)) as pilot:
        chat = app.screen.query_one(ChatPane)
        await send(pilot, "what does the handler do?")
        assert chat.max_scroll_y > 0 and chat.scroll_y == chat.max_scroll_y
        chat.focus()
        await pilot.press("pageup", "pageup")
        assert chat.scroll_y < chat.max_scroll_y and not chat.has_new_output
        await chat.add_notice("output that arrives while the user reads above")
        await wait_for(pilot, lambda: chat.has_new_output, "the new-output hint")
        assert chat.hint.region.height == 1 and chat.hint.region.bottom <= chat.region.bottom
        await pilot.press("end")
        await wait_for(pilot, lambda: chat.scroll_y == chat.max_scroll_y and not chat.has_new_output, "End to follow")
        await chat.add_notice("more, while following")
        await pilot.pause()
        assert chat.scroll_y == chat.max_scroll_y and not chat.has_new_output

        await pilot.press("pageup")
        await chat.add_notice("unseen")
        await wait_for(pilot, lambda: chat.has_new_output, "the hint again")
        await pilot.click("#new-output")
        await wait_for(pilot, lambda: chat.scroll_y == chat.max_scroll_y and not chat.has_new_output, "a click")

        await pilot.press("pageup")
        await chat.add_notice("unseen, while typing")
        await wait_for(pilot, lambda: chat.has_new_output, "the hint with the prompt focused")
        app.screen.query_one("PromptArea").focus()
        await pilot.press("end")  # the cursor is already at the end of its line: End reaches the chat
        await wait_for(pilot, lambda: chat.scroll_y == chat.max_scroll_y, "End from the prompt")

        await pilot.press("pageup", "pageup")
        before = chat.max_scroll_y
        await send(pilot, "explain the models")  # a new prompt: the answer is followed to the end
        assert chat.max_scroll_y > before and chat.scroll_y == chat.max_scroll_y


async def test_tab_to_a_card_and_back_still_follows_the_next_prompt(tmp_path) -> None:
    from tui_agent.ui.widgets.chat_pane import ChatPane
    from tui_agent.ui.widgets.tool_card import ToolCard

    app = make_app(demo_session(make_repo(tmp_path)))
    async with app.run_test(size=(100, 30)) as pilot:
        chat = app.screen.query_one(ChatPane)
        await send(pilot, "what does the handler do?")
        app.screen.query(ToolCard).first().focus()  # scrolled into view: Textual releases the anchor
        await pilot.pause()
        assert chat.scroll_y < chat.max_scroll_y
        await send(pilot, "explain the models")
        assert chat.scroll_y == chat.max_scroll_y


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


async def test_escape_closes_the_hints_and_keeps_the_text(tmp_path) -> None:
    from tui_agent.ui.widgets.command_hints import CommandHints
    from tui_agent.ui.widgets.prompt_area import PromptArea

    app = make_app(scripted_session(make_repo(tmp_path), []))
    async with app.run_test(size=(120, 36)) as pilot:
        prompt = app.screen.query_one(PromptArea)
        hints = app.screen.query_one(CommandHints)
        prompt.focus()
        await pilot.press("/", "c", "l")
        assert hints.has_class("-visible")
        escape = app.screen.active_bindings["escape"]
        assert escape.binding.description == "Close hints", "the footer must not offer 'Cancel turn' here"
        await pilot.press("escape")
        assert prompt.text == "/cl" and not hints.has_class("-visible")
        assert "escape" not in app.screen.active_bindings  # nothing left to close or cancel
        await pilot.press("e")
        assert prompt.text == "/cle" and hints.matches == ["/clear"]


async def test_tab_completes_theme_names(tmp_path) -> None:
    from tui_agent.ui.widgets.command_hints import CommandHints
    from tui_agent.ui.widgets.prompt_area import PromptArea

    app = make_app(scripted_session(make_repo(tmp_path), []))
    async with app.run_test(size=(120, 36)) as pilot:
        prompt = app.screen.query_one(PromptArea)
        hints = app.screen.query_one(CommandHints)
        prompt.focus()
        await pilot.press("/", "t", "h", "tab")
        assert prompt.text == "/theme "
        assert hints.has_class("-visible") and "/theme agent-light" in hints.matches
        await pilot.press(*"agent-")
        assert hints.matches == ["/theme agent-dark", "/theme agent-high-contrast", "/theme agent-light"]
        await pilot.press("down", "down", "tab")  # ↑/↓ choose among the names too
        assert prompt.text == "/theme agent-light"
        await pilot.press("enter")
        await pilot.pause()
        await app.workers.wait_for_complete()
        assert app.theme == "agent-light"


def three_reads(workspace):
    """A quick scripted turn with three tool cards (the demo's six rounds are not needed here)."""
    return scripted_session(workspace, [tool_reply("Read", {"file_path": name}, f"t{i}", f"Reading {name}.")
                                        for i, name in enumerate(("README.md", "src/app.py", "src/util.py"))]
                            + [text_reply("Done.")])


async def test_typing_while_a_card_has_focus_goes_to_the_prompt(tmp_path) -> None:
    from tui_agent.ui.widgets.prompt_area import PromptArea
    from tui_agent.ui.widgets.tool_card import ToolCard

    app = make_app(three_reads(make_repo(tmp_path)))
    async with app.run_test(size=(120, 36)) as pilot:
        await send(pilot, "what does the handler do?")
        prompt = app.screen.query_one(PromptArea)
        prompt.load_text("why ")
        prompt.move_cursor(prompt.document.end)
        card = app.screen.query(ToolCard).last()
        card.focus()
        await pilot.pause()
        await pilot.press("n", "o", "t", "question_mark")
        await pilot.pause()
        assert prompt.text == "why not?" and app.screen.focused is prompt


async def test_tab_visits_chat_panel_and_prompt_not_every_card(tmp_path) -> None:
    from tui_agent.ui.widgets.chat_pane import ChatPane
    from tui_agent.ui.widgets.history_rows import HistoryRows
    from tui_agent.ui.widgets.prompt_area import PromptArea
    from tui_agent.ui.widgets.tool_card import ToolCard

    app = make_app(three_reads(make_repo(tmp_path)))
    async with app.run_test(size=(140, 36)) as pilot:
        await send(pilot, "what does the handler do?")
        screen = app.screen
        cards = list(screen.query(ToolCard))
        assert len(cards) == 3
        prompt = screen.query_one(PromptArea)
        prompt.focus()
        await pilot.pause()
        seen = []
        for _ in range(3):
            await pilot.press("tab")
            seen.append(type(screen.focused).__name__)
        assert seen == ["ChatPane", "HistoryRows", "PromptArea"]
        # The cards are one Enter away: Enter steps in, ↑/↓ move between them, Tab moves on.
        screen.query_one(ChatPane).focus()
        await pilot.pause()
        await pilot.press("enter")
        assert screen.focused is cards[-1]
        await pilot.press("up")
        assert screen.focused is cards[-2]
        await pilot.press("enter")
        assert cards[-2].expanded
        await pilot.press("tab")
        assert isinstance(screen.focused, HistoryRows)


async def test_f2_in_wide_mode_focuses_the_panel_then_hides_it(tmp_path) -> None:
    from tui_agent.ui.widgets.history_rows import HistoryRows
    from tui_agent.ui.widgets.prompt_area import PromptArea

    app = make_app(three_reads(make_repo(tmp_path)))
    async with app.run_test(size=(140, 36)) as pilot:
        await send(pilot, "what does the handler do?")
        screen = app.screen
        rows = screen.query_one(HistoryRows)
        await pilot.press("f2")
        assert screen.focused is rows and rows.region.width > 0
        assert rows.cursor is not None, "a focused panel shows which row the keys act on"
        line = rows.render_line(rows.cursor - rows.scroll_offset.y)
        cursor_bg = rows.get_component_rich_style("history-rows--cursor").bgcolor
        assert any(seg.style and seg.style.bgcolor == cursor_bg for seg in line if seg.text.strip())
        await pilot.press("f2")
        assert screen.has_class("-panel-hidden") and isinstance(screen.focused, PromptArea)
        await pilot.press("f2")
        assert not screen.has_class("-panel-hidden") and screen.focused is rows


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
        rows.enter_on_purpose()  # F2: the steering mode
        rows.cursor = 2  # the tool_result
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, MessageScreen)
        shown = str(app.screen.query_one("#history-text").render()).split("\n")
        starts = [line for line in shown if line.lstrip().startswith(CONTINUATION.strip())]
        assert len(starts) >= 5, shown[:8]
        assert all(len(line) <= app.screen.query_one("#history-text").content_region.width for line in shown)
