"""Slash commands that belong to the engine (`/permissions`, `/skills`, `/mcp`, `/init`, `/<skill>`...).

Faces own their UI commands (`/theme`, `/context`, `/exit`); everything that only needs the session is
registered here, so the TUI's completion, the command palette and `/help` list one set of commands.
A handler returns text to show, and optionally a prompt to run as the user's next message.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Literal, Union

if TYPE_CHECKING:
    from tui_agent.core.agent.session import Session


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


Handler = Callable[["Session", str], Union[CommandResult, Awaitable[CommandResult]]]


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

    async def run(self, session: "Session", line: str) -> CommandResult | None:
        """Run `/name args`; None when no such command is registered here."""
        name, _, args = line.strip().lstrip("/").partition(" ")
        command = self.get(name)
        if command is None:
            return None
        result: Any = command.handler(session, args.strip())
        if hasattr(result, "__await__"):  # (not `inspect`: it costs start-up time)
            result = await result
        return result
