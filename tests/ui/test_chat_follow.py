"""The chat follows new output again after the user scrolled or tabbed away. (Found by a new-user trial, issue 11.)"""

from __future__ import annotations


from .support import demo_session, make_app, make_repo, send, wait_for


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


async def test_content_that_overflows_after_the_last_check_is_followed(tmp_path) -> None:
    """CI under load: the last output's check ran before the reply had laid out (the chat still fit), no
    output came after, and the chat stayed at its top while the answer went on below. Here the chat grows
    with no output check at all (a widget mounted directly): the overflow alone starts the following."""
    from textual.widgets import Static

    from tui_agent.ui.widgets.chat_pane import ChatPane

    app = make_app(demo_session(make_repo(tmp_path)))
    async with app.run_test(size=(100, 30)) as pilot:
        chat = app.screen.query_one(ChatPane)
        await pilot.pause()
        assert chat.max_scroll_y == 0 and not chat._anchored, "the welcome alone fits"
        await chat.mount(Static("\n".join(f"line {i}" for i in range(80))), before=chat.hint)  # no _new_output
        await wait_for(pilot, lambda: chat.max_scroll_y > 0 and chat.scroll_y == chat.max_scroll_y,
                       "the end of the overflowing chat")
        assert chat._anchored
