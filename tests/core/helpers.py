"""Small test doubles shared by the core tests."""

from __future__ import annotations

import asyncio
from typing import Any

from tui_agent.core.tools.base import Tool, ToolContext, ToolOutput, ToolRegistry


class EchoTool(Tool):
    """The seed's Echo tool: returns its message (read-only)."""

    name = "Echo"
    description = "Echo a message back."
    input_schema = {"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"],
                    "additionalProperties": False}

    async def call(self, tool_input: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        return ToolOutput(tool_input["message"])


class SlowTool(Tool):
    """Sleeps `seconds`, recording start/end order, to test concurrency and cancellation."""

    name = "Slow"
    description = "Sleep."
    input_schema = {"type": "object", "properties": {"seconds": {"type": "number"}, "tag": {"type": "string"}},
                    "required": ["seconds"]}

    def __init__(self, read_only: bool = True) -> None:
        self.read_only = read_only
        self.log: list[str] = []

    async def call(self, tool_input: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        tag = tool_input.get("tag", "")
        self.log.append(f"start {tag}")
        await asyncio.sleep(tool_input["seconds"])
        self.log.append(f"end {tag}")
        return ToolOutput(f"slept {tag}")


class WriteLikeTool(Tool):
    """A non-read-only tool, so the permission gate must ask or deny."""

    name = "Touch"
    description = "Pretend to write."
    read_only = False
    input_schema = {"type": "object", "properties": {"file_path": {"type": "string"}}, "required": ["file_path"]}

    def __init__(self) -> None:
        self.calls = 0

    async def call(self, tool_input: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        self.calls += 1
        return ToolOutput(f"touched {tool_input['file_path']}")


class BoomTool(Tool):
    name = "Boom"
    description = "Raises."
    input_schema = {"type": "object", "properties": {}}

    async def call(self, tool_input: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        raise RuntimeError("kaboom")


def registry(*tools: Tool) -> ToolRegistry:
    return ToolRegistry(tools)
