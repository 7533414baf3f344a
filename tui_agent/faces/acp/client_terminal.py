"""Bash in the client's terminal, when the client offers one (`clientCapabilities.terminal`).

The editor then shows the command's live output where its user looks, and runs it in its own environment.
Only where the command runs changes: the permission gate, the summary, the read-only rules and the result
text the model gets (output, then the exit code or the timeout) are the built-in Bash tool's.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from tui_agent.core.tools.base import ToolContext, ToolError, ToolOutput
from tui_agent.core.tools.bash import DEFAULT_TIMEOUT_MS, MAX_TIMEOUT_MS, BashTool

OUTPUT_LIMIT = 256_000  # bytes the client keeps of a command's output (it truncates from the start)


class ClientTerminalBash(BashTool):
    """The Bash tool, run through `terminal/create` … `terminal/release` of the ACP client."""

    def __init__(self, conn: Any, session_id: str) -> None:
        self.conn = conn
        self.session_id = session_id

    async def call(self, tool_input: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        command: str = tool_input["command"]
        timeout_s = min(int(tool_input.get("timeout") or DEFAULT_TIMEOUT_MS), MAX_TIMEOUT_MS) / 1000
        try:
            created = await self.conn.create_terminal(session_id=self.session_id, command="bash",
                                                      args=["-c", command], cwd=str(ctx.workspace),
                                                      output_byte_limit=OUTPUT_LIMIT)
        except Exception as error:  # noqa: BLE001 - the client refused: one line for the model
            raise ToolError(f"The editor's terminal could not run the command: {error}") from None
        terminal = created.terminal_id
        try:
            return await self._wait(terminal, timeout_s)
        finally:
            await asyncio.shield(self._release(terminal))

    async def _wait(self, terminal: str, timeout_s: float) -> ToolOutput:
        timed_out = False
        try:
            await asyncio.wait_for(self.conn.wait_for_terminal_exit(session_id=self.session_id,
                                                                    terminal_id=terminal), timeout_s)
        except TimeoutError:
            timed_out = True
            await self.conn.kill_terminal(session_id=self.session_id, terminal_id=terminal)
        except asyncio.CancelledError:
            await asyncio.shield(self.conn.kill_terminal(session_id=self.session_id, terminal_id=terminal))
            raise
        shown = await self.conn.terminal_output(session_id=self.session_id, terminal_id=terminal)
        output = shown.output.rstrip()
        if shown.truncated:
            output = "(earlier output was cut by the editor's terminal)\n" + output
        status = shown.exit_status
        if timed_out:
            note = f"Command timed out after {timeout_s * 1000:.0f} ms and was killed."
        elif status is not None and status.signal:
            note = f"Command was killed by {status.signal}."
        elif status is not None and status.exit_code:
            note = f"Exit code {status.exit_code}"
        else:
            return ToolOutput(output or "(no output)")
        return ToolOutput(f"{output}\n\n{note}" if output else note, True)

    async def _release(self, terminal: str) -> None:
        with contextlib.suppress(Exception):  # a client that already let it go
            await self.conn.release_terminal(session_id=self.session_id, terminal_id=terminal)


def use_client_terminal(session: Any, conn: Any, session_id: str, capabilities: Any) -> bool:
    """Swap the session's Bash for the client's terminal when the client offers one; True when swapped."""
    if capabilities is None or not getattr(capabilities, "terminal", False) or session.tools.get("Bash") is None:
        return False
    session.tools.add(ClientTerminalBash(conn, session_id))  # same name: same place in the tool list
    return True
