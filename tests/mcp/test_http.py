"""The streamable HTTP transport (`"type": "http"`): our demo server served on 127.0.0.1.

Also: an HTTP server that is not there is skipped with a warning instead of hanging start-up.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.mcp.helpers import DEMO_SERVER, write_config
from tui_agent.core.mcp.config import load_config
from tui_agent.core.mcp.manager import McpManager
from tui_agent.core.tools.base import ToolContext


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for_port(port: int, proc: subprocess.Popen, seconds: float = 20) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"demo HTTP server exited with {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.1)
    raise TimeoutError(f"demo HTTP server did not listen on {port}")


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture
def http_server(tmp_path: Path):
    """(url, process) of the demo server over streamable HTTP."""
    port = free_port()
    with open(tmp_path / "http-server.log", "w") as log:
        proc = subprocess.Popen([sys.executable, str(DEMO_SERVER), "--http", str(port)],
                                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        try:
            wait_for_port(port, proc)
            yield f"http://127.0.0.1:{port}/mcp", proc
        finally:
            stop(proc)


async def test_http_server_lists_and_answers(tmp_path: Path, http_server):
    url, proc = http_server
    path = write_config(tmp_path / ".mcp.json", {
        "web": {"type": "http", "url": "${DEMO_URL}", "headers": {"Authorization": "Bearer ${TOKEN:-t}"}},
        "gone": {"type": "http", "url": f"http://127.0.0.1:{free_port()}/mcp"},
    })
    manager = McpManager(load_config([path], {"DEMO_URL": url}), cwd=tmp_path, log_dir=tmp_path / "logs",
                         start_timeout=5)
    try:
        notices = await manager.start()
        assert len(notices) == 1 and '"gone" failed to start' in notices[0].text, notices
        assert "ConnectError" in notices[0].text or "connect" in notices[0].text.lower(), notices
        tools = {t.name: t for t in manager.tools}
        assert "mcp__web__echo" in tools and tools["mcp__web__echo"].read_only
        out = await tools["mcp__web__echo"].call({"message": "over http"}, ToolContext(workspace=tmp_path))
        assert (out.content, out.is_error) == ("got:over http", False)
        text = manager.status_text()
        assert "web: connected (http, demo" in text and f"    url: {url}" in text

        # The server goes away: a clear error, then one restart attempt that fails, then no more tries.
        stop(proc)
        lost = await tools["mcp__web__echo"].call({"message": "anyone?"}, ToolContext(workspace=tmp_path))
        assert lost.is_error and 'MCP server "web"' in lost.content, lost.content
        again = await tools["mcp__web__echo"].call({"message": "anyone?"}, ToolContext(workspace=tmp_path))
        assert again.is_error and "restarting it failed" in again.content, again.content
        last = await tools["mcp__web__echo"].call({"message": "anyone?"}, ToolContext(workspace=tmp_path))
        assert last.is_error and "is not running (failed" in last.content, last.content
    finally:
        await manager.aclose()
