"""Issue 18's small commands: `/init` shows one short line (not its 40-line prompt) and says what it
wrote; `/export` with no name writes into the data dir and says where; `/mcp`'s example needs no `uvx`."""

from __future__ import annotations

import os
from pathlib import Path

from tui_agent.core.agent.builtin_commands import INIT_PROMPT, INIT_SHOWN, register_builtin_commands
from tui_agent.core.agent.mcp_install import NO_CONFIG_TEXT
from tui_agent.core.access.gate import PermissionPolicy
from tui_agent.core.providers.scripted import text_reply, tool_reply
from tui_agent.ui.widgets.notice_line import NoticeLine
from tui_agent.ui.widgets.user_message import UserMessage

from .support import acting_tools, make_app, make_repo, scripted_session, send


def texts(app, kind) -> list[str]:
    return [widget.text for widget in app.screen.query(kind)]


async def test_init_shows_a_short_line_and_says_nothing_was_written(tmp_path) -> None:
    session = scripted_session(make_repo(tmp_path), [text_reply("I would write it, but I am only a script.")])
    register_builtin_commands(session)
    app = make_app(session)
    async with app.run_test(size=(120, 36)) as pilot:
        await send(pilot, "/init")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert texts(app, UserMessage) == [INIT_SHOWN], "the chat shows what the user asked, not the prompt"
        assert session.history[0]["content"][0]["text"] == INIT_PROMPT  # the model still gets all of it
        assert texts(app, NoticeLine)[-1] == "Nothing was written: there is still no AGENTS.md."


async def test_init_says_what_it_wrote(tmp_path) -> None:
    repo = make_repo(tmp_path)
    content = "# AGENTS.md\n\nRun the tests with pytest.\n"
    session = scripted_session(repo, [tool_reply("Write", {"file_path": "AGENTS.md", "content": content}, "toolu_1"),
                                      text_reply("Done.")], extra_tools=acting_tools())
    session.permissions = PermissionPolicy(mode="allow_all")
    register_builtin_commands(session)
    app = make_app(session)
    async with app.run_test(size=(120, 36)) as pilot:
        await send(pilot, "/init")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert (repo / "AGENTS.md").read_text() == content
        assert texts(app, NoticeLine)[-1] == f"AGENTS.md written (3 lines): {repo / 'AGENTS.md'}"


async def test_export_without_a_name_writes_into_the_data_dir(tmp_path) -> None:
    repo = make_repo(tmp_path)
    before = sorted(p.name for p in repo.iterdir())
    session = scripted_session(repo, [text_reply("A demo.")])
    app = make_app(session)
    async with app.run_test(size=(130, 40)) as pilot:
        await send(pilot, "what is this repo?")
        await send(pilot, "/export")
        notice = texts(app, NoticeLine)[-1]
    assert sorted(p.name for p in repo.iterdir()) == before, "nothing was written into the repository"
    exports = Path(os.environ["TUI_AGENT_DATA_DIR"]) / "exports"
    [written] = [p for p in exports.glob("tui-agent-*.md") if str(p) in notice]
    assert "what is this repo?" in written.read_text()
    assert notice.startswith("Exported 2 messages to ") and "(the data dir; /export FILE writes elsewhere)" in notice


def test_the_mcp_example_needs_no_uvx() -> None:
    assert "uvx" not in NO_CONFIG_TEXT
    assert '"command": "python", "args": ["-m", "mcp_server_time"]' in NO_CONFIG_TEXT.format(user="x")
    assert "pip install mcp-server-time" in NO_CONFIG_TEXT
