"""Slash commands that belong to the engine (`/permissions`, `/skills`, `/mcp`, `/init`, `/<skill>`...).

Faces own their UI commands (`/theme`, `/context`, `/exit`); everything that only needs the session is
registered here, so the TUI's completion, the command palette and `/help` list one set of commands.
A handler returns text to show, and optionally a prompt to run as the user's next message.

A handler takes a `CommandHost`, not the `Session`: what a command may ask of its session, named here as
small Protocols (`PromptHost` for the system prompt builder, `McpHost` for the MCP installer). The Session
satisfies them by the type checker's word, and nothing here imports it (no import circle, not even a
type-only one, between the session and what it runs).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Literal, Protocol, Union

from tui_agent.core.agent.compaction_control import UndoHost

if TYPE_CHECKING:
    from tui_agent.core.access.gate import PermissionPolicy
    from tui_agent.core.agent.approval import Approver
    from tui_agent.core.access.trust import Answer, TrustQuestion
    from tui_agent.core.agent.summary_draft import SummaryDraft
    from tui_agent.core.compaction import CompactPolicy
    from tui_agent.core.compaction.protocol import CompactorProtocol
    from tui_agent.core.events import Notice
    from tui_agent.core.mcp.state import McpState
    from tui_agent.core.tools.base import ToolContext, ToolRegistry


@dataclass(frozen=True)
class CommandResult:
    text: str = ""
    prompt: str | None = None  # run as the next user prompt (e.g. `/init`, `/<skill> args`)
    level: Literal["info", "warning", "error"] = "info"
    # The chat's line for `prompt` when the prompt is the app's own wording (the user typed `/init`, not
    # its 40 lines); None: the prompt itself. The model is sent `prompt` either way.
    shown: str | None = None
    # Run by the face once the prompt's turn has ended: a line to show about its outcome, or None.
    after: Callable[[], str | None] | None = None


Handler = Callable[["CommandHost", str], Union[CommandResult, Awaitable[CommandResult]]]


@dataclass(frozen=True)
class Command:
    name: str  # without the slash
    description: str
    handler: Handler
    args_hint: str = ""


@dataclass
class CommandRegistry:
    commands: dict[str, Command] = field(default_factory=dict)

    def register(self, command: Command) -> None:
        self.commands[command.name] = command

    def unregister(self, name: str) -> None:
        self.commands.pop(name, None)

    def get(self, name: str) -> Command | None:
        return self.commands.get(name.lstrip("/"))

    def all(self) -> list[Command]:
        return sorted(self.commands.values(), key=lambda c: c.name)

    async def run(self, session: CommandHost, line: str) -> CommandResult | None:
        """Run `/name args`; None when no such command is registered here."""
        name, _, args = line.strip().lstrip("/").partition(" ")
        command = self.get(name)
        if command is None:
            return None
        result: Any = command.handler(session, args.strip())
        if hasattr(result, "__await__"):  # (not `inspect`: it costs start-up time)
            result = await result
        return result


@dataclass
class SkillCommandState:
    """Which `/<skill>` commands are registered, for which catalog version (re-synced when it changes)."""

    version: object = None
    names: set[str] = field(default_factory=set)


class PromptHost(Protocol):
    """What the system prompt builder reads of a session (and the skill commands it keeps in step)."""

    workspace: Path
    ctx: ToolContext
    tools: ToolRegistry
    commands: CommandRegistry
    skill_commands: SkillCommandState | None

    @property
    def system_prompt_builder(self) -> Callable[..., str] | None: ...

    def system_prompt(self) -> str: ...


class McpHost(Protocol):
    """What the MCP installer wires into a session: tools, a start-up task, a closer, `/mcp`, trust."""

    workspace: Path
    tools: ToolRegistry
    commands: CommandRegistry
    mcp: McpState | None

    @property
    def background_start(self) -> list[Callable[[Any], Awaitable[list[Notice]]]]: ...

    @property
    def closers(self) -> list[Callable[[], Awaitable[None]]]: ...

    @property
    def ask_trust(self) -> Callable[[TrustQuestion], Awaitable[Answer]] | None: ...


class CommandHost(PromptHost, McpHost, UndoHost, Protocol):
    """What an engine command may ask of its session (every handler takes one)."""

    approve_compaction: bool  # ask the face before each compaction event (`/approve`)
    ask_approval: "Approver | None"  # who answers; None: no user to ask (-p, ACP)

    permissions: PermissionPolicy
    compact_policy: CompactPolicy | None
    compactor: CompactorProtocol

    async def compact_now(self, focus: str = "") -> str: ...

    def summary_draft(self) -> SummaryDraft | None: ...

    def edit_summary_draft(self, text: str) -> str: ...
