"""What went wrong with an MCP server, in one line: a start that failed, a call that failed outside the tool.

Its own concept because the SDK's failures arrive wrapped (anyio's exception groups, a cancellation around
the real error, an `MCPError` code) and the user needs one sentence: the command not found, no answer in
time, the server gone mid-call. The connection (`client.py`) decides what to do; this says what happened.
"""

from __future__ import annotations

import asyncio

from tui_agent.core.mcp.config import ServerConfig


class McpStartError(Exception):
    """The server could not be started, initialized or listed; the message says why (one line)."""


class McpCallError(Exception):
    """A call failed outside the tool itself (timeout, dead server, protocol error)."""


def unwrap(error: BaseException) -> BaseException:
    """The first real error inside anyio's exception groups (a cancellation only when nothing else)."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        real = [e for e in error.exceptions if not isinstance(e, asyncio.CancelledError)]
        error = (real or list(error.exceptions))[0]
    return error


def is_transport_error(error: BaseException) -> bool:
    import anyio

    return isinstance(
        unwrap(error),
        (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream, BrokenPipeError, ConnectionError),
    )


def describe(error: BaseException) -> str:
    error = unwrap(error)
    text = str(error).strip()
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def start_failure(error: BaseException, config: ServerConfig, start_timeout: float) -> str:
    """One line saying why a start failed."""
    error = unwrap(error)
    if isinstance(error, FileNotFoundError) and config.type == "stdio":
        return f"command not found: {config.command}"
    if isinstance(error, PermissionError) and config.type == "stdio":
        return f"command is not executable: {config.command}"
    if isinstance(error, (asyncio.TimeoutError, TimeoutError)):
        return f"no answer within {start_timeout:g} s"
    if isinstance(error, asyncio.CancelledError):
        return "start-up was cancelled"
    if isinstance(error, McpStartError):
        return str(error)
    code = getattr(error, "code", None)
    message = getattr(error, "message", None)
    if isinstance(code, int) and isinstance(message, str):
        if message == "Connection closed":
            return "the server exited during start-up"
        return f"MCP error {code}: {message}"
    return describe(error)
