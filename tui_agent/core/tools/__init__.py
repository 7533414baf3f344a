"""Built-in tools and the registry. Tool modules import nothing heavy at module level."""

from tui_agent.core.tools.base import Tool, ToolContext, ToolError, ToolOutput, ToolRegistry, validate_input

__all__ = ["Tool", "ToolContext", "ToolError", "ToolOutput", "ToolRegistry", "validate_input", "builtin_tools"]


def builtin_tools() -> list[Tool]:
    """The tools every session starts with, in the order the model sees them."""
    from tui_agent.core.tools.read import ReadTool
    from tui_agent.core.tools.glob import GlobTool
    from tui_agent.core.tools.grep import GrepTool
    from tui_agent.core.tools.write import WriteTool
    from tui_agent.core.tools.edit import EditTool
    from tui_agent.core.tools.bash import BashTool
    from tui_agent.core.tools.skill import SkillTool
    from tui_agent.core.tools.context import ContextTool

    tools: list[Tool] = [ReadTool(), GlobTool(), GrepTool(), WriteTool(), EditTool(), BashTool(), SkillTool(),
                         ContextTool()]
    return tools
