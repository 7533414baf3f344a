"""Focus and keys: typing on a card goes to the prompt, Tab visits chat, panel and prompt, F2 in wide mode. (Found by a new-user trial, issue 11.)"""

from __future__ import annotations


from .support import make_app, make_repo, send, three_reads


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


async def test_f2_shows_and_hides_the_panel_and_the_keyboard_stays_in_the_prompt(tmp_path) -> None:
    """Issue 40: F2 means one thing at every width (the README's: show or hide the panel). At 120 columns
    it used to enter the steering mode, and "explain" typed next became "lain" (e, x, p acted on rows)."""
    from tui_agent.ui.widgets.history_rows import HistoryRows
    from tui_agent.ui.widgets.prompt_area import PromptArea

    app = make_app(three_reads(make_repo(tmp_path)))
    async with app.run_test(size=(120, 36)) as pilot:
        await send(pilot, "what does the handler do?")
        screen = app.screen
        prompt, rows = screen.query_one(PromptArea), screen.query_one(HistoryRows)
        pins = list(screen.panel.steering.done)
        await pilot.press("f2")
        assert screen.has_class("-panel-hidden") and screen.focused is prompt
        await pilot.press("f2")
        assert not screen.has_class("-panel-hidden") and rows.region.width > 0 and screen.focused is prompt
        await pilot.press(*"explain the pin rule")
        assert prompt.text == "explain the pin rule" and not rows.armed and screen.panel.steering.done == pins
        rows.focus()  # reached by Tab or /context: F2 hides the panel and hands the keyboard back
        await pilot.pause()
        await pilot.press("f2")
        assert screen.has_class("-panel-hidden") and screen.focused is prompt
