"""The process groups Bash started, so that nothing it ran outlives tui-agent.

Each Bash command runs in its own session (hence its own process group, led by the shell). `server &`
keeps running in that group after the shell exits, and a command still running when tui-agent gets
SIGTERM or SIGHUP (a closed terminal, `kill`, a CI timeout) used to be left behind. Every group is
recorded here when it starts and ended on exit (atexit) and on SIGTERM/SIGHUP (`install_signal_handlers`):
SIGTERM first, SIGKILL for whatever is left after a short grace.

Processes that left their group (`setsid server &`) are found by the mark every Bash command's
processes inherit (core.descendants) and ended with the groups.

What cannot be helped: SIGKILL of tui-agent itself runs no code, so its groups survive (README).
A group is forgotten once it has no process left, so a later process reusing that number is never
signalled.
"""

from __future__ import annotations

import atexit
import os
import signal
import threading
import time
from typing import Callable

from tui_agent.core.shell import descendants

GRACE_S = 0.5
EXIT_SIGNALS = (signal.SIGTERM, signal.SIGHUP)

_groups: set[int] = set()
_lock = threading.Lock()
_atexit_registered = False


def track(pgid: int) -> None:
    """Remember a process group we started (its leader's pid)."""
    global _atexit_registered
    with _lock:
        _prune()
        _groups.add(pgid)
        if not _atexit_registered:
            atexit.register(end_all)
            _atexit_registered = True


def tracked() -> list[int]:
    """Groups that still have at least one process."""
    with _lock:
        _prune()
        return sorted(_groups)


def _alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, but not ours to signal any more; kept, and end_all skips it quietly
    return True


def _prune() -> None:
    for pgid in [g for g in _groups if not _alive(g)]:
        _groups.discard(pgid)


def _signal_all(groups: list[int], sig: int) -> None:
    for pgid in groups:
        try:
            os.killpg(pgid, sig)
        except (ProcessLookupError, PermissionError):
            pass


def end_all(grace: float = GRACE_S) -> int:
    """SIGTERM every live group and every process a Bash command started outside its group, wait up to
    `grace` for them to go, SIGKILL the rest. Synchronous (it runs in atexit and in signal handlers);
    returns how many groups and escaped processes were signalled."""
    with _lock:
        _prune()
        groups = sorted(_groups)
    strays = descendants.of_agent()
    if not groups and not strays:
        return 0
    _signal_all(groups, signal.SIGTERM)
    descendants.signal_all(strays, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and (any(_alive(g) for g in groups)
                                           or any(descendants.alive(p) for p in strays)):
        time.sleep(0.01)
    _signal_all([g for g in groups if _alive(g)], signal.SIGKILL)
    descendants.signal_all({p: t for p, t in strays.items() if descendants.alive(p)}, signal.SIGKILL)
    with _lock:
        _prune()
    return len(groups) + len(strays)


def install_signal_handlers(loop=None, on_signal: Callable[[int], None] | None = None) -> None:
    """On SIGTERM/SIGHUP: end every tracked group, then `on_signal(signum)` (a graceful exit of the face).

    With an asyncio `loop`, the handler runs in the loop (`add_signal_handler`); without `on_signal`
    the process then dies of the signal as it would have without us.
    """

    def handle(signum: int) -> None:
        end_all()
        if on_signal is not None:
            on_signal(signum)
        else:
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)

    for sig in EXIT_SIGNALS:
        try:
            if loop is not None:
                loop.add_signal_handler(sig, handle, sig)
            else:
                signal.signal(sig, lambda signum, frame: handle(signum))
        except (ValueError, RuntimeError, NotImplementedError):
            pass  # not the main thread, or a platform without these signals
