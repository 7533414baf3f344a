"""`install_mcp` in a Session: background start, tools in the registry, permissions, `/mcp`, shutdown.

The headless turns are driven by the scripted provider, so they check the real path a model's call
takes: the loop's permission gate, input validation against the server's schema, the server process.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path


from tests.turns import scripted_session, turn_events
from tests.mcp.helpers import demo_entry, write_config
from tui_agent.core import events as ev
from tui_agent.core.agent.mcp_install import install_mcp
from tui_agent.core.messages import tool_results
from tui_agent.core.access.gate import HEADLESS_DENY_MESSAGE, PermissionPolicy
from tui_agent.core.providers.scripted import text_reply, tool_reply
from tui_agent.core.agent.session import Session


SILENT = "import sys; sys.stdin.read()"  # reads requests, never answers, exits when stdin closes


def make_session(workspace: Path, replies=(), allow_write: bool = False, start_timeout: float = 15) -> Session:
    session = scripted_session(workspace, replies, permissions=PermissionPolicy.headless(allow_write=allow_write))
    # The project's .mcp.json is trusted here (as with --trust-project-mcp): these tests are about MCP
    # itself; tests/mcp/test_trust.py covers the approval.
    install_mcp(session, environ={"TUI_AGENT_CONFIG_DIR": str(workspace / "user-config")},
                log_dir=workspace / "logs", start_timeout=start_timeout, trust_project=True)
    return session


turn = turn_events


def results(session: Session) -> list[dict]:
    return [b for m in session.history for b in tool_results(m)]


async def test_no_config_means_no_tools_and_no_notice(tmp_path):
    session = make_session(tmp_path)
    assert await session.start_background() == []
    assert len(session.tools) == 0
    shown = await session.commands.run(session, "/mcp")
    assert shown.text.startswith("No MCP servers configured.")
    await session.aclose()


async def test_config_that_does_not_parse_gives_one_warning(tmp_path):
    (tmp_path / ".mcp.json").write_text("{not json", encoding="utf-8")
    session = make_session(tmp_path)
    notices = await session.start_background()
    assert len(notices) == 1 and notices[0].level == "warning"
    assert "Invalid JSON in MCP config" in notices[0].text and "Running without MCP servers." in notices[0].text
    assert len(session.tools) == 0
    shown = await session.commands.run(session, "/mcp")
    assert shown.level == "warning" and "Invalid JSON" in shown.text
    await session.aclose()


async def test_missing_command_gives_one_warning(tmp_path):
    write_config(tmp_path / ".mcp.json", {"demo": {"args": ["x"]}})
    notices = await make_session(tmp_path).start_background()
    assert [n.level for n in notices] == ["warning"] and '"command"' in notices[0].text


async def test_headless_turn_read_only_runs_and_writing_tool_is_denied(tmp_path):
    write_config(tmp_path / ".mcp.json", {"demo": demo_entry()})
    target = tmp_path / "note.txt"
    session = make_session(tmp_path, [
        tool_reply("mcp__demo__echo", {"message": "hi"}, "t1"),
        tool_reply("mcp__demo__write_note", {"path": str(target), "text": "x"}, "t2"),
        text_reply("unreachable"),
    ])
    # Separate tasks, as in the TUI: start-up in a worker, turns in another task, closers on exit.
    assert await asyncio.create_task(session.start_background()) == []
    try:
        assert "mcp__demo__write_note" in session.tools.names()
        shown = await session.commands.run(session, "/mcp")
        assert "demo: connected" in shown.text and "mcp__demo__echo  (read-only)" in shown.text
        assert f"log: {tmp_path / 'logs' / 'demo.log'}" in shown.text

        events = await asyncio.create_task(turn(session, "use the demo server"))
        assert events[-1].reason == "denied"
        got = results(session)
        assert got[0] == {"type": "tool_result", "tool_use_id": "t1", "content": "got:hi"}
        assert got[1]["is_error"] is True
        assert got[1]["content"] == HEADLESS_DENY_MESSAGE.format(tool="mcp__demo__write_note")
        assert not target.exists()
        # The model saw the server's schema unchanged.
        sent = {t["name"]: t for t in session.provider.requests[0].tools}
        assert sent["mcp__demo__echo"]["input_schema"]["title"] == "echoArguments"

        # With ALLOW_WRITE the same call goes through.
        session.permissions = PermissionPolicy.headless(allow_write=True)
        session.provider.replies[:] = [
            tool_reply("mcp__demo__write_note", {"path": str(target), "text": "written"}, "t3"),
            text_reply("done"),
        ]
        events = await turn(session, "now write it")
        assert events[-1] == ev.TurnEnded("completed", 2)
        assert target.read_text() == "written"
    finally:
        await asyncio.create_task(session.aclose())
    assert session.mcp.manager.connections["demo"].status == "stopped"


def test_installing_does_not_import_the_sdk(tmp_path):
    """The TUI's first frame must not pay for `import mcp` (about 1 s)."""
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from tui_agent.core.agent.mcp_install import install_mcp\n"
        "from tui_agent.core.providers.scripted import ScriptedProvider\n"
        "from tui_agent.core.agent.session import Session\n"
        "from tui_agent.core.tools.base import ToolRegistry\n"
        "s = Session(ScriptedProvider(), ToolRegistry(), Path('.'))\n"
        "install_mcp(s)\n"
        "print(json.dumps(sorted(m for m in sys.modules if m == 'mcp' or m.startswith(('mcp.', 'anyio', 'httpx')))))\n"
    )
    out = subprocess.run([sys.executable, "-c", "import json\n" + code], capture_output=True, text=True,
                         cwd=Path(__file__).parents[2], check=True)
    assert json.loads(out.stdout) == []


async def test_unset_variable_is_reported_next_to_the_failure(tmp_path):
    write_config(tmp_path / ".mcp.json", {"demo": {"command": "${TUI_AGENT_TEST_UNSET_CMD}"}})
    notices = await make_session(tmp_path).start_background()
    assert [n.text for n in notices] == [
        'MCP server "demo": environment variable(s) not set: TUI_AGENT_TEST_UNSET_CMD',
        'MCP server "demo" failed to start and was skipped: command not found: ${TUI_AGENT_TEST_UNSET_CMD}',
    ]


async def test_quitting_during_start_up_does_not_wait_for_the_start_timeout(tmp_path):
    """The TUI may close while a server is still starting (in a worker task): the closer cancels it."""
    write_config(tmp_path / ".mcp.json", {"silent": {"command": sys.executable, "args": ["-c", SILENT]}})
    session = make_session(tmp_path, start_timeout=600)  # only the cancel can end the start in time
    starting = asyncio.create_task(session.start_background())
    await asyncio.sleep(0.5)
    await asyncio.create_task(session.aclose())
    notices = await asyncio.wait_for(starting, 60)  # a hang guard, not a speed check
    assert len(notices) == 1 and '"silent" failed to start' in notices[0].text and "cancelled" in notices[0].text


async def test_a_server_that_does_not_answer_is_skipped_after_the_start_timeout(tmp_path):
    write_config(tmp_path / ".mcp.json", {"silent": {"command": sys.executable, "args": ["-c", SILENT]}})
    session = make_session(tmp_path, start_timeout=1)
    notices = await session.start_background()
    assert [n.text for n in notices] == ['MCP server "silent" failed to start and was skipped: no answer within 1 s']
    assert len(session.tools) == 0
    await session.aclose()
