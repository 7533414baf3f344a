"""The permission gate: which tool calls run at once, which ask the user, which are refused.

The loop asks `PermissionPolicy.decide()` before every call. "ask" makes the loop emit a
`PermissionRequested` event whose future the face resolves (the TUI's modal; headless never asks).
A denial becomes an `is_error` tool_result the model can read, and the turn stops so the user can say
what to do instead.
"""

from __future__ import annotations

import enum
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from tui_agent.core.tools.base import Tool, ToolContext

REJECT_MESSAGE = (
    "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file "
    "edit, the new_string was NOT written to the file). STOP what you are doing and wait for the user to "
    "tell you how to proceed."
)
HEADLESS_DENY_MESSAGE = (
    "Permission denied: {tool} needs permission, and headless mode does not ask. "
    "Re-run with --allow-write or ALLOW_WRITE=1 to allow tools that change things."
)
SKIPPED_MESSAGE = "Skipped because a previous tool use was rejected or the turn was aborted."


class PermissionDecision(enum.Enum):
    """The user's answer to a permission prompt."""

    ALLOW_ONCE = "allow_once"
    ALLOW_SESSION = "allow_session"
    DENY = "deny"


@dataclass(frozen=True)
class Decision:
    behavior: Literal["allow", "ask", "deny"]
    message: str = ""
    reason: str = ""


@dataclass(frozen=True)
class Rule:
    """`Tool` or `Tool(pattern)`: pattern is a path glob, or `prefix:*` for Bash commands."""

    tool: str
    pattern: str | None = None

    @classmethod
    def parse(cls, text: str) -> "Rule":
        text = text.strip()
        if text.endswith(")") and "(" in text:
            name, _, rest = text.partition("(")
            return cls(name.strip(), rest[:-1].strip() or None)
        return cls(text)

    def __str__(self) -> str:
        return f"{self.tool}({self.pattern})" if self.pattern else self.tool

    def matches(self, tool: Tool, tool_input: dict[str, Any]) -> bool:
        if self.tool != tool.name:
            return False
        if self.pattern is None:
            return True
        from fnmatch import fnmatchcase

        if isinstance(tool_input.get("command"), str):
            command = tool_input["command"].strip()
            if self.pattern.endswith(":*"):
                prefix = self.pattern[:-2]
                return command == prefix or command.startswith(prefix + " ")
            return fnmatchcase(command, self.pattern)
        for path in tool.paths(tool_input):
            normal = path.replace("\\", "/")
            if fnmatchcase(normal, self.pattern) or fnmatchcase(Path(normal).name, self.pattern):
                return True
        return False


def outside_workspace(tool: Tool, tool_input: dict[str, Any], ctx: ToolContext) -> list[str]:
    """Paths of this call that resolve (after `..` and symlinks) outside the workspace root."""
    root = ctx.workspace.resolve()
    outside = []
    for raw in tool.paths(tool_input):
        path = Path(raw).expanduser()
        resolved = (path if path.is_absolute() else root / path).resolve()
        if resolved != root and root not in resolved.parents:
            outside.append(raw)
    return outside


@dataclass
class PermissionPolicy:
    """`interactive` asks through the face; `headless` never asks (denies unless `allow_write`)."""

    mode: Literal["interactive", "headless", "allow_all"] = "interactive"
    allow_write: bool = False
    allow_rules: list[Rule] = field(default_factory=list)
    deny_rules: list[Rule] = field(default_factory=list)

    @classmethod
    def headless(cls, allow_write: bool | None = None) -> "PermissionPolicy":
        if allow_write is None:
            allow_write = os.environ.get("ALLOW_WRITE") == "1"
        return cls(mode="headless", allow_write=allow_write)

    def decide(self, tool: Tool, tool_input: dict[str, Any], ctx: ToolContext) -> Decision:
        for rule in self.deny_rules:
            if rule.matches(tool, tool_input):
                return Decision("deny", f"Permission denied by rule {rule}.", reason="rule")
        if self.mode == "allow_all":
            return Decision("allow")
        outside = outside_workspace(tool, tool_input, ctx)
        needs = bool(outside) or not tool.is_read_only(tool_input)
        if not needs:
            return Decision("allow")
        if any(rule.matches(tool, tool_input) for rule in self.allow_rules):
            return Decision("allow", reason="rule")
        if self.mode == "headless":
            if self.allow_write and not outside:
                return Decision("allow")
            if outside:
                return Decision(
                    "deny",
                    f"Permission denied: {', '.join(outside)} is outside the workspace {ctx.workspace}, "
                    "and headless mode does not ask.",
                    reason="outside",
                )
            return Decision("deny", HEADLESS_DENY_MESSAGE.format(tool=tool.name), reason="headless")
        return Decision("ask", reason="outside" if outside else "write")

    def remember(self, tool: Tool, tool_input: dict[str, Any]) -> Rule:
        """"Allow for this session": the exact path (or command prefix) for this tool, tool-wide otherwise."""
        paths = tool.paths(tool_input)
        command = tool_input.get("command")
        if isinstance(command, str) and command.strip():
            rule = Rule(tool.name, command.strip().split()[0] + ":*")
        elif paths:
            rule = Rule(tool.name, paths[0])
        else:
            rule = Rule(tool.name)
        self.allow_rules.append(rule)
        return rule
