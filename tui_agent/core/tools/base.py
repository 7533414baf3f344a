"""The tool contract: Claude Code's names and input schemas, a JSON schema per tool, async `call`.

A tool never raises into the loop: `ToolError` (and any other exception) becomes an `is_error`
tool_result with a clear message. Input is validated against the tool's own JSON schema before `call`
runs, so the schema the model sees is exactly the one we enforce.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Protocol

from tui_agent.core.messages import key_value

if TYPE_CHECKING:
    from tui_agent.core.tools.project_context import ProjectContext
    from tui_agent.core.tools.skill_catalog import SkillCatalog

ToolContent = str | list[dict[str, Any]]


class ToolError(Exception):
    """A failure the model should read as the tool_result text (missing file, bad pattern...)."""


@dataclass
class ToolOutput:
    content: ToolContent
    is_error: bool = False


class ReadDenies(Protocol):
    """What a tool that reads many files asks of the permission gate (`PermissionPolicy` is one): the globs
    a deny rule forbids reading, to leave out of a search."""

    def read_deny_globs(self) -> list[str]: ...


class ContextLens(Protocol):
    """What the Context tool asks of the session it runs in: the status of the request the model is
    answering, and the original content of what compaction took out of it. The session's
    `agent/context_report.ContextView` is one; the tool never sees the plan or the history itself."""

    def status(self) -> str: ...

    def recalled(self, index: int | None, start: int | None, end: int | None, search: str | None) -> str:
        """The recalled text, or `ToolError` with one line saying why nothing can be recalled."""
        ...


@dataclass
class ToolContext:
    """What a tool may use: the workspace root and session-scoped state shared between tools.

    `read_files` maps a resolved path to the mtime seen by Read, so Edit can refuse files the agent has
    not read or that changed on disk since (Claude Code's rule). The rest are typed fields, not a bag:
    `permissions` (tools that read many files, like Grep, leave out what a deny rule forbids),
    `project_context` (AGENTS.md & co., cached by mtime) and `skills` (the catalog), both created on
    first use and kept by `/clear`. `context_view` is the session's view of its own context (its history
    and the current call's plan) for the Context tool; None outside a session.
    """

    workspace: Path
    read_files: dict[str, float] = field(default_factory=dict)
    permissions: "ReadDenies | None" = None
    project_context: "ProjectContext | None" = None
    skills: "SkillCatalog | None" = None
    context_view: "Callable[[], ContextLens] | None" = None


class Tool(ABC):
    """One tool the model can call. Subclasses set the class attributes and implement `call`."""

    name: str = ""
    description: str = ""
    input_schema: dict[str, Any] = {"type": "object", "properties": {}}
    read_only: bool = True

    def is_read_only(self, tool_input: dict[str, Any]) -> bool:
        return self.read_only

    def rerunnable(self, tool_input: dict[str, Any]) -> bool:
        """Whether calling this tool again with `tool_input` gives its result back, with no side effect
        (so the compactor may replace an old result by a placeholder that says "call it again")."""
        return self.is_read_only(tool_input)

    def is_concurrency_safe(self, tool_input: dict[str, Any]) -> bool:
        """Read-only tools requested in one response run concurrently; others run in order."""
        return self.is_read_only(tool_input)

    def paths(self, tool_input: dict[str, Any]) -> list[str]:
        """Paths the call touches, for the workspace-boundary permission check."""
        value = tool_input.get("file_path") or tool_input.get("path")
        return [value] if isinstance(value, str) and value else []

    def summary(self, tool_input: dict[str, Any]) -> str:
        """The key input shown on tool cards and status lines (path, pattern, command): the one table
        of `messages.KEY_INPUTS`, which placeholders and the panel's rows read too."""
        return key_value(tool_input)

    def permission_preview(self, tool_input: dict[str, Any], ctx: ToolContext) -> str:
        """What the permission prompt shows (a diff for Edit, a preview for Write, the command for Bash)."""
        return ""

    def schema(self) -> dict[str, Any]:
        """The definition sent to the model (Anthropic `tools` entry)."""
        return {"name": self.name, "description": self.description, "input_schema": self.input_schema}

    @abstractmethod
    async def call(self, tool_input: dict[str, Any], ctx: ToolContext) -> ToolOutput: ...


class ToolRegistry:
    """Tools by name, in registration order (the order the model sees them)."""

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        for tool in tools:
            self.add(tool)

    def add(self, tool: Tool) -> None:
        self._tools[tool.name] = tool

    def remove(self, name: str) -> None:
        self._tools.pop(name, None)

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def names(self) -> list[str]:
        return list(self._tools)

    def __iter__(self):
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)

    def rerunnable(self, name: str, tool_input: Any) -> bool | None:
        """The tool's own answer to "can this result be had again?" (None: no such tool here)."""
        tool = self._tools.get(name)
        if tool is None:
            return None
        return tool.rerunnable(tool_input if isinstance(tool_input, dict) else {})

    def schemas(self) -> list[dict[str, Any]]:
        return [tool.schema() for tool in self._tools.values()]


def validate_input(tool: Tool, tool_input: Any) -> str | None:
    """None when `tool_input` fits the tool's schema, else a message that names the field."""
    if not isinstance(tool_input, dict):
        return f"Invalid input for {tool.name}: expected an object, got {type(tool_input).__name__}"
    from tui_agent.core.tools.schema_check import surely_valid

    if surely_valid(tool.input_schema, tool_input):
        return None  # the common case, without importing jsonschema (120–230 ms per process)
    validator = tool.__dict__.get("_validator")
    if validator is None:  # built once per tool instance; schemas do not change after construction
        import jsonschema  # lazy: only paid when a tool actually runs

        validator = tool.__dict__["_validator"] = jsonschema.Draft202012Validator(tool.input_schema)
    errors = sorted(validator.iter_errors(tool_input), key=lambda e: list(e.path))
    if not errors:
        return None
    parts = []
    for error in errors[:5]:
        where = ".".join(str(p) for p in error.path)
        parts.append(f"{where}: {error.message}" if where else error.message)
    return f"Invalid input for {tool.name}: " + "; ".join(parts)
