"""MCP: tools from Model Context Protocol servers, configured as Claude Code users already do.

Import cost matters here: this package must not import the `mcp` SDK (about 1 s) at import time;
only `client.py` does, inside the background start-up task. Wiring it into a Session (the background
start-up, the closer, `/mcp`) is the agent's: `core/agent/mcp_install.py`.
"""
