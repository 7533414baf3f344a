"""What `/mcp` reports of a session's MCP servers, kept in `session.mcp` (its own module: the commands'
`McpHost` protocol names it without importing the installer)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tui_agent.core.mcp.manager import McpManager


@dataclass
class McpState:
    """What `/mcp` reports; kept in `session.mcp`."""

    phase: str = "waiting"  # waiting → starting → ready | none | error
    manager: McpManager | None = None
    error: str | None = None
    user_config: Path | None = None
    # Project servers (defined inside the workspace) → "approved", "refused", "pending" or
    # "approved for this run" (--trust-project-mcp); with what each would run.
    trust: dict[str, str] = field(default_factory=dict)
    project_servers: dict[str, str] = field(default_factory=dict)
