"""First-run polish: choosing a completion with the arrows, Enter on a partial command word, Esc out
of the budget panel, and a /help whose wrapped descriptions stay in their column."""

from __future__ import annotations

from tui_agent.core.agent.commands import Command, CommandResult
from tui_agent.ui.commands import HELP_COLUMN, help_text
from tui_agent.ui.widgets.command_hints import CommandHints
from tui_agent.ui.widgets.history_rows import HistoryRows
from tui_agent.ui.widgets.notice_line import NoticeLine
from tui_agent.ui.widgets.prompt_area import PromptArea

from .support import make_app, make_repo, scripted_session


async def test_arrows_choose_a_completion_and_enter_runs_it(tmp_path) -> None:
    session = scripted_session(make_repo(tmp_path), [])
    ran: list[str] = []
    session.commands.register(Command("exec-plan", "Run the plan", lambda s, a: ran.append("plan") or CommandResult("")))
    session.commands.register(Command("explain", "Explain", lambda s, a: ran.append("explain") or CommandResult("")))
    app = make_app(session)
    async with app.run_test(size=(120, 36)) as pilot:
        prompt = app.screen.query_one(PromptArea)
        hints = app.screen.query_one(CommandHints)
        prompt.focus()
        await pilot.press("/", "e")
        assert hints.matches[:4] == ["/exit", "/export", "/exec-plan", "/explain"]
        assert "▸ /exit" in str(hints.render())
        await pilot.press("down", "down", "down")
        assert "▸ /explain" in str(hints.render())
        await pilot.press("up")
        await pilot.press("tab")  # Tab completes the selected one, not the first
        assert prompt.text == "/exec-plan "
        prompt.load_text("/e")
        await pilot.pause()
        await pilot.press("down", "down", "down", "enter")  # Enter on a partial word runs the selection
        await pilot.pause()
        await app.workers.wait_for_complete()
        assert ran == ["explain"] and prompt.text == ""
        assert prompt.input_history[-1] == "/explain"  # the history keeps what ran, not "/e"
        await pilot.press("/", "t", "h", "enter")  # a command with arguments is completed instead
        assert prompt.text == "/theme " and app.is_running


async def test_up_still_walks_the_history_of_commands(tmp_path) -> None:
    app = make_app(scripted_session(make_repo(tmp_path), []))
    async with app.run_test(size=(120, 36)) as pilot:
        prompt = app.screen.query_one(PromptArea)
        prompt.focus()
        for line in ("/help", "/theme"):
            prompt.load_text(line)
            await pilot.press("enter")
            await pilot.pause()
        await pilot.press("up")
        assert prompt.text == "/theme"
        await pilot.press("up")  # a recalled command word does not capture the arrows
        assert prompt.text == "/help"


async def test_escape_leaves_the_panel_for_the_prompt(tmp_path) -> None:
    app = make_app(scripted_session(make_repo(tmp_path), []))
    async with app.run_test(size=(80, 30)) as pilot:  # narrow: the panel opens over the chat
        await pilot.press("f2")  # F2 opens it; the keyboard stays in the prompt
        assert app.screen.has_class("-panel-open") and app.screen.focused is app.screen.query_one(PromptArea)
        await pilot.press("f2")
        assert not app.screen.has_class("-panel-open")
        await pilot.press("f4")  # the steering mode: the panel opens, the keyboard in its rows
        assert app.screen.has_class("-panel-open") and app.screen.focused is app.screen.query_one(HistoryRows)
        await pilot.press("escape")
        assert app.screen.focused is app.screen.query_one(PromptArea)
        assert not app.screen.has_class("-panel-open")
        await pilot.press("h", "i")
        assert app.screen.query_one(PromptArea).text == "hi"


def test_help_wraps_in_its_column() -> None:
    items = [("/help", "List commands and keys"), ("/permissions [allow|deny|remove <rule>]", "Show the rules"),
             ("/context", "Focus the budget panel and count the next call exactly, which is a long line")]
    text = help_text(items, 50)
    lines = text.split("\n")
    assert all(len(line) <= 50 for line in lines)
    assert "/permissions [allow|deny|remove <rule>]" in lines
    wrapped = lines[lines.index(next(line for line in lines if line.startswith("/context"))) + 1]
    assert wrapped.startswith(" " * HELP_COLUMN) and wrapped.strip()


async def test_help_notice_fits_the_chat(tmp_path) -> None:
    app = make_app(scripted_session(make_repo(tmp_path), []))
    async with app.run_test(size=(120, 36)) as pilot:
        prompt = app.screen.query_one(PromptArea)
        prompt.load_text("/help")
        await pilot.press("enter")
        await pilot.pause()
        notice = list(app.screen.query(NoticeLine))[-1]
        width = app.screen.chat.scrollable_content_region.width
        assert all(len(line) + 4 <= width for line in notice.text.split("\n"))
