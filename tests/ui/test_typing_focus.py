"""Issue 18, typing and focus: a keystroke is never lost, and never an action by accident.

Text typed while a tool card, the budget rows or the events list has the focus goes to the prompt
(Space and Enter included); the row keys act only once the panel was entered on purpose (F2, a click,
`/context`) or with alt; the first Ctrl+C clears a draft.
"""

from __future__ import annotations

from tui_agent.core import events as ev
from tui_agent.core.messages import text_of

from .support import make_app, make_repo, send
from .test_panel_plan import planned_session
from .support import three_reads


def outbound_changes(session) -> list:
    """Every pin / exclude / expand the session hears (it emits one per change)."""
    seen: list = []
    session.listeners.append(lambda event: seen.append(event) if isinstance(event, ev.CompactionChanged) else None)
    return seen


def user_texts(session) -> list[str]:
    """The prompts in the history (tool results left out)."""
    return [text_of(m) for m in session.history
            if m["role"] == "user" and all(b.get("type") == "text" for b in m["content"])]


async def type_text(pilot, text: str) -> None:
    await pilot.press(*[{" ": "space", "?": "question_mark", "/": "slash", ".": "full_stop"}.get(c, c) for c in text])


async def test_typing_after_two_tabs_goes_to_the_prompt_and_changes_nothing(tmp_path) -> None:
    from tui_agent.ui.widgets.history_rows import HistoryRows
    from tui_agent.ui.widgets.prompt_area import PromptArea

    session = planned_session(make_repo(tmp_path))  # a compactor that pins, excludes, expands
    app = make_app(session)
    async with app.run_test(size=(140, 36)) as pilot:
        await send(pilot, "what does the handler do?")
        changes = outbound_changes(session)
        prompt = app.screen.query_one(PromptArea)
        prompt.focus()
        await pilot.press("tab", "tab")
        assert isinstance(app.screen.focused, HistoryRows)
        assert "p" not in app.screen.active_bindings, "the footer must not offer p before the panel is entered"
        assert "alt+p" in app.screen.active_bindings and "f4" in app.screen.active_bindings
        await pilot.press("e")
        assert app.screen.focused is prompt and prompt.text == "e", "the first key moves the focus and is kept"
        await type_text(pilot, "xplain this")
        assert prompt.text == "explain this"
        assert changes == [], "no pin, exclude or expand happened"


async def test_space_and_enter_on_an_unentered_card_go_to_the_prompt(tmp_path) -> None:
    from tui_agent.ui.widgets.prompt_area import PromptArea
    from tui_agent.ui.widgets.tool_card import ToolCard

    session = three_reads(make_repo(tmp_path))
    app = make_app(session)
    async with app.run_test(size=(140, 36)) as pilot:
        await send(pilot, "what does the handler do?")
        prompt = app.screen.query_one(PromptArea)
        prompt.load_text("why")
        prompt.move_cursor(prompt.document.end)
        card = app.screen.query(ToolCard).last()
        card.focus()  # reached without meaning to (not Enter from the chat, not a click)
        await pilot.pause()
        await pilot.press("space")
        assert app.screen.focused is prompt and prompt.text == "why " and not card.expanded
        card.focus()
        await pilot.pause()
        await pilot.press("enter")  # Enter typed there sends the draft, as typed
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert not card.expanded and user_texts(session)[-1] == "why"


async def test_row_keys_act_once_the_panel_is_entered_on_purpose_or_with_alt(tmp_path) -> None:
    from tui_agent.ui.widgets.history_rows import HistoryRows
    from tui_agent.ui.widgets.prompt_area import PromptArea

    session = planned_session(make_repo(tmp_path))  # a compactor that pins, excludes, expands
    app = make_app(session)
    async with app.run_test(size=(140, 36)) as pilot:
        await send(pilot, "what does the handler do?")
        changes = outbound_changes(session)
        rows = app.screen.query_one(HistoryRows)
        app.screen.query_one(PromptArea).focus()
        await pilot.press("tab", "tab")
        assert app.screen.focused is rows and not rows.armed
        await pilot.press("alt+p")  # a modifier is on purpose
        assert [(c.action, c.on) for c in changes] == [("pin", True)]
        assert app.screen.focused is rows and rows.armed, "alt+key entered the panel: plain keys act now"
        assert "p" in app.screen.active_bindings and "alt+p" not in app.screen.active_bindings
        await pilot.press("p")
        assert [(c.action, c.on) for c in changes] == [("pin", True), ("pin", False)]
        await pilot.press("shift+tab", "tab")  # leave and come back by Tab: not armed any more
        assert app.screen.focused is rows and not rows.armed
        await pilot.press("f4")  # F4 on the rows enters them (it does not hide the panel)
        assert rows.armed and not app.screen.has_class("-panel-hidden")
        await pilot.press("x")
        assert [c.action for c in changes][-1] == "exclude"


async def test_text_on_the_events_list_goes_to_the_prompt_and_enter_opens_only_on_purpose(tmp_path) -> None:
    from tui_agent.ui.widgets.events_list import EventsList
    from tui_agent.ui.widgets.prompt_area import PromptArea

    session = three_reads(make_repo(tmp_path))
    app = make_app(session)
    async with app.run_test(size=(140, 36)) as pilot:
        await send(pilot, "what does the handler do?")
        screen = app.screen
        prompt = screen.query_one(PromptArea)
        events = screen.query_one(EventsList)
        events.take_focus()  # `v` in the rows: on purpose
        await pilot.pause()
        assert events.armed
        await pilot.press("h")
        assert screen.focused is prompt and prompt.text == "h"
        events.can_focus = True
        events.focus()  # reached without meaning to
        await pilot.pause()
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen is screen, "Enter did not open an event"
        assert screen.focused is prompt


async def test_first_ctrl_c_clears_the_draft_then_twice_quits(tmp_path) -> None:
    from tui_agent.ui.widgets.prompt_area import PromptArea

    app = make_app(three_reads(make_repo(tmp_path)))
    async with app.run_test(size=(120, 36)) as pilot:
        prompt = app.screen.query_one(PromptArea)
        prompt.focus()
        await type_text(pilot, "half a thought")
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app.is_running and prompt.text == ""
        await pilot.press("up")
        assert prompt.text == "half a thought", "the cleared draft is one ↑ away"
        prompt.load_text("")
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app.is_running
        await pilot.press("ctrl+c")
        await pilot.pause()
    assert app.return_code == 0


def burst(app, text: str) -> None:
    """Keys as a terminal delivers a fast typist's line: all queued before the app handles the first
    (Pilot's `press` waits after each key, so the focus would already have moved)."""
    from textual import events

    for char in text:
        key = {"\n": "enter", " ": "space"}.get(char, char)
        app.post_message(events.Key(key, None if char == "\n" else char))


async def test_a_burst_of_keys_on_the_chat_or_the_entered_rows_arrives_whole_and_in_order(tmp_path) -> None:
    from tui_agent.ui.widgets.chat_pane import ChatPane
    from tui_agent.ui.widgets.history_rows import HistoryRows
    from tui_agent.ui.widgets.prompt_area import PromptArea

    session = planned_session(make_repo(tmp_path))
    app = make_app(session)
    async with app.run_test(size=(140, 36)) as pilot:
        await send(pilot, "what does the handler do?")
        changes = outbound_changes(session)
        screen = app.screen
        screen.query_one(ChatPane).focus()
        await pilot.pause()
        burst(app, "explain the models\n")  # the Enter must send, not step into the cards
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert user_texts(session)[-1] == "explain the models"
        rows = screen.query_one(HistoryRows)
        rows.enter_on_purpose()
        await pilot.pause()
        burst(app, "apex")  # typed text, although p, e, x are the rows' keys once entered
        await pilot.pause()
        assert screen.query_one(PromptArea).text == "apex" and changes == []


async def test_keys_the_prompt_gets_while_typed_text_is_on_its_way_land_after_it(tmp_path) -> None:
    """The browser under load: "explain the pin rule" typed after `/context` arrived as "explaie pin rulen th".
    The first keys reached the panel and were sent on to the prompt; the focus moved; the next keys reached the
    prompt directly and overtook the ones still on their way. Here the prompt gets "n" and Enter before the
    screen has taken "explai": they land after it, and what is sent is the question as typed."""
    from textual import events

    from tui_agent.ui.widgets.history_rows import HistoryRows
    from tui_agent.ui.widgets.prompt_area import PromptArea
    from tui_agent.ui.widgets.type_through import forward

    session = three_reads(make_repo(tmp_path))
    app = make_app(session)
    async with app.run_test(size=(140, 36)) as pilot:
        await send(pilot, "what does the handler do?")
        prompt, rows = app.screen.query_one(PromptArea), app.screen.query_one(HistoryRows)
        rows.focus()
        await pilot.pause()
        forward(rows, "explai")  # on its way to the prompt, not taken yet
        await prompt._on_key(events.Key("n", "n"))  # (the handler itself: the key got there first)
        await prompt._on_key(events.Key("enter", "\r"))
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert user_texts(session)[-1] == "explain" and prompt.text == ""


async def test_keys_queued_behind_a_tab_reach_where_the_tab_moved_the_focus(tmp_path) -> None:
    """Under load (CI), tmux delivered Tab and "explain the models please" before the prompt had handled the
    Tab: the letters still reached the prompt, the Tab then moved the focus to the chat, and the Enter that
    followed opened the chat's cards, leaving the question unsent. Here the prompt is that slow (its key
    handler yields before it handles a Tab); Tab acts before the next key is handed out now. Tab on a slash
    command still completes it."""
    import asyncio

    from textual import events

    from tests.waiting import wait_until
    from tui_agent.ui.widgets.prompt_area import PromptArea

    session = three_reads(make_repo(tmp_path))
    app = make_app(session)
    async with app.run_test(size=(140, 36)) as pilot:
        await send(pilot, "what does the handler do?")
        prompt = app.screen.query_one(PromptArea)
        handle = prompt._on_key

        async def slow(event: events.Key) -> None:
            if event.key == "tab":
                await asyncio.sleep(0.05)  # a loaded machine: the app hands out the next keys meanwhile
            await handle(event)

        prompt._on_key = slow  # type: ignore[method-assign]
        prompt.focus()
        await pilot.pause()
        app.post_message(events.Key("tab", "\t"))
        burst(app, "explain the models")
        await wait_until(lambda: prompt.text == "explain the models", what="the letters typed (after the Tab)")
        await pilot.pause()
        burst(app, "\n")  # a later read: Enter
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert user_texts(session)[-1] == "explain the models" and prompt.text == ""
        prompt.focus()
        await pilot.pause()
        await type_text(pilot, "/cle")
        await pilot.press("tab")
        assert app.screen.focused is prompt and prompt.text.startswith("/clear")
