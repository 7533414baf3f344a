"""Skill: load a skill's instructions into the conversation, `{skill, args?}` (Claude Code's schema).

The result carries the body itself (after `Launching skill: <id>` and the base directory), so the
model reads it in the same round and relative paths in the skill resolve against its folder.
"""

from __future__ import annotations

from typing import Any

from tui_agent.core.tools.skill_catalog import catalog_for, launch_text
from tui_agent.core.tools.base import Tool, ToolContext, ToolError, ToolOutput

DESCRIPTION = """Execute a skill within the main conversation.
Skills are folders of instructions for specific tasks; the system prompt lists the available skills under "Available Skills".
- Call this tool with the skill's name (e.g. skill: "review") and optional args to load its instructions, then follow them.
- When the user types /<skill-name>, the skill is meant to be run: call this tool with that name.
- Only use skills that are listed; do not invoke a skill that is already loaded in this conversation."""


class SkillTool(Tool):
    name = "Skill"
    description = DESCRIPTION
    input_schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            "skill": {"type": "string", "minLength": 1, "description": 'The skill name, e.g. "review"'},
            "args": {"type": "string", "description": "Optional arguments for the skill"},
        },
        "required": ["skill"],
        "additionalProperties": False,
    }
    read_only = True

    def paths(self, tool_input: dict[str, Any]) -> list[str]:
        return []

    def summary(self, tool_input: dict[str, Any]) -> str:
        value = tool_input.get("skill")
        return value if isinstance(value, str) else ""

    async def call(self, tool_input: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        catalog = catalog_for(ctx)
        name = str(tool_input["skill"])
        skill = catalog.get(name)
        if skill is None:
            known = ", ".join(catalog.ids())
            hint = f"Available skills: {known}." if known else "No skills are available in this workspace."
            raise ToolError(f"Unknown skill: {name}. {hint}")
        return ToolOutput(launch_text(skill, str(tool_input.get("args") or "")))
