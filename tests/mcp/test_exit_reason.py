"""A stdio server that exits at start-up: its last stderr line is in the warning, however late the copying
thread gets to it (CI saw "exited during start-up" without the line once: the log was read first)."""

from __future__ import annotations

import sys
import time

from tests.mcp.helpers import write_config
from tui_agent.core.mcp import server_log
from tui_agent.core.mcp.config import load_config
from tui_agent.core.mcp.manager import McpManager


async def test_the_reason_waits_for_the_servers_last_words(tmp_path, monkeypatch) -> None:
    write = server_log.RotatingLog.write

    def late(self, data):  # the copying thread, slowed down: the server has long exited when it writes
        time.sleep(0.3)
        return write(self, data)

    monkeypatch.setattr(server_log.RotatingLog, "write", late)
    path = write_config(tmp_path / ".mcp.json", {
        "exits": {"command": sys.executable,
                  "args": ["-c", "import sys; print('boom: no API key', file=sys.stderr); sys.exit(2)"]}})
    manager = McpManager(load_config([path], {}), cwd=tmp_path, log_dir=tmp_path / "logs", start_timeout=15.0,
                         call_timeout=1.5)
    try:
        notices = await manager.start()
    finally:
        await manager.aclose()
    texts = [n.text for n in notices]
    assert any("exited during start-up" in t and "boom: no API key" in t for t in texts), texts
