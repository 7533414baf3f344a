"""The command hints: Esc closes them and keeps the text; Tab completes theme names. (Found by a new-user trial, issue 11.)"""

from __future__ import annotations


from .support import make_app, make_repo, scripted_session


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
