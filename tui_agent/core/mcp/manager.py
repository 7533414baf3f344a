"""All configured MCP servers: start them concurrently, collect their tools, report status, shut down.

A server that fails to start (or to answer within the start timeout) is skipped with one warning that
names it and the reason; the others still work. `status_text()` is what `/mcp` shows.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from tui_agent.core.events import Notice
from tui_agent.core.mcp.client import ServerConnection
from tui_agent.core.mcp.failures import McpStartError
from tui_agent.core.mcp.config import McpConfig
from tui_agent.core.mcp.names import normalize_name
from tui_agent.core.mcp.tool import McpTool

DEFAULT_START_TIMEOUT = 15.0
DEFAULT_CALL_TIMEOUT = 30.0
CALL_TIMEOUT_ENV = "MCP_TOOL_TIMEOUT"


def call_timeout_from_env(environ: Mapping[str, str] | None = None) -> float:
    """`MCP_TOOL_TIMEOUT` in seconds (Claude Code reads the same variable, in milliseconds: values
    above 1000 are taken as milliseconds so a shared setting still works)."""
    environ = os.environ if environ is None else environ
    raw = environ.get(CALL_TIMEOUT_ENV, "").strip()
    try:
        value = float(raw)
    except ValueError:
        return DEFAULT_CALL_TIMEOUT
    if value <= 0:
        return DEFAULT_CALL_TIMEOUT
    return value / 1000 if value > 1000 else value


def default_log_dir(environ: Mapping[str, str] | None = None) -> Path:
    """Beside the TUI's trace log: `<log dir>/mcp` (`$TUI_AGENT_CONFIG_DIR/logs/mcp` when set)."""
    from tui_agent.core.paths import log_dir

    return log_dir(environ) / "mcp"


@dataclass
class McpManager:
    config: McpConfig
    cwd: Path
    log_dir: Path
    start_timeout: float = DEFAULT_START_TIMEOUT
    call_timeout: float = DEFAULT_CALL_TIMEOUT
    connections: dict[str, ServerConnection] = field(default_factory=dict)
    tools: list[McpTool] = field(default_factory=list)
    started: bool = False
    warnings: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        for name, server in self.config.servers.items():
            log_path = self.log_dir / f"{normalize_name(name)}.log"
            self.connections[name] = ServerConnection(server, log_path, self.cwd, self.start_timeout)

    async def start(self) -> list[Notice]:
        """Start every server at once; return warnings for the ones skipped (and other config issues)."""
        notices = [Notice(f'MCP server "{name}" skipped: {why}', "warning")
                   for name, why in self.config.unsupported.items()]
        for server in self.config.servers.values():
            if server.missing_vars:
                names = ", ".join(server.missing_vars)
                notices.append(Notice(f'MCP server "{server.name}": environment variable(s) not set: {names}',
                                      "warning"))
        conns = list(self.connections.values())
        results = await asyncio.gather(*(conn.start() for conn in conns), return_exceptions=True)
        taken: set[str] = set()
        for conn, result in zip(conns, results):
            if isinstance(result, BaseException):
                reason = str(result) if isinstance(result, McpStartError) else f"{type(result).__name__}: {result}"
                if not isinstance(result, McpStartError):
                    conn.status, conn.last_error = "failed", reason
                notices.append(Notice(f'MCP server "{conn.name}" failed to start and was skipped: {reason}',
                                      "warning"))
                continue
            for remote in conn.tools:
                tool = McpTool(conn, remote, self.call_timeout)
                problem = _schema_problem(tool.input_schema)
                if tool.name in taken:
                    problem = f"its name {tool.name} is already taken"
                if problem:
                    notices.append(Notice(f'MCP tool "{remote.name}" of server "{conn.name}" skipped: {problem}',
                                          "warning"))
                    continue
                taken.add(tool.name)
                self.tools.append(tool)
        self.warnings = [n.text for n in notices]
        self.started = True
        return notices

    async def aclose(self) -> None:
        await asyncio.gather(*(conn.stop() for conn in self.connections.values()), return_exceptions=True)

    def status_text(self) -> str:
        """What `/mcp` shows: each server's status, transport, tools, last error and log file."""
        files = ", ".join(str(p) for p in self.config.files)
        lines = [f"MCP servers (config: {files})"]
        if not self.connections and not self.config.unsupported:
            lines.append("  (no servers in the config)")
        for name, conn in self.connections.items():
            status = conn.status if self.started or conn.status != "pending" else "starting"
            details = ", ".join(x for x in (conn.config.type, conn.server_info) if x)
            lines.append(f"  {name}: {status} ({details})")
            lines.append(f"    {'url' if conn.config.type == 'http' else 'command'}: {conn.config.describe()}")
            tools = [t for t in self.tools if t.connection is conn]
            if tools:
                lines.append(f"    tools ({len(tools)}):")
                for tool in tools:
                    lines.append(f"      {tool.name}" + ("  (read-only)" if tool.read_only else ""))
            elif conn.status == "connected":
                lines.append("    tools: none")
            if conn.restarts:
                lines.append(f"    restarts: {conn.restarts}")
            if conn.last_error:
                lines.append(f"    last error: {conn.last_error}")
            if conn.config.type == "stdio":
                lines.append(f"    log: {conn.log_path}")
        for name, why in self.config.unsupported.items():
            lines.append(f"  {name}: skipped · {why}")
        return "\n".join(lines)


def _schema_problem(schema: dict) -> str | None:
    """A schema jsonschema cannot use would break input validation for every call: skip the tool."""
    import jsonschema

    try:
        cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
        cls.check_schema(schema)
    except jsonschema.SchemaError as error:
        return f"invalid input schema: {error.message}"
    except Exception as error:  # noqa: BLE001 - e.g. an unknown $schema URI
        return f"unusable input schema: {error}"
    return None
