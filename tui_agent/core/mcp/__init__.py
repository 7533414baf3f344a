"""MCP: tools from Model Context Protocol servers, configured as Claude Code users already do.

Import cost matters here: this package must not import the `mcp` SDK (about 1 s) at import time;
only `client.py` does, inside the background start-up task.
"""

from __future__ import annotations

from tui_agent.core.mcp.install import install_mcp

__all__ = ["install_mcp"]
