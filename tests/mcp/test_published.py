"""A published MCP server from a package registry, driven by our client (mcp 2.3.0).

`mcp-server-time` (PyPI, by the MCP project; it requires mcp>=2.3,<3) works offline over stdio.
Install it with `pip install mcp-server-time`; without it this test is skipped.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from tests.mcp.helpers import write_config
from tui_agent.core.mcp.config import load_config
from tui_agent.core.mcp.manager import McpManager
from tui_agent.core.tools.base import ToolContext, validate_input

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("mcp_server_time") is None,
    reason="mcp-server-time is not installed (pip install mcp-server-time)",
)


async def test_mcp_server_time_lists_and_answers(tmp_path: Path):
    path = write_config(tmp_path / ".mcp.json", {
        "time": {"command": sys.executable, "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"]},
    })
    manager = McpManager(load_config([path], {}), cwd=tmp_path, log_dir=tmp_path / "logs", start_timeout=15)
    try:
        assert await manager.start() == []
        tools = {t.name: t for t in manager.tools}
        assert {"mcp__time__get_current_time", "mcp__time__convert_time"} <= set(tools)
        convert = tools["mcp__time__convert_time"]
        assert convert.read_only  # the server marks its tools readOnlyHint: true
        assert "source_timezone" in convert.input_schema["properties"]

        tool_input = {"source_timezone": "Europe/Paris", "time": "12:00", "target_timezone": "Asia/Tokyo"}
        assert validate_input(convert, tool_input) is None
        out = await convert.call(tool_input, ToolContext(workspace=tmp_path))
        assert out.is_error is False, out.content
        data = json.loads(out.content)
        assert data["source"]["timezone"] == "Europe/Paris" and data["target"]["timezone"] == "Asia/Tokyo"

        bad = await tools["mcp__time__get_current_time"].call({"timezone": "Mars/Olympus"}, ToolContext(tmp_path))
        assert bad.is_error is True
    finally:
        await manager.aclose()
