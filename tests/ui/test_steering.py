"""Issue 28 §2, keys that changed what is sent without being asked: typing after `/context`, after a click on a
row, after Esc and after closing a view reaches the prompt whole; the row actions act only in the steering
mode F2 enters (named on the panel's title, left by Esc or by a letter that is no action); each change is
said in the chat with its effect on the next call, and `u` / `/undo-steer` undo the last one.
"""

from __future__ import annotations

from .support import make_app, make_repo, send
from .test_panel_plan import SCENE_POLICY, first_of, oversized_history, planned_session
from .test_typing_focus import outbound_changes, type_text

QUESTION = "explain the pin rule"


def notices(app) -> list[str]:
    from tui_agent.ui.widgets.notice_line import NoticeLine

    return [line.text for line in app.screen.query(NoticeLine)]


def title(app) -> str:
    return str(app.screen.query_one("#budget-title").render())


async def asked(tmp_path):
    session = planned_session(make_repo(tmp_path))  # a compactor that pins, excludes, expands
    return session, make_app(session)


async def test_typing_after_context_reaches_the_prompt_whole(tmp_path) -> None:
    from tui_agent.ui.widgets.history_rows import HistoryRows
    from tui_agent.ui.widgets.prompt_area import PromptArea

    session, app = await asked(tmp_path)
    async with app.run_test(size=(140, 40)) as pilot:
        await send(pilot, "what does the handler do?")
        changes = outbound_changes(session)
        await send(pilot, "/context")
        rows = app.screen.query_one(HistoryRows)
        assert app.screen.focused is rows and not rows.armed, "/context shows the rows; it does not steer"
        assert "STEERING" not in title(app)
        await type_text(pilot, QUESTION)
        prompt = app.screen.query_one(PromptArea)
        assert app.screen.focused is prompt and prompt.text == QUESTION
        assert changes == [], "e, x and p of the question pinned, excluded or expanded nothing"


async def test_a_click_on_a_row_reads_it_and_typing_closes_the_view_into_the_prompt(tmp_path) -> None:
    from tui_agent.ui.screens.message_view import MessageScreen
    from tui_agent.ui.widgets.history_rows import HistoryRows
    from tui_agent.ui.widgets.prompt_area import PromptArea

    session, app = await asked(tmp_path)
    async with app.run_test(size=(140, 40)) as pilot:
        await send(pilot, "what does the handler do?")
        changes = outbound_changes(session)
        rows = app.screen.query_one(HistoryRows)
        await pilot.click(HistoryRows, offset=(10, 1))
        await pilot.pause()
        view = app.screen
        assert isinstance(view, MessageScreen) and not rows.armed, "a click reads; it does not steer"
        assert "p" not in view.active_bindings, "the footer offers no pin in a view opened to read"
        await type_text(pilot, QUESTION)
        await pilot.pause()
        main = app.screen
        assert not isinstance(main, MessageScreen), "the first letter closed the view"
        prompt = main.query_one(PromptArea)
        assert main.focused is prompt and prompt.text == QUESTION
        assert changes == []
        # a click, Esc, then typing: the same
        prompt.load_text("")
        await pilot.click(HistoryRows, offset=(10, 2))
        await pilot.pause()
        assert isinstance(app.screen, MessageScreen)
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen.focused is prompt, "closing a view returns focus to the prompt"
        await type_text(pilot, QUESTION)
        assert prompt.text == QUESTION and changes == []


async def test_closing_the_event_view_returns_to_the_prompt_and_typing_in_it_goes_there(tmp_path) -> None:
    from tui_agent.ui.screens.event_view import EventScreen
    from tui_agent.ui.widgets.budget_panel import BudgetPanel
    from tui_agent.ui.widgets.prompt_area import PromptArea

    session, app = await asked(tmp_path)
    async with app.run_test(size=(140, 40)) as pilot:
        await send(pilot, "what does the handler do?")
        panel = app.screen.query_one(BudgetPanel)
        assert panel.ledger.major_events, "the planned session has an event to open"
        panel.events.take_focus()  # `v` in the steering mode
        await pilot.pause()
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, EventScreen)
        await pilot.press("escape")
        await pilot.pause()
        prompt = app.screen.query_one(PromptArea)
        assert app.screen.focused is prompt
        panel.events.take_focus()
        await pilot.pause()
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, EventScreen)
        await type_text(pilot, "quick question")  # q no longer just closes the view: it is text
        await pilot.pause()
        assert app.screen.query_one(PromptArea).text == "quick question"


async def test_steering_mode_enters_by_f4_shows_on_the_title_and_leaves_by_esc_f4_or_a_letter(tmp_path) -> None:
    from tui_agent.ui.widgets.history_rows import HistoryRows
    from tui_agent.ui.widgets.prompt_area import PromptArea

    session, app = await asked(tmp_path)
    async with app.run_test(size=(140, 40)) as pilot:
        await send(pilot, "what does the handler do?")
        changes = outbound_changes(session)
        rows = app.screen.query_one(HistoryRows)
        prompt = app.screen.query_one(PromptArea)
        await pilot.press("f4")
        await pilot.pause()
        assert app.screen.focused is rows and rows.armed and "STEERING" in title(app)
        assert "p" in app.screen.active_bindings and "u" in app.screen.active_bindings, "the footer names the keys"
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen.focused is prompt and not rows.armed and "STEERING" not in title(app)
        await pilot.press("f4")
        await pilot.pause()
        assert rows.armed
        await pilot.press("f4")  # F4 again leaves it, like Esc
        await pilot.pause()
        assert app.screen.focused is prompt and not rows.armed
        await pilot.press("f4")
        await pilot.pause()
        assert rows.armed
        await type_text(pilot, "how")  # h is no action: the mode ends and the word goes to the prompt
        await pilot.pause()
        assert app.screen.focused is prompt and prompt.text == "how" and not rows.armed
        assert "STEERING" not in title(app) and changes == []


async def test_each_change_is_announced_with_its_effect_and_u_or_a_command_undoes_it(tmp_path) -> None:
    from tui_agent.ui.widgets.budget_panel import BudgetPanel
    from tui_agent.ui.widgets.history_rows import HistoryRows

    session = planned_session(make_repo(tmp_path), SCENE_POLICY)
    session.history.extend(oversized_history(24))  # the first call cuts, masks and drops
    app = make_app(session)
    async with app.run_test(size=(140, 40)) as pilot:
        await send(pilot, "what does the handler do?")
        changes = outbound_changes(session)
        panel = app.screen.query_one(BudgetPanel)
        rows = app.screen.query_one(HistoryRows)
        dropped = first_of(rows.view, "dropped")
        while session.history[dropped]["role"] != "user" or not isinstance(session.history[dropped]["content"], list):
            dropped += 1
        kind = rows.view.kind(dropped)
        before = panel.meter.meter.total
        await pilot.press("f4")
        rows.cursor = dropped
        await pilot.press("p")
        await pilot.pause()
        after = panel.meter.meter.total
        assert [(c.action, c.index, c.on) for c in changes] == [("pin", dropped, True)] and after > before
        said = notices(app)[-1]
        assert said.startswith(f"Pinned #{dropped} (sent as pinned): the next request grows ≈"), said
        assert "u in the steering mode or /undo-steer undoes it" in said
        await pilot.press("u")
        await pilot.pause()
        assert [(c.action, c.on) for c in changes][-1] == ("pin", False)
        assert panel.meter.meter.total == before and rows.view.kind(dropped) == kind
        assert notices(app)[-1].startswith(f"Undid the last change: unpinned #{dropped}"), notices(app)[-1]
        await send(pilot, "/undo-steer")
        assert notices(app)[-1].startswith("Nothing to undo"), "the one change was undone already"
        rows.enter_on_purpose()
        rows.cursor = dropped
        await pilot.press("x")  # exclude, then undo it by the command
        await pilot.pause()
        assert rows.view.kind(dropped) == "excluded"
        await send(pilot, "/undo-steer")
        assert rows.view.kind(dropped) == kind and [(c.action, c.on) for c in changes][-1] == ("exclude", False)
        assert notices(app)[-1].startswith(f"Undid the last change: included again #{dropped}")
