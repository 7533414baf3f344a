"""Slash commands: /help, /clear, /context, /theme, /model, the engine registry, unknown commands,
completion, the command palette and Ctrl+C twice."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tui_agent.core.agent.commands import Command, CommandResult
from tui_agent.core.providers.scripted import text_reply
from tui_agent.ui.commands import palette_commands
from tui_agent.ui.widgets.command_hints import CommandHints
from tui_agent.ui.widgets.history_rows import HistoryRows
from tui_agent.ui.widgets.notice_line import NoticeLine
from tui_agent.ui.widgets.prompt_area import PromptArea
from tests.waiting import wait_until

from .support import make_app, make_repo, scripted_session, send


def notices(app) -> list[NoticeLine]:
    return list(app.screen.query(NoticeLine))


async def test_help_lists_ui_and_engine_commands(tmp_path) -> None:
    session = scripted_session(make_repo(tmp_path), [])
    session.commands.register(Command("skills", "List skills", lambda s, a: CommandResult("no skills")))
    app = make_app(session)
    async with app.run_test(size=(120, 36)) as pilot:
        await send(pilot, "/help")
        text = notices(app)[-1].text
        for name in ("/help", "/clear", "/context", "/theme NAME", "/model NAME", "/exit", "/quit", "/skills"):
            assert name in text


async def test_unknown_command_gets_a_clear_message(tmp_path) -> None:
    app = make_app(scripted_session(make_repo(tmp_path), []))
    async with app.run_test(size=(120, 36)) as pilot:
        await send(pilot, "/frobnicate now")
        last = notices(app)[-1]
        assert last.level == "error" and "Unknown command /frobnicate" in last.text and "/help" in last.text


async def test_registry_command_text_and_prompt(tmp_path) -> None:
    session = scripted_session(make_repo(tmp_path), [text_reply("Initialised.")])
    session.commands.register(Command("init", "Write AGENTS.md",
                                      lambda s, a: CommandResult("Analysing…", prompt="write AGENTS.md")))
    app = make_app(session)
    async with app.run_test(size=(120, 36)) as pilot:
        await send(pilot, "/init")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert any(n.text == "Analysing…" for n in notices(app))
        assert session.history[0]["content"][0]["text"] == "write AGENTS.md"


async def test_clear_empties_history_chat_and_panel(tmp_path) -> None:
    session = scripted_session(make_repo(tmp_path), [text_reply("One.")])
    app = make_app(session)
    async with app.run_test(size=(120, 36)) as pilot:
        await send(pilot, "first")
        assert len(session.history) == 2
        await send(pilot, "/clear")
        assert session.history == []
        assert app.screen.query_one(HistoryRows).index.rows == []
        assert len(app.screen.query("AssistantReply")) == 0
        assert "Cleared" in notices(app)[-1].text


async def test_theme_switch_is_live_and_persisted(tmp_path) -> None:
    app = make_app(scripted_session(make_repo(tmp_path), []))
    async with app.run_test(size=(120, 36)) as pilot:
        assert app.theme == "agent-dark"
        await send(pilot, "/theme agent-light")
        assert app.theme == "agent-light"
        assert app.get_css_variables()["budget-outbound"] == "#dde7f7"
        saved = json.loads((Path(os.environ["TUI_AGENT_CONFIG_DIR"]) / "ui.json").read_text())
        assert saved == {"theme": "agent-light"}
        await send(pilot, "/theme no-such-theme")
        assert app.theme == "agent-light" and "Unknown theme" in notices(app)[-1].text
    again = make_app(scripted_session(make_repo(tmp_path), []))
    assert again.theme == "agent-light"  # the choice survives a restart


async def test_context_focuses_the_panel(tmp_path) -> None:
    app = make_app(scripted_session(make_repo(tmp_path), []))
    async with app.run_test(size=(120, 36)) as pilot:
        await send(pilot, "/context")
        assert isinstance(app.focused, HistoryRows)


async def test_model_switch_to_demo(tmp_path) -> None:
    from tui_agent.core.events import ModelSwitched

    session = scripted_session(make_repo(tmp_path), [])
    seen: list = []
    session.listeners.append(seen.append)
    app = make_app(session)
    async with app.run_test(size=(120, 36)) as pilot:
        # the empty panel is told its base first (after the first frame); then the command's own events
        await wait_until(lambda: seen, what="the panel's first NextRequestChanged")
        assert [(type(e).__name__, e.why) for e in seen] == [("NextRequestChanged", "panel shown")]
        seen.clear()
        await send(pilot, "/model demo")
        assert session.provider.model == "demo"
        assert "demo" in app.screen.sub_title
        assert "Model: demo" in notices(app)[-1].text
        assert seen[0] == ModelSwitched("scripted", "demo", "demo")  # through Session.switch_model
        assert [type(e).__name__ for e in seen] == ["ModelSwitched", "NextRequestChanged"]
        assert seen[1].why == "/model" and seen[1].plan.request.model == "demo"  # the panel redraws from it


async def test_completion_hints_and_tab(tmp_path) -> None:
    app = make_app(scripted_session(make_repo(tmp_path), []))
    async with app.run_test(size=(120, 36)) as pilot:
        prompt = app.screen.query_one(PromptArea)
        prompt.focus()
        await pilot.press("/", "t", "h")
        hints = app.screen.query_one(CommandHints)
        assert hints.has_class("-visible") and hints.matches == ["/theme"]
        await pilot.press("tab")
        assert prompt.text == "/theme "
        prompt.load_text("/cl")
        await pilot.pause()
        assert hints.matches == ["/clear"]
        await pilot.press("escape")  # Esc closes the list only: the typed text stays (issue 11)
        assert prompt.text == "/cl" and not hints.has_class("-visible")


async def test_prompt_history_and_multiline(tmp_path) -> None:
    app = make_app(scripted_session(make_repo(tmp_path), [text_reply("a"), text_reply("b")]))
    async with app.run_test(size=(120, 36)) as pilot:
        await send(pilot, "first question")
        prompt = app.screen.query_one(PromptArea)
        prompt.focus()
        await pilot.press("up")
        assert prompt.text == "first question"
        await pilot.press("down")
        assert prompt.text == ""
        await pilot.press("l", "i", "n", "e", "ctrl+j", "t", "w", "o")
        assert prompt.text == "line\ntwo"


async def test_palette_lists_slash_commands(tmp_path) -> None:
    app = make_app(scripted_session(make_repo(tmp_path), []))
    async with app.run_test(size=(120, 36)) as pilot:
        titles = [c.title for c in palette_commands(app.screen, app.available_themes)]
        assert "/help" in titles and "/theme agent-high-contrast" in titles and "/model NAME" in titles
        system = [c.title for c in app.get_system_commands(app.screen)]
        assert "/clear" in system
        await pilot.press("ctrl+p")
        await pilot.pause()
        assert type(app.screen).__name__ == "CommandPalette"


async def test_ctrl_c_twice_quits(tmp_path) -> None:
    app = make_app(scripted_session(make_repo(tmp_path), []))
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app.is_running
        await pilot.press("ctrl+c")
        await pilot.pause()
    assert app.return_code == 0
