"""The budget panel: live per-call updates, dropped and truncated rows, the compaction line, row
selection, API usage replacing estimates, and the incremental row index."""

from __future__ import annotations

from tui_agent.core import events as ev
from tui_agent.core.compaction import TRUNCATION_NOTE, CompactOptions
from tui_agent.core.messages import tool_result_block, user_text
from tui_agent.core.providers.base import UsageInfo
from tui_agent.core.providers.scripted import text_reply
from tui_agent.ui.budget_model import HistoryIndex, fmt_k, spark
from tui_agent.ui.screens.message_view import MessageScreen
from tui_agent.ui.widgets.budget_meter import BudgetMeter
from tui_agent.ui.widgets.budget_panel import BudgetPanel
from tui_agent.ui.widgets.history_rows import HistoryRows

from .support import demo_session, make_app, make_repo, scripted_session, send

SMALL = CompactOptions(max_messages=16)


def row_text(rows: HistoryRows, index: int) -> str:
    rows.scroll_to(y=index, animate=False, immediate=True)
    return rows.render_line(index - rows.scroll_offset.y).text


async def test_demo_session_greys_dropped_rows_and_marks_cuts(tmp_path) -> None:
    session = demo_session(make_repo(tmp_path), compact=SMALL)
    app = make_app(session)
    async with app.run_test(size=(140, 44)) as pilot:
        panel = app.screen.query_one(BudgetPanel)
        for prompt in ("what does the handler do?", "explain the models", "where are the helpers?"):
            await send(pilot, prompt)
        rows = panel.rows
        view = rows.view
        assert view is not None and view.first_kept > 0
        assert len(rows.index.rows) == len(session.history)
        assert view.state(0) == "dropped" and view.state(len(session.history) - 1) == "sent"
        assert view.truncated, "large Read results are cut in the outbound copy"
        cut_row = next(iter(view.truncated))
        cut = view.truncated[cut_row][0]
        line = row_text(rows, cut_row)
        assert f"✂ {fmt_k(cut.original_chars)} → {fmt_k(cut.kept_chars)}" in line
        assert "tool_result Read" in line
        events = panel.events
        lines = [str(events.get_option_at_index(k).prompt) for k in range(events.option_count)]
        assert lines and "compact.run" not in " ".join(lines)  # plain words, not the trace's key=value line
        assert f"{view.plan.dropped_count} older messages not sent" in lines[-1]
        # the panel heard every model call, mid-turn ones included, each under the session's one counter
        assert list(panel.calls) == list(range(1, session.state.calls + 1)) and session.state.calls >= 15
        meter = panel.query_one(BudgetMeter).meter
        assert meter is not None and meter.label == "Next call" and meter.exact_total is None
        assert "≈" in str(panel.query_one(BudgetMeter).render())


async def test_selecting_a_row_shows_full_and_outbound_forms(tmp_path) -> None:
    session = demo_session(make_repo(tmp_path), compact=SMALL)
    app = make_app(session)
    async with app.run_test(size=(140, 44)) as pilot:
        for prompt in ("what does the handler do?", "explain the models"):
            await send(pilot, prompt)
        rows = app.screen.query_one(HistoryRows)
        cut_row = next(iter(rows.view.truncated))
        rows.enter_on_purpose()  # F4: the steering mode
        rows.cursor = cut_row
        await pilot.press("enter")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, MessageScreen)
        full = str(screen.query_one("#history-text").render())
        sent = str(screen.query_one("#outbound-text").render())
        assert TRUNCATION_NOTE.strip() in sent and TRUNCATION_NOTE.strip() not in full
        assert len(sent) < len(full)
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen.focused is app.screen.query_one("PromptArea"), "closing a view returns to the prompt"
        assert rows.view.first_kept > 0  # two prompts over the small window: the oldest rows are dropped
        rows.enter_on_purpose()  # F2 again
        rows.cursor = 0
        await pilot.press("enter")
        await pilot.pause()
        assert "Not sent" in str(app.screen.query_one("#outbound-text").render())


async def test_api_usage_replaces_the_estimate(tmp_path) -> None:
    session = scripted_session(make_repo(tmp_path), [text_reply("Hi.")])
    session.provider.usage = UsageInfo(input_tokens=1200, output_tokens=5, cache_read_input_tokens=800)
    app = make_app(session)
    async with app.run_test(size=(120, 36)) as pilot:
        panel = app.screen.query_one(BudgetPanel)
        seen: list = []  # the ledger's current figures when each usage arrived (a listener after the panel's)
        session.listeners.append(lambda event: seen.append(panel.ledger.current) if isinstance(event, ev.Usage)
                                 else None)
        await send(pilot, "hello")
        assert panel.calls[1] == 2000  # input + cache read: what the call occupied
        assert seen and seen[0].label == "Call #1" and seen[0].exact_total == 2000  # API replaced ≈
        assert panel.meter.meter.label == "Next call"  # the next call is an estimate again...
        assert "last 2,000 API" in str(panel.query_one("#budget-spark").render())  # ...beside the real last one


async def test_history_index_is_incremental_and_resets_on_clear() -> None:
    history = [user_text("hi"), {"role": "assistant", "content": [
        {"type": "tool_use", "id": "a", "name": "Read", "input": {"file_path": "/ws/src/x.py"}}]},
        {"role": "user", "content": [tool_result_block("a", "x" * 12_400)]}]
    index = HistoryIndex()
    from pathlib import Path

    index.workspace = Path("/ws")
    assert index.sync(history) is True
    assert [r.what for r in index.rows] == ["“hi”", "tool_use Read(src/x.py)", "tool_result Read 12.4k"]
    first = index.rows[0]
    history.append(user_text("more"))
    assert index.sync(history) is False
    assert index.rows[0] is first and len(index.rows) == 4  # old rows are not re-described
    assert index.total_tokens == sum(r.tokens for r in index.rows)
    assert index.sync([]) is True and index.rows == []
    assert spark([1, 2, 3, 8], 3) == spark([2, 3, 8], 3)
