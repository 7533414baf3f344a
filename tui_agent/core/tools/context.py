"""Context: the model looks at its own context and takes back what compaction left out of it.

`status` says how many tokens the request used and has left, and what was dropped, cut or masked, by
history index with a one-line description; `recall` (an index, a range or a search string) returns the
original content of such messages from the history, within a size cap (`context_report.recall_cap`).
It is read-only and never asks permission: it reads what the session already holds, through the
session's own view (`ToolContext.context_view`, a `ContextLens`: the session's `agent/context_report`
reads its history and the plan of the current call), so this tool needs nothing from the agent above it.
"""

from __future__ import annotations

from typing import Any

from tui_agent.core.tools.base import Tool, ToolContext, ToolError, ToolOutput

NAME = "Context"
DESCRIPTION = """Look at your own context window and get back what compaction left out of it.
Older messages may be dropped, and old tool results cut or replaced by placeholders, to keep the request small; the full conversation is still kept.
- action "status": tokens used and left, and every message not sent whole (dropped, cut or masked), by index (#N) with a one-line description.
- action "recall": the original content of dropped, cut or masked messages: give "index", or "start" and "end" (both included), or "search" (a path, identifier or phrase they mention). Results are capped in size; the reply says when.
Use recall when you need something you read or said earlier and it is no longer in your context, instead of reading or running it again."""


class ContextTool(Tool):
    name = NAME
    description = DESCRIPTION
    input_schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": ["status", "recall"], "description": "status or recall"},
            "index": {"type": "integer", "minimum": 0, "description": "recall: one message, by its #index"},
            "start": {"type": "integer", "minimum": 0, "description": "recall: the first message of a range"},
            "end": {"type": "integer", "minimum": 0, "description": "recall: the last message of a range"},
            "search": {"type": "string", "description": "recall: the messages that mention this text"},
        },
        "required": ["action"],
        "additionalProperties": False,
    }
    read_only = True

    def paths(self, tool_input: dict[str, Any]) -> list[str]:
        return []

    def summary(self, tool_input: dict[str, Any]) -> str:
        action = str(tool_input.get("action", ""))
        if "search" in tool_input:
            return f"{action} {tool_input['search']!r}"
        if "index" in tool_input:
            return f"{action} #{tool_input['index']}"
        if "start" in tool_input or "end" in tool_input:
            return f"{action} #{tool_input.get('start', '?')}–#{tool_input.get('end', '?')}"
        return action

    async def call(self, tool_input: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        if ctx.context_view is None:
            raise ToolError("Context is not available here: this agent was started without a session view.")
        view = ctx.context_view()
        if tool_input["action"] == "status":
            return ToolOutput(view.status())
        return ToolOutput(view.recalled(tool_input.get("index"), tool_input.get("start"), tool_input.get("end"),
                                        tool_input.get("search")))
