"""Bash: run a shell command in the workspace, `{command, timeout?, description?}` (Claude Code's schema).

The command runs as `/bin/bash -c command` (whatever `$SHELL` is) in its own session, hence its own process group, so a timeout
or a cancelled turn can kill everything it started (pipes, `make -j`, test servers) with one `killpg`,
not just the shell. stdin is /dev/null, so a command that waits for input ends instead of hanging.
Output is read in chunks into a bounded head and tail: a command printing gigabytes costs a few
tens of kilobytes of memory, and the model sees the start and the end with a marker between them.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import time
from pathlib import Path
from typing import Any

from tui_agent.core.shell import descendants, process_groups
from tui_agent.core.tools.base import Tool, ToolContext, ToolError, ToolOutput
from tui_agent.core.tools.readonly import is_read_only_command

DEFAULT_TIMEOUT_MS = 120_000
MAX_TIMEOUT_MS = 600_000
MAX_OUTPUT_CHARS = 30_000
HEAD_BYTES = MAX_OUTPUT_CHARS // 2
TAIL_BYTES = MAX_OUTPUT_CHARS // 2
CHUNK = 64 * 1024
# After the shell exits, how long a background child may keep the output pipe open before we stop
# reading (`server &` would otherwise hold the result until the timeout).
DRAIN_GRACE_S = 1.0
# Between SIGTERM and SIGKILL: long enough for a test runner to clean up, short enough to feel instant.
KILL_GRACE_S = 0.5

DESCRIPTION = """Executes a bash command in the workspace root and returns its output (stdout and stderr together).
- Each call starts a fresh shell in the workspace root; `cd` does not persist between calls.
- timeout is in milliseconds: default 120000 (2 minutes), at most 600000 (10 minutes). On timeout the command and everything it started are killed.
- stdin is empty: interactive commands (editors, pagers, prompts) cannot be answered; pass flags like --yes or --no-pager instead.
- Output over 30000 characters keeps the beginning and the end, with a marker in the middle.
- A non-zero exit code is reported as an error together with the output.
- Prefer the Read, Glob, Grep, Edit and Write tools over cat, find, grep, sed and echo redirection.
- Quote paths that contain spaces. Chain dependent commands with &&.
- Write a short description (5-10 words) of what the command does."""


class _Capture:
    """The first HEAD_BYTES and a rolling last TAIL_BYTES of a stream, plus how much was seen."""

    def __init__(self) -> None:
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def add(self, data: bytes) -> None:
        self.total += len(data)
        room = HEAD_BYTES - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if data:
            self.tail += data
            if len(self.tail) > 2 * TAIL_BYTES:  # trim rarely: amortised O(1) per byte
                del self.tail[: len(self.tail) - TAIL_BYTES]

    def text(self) -> str:
        tail = bytes(self.tail[-TAIL_BYTES:]) if self.tail else b""
        omitted = self.total - len(self.head) - len(tail)
        head_text = self.head.decode("utf-8", errors="replace")
        if omitted <= 0:
            return (bytes(self.head) + tail).decode("utf-8", errors="replace")
        tail_text = tail.decode("utf-8", errors="replace")
        marker = f"\n\n... [{omitted} bytes of output omitted; showing the first and last {HEAD_BYTES} bytes] ...\n\n"
        return head_text + marker + tail_text


def _shell() -> str:
    """Always bash, never `$SHELL`: the tool says it runs bash, the model writes bash, and the permission
    rules parse bash. Under zsh, `git status =(touch P)` would run code an allow rule cannot see."""
    if os.access("/bin/bash", os.X_OK):
        return "/bin/bash"
    found = shutil.which("bash")
    if found is None:
        raise ToolError("Cannot run the command: bash was not found (the Bash tool needs /bin/bash or bash on PATH).")
    return found


def _env() -> dict[str, str]:
    """The user's environment, with pagers disabled: nobody can press q for `git log`."""
    env = dict(os.environ)
    env.setdefault("PAGER", "cat")
    env.setdefault("GIT_PAGER", "cat")
    env["GIT_TERMINAL_PROMPT"] = "0"
    return env


def kill_group(pid: int, sig: int) -> None:
    """Signal the whole process group led by `pid`; a group already gone is fine."""
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


async def _exited(proc: asyncio.subprocess.Process) -> int:
    """Wait for the shell itself to exit.

    Not `proc.wait()`: on Python 3.11 that also waits for the output pipe to close, which a background
    child (`server &`) holds open for as long as it lives. `returncode` is set as soon as the child
    watcher reaps the shell; polling it (5 ms, backing off to 50 ms) costs nothing noticeable.
    """
    delay = 0.005
    while proc.returncode is None:
        await asyncio.sleep(delay)
        delay = min(delay * 2, 0.05)
    return proc.returncode


async def _terminate(proc: asyncio.subprocess.Process, run: str) -> None:
    """SIGTERM the group and every process of the run that left it (`setsid …`, see core.descendants),
    give them KILL_GRACE_S, then SIGKILL all of them (stragglers included) and reap the shell.

    SIGKILL is sent in a `finally`, so even a second cancellation during the grace period kills.
    """
    escaped = descendants.of_run(proc.pid, run)  # before the shell goes: its tree still links them
    kill_group(proc.pid, signal.SIGTERM)
    descendants.signal_all(escaped, signal.SIGTERM)
    try:
        await asyncio.wait_for(_exited(proc), KILL_GRACE_S)
        await asyncio.wait_for(_ended(escaped), KILL_GRACE_S)
    except asyncio.TimeoutError:
        pass
    finally:
        kill_group(proc.pid, signal.SIGKILL)
        descendants.signal_all({**escaped, **descendants.of_run(proc.pid, run)}, signal.SIGKILL)
    try:
        await asyncio.wait_for(_exited(proc), KILL_GRACE_S)
    except asyncio.TimeoutError:
        pass


class BashTool(Tool):
    name = "Bash"
    description = DESCRIPTION
    input_schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            "command": {"type": "string", "minLength": 1, "description": "The command to execute"},
            "timeout": {
                "type": "integer",
                "minimum": 1,
                "maximum": MAX_TIMEOUT_MS,
                "description": f"Optional timeout in milliseconds (max {MAX_TIMEOUT_MS})",
            },
            "description": {
                "type": "string",
                "description": "Clear, concise description of what this command does in 5-10 words",
            },
        },
        "required": ["command"],
        "additionalProperties": False,
    }
    read_only = False

    def rerunnable(self, tool_input: dict[str, Any]) -> bool:
        """Only a command that just looks at things (never one that writes, deletes or runs code)."""
        return is_read_only_command(tool_input.get("command"))

    def paths(self, tool_input: dict[str, Any]) -> list[str]:
        return []

    def summary(self, tool_input: dict[str, Any]) -> str:
        value = tool_input.get("command")
        return value if isinstance(value, str) else ""

    def permission_preview(self, tool_input: dict[str, Any], ctx: ToolContext) -> str:
        command = tool_input.get("command")
        if not isinstance(command, str):
            return ""
        lines = [f"$ {command}"]
        description = tool_input.get("description")
        if isinstance(description, str) and description.strip():
            lines.append(f"# {description.strip()}")
        timeout = tool_input.get("timeout")
        seconds = (timeout if isinstance(timeout, int) else DEFAULT_TIMEOUT_MS) / 1000
        lines.append(f"(runs in {ctx.workspace}, timeout {seconds:g} s)")
        return "\n".join(lines)

    async def call(self, tool_input: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        command: str = tool_input["command"]
        timeout_ms = min(int(tool_input.get("timeout") or DEFAULT_TIMEOUT_MS), MAX_TIMEOUT_MS)
        return await run_command(command, Path(ctx.workspace), timeout_ms / 1000)


async def _ended(found: descendants.Found) -> None:
    while any(descendants.alive(pid) for pid in found):
        await asyncio.sleep(0.01)


async def run_command(command: str, cwd: Path, timeout_s: float) -> ToolOutput:
    """Run `command` and turn every outcome (exit code, timeout, missing folder) into a ToolOutput.

    On cancellation the whole process group is killed before CancelledError propagates.
    """
    if not cwd.is_dir():
        raise ToolError(f"Cannot run the command: the workspace folder {cwd} does not exist.")
    run = descendants.new_run()
    spawn = asyncio.ensure_future(asyncio.create_subprocess_exec(
        _shell(), "-c", command,
        cwd=str(cwd),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        start_new_session=True,
        env=descendants.with_mark(_env(), run),
    ))
    try:
        # Shielded: a cancel that lands while asyncio is still wiring the pipes of a shell that already
        # runs would otherwise kill only the shell and orphan its children (the whole group must go).
        proc = await asyncio.shield(spawn)
    except asyncio.CancelledError:
        try:
            proc = await spawn
        except OSError:
            raise asyncio.CancelledError from None
        await asyncio.shield(_terminate(proc, run))
        raise
    except OSError as error:
        raise ToolError(f"Cannot start the shell: {error.strerror or error}") from None
    process_groups.track(proc.pid)  # ended on exit and on SIGTERM/SIGHUP, `cmd &` children included
    capture = _Capture()
    assert proc.stdout is not None
    reader = asyncio.create_task(_read_all(proc.stdout, capture))
    started = time.monotonic()
    timed_out = False
    detached = False
    try:
        try:
            await asyncio.wait_for(_exited(proc), timeout_s)
        except asyncio.TimeoutError:
            timed_out = True
            await _terminate(proc, run)
        try:
            await asyncio.wait_for(asyncio.shield(reader), DRAIN_GRACE_S)
        except asyncio.TimeoutError:
            detached = True  # a background child still holds the pipe: stop reading, leave it running
            reader.cancel()
            _close_pipes(proc)
    except asyncio.CancelledError:
        reader.cancel()
        await asyncio.shield(_terminate(proc, run))
        raise
    finally:
        if not reader.done():
            reader.cancel()
    elapsed = time.monotonic() - started
    output = capture.text().rstrip()
    if detached:
        output += "\n\n(The shell exited, but a background process kept the output open; later output is not shown.)"
    if timed_out:
        note = f"Command timed out after {timeout_s * 1000:.0f} ms ({elapsed:.1f} s) and was killed, with every process it started."
        return ToolOutput(f"{output}\n\n{note}" if output else note, True)
    code = proc.returncode
    if code is not None and code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        note = f"Command was killed by {name}."
        return ToolOutput(f"{output}\n\n{note}" if output else note, True)
    if code:
        note = f"Exit code {code}"
        return ToolOutput(f"{output}\n\n{note}" if output else note, True)
    return ToolOutput(output or "(no output)")


def _close_pipes(proc: asyncio.subprocess.Process) -> None:
    """Close our end of the output pipe now, not at garbage collection (after the loop may be closed).

    The transport is private API; closing it after the shell exited only closes the pipes.
    """
    transport = getattr(proc, "_transport", None)
    if transport is not None:
        transport.close()


async def _read_all(stream: asyncio.StreamReader, capture: _Capture) -> None:
    while True:
        data = await stream.read(CHUNK)
        if not data:
            return
        capture.add(data)
