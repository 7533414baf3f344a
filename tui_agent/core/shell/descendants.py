"""Every process a Bash command started, also those that left its process group (`setsid`, a daemon).

Killing the command's process group (process_groups, tools/bash.py) misses a child that started its
own session: `setsid server &` outlived the timeout, Esc and tui-agent's exit. So each Bash command
runs with an environment variable naming its run (`TUI_AGENT_BASH_RUN=<agent pid>-<n>`), which every
process it starts inherits, whatever session or group it moves to and whoever its parent becomes.
On Linux the processes of a run are then found through /proc: everything under the shell's pid, every
process carrying the run's mark, and everything under those.

Why not PR_SET_CHILD_SUBREAPER: orphans re-parented to tui-agent become its children, and the ones
that exit on their own stay zombies unless we reap them; reaping them without knowing which children
asyncio (or an MCP client) is waiting for would steal those exit codes. The mark needs no reaping.

What this cannot catch (README, Security model): a process that clears its environment *and* leaves
the shell's tree (`env -i setsid -f cmd`), one running as another user (sudo), and anything at all
when tui-agent itself is killed with SIGKILL. Elsewhere than Linux (no /proc) only the group is ended.
"""

from __future__ import annotations

import itertools
import os
from pathlib import Path

MARK = "TUI_AGENT_BASH_RUN"
PROC = Path("/proc")
_runs = itertools.count(1)


def new_run() -> str:
    """A mark value unique to one Bash command of this tui-agent process."""
    return f"{os.getpid()}-{next(_runs)}"


def _stat(pid: int | str) -> tuple[int, int] | None:
    """(parent pid, start time in clock ticks) of a live process; None when it is gone or unreadable."""
    try:
        fields = (PROC / str(pid) / "stat").read_bytes().rsplit(b")", 1)[1].split()
        return int(fields[1]), int(fields[19])
    except (OSError, IndexError, ValueError):
        return None


def _table() -> dict[int, tuple[int, int]]:
    """pid → (parent pid, start time) for every process /proc shows (empty where there is no /proc)."""
    table: dict[int, tuple[int, int]] = {}
    try:
        entries = list(os.scandir(PROC))
    except OSError:
        return table
    for entry in entries:
        if entry.name.isdigit() and (stat := _stat(entry.name)) is not None:
            table[int(entry.name)] = stat
    return table


def _marked(pid: int, mark: bytes, prefix: bool) -> bool:
    try:
        environ = (PROC / str(pid) / "environ").read_bytes()
    except OSError:
        return False  # gone, or another user's
    for entry in environ.split(b"\0"):
        if entry == mark or (prefix and entry.startswith(mark)):
            return True
    return False


def _under(roots: set[int], table: dict[int, tuple[int, int]]) -> set[int]:
    """`roots` and all their descendants in `table`."""
    children: dict[int, list[int]] = {}
    for pid, (parent, _) in table.items():
        children.setdefault(parent, []).append(pid)
    found: set[int] = set()
    stack = [pid for pid in roots if pid in table]
    while stack:
        pid = stack.pop()
        if pid not in found:
            found.add(pid)
            stack.extend(children.get(pid, ()))
    return found


Found = dict[int, int]  # pid → start time: a pid reused by a later process is never signalled


def _find(roots: set[int], mark: str, prefix: bool) -> Found:
    table = _table()
    needle = f"{MARK}={mark}".encode()
    me = os.getpid()
    marked = {pid for pid in table if pid != me and _marked(pid, needle, prefix)}
    return {pid: table[pid][1] for pid in _under(roots | marked, table) if pid != me}


def of_run(shell_pid: int, run: str) -> Found:
    """The live processes of one Bash command: its shell's tree and every process with its mark."""
    return _find({shell_pid}, run, prefix=False)


def of_agent() -> Found:
    """The live processes of every Bash command this tui-agent process ran (for exit)."""
    return _find(set(), f"{os.getpid()}-", prefix=True)


def signal_all(found: Found, sig: int) -> None:
    """Signal each process found that is still the same process (same pid *and* start time)."""
    for pid, started in found.items():
        stat = _stat(pid)
        if stat is None or stat[1] != started:
            continue
        try:
            os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


def alive(pid: int) -> bool:
    """Still running (a zombie waiting for its parent counts as ended)."""
    try:
        state = (PROC / str(pid) / "stat").read_bytes().rsplit(b")", 1)[1].split()[0]
    except (OSError, IndexError):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return not PROC.is_dir()
    return state != b"Z"


def with_mark(env: dict[str, str], run: str) -> dict[str, str]:
    """`env` with the run's mark set (what the shell and all it starts inherit)."""
    return {**env, MARK: run}

