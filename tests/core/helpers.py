"""Small test doubles shared by the core tests."""

from __future__ import annotations

import asyncio
from typing import Any

from tui_agent.core.messages import Message, tool_results, tool_uses
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


def split_turn(history: list[dict], every: int) -> list[dict]:
    """A one-prompt history of tool rounds as several turns: after every `every` rounds an answer and a new
    prompt. An unasked event takes nothing of the turn in progress (issue 28 §3), so a test of what an
    event does to older results needs them in finished turns."""
    from tui_agent.core.messages import tool_results, user_text

    out: list[dict] = []
    rounds = 0
    for k, message in enumerate(history):
        out.append(message)
        if tool_results(message) and k + 1 < len(history):
            rounds += 1
            if rounds % every == 0:
                out += [{"role": "assistant", "content": [{"type": "text", "text": f"step {rounds} done"}]},
                        user_text(f"go on after step {rounds}")]
    return out


def assistant_text(text: str) -> Message:
    """An assistant message made only of text."""
    return {"role": "assistant", "content": [{"type": "text", "text": text}]}


def unanswered_tool_uses(history: list[Message]) -> list[str]:
    """Ids of tool_use blocks with no tool_result anywhere after them (should always be empty)."""
    pending: dict[str, None] = {}
    for message in history:
        for block in tool_uses(message):
            pending[block["id"]] = None
        for block in tool_results(message):
            pending.pop(block.get("tool_use_id", ""), None)
    return list(pending)
