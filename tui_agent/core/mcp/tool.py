"""An MCP server's tool, adapted to the agent's `Tool` contract.

The input schema is the server's, passed through unchanged, so `validate_input` enforces exactly what
the server declared. Only `readOnlyHint: true` makes a tool read-only (the seed's and Claude Code's
rule): every other MCP tool goes through the permission gate, since we cannot know what it changes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tui_agent.core.mcp.client import RemoteTool
from tui_agent.core.mcp.failures import McpCallError
from tui_agent.core.mcp.names import public_tool_name
from tui_agent.core.mcp.results import format_result
from tui_agent.core.tools.base import Tool, ToolContext, ToolOutput

if TYPE_CHECKING:
    from tui_agent.core.mcp.client import ServerConnection

MAX_DESCRIPTION = 2048  # Claude Code caps MCP tool descriptions at 2048 characters too


class McpTool(Tool):
    def __init__(self, connection: "ServerConnection", remote: RemoteTool, call_timeout: float) -> None:
        self.connection = connection
        self.remote = remote
        self.call_timeout = call_timeout
        self.name = public_tool_name(connection.name, remote.name)
        description = remote.description.strip() or f"MCP tool {remote.name} ({connection.name})"
        if len(description) > MAX_DESCRIPTION:
            description = description[:MAX_DESCRIPTION] + "… [truncated]"
        self.description = description
        self.input_schema = remote.input_schema
        self.read_only = remote.read_only

    def paths(self, tool_input: dict[str, Any]) -> list[str]:
        # An MCP server's `path` argument is the server's business (it may not even be on this
        # machine); the workspace-boundary check is for our own file tools.
        return []

    async def call(self, tool_input: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        try:
            result = await self.connection.call(self.remote.name, tool_input, self.call_timeout)
        except McpCallError as error:
            return ToolOutput(str(error), True)
        return format_result(result)
