"""Finding and watching only the processes a test started (issue 21): never `pgrep`/`pkill` on a name.

A name or a pattern also matches the user's own tui-agent, or an orphan left by an earlier run, and a
test that signals it kills the wrong process and fails for the wrong reason. A test starts the process
itself (`Popen.pid`) or asks tmux for its pane's (`pane_pid`), and follows children from there.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path


def _stat_fields(pid: int) -> list[str] | None:
    """/proc/PID/stat after the command name (which may hold spaces and parentheses)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def start_time(pid: int) -> int | None:
    """When the process started (clock ticks since boot): with the pid, it names one process for good."""
    fields = _stat_fields(pid)
    return int(fields[19]) if fields and len(fields) > 19 else None


def gone(pid: int, started: int | None = None) -> bool:
    """No such process, only a zombie left for init to reap, or (given `started`) another process that
    reuses the number."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return True  # not ours: whatever we started has gone and the number was reused
    fields = _stat_fields(pid)
    if fields is None or fields[0] == "Z":
        return True
    return started is not None and start_time(pid) != started


def children(pid: int) -> list[int]:
    """The direct children of `pid` (every thread's list)."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found += [int(x) for x in (task / "children").read_text().split()]
        except (OSError, ValueError):
            continue
    return sorted(set(found))


def pane_pid(socket: str, target: str = "agent") -> int:
    """The process tmux started in the pane (the shell running the pane's command, or what it exec'd)."""
    out = subprocess.run(["tmux", "-L", socket, "display", "-p", "-t", target, "#{pane_pid}"],
                         capture_output=True, text=True, check=True).stdout.strip()
    return int(out)
