"""Against real server processes over stdio: our demo server plus two that cannot start.

One manager (and so one demo server process, ~1.3 s to spawn) is shared by the whole module; the
crash-and-restart test runs last because it replaces that process.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
import pytest_asyncio

from tests.mcp.helpers import demo_entry, write_config
from tui_agent.core.mcp.config import load_config
from tui_agent.core.mcp.manager import McpManager
from tui_agent.core.tools.base import ToolContext, validate_input

pytestmark = pytest.mark.asyncio(loop_scope="module")

START_TIMEOUT = 15.0  # generous: CI machines are shared; the time-out itself is tested in test_install
CALL_TIMEOUT = 1.5


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def started(tmp_path_factory):
    root = tmp_path_factory.mktemp("mcp-servers")
    path = write_config(root / ".mcp.json", {
        "demo": demo_entry(env={"DEMO_VALUE": "${MCP_TEST_VALUE}", "DEMO_DEFAULT": "${MCP_TEST_UNSET:-fallback}"}),
        "nope": {"command": "definitely-not-a-command-tui-agent"},
        "exits": {"command": sys.executable,
                  "args": ["-c", "import sys; print('boom: no API key', file=sys.stderr); sys.exit(2)"]},
    })
    config = load_config([path], {"MCP_TEST_VALUE": "expanded!"})
    manager = McpManager(config, cwd=root, log_dir=root / "logs", start_timeout=START_TIMEOUT,
                         call_timeout=CALL_TIMEOUT)
    notices = await manager.start()
    yield manager, notices, root
    await manager.aclose()


def tool(manager: McpManager, name: str):
    return next(t for t in manager.tools if t.name == name)


async def call(manager: McpManager, name: str, tool_input: dict, root: Path | None = None):
    target = tool(manager, name)
    assert validate_input(target, tool_input) is None
    return await target.call(tool_input, ToolContext(workspace=root or Path(".")))


async def test_failing_servers_are_skipped_with_a_warning_each(started):
    manager, notices, _ = started
    texts = [n.text for n in notices]
    assert all(n.level == "warning" for n in notices)
    assert len(texts) == 2, texts
    assert any('"nope"' in t and "command not found: definitely-not-a-command-tui-agent" in t for t in texts)
    assert any('"exits"' in t and "exited during start-up" in t and "boom: no API key" in t for t in texts)
    assert {n: c.status for n, c in manager.connections.items()} == {
        "demo": "connected", "nope": "failed", "exits": "failed"}


async def test_listing_names_schemas_and_read_only_hints(started):
    manager, _, _ = started
    names = [t.name for t in manager.tools]
    assert names == ["mcp__demo__echo", "mcp__demo__write_note", "mcp__demo__slow", "mcp__demo__crash",
                     "mcp__demo__fail", "mcp__demo__picture", "mcp__demo__stats", "mcp__demo__odd_name_v2",
                     "mcp__demo__env", "mcp__demo__pid"]
    echo = tool(manager, "mcp__demo__echo")
    assert echo.input_schema == {"properties": {"message": {"title": "Message", "type": "string"}},
                                 "required": ["message"], "title": "echoArguments", "type": "object"}
    assert echo.description == "Echo a message back (read-only)."
    assert echo.read_only and not tool(manager, "mcp__demo__write_note").read_only
    assert not tool(manager, "mcp__demo__crash").read_only
    assert tool(manager, "mcp__demo__odd_name_v2").remote.name == "odd.name v2"


async def test_calling_tools(started):
    manager, _, _ = started
    out = await call(manager, "mcp__demo__echo", {"message": "hi"})
    assert (out.content, out.is_error) == ("got:hi", False)
    assert (await call(manager, "mcp__demo__odd_name_v2", {})).content == "odd"


async def test_tool_errors_are_error_results(started):
    manager, _, _ = started
    out = await call(manager, "mcp__demo__fail", {"reason": "disk full"})
    assert out.is_error and "failed on purpose: disk full" in out.content


async def test_images_and_structured_content(started):
    manager, _, _ = started
    picture = await call(manager, "mcp__demo__picture", {})
    assert picture.content[0] == {"type": "text", "text": "see below"}
    assert picture.content[1]["type"] == "image"
    assert picture.content[1]["source"]["media_type"] == "image/png"
    assert picture.content[1]["source"]["data"].startswith("iVBORw0KGgo")
    stats = await call(manager, "mcp__demo__stats", {"word": "abc"})
    assert stats.content == '{\n  "word": "abc",\n  "length": 3\n}'


async def test_env_values_are_expanded(started):
    manager, _, _ = started
    assert (await call(manager, "mcp__demo__env", {"name": "DEMO_VALUE"})).content == "expanded!"
    assert (await call(manager, "mcp__demo__env", {"name": "DEMO_DEFAULT"})).content == "fallback"


async def test_a_slow_call_times_out_and_the_server_stays_usable(started):
    manager, _, _ = started
    out = await call(manager, "mcp__demo__slow", {"seconds": CALL_TIMEOUT + 2})
    assert out.is_error
    assert f"timed out after {CALL_TIMEOUT:g} s (demo/slow)" in out.content
    assert (await call(manager, "mcp__demo__echo", {"message": "still here"})).content == "got:still here"
    assert manager.connections["demo"].status == "connected"


async def test_a_cancelled_call_leaves_the_server_usable(started):
    """Esc during a tool call cancels the loop's task; the connection must survive it."""
    manager, _, _ = started
    pending = asyncio.create_task(call(manager, "mcp__demo__slow", {"seconds": 1.0}))
    await asyncio.sleep(0.3)
    pending.cancel()
    with pytest.raises(asyncio.CancelledError):
        await pending
    assert (await call(manager, "mcp__demo__echo", {"message": "after esc"})).content == "got:after esc"
    assert manager.connections["demo"].status == "connected"


async def test_status_text_shows_servers_tools_errors_and_logs(started):
    manager, _, root = started
    text = manager.status_text()
    assert "demo: connected (stdio, demo" in text and "    command: " in text
    assert "mcp__demo__echo  (read-only)" in text and "mcp__demo__write_note\n" in text
    assert "nope: failed" in text and "last error: command not found" in text
    assert f"log: {root / 'logs' / 'demo.log'}" in text


async def test_server_stderr_goes_to_its_log_file(started):
    _, _, root = started
    log = (root / "logs" / "demo.log").read_text()
    assert "demo server: starting" in log and "=== " in log


async def test_crash_gives_an_error_and_the_next_call_restarts_the_server(started):
    manager, _, root = started
    old_pid = (await call(manager, "mcp__demo__pid", {})).content
    crashed = await call(manager, "mcp__demo__crash", {})
    assert crashed.is_error
    assert 'MCP server "demo" stopped during the call to crash' in crashed.content
    assert "The next call will try to restart it once." in crashed.content
    assert manager.connections["demo"].status == "dead"
    assert "dead" in manager.status_text()
    new_pid = (await call(manager, "mcp__demo__pid", {})).content
    assert new_pid.isdigit() and new_pid != old_pid
    assert manager.connections["demo"].status == "connected"
    assert manager.connections["demo"].restarts == 1
    assert "demo server: crashing on purpose" in (root / "logs" / "demo.log").read_text()
