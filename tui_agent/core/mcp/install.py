"""Wire MCP into a Session: a background start-up task, a closer, and the `/mcp` command.

`install_mcp` itself does no I/O and imports nothing heavy: the config is read and the servers are
started in the session's background start-up (after the TUI's first frame; before the first headless
turn), where the `mcp` SDK's ~1 s import is paid too. No config means no MCP and no notice at all.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Mapping

from tui_agent.core.commands import Command, CommandResult
from tui_agent.core.events import Notice

if TYPE_CHECKING:
    from tui_agent.core.mcp.manager import McpManager
    from tui_agent.core.session import Session

NO_CONFIG_TEXT = (
    "No MCP servers configured. Add them to .mcp.json in the workspace, for example:\n"
    '  {{"mcpServers": {{"time": {{"command": "uvx", "args": ["mcp-server-time"]}}}}}}\n'
    "or to {user} (user-wide), or list config files in MCP_CONFIG (comma-separated)."
)


@dataclass
class McpState:
    """What `/mcp` reports; kept in `session.mcp`."""

    phase: str = "waiting"  # waiting → starting → ready | none | error
    manager: "McpManager | None" = None
    error: str | None = None
    user_config: Path | None = None


def install_mcp(
    session: "Session",
    *,
    environ: Mapping[str, str] | None = None,
    log_dir: Path | None = None,
    start_timeout: float | None = None,
    call_timeout: float | None = None,
) -> None:
    """Add MCP start-up to `session.background_start`, its shutdown to `session.closers`, and `/mcp`.

    The keyword arguments exist for tests; the app calls `install_mcp(session)`.
    """
    state = McpState()
    session.mcp = state

    async def start(session: "Session") -> list[Notice]:
        from tui_agent.core.mcp.config import McpConfigError, config_paths, load_config, user_config_dir
        from tui_agent.core.mcp.manager import (
            DEFAULT_START_TIMEOUT,
            McpManager,
            call_timeout_from_env,
            default_log_dir,
        )

        env = os.environ if environ is None else environ
        state.user_config = user_config_dir(env) / "mcp.json"
        try:
            config = load_config(config_paths(session.workspace, env), env)
        except McpConfigError as error:
            state.phase, state.error = "error", str(error)
            return [Notice(f"{error}. Running without MCP servers.", "warning")]
        if config is None:
            state.phase = "none"
            return []
        manager = McpManager(
            config,
            cwd=session.workspace,
            log_dir=log_dir or default_log_dir(env),
            start_timeout=start_timeout or DEFAULT_START_TIMEOUT,
            call_timeout=call_timeout or call_timeout_from_env(env),
        )
        state.manager, state.phase = manager, "starting"
        notices = await manager.start()
        for tool in manager.tools:
            session.tools.add(tool)
        state.phase = "ready"
        return notices

    async def close() -> None:
        if state.manager is not None:
            await state.manager.aclose()

    session.background_start.append(start)
    session.closers.append(close)
    session.commands.register(Command("mcp", "Show MCP servers: status, tools, last error, log file", mcp_command))


def mcp_command(session: "Session", args: str) -> CommandResult:
    state = session.mcp
    if state is None or state.phase == "waiting":
        return CommandResult("MCP: not started yet.")
    if state.phase == "error":
        return CommandResult(f"MCP is off: {state.error}", level="warning")
    if state.phase == "none" or state.manager is None:
        return CommandResult(NO_CONFIG_TEXT.format(user=state.user_config or "the user config dir"))
    text = state.manager.status_text()
    if state.phase == "starting":
        text = "MCP servers are starting…\n" + text
    return CommandResult(text)
