"""Public tool names for MCP tools: `mcp__<server>__<tool>`, normalised as Claude Code does.

Claude Code's `normalizeNameForMCP` replaces every character outside `[a-zA-Z0-9_-]` with `_`, which
is also exactly what the Anthropic API accepts in a tool name, so a server called `my.server` with a
tool `get time` becomes `mcp__my_server__get_time`. Names are cut at the API's 128-character limit.
"""

from __future__ import annotations

import re

PREFIX = "mcp"
MAX_TOOL_NAME = 128
_INVALID = re.compile(r"[^a-zA-Z0-9_-]")


def normalize_name(name: str) -> str:
    return _INVALID.sub("_", name)


def public_tool_name(server: str, tool: str) -> str:
    return f"{PREFIX}__{normalize_name(server)}__{normalize_name(tool)}"[:MAX_TOOL_NAME]
