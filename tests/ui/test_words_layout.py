"""Issue 18, units, words and layout: sizes say whether they are characters or tokens, counts say
their noun in the right number, a cut mark never runs into the mem column, three-digit row numbers keep
a space from their mark, the message view measures the message, and a modal's footer is its own."""

from __future__ import annotations

import re
from types import SimpleNamespace

from tests.waiting import wait_until
from tui_agent.core.compaction import CompactOptions
from tests.core.helpers import assistant_text
from tui_agent.core.messages import tool_result_block, user_text
from tui_agent.core.tokens import message_chars
from tui_agent.ui.budget_model import counted, fmt_k

from .support import make_app, make_repo, scripted_session


def read_history(size: int, rounds: int = 1) -> list:
    history = []
    for i in range(rounds):
        use = {"role": "assistant", "content": [{"type": "tool_use", "id": f"t{i}", "name": "Read",
                                                 "input": {"file_path": "src/app.py"}}]}
        history += [user_text(f"read it {i}"), use,
                    {"role": "user", "content": [tool_result_block(f"t{i}", "x = 1  # a line of code\n" * (size // 24))]},
                    assistant_text("Read.")]
    return history


def test_counts_say_their_noun_in_the_right_number() -> None:
    assert [counted(1, "prompt"), counted(2, "prompt"), counted(0, "msg"), counted(1, "msg")] == \
        ["1 prompt", "2 prompts", "0 msgs", "1 msg"]


async def test_a_cut_mark_keeps_a_space_before_a_five_cell_mem_figure_at_120_columns(tmp_path) -> None:
    from tui_agent.ui.widgets.budget_panel import BudgetPanel

    session = scripted_session(make_repo(tmp_path), [], compact=CompactOptions(max_tool_result_chars=2000,
                                                                               protect_recent_rounds=0))
    session.history.extend(read_history(75_000))
    app = make_app(session)
    async with app.run_test(size=(120, 36)) as pilot:
        panel = app.screen.query_one(BudgetPanel)
        session.announce_next("history loaded")
        await pilot.pause()
        assert 2 in panel.rows.view.truncated
        mem = fmt_k(panel.index.rows[2].tokens)
        assert len(mem) == 5, mem  # the case that used to touch: "✂ 75.4k → 2.0k15.5k"
        line = panel.rows.render_line(2).text
        assert re.search(rf"\S {re.escape(mem)} ", line) and not re.search(rf"\S{re.escape(mem)}", line), line
        columns = str(panel.query_one("#budget-columns").render())
        assert "chars" in columns and "tok" in columns, "the header says which figures are chars and which tokens"


async def test_three_digit_row_numbers_keep_a_space_from_their_mark(tmp_path) -> None:
    from tui_agent.ui.widgets.budget_panel import BudgetPanel

    session = scripted_session(make_repo(tmp_path), [])
    session.history.extend(read_history(200, rounds=30))  # 120 messages: rows #100-#119
    app = make_app(session)
    async with app.run_test(size=(140, 36)) as pilot:
        panel = app.screen.query_one(BudgetPanel)
        session.announce_next("history loaded")
        await pilot.pause()
        rows = panel.rows
        for index in (5, 105, 119):
            rows.cursor = index
            await pilot.pause()
            line = rows.render_line(index - rows.scroll_offset.y).text
            assert re.match(rf"^..\s+{index} ", line), line


async def test_no_model_call_yet_shows_the_base_and_plural_words(tmp_path) -> None:
    from tui_agent.ui.widgets.budget_meter import BudgetMeter

    app = make_app(scripted_session(make_repo(tmp_path), []))
    async with app.run_test(size=(140, 36)) as pilot:
        await pilot.pause()
        text = str(app.screen.query_one(BudgetMeter).render())
        assert "No model call yet." in text and "base ≈" in text and "built-in tools" in text
        assert "0 msgs" in text


async def test_with_no_history_the_panel_draws_the_base_the_engine_told(tmp_path) -> None:
    """One owner: the empty panel's base is the one in the engine's NextRequestChanged, not a base the
    panel computed for itself."""
    from tui_agent.core import events as ev
    from tui_agent.ui.widgets.budget_meter import BudgetMeter

    session = scripted_session(make_repo(tmp_path), [])
    told: list[ev.NextRequestChanged] = []
    session.listeners.append(lambda event: told.append(event) if isinstance(event, ev.NextRequestChanged) else None)
    app = make_app(session)
    async with app.run_test(size=(140, 36)) as pilot:
        await wait_until(lambda: told, what="the engine telling the empty panel its next request")
        await pilot.pause()
        assert told[-1].why == "panel shown"
        assert app.screen.query_one(BudgetMeter).base is told[-1].base


async def test_the_message_view_measures_the_message_and_shows_its_own_keys(tmp_path) -> None:
    from textual.widgets import Footer

    from tui_agent.ui.screens.message_view import MessageScreen
    from tui_agent.ui.widgets.history_rows import HistoryRows

    session = scripted_session(make_repo(tmp_path), [], compact=CompactOptions(max_tool_result_chars=2000,
                                                                               protect_recent_rounds=0))
    session.history.extend(read_history(40_000))
    app = make_app(session)
    async with app.run_test(size=(140, 40)) as pilot:
        session.announce_next("history loaded")
        rows = app.screen.query_one(HistoryRows)
        rows.enter_on_purpose()
        rows.cursor = 2
        await pilot.press("enter")
        await pilot.pause()
        view = app.screen
        assert isinstance(view, MessageScreen)
        title = str(view.query_one("#history-side .side-title").render())
        assert f"{fmt_k(message_chars(session.history[2]))} chars" in title, title
        outbound = str(view.query_one("#outbound-text").render())
        cut = rows.view.truncated[2][0]
        assert f"{fmt_k(cut.kept_chars)} of {fmt_k(cut.original_chars)} chars sent" in outbound
        assert view.query(Footer), "the modal shows its own keys"
        keys = {b.binding.description for b in view.active_bindings.values() if b.binding.show}
        assert {"Pin", "Close"} <= keys and "Exact count" not in keys and "Back to prompt" not in keys


async def test_the_sparkline_and_its_event_ticks_never_wrap_at_430_calls(tmp_path) -> None:
    from tui_agent.ui.widgets.budget_panel import BudgetPanel

    app = make_app(scripted_session(make_repo(tmp_path), []))
    async with app.run_test(size=(160, 45)) as pilot:
        panel = app.screen.query_one(BudgetPanel)
        ledger = panel.ledger
        ledger.calls.update({k: 1000 + 37 * (k % 11) for k in range(1, 431)})
        ledger.event_calls.update({410, 418, 424, 429})
        ledger.major_events.extend([SimpleNamespace(undone=False)] * 4)  # only their count is drawn here
        panel._render_spark()
        await pilot.pause()
        spark = panel.query_one("#budget-spark")
        lines = str(spark.render()).splitlines()
        assert len(lines) == 2 and spark.size.height == 2, lines
        assert "4" in lines[1] and all(len(line) <= spark.content_region.width for line in lines)
        await pilot.resize_terminal(80, 30)  # the panel folds away (no room at all): still drawn, no error
        await pilot.pause()
        panel._render_spark()


async def test_the_events_list_grows_with_the_panel_and_shows_whole_events(tmp_path) -> None:
    from types import SimpleNamespace

    from textual.content import Content

    from tui_agent.ui.widgets.budget_panel import BudgetPanel

    line = ("call {} · over the 7.7k high-water mark: dropped 40 old messages, masked 1 old result, cut 4 read "
            "results, recap keeps 1 prompt and 10 files · 37.3k → 2.7k tok")
    entries = [SimpleNamespace(line=line.format(k)) for k in range(1, 9)]
    app = make_app(scripted_session(make_repo(tmp_path), []))
    async with app.run_test(size=(160, 45)) as pilot:
        events = app.screen.query_one(BudgetPanel).events
        events.show(entries)
        await pilot.pause()
        width = events.size.width - 3  # padding and the scrollbar (it scrolls)
        per_event = len(Content(entries[0].line).wrap(width))
        assert per_event >= 2  # each event wraps: a cut edge would fall mid-event
        assert events.size.height > 5, "at 160x45 the list is no longer capped at 5 lines"
        assert events.size.height % per_event == 0, "whole events only, never a line cut mid-event"
        assert events.scroll_y == events.max_scroll_y and events.max_scroll_y % per_event == 0


async def test_every_modal_has_a_footer_of_its_own_keys(tmp_path) -> None:
    """Issue 18: modal footers showed the main screen's keys ("c Exact count … esc Back to prompt")."""
    from textual.widgets import Footer

    from tui_agent.core.access.trust import TrustQuestion
    from tui_agent.core.messages import user_text
    from tui_agent.ui.screens.message_view import MessageScreen
    from tui_agent.ui.screens.permission import PermissionScreen
    from tui_agent.ui.screens.resume_picker import ResumePicker
    from tui_agent.ui.screens.summary_editor import SummaryEditor
    from tui_agent.ui.screens.trust import TrustScreen

    app = make_app(scripted_session(make_repo(tmp_path), []))
    async with app.run_test(size=(120, 36)) as pilot:
        main_only = {"Budget panel", "Exact count", "Back to prompt"}
        for modal in (PermissionScreen("Write", {"file_path": "a.txt", "content": "x"}, "a.txt", "", ""),
                      TrustScreen(TrustQuestion("Trust?", "why", [])), ResumePicker([]),
                      MessageScreen([user_text("hi")], 0, None, "prompt"), SummaryEditor("summary draft", "text")):
            app.push_screen(modal)
            await pilot.pause()
            assert modal.query(Footer), type(modal).__name__
            shown = {b.binding.description for b in modal.active_bindings.values() if b.binding.show}
            assert not shown & main_only, (type(modal).__name__, shown)
            modal.dismiss(None)
            await pilot.pause()
