"""One MCP server connection: spawn (or connect), initialize, list tools, call, restart, stop.

The SDK's transports are anyio context managers whose task groups and cancel scopes belong to the task
that entered them. Tool calls arrive from the query loop's task, start-up runs in a TUI worker and
shutdown in a closer, so each connection has its own *owner task* that enters the transport and the
`ClientSession`, reports readiness, and waits for a stop signal; other tasks only send requests through
the session (memory streams, safe across tasks in one event loop).

The server's stderr goes to its own log file (`server_log.py`), never to ours: inside the TUI, a child's
stderr paints straight over the screen. What a failure means, in one line, is `failures.py`. The SDK is
imported here, lazily, inside the owner task only.
"""

from __future__ import annotations

import asyncio
import os
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from tui_agent.core.mcp.config import ServerConfig
from tui_agent.core.mcp.failures import McpCallError, McpStartError, describe, is_transport_error, start_failure, unwrap
from tui_agent.core.mcp.server_log import MAX_LOG_BYTES, RotatingLog, log_tail, quiet_sdk_logging, start_log, stderr_pipe

Status = Literal["pending", "starting", "connected", "failed", "dead", "stopped"]
MAX_RESTARTS = 3  # per session: a server that keeps dying is left down
CLIENT_NAME = "tui-agent"
STDERR_WAIT = 1.0  # seconds a failed start waits for the server's stderr to reach its log (end-of-file)


@dataclass(frozen=True)
class RemoteTool:
    """A tool as the server listed it (its own name; the public name is made by the manager)."""

    name: str
    description: str
    input_schema: dict[str, Any]
    read_only: bool


@dataclass
class ServerConnection:
    config: ServerConfig
    log_path: Path
    cwd: Path
    start_timeout: float = 15.0
    status: Status = "pending"
    tools: list[RemoteTool] = field(default_factory=list)
    last_error: str | None = None
    server_info: str = ""
    restarts: int = 0
    restart_allowed: bool = False

    def __post_init__(self) -> None:
        self._session: Any = None
        self._owner: asyncio.Task | None = None
        self._stderr_pump: Any = None  # the thread copying a stdio server's stderr into its log
        self._stop: asyncio.Event | None = None
        self._lock = asyncio.Lock()
        self._old_owners: set[asyncio.Task] = set()
        self._closing = False

    @property
    def name(self) -> str:
        return self.config.name

    # -- lifecycle -----------------------------------------------------------------------------
    async def start(self) -> None:
        """Start the server and list its tools; raises `McpStartError` (the server is left stopped)."""
        async with self._lock:
            await self._start()

    async def _start(self) -> None:
        if self._closing:
            raise McpStartError("MCP is shutting down")
        self._retire_owner()
        self.status = "starting"
        loop = asyncio.get_running_loop()
        ready: asyncio.Future = loop.create_future()
        self._stop = asyncio.Event()
        log_offset = self._prepare_log()
        self._owner = asyncio.create_task(self._own(ready, self._stop), name=f"mcp-{self.name}")
        try:
            # The owner applies the start timeout to each step; this outer bound only guards the guard.
            tools = await asyncio.wait_for(asyncio.shield(ready), 2 * self.start_timeout + 10)
        except BaseException as error:
            # An owner that reported its failure is already winding down (its shutdown is bounded);
            # one that did not answer in time, or a cancelled start, needs a cancel.
            self._retire_owner(cancel=not ready.done())
            reason = start_failure(error, self.config, self.start_timeout)
            pump = self._stderr_pump
            if pump is not None and not isinstance(error, (asyncio.CancelledError, asyncio.TimeoutError, TimeoutError)):
                await asyncio.to_thread(pump.join, STDERR_WAIT)  # an exited server's last words reach its log
            hint = log_tail(self.log_path, log_offset)
            if hint and hint not in reason:
                reason = f"{reason} (stderr: {hint})"
            self.status = "failed"
            self.last_error = reason
            if isinstance(error, asyncio.CancelledError):
                raise
            raise McpStartError(reason) from None
        self.tools = tools
        self.status = "connected"
        self.restart_allowed = False

    async def _own(self, ready: asyncio.Future, stop: asyncio.Event) -> None:
        """The owner task: holds the transport and session open until `stop` is set."""
        try:
            async with AsyncExitStack() as stack:
                try:
                    session = await self._connect(stack)
                    async with asyncio.timeout(self.start_timeout):
                        init = await session.initialize()
                    async with asyncio.timeout(self.start_timeout):
                        listed = await session.list_tools()
                    info = getattr(init, "server_info", None)
                    if info is not None:
                        self.server_info = f"{info.name} {info.version}".strip()
                    self._session = session
                    if not ready.done():
                        ready.set_result([_remote_tool(t) for t in listed.tools])
                    await stop.wait()
                except asyncio.CancelledError:
                    # Our own cancel, or a transport task failed and cancelled us: the real error
                    # comes out of the exit stack below.
                    raise
                except BaseException as error:
                    # Tell the starter now; the transport's shutdown below can take seconds.
                    if not ready.done():
                        ready.set_exception(unwrap(error))
                    raise
                finally:
                    if self._stop is stop:  # a retired owner must not clear its successor's session
                        self._session = None
        except BaseException as error:  # noqa: BLE001 - reported through `ready` or the call path
            if not ready.done():
                real = unwrap(error)
                if isinstance(real, asyncio.CancelledError):
                    real = McpStartError("start-up was cancelled")
                ready.set_exception(real)
            elif not stop.is_set() and self._stop is stop:
                self._lost(f"connection lost: {describe(error)}")
            return
        if not stop.is_set() and self._stop is stop:
            self._lost("connection lost")

    def _lost(self, why: str) -> None:
        """The transport ended on its own (e.g. an HTTP server went away): restartable like a crash."""
        self.status = "dead"
        self.last_error = why
        self.restart_allowed = self.restarts < MAX_RESTARTS

    async def _connect(self, stack: AsyncExitStack) -> Any:
        from mcp import ClientSession
        from mcp.types import Implementation

        from tui_agent import __version__

        if self.config.type == "http":
            from mcp.client.streamable_http import streamable_http_client
            from mcp.shared._httpx_utils import create_mcp_http_client

            http = await stack.enter_async_context(create_mcp_http_client(headers=dict(self.config.headers)))
            read, write = await stack.enter_async_context(streamable_http_client(self.config.url, http_client=http))
        else:
            from mcp import StdioServerParameters
            from mcp.client.stdio import stdio_client

            quiet_sdk_logging(self.log_path.parent)
            # stderr goes through a pipe into a log that rotates past MAX_LOG_BYTES (a chatty server
            # cannot fill the disk); our copy of the pipe's write end is closed once the child has it.
            errlog = stderr_pipe(RotatingLog(self.log_path, MAX_LOG_BYTES))
            self._stderr_pump = getattr(errlog, "pump")  # set by stderr_pipe: the thread copying it
            # Claude Code passes the whole environment plus the entry's `env`; so do we (servers often
            # need PATH, HOME, proxies or API keys the user already exported).
            params = StdioServerParameters(
                command=self.config.command,
                args=list(self.config.args),
                env={**os.environ, **self.config.env},
                cwd=str(self.cwd),
            )
            try:
                read, write = await stack.enter_async_context(stdio_client(params, errlog=errlog))  # type: ignore[arg-type]  # a binary pipe: the SDK only passes it on
            finally:
                errlog.close()
        client_info = Implementation(name=CLIENT_NAME, version=__version__)
        return await stack.enter_async_context(ClientSession(read, write, client_info=client_info))

    async def stop(self) -> None:
        """Close the session and end the process (the SDK closes stdin, then terminates, then kills).

        A start still in progress is cancelled first, so quitting never waits out a start timeout.
        """
        self._closing = True
        self._retire_owner(cancel=self.status == "starting")
        async with self._lock:
            self._retire_owner(cancel=self.status == "starting")
            if self.status in ("connected", "starting", "dead"):
                self.status = "stopped"
            owners, self._old_owners = self._old_owners, set()
        if owners:
            await asyncio.wait(owners, timeout=10)

    def _retire_owner(self, cancel: bool = False) -> None:
        """Ask the current owner to finish in the background (kept referenced until `stop`).

        The stop event is enough for an owner holding an open session; `cancel` is for one still
        waiting on a server that does not answer.
        """
        owner, self._owner = self._owner, None
        self._session = None
        if self._stop is not None:
            self._stop.set()
        if owner is not None and not owner.done():
            if cancel:
                owner.cancel()
            self._old_owners.add(owner)
            owner.add_done_callback(self._old_owners.discard)

    # -- calls ---------------------------------------------------------------------------------
    async def call(self, tool: str, arguments: dict[str, Any], timeout: float) -> Any:
        """Call `tool`; returns the SDK's `CallToolResult` or raises `McpCallError` with a clear message."""
        session = await self._ready_session()
        from mcp.shared.exceptions import MCPError
        from mcp.types import CONNECTION_CLOSED, REQUEST_TIMEOUT

        try:
            return await asyncio.wait_for(
                session.call_tool(tool, arguments, read_timeout_seconds=timeout), timeout + 5
            )
        except MCPError as error:
            if error.code == REQUEST_TIMEOUT:
                raise McpCallError(self._timeout_message(tool, timeout)) from None
            if error.code == CONNECTION_CLOSED:
                raise McpCallError(self._died(tool, "the connection closed", session)) from None
            raise McpCallError(f'MCP server "{self.name}" rejected the call to {tool}: {error.message}') from None
        except asyncio.TimeoutError:
            raise McpCallError(self._timeout_message(tool, timeout)) from None
        except asyncio.CancelledError:
            raise
        except Exception as error:  # noqa: BLE001 - broken pipes and closed streams mean the server is gone
            if is_transport_error(error):
                raise McpCallError(self._died(tool, describe(error), session)) from None
            raise McpCallError(f'MCP call {self.name}/{tool} failed: {describe(error)}') from None

    async def _ready_session(self) -> Any:
        async with self._lock:
            if self.status == "dead" and self.restart_allowed:
                self.restart_allowed = False
                self.restarts += 1
                try:
                    await self._start()
                except McpStartError as error:
                    raise McpCallError(
                        f'MCP server "{self.name}" had stopped and restarting it failed: {error}.{self._log_hint()}'
                    ) from None
            if self.status != "connected" or self._session is None:
                detail = f": {self.last_error}" if self.last_error else ""
                raise McpCallError(f'MCP server "{self.name}" is not running ({self.status}{detail}).')
            return self._session

    def _died(self, tool: str, how: str, session: Any) -> str:
        if self.status == "connected" and self._session is not None and self._session is not session:
            # A parallel call already restarted the server; this call's session was the old one.
            return f'MCP server "{self.name}" stopped during the call to {tool} ({how}); it has been restarted.'
        self.status = "dead"
        self.restart_allowed = self.restarts < MAX_RESTARTS
        self.last_error = f"stopped during a call to {tool} ({how})"
        self._retire_owner()
        self.status = "dead"
        then = (
            "The next call will try to restart it once."
            if self.restart_allowed
            else f"It was restarted {self.restarts} times already and is left stopped."
        )
        return f'MCP server "{self.name}" stopped during the call to {tool} ({how}). {then}{self._log_hint()}'

    def _timeout_message(self, tool: str, timeout: float) -> str:
        self.last_error = f"call to {tool} timed out after {timeout:g} s"
        return (
            f"MCP tool call timed out after {timeout:g} s ({self.name}/{tool}). "
            "Set MCP_TOOL_TIMEOUT (seconds) for a longer limit."
        )

    # -- the server's log ----------------------------------------------------------------------
    def _log_hint(self) -> str:
        return f" Log: {self.log_path}" if self.config.type == "stdio" else ""

    def _prepare_log(self) -> int:
        return start_log(self.log_path, self.name, self.config) if self.config.type == "stdio" else 0


def _remote_tool(tool: Any) -> RemoteTool:
    annotations = getattr(tool, "annotations", None)
    schema = getattr(tool, "input_schema", None)
    return RemoteTool(
        name=tool.name,
        description=(getattr(tool, "description", None) or "").strip(),
        input_schema=schema if isinstance(schema, dict) else {"type": "object", "properties": {}},
        read_only=bool(annotations is not None and getattr(annotations, "read_only_hint", None) is True),
    )
