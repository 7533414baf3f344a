"""How every face's process ends (`run_face`, around `cli.main`): with the face's code, with one line
and a private log for a crash (`core/crash.py`), and quietly when standard output's reader stopped reading.

A reader that stopped reading is no crash: `tui-agent -p … | head`, `replay --json | head -3`,
`sessions | head -1` end quietly with the face's own code (0) once `head` has what it wanted. Python
ignores SIGPIPE, so the next write to a pipe whose reader is gone raises `BrokenPipeError` (EPIPE), in
the face or in the last flush of what is still buffered (which `run_face` does itself, so the
interpreter's teardown never prints "Exception ignored … BrokenPipeError" and exits 120). It must be
standard output that was closed: the same error from another pipe (an MCP server's stdin, a socket) is
a real failure and still reported as a crash.

Standard library only at the top: `cli.py` imports this before anything else.
"""

from __future__ import annotations

import errno
import os
import sys
from typing import Callable


def run_face(face: Callable[[], int]) -> int:
    """Run `face` and give the process's exit code (see the module's docstring)."""
    try:
        code = face()
    except SystemExit:  # argparse's --help, --version and usage errors: their text is still buffered
        _flush_output()
        raise
    except Exception as error:  # noqa: BLE001 - KeyboardInterrupt passes through
        return _crashed(error, 0)
    return _flush_output(code)


def _flush_output(code: int = 0) -> int:
    """Flush what is still buffered for standard output: a reader gone shows here, not in teardown."""
    try:
        sys.stdout.flush()
    except Exception as error:  # noqa: BLE001
        return _crashed(error, code)
    return code


def _crashed(error: Exception, code: int) -> int:
    if is_closed_stdout(error):  # the reader has what it wanted: no crash, the face's own code
        quiet_exit()
        return code
    from tui_agent.core.crash import report_crash

    return report_crash(error)


def is_closed_stdout(error: BaseException) -> bool:
    """`error` (or one it carries) is an EPIPE, and standard output is a pipe or socket nobody reads."""
    return _carries_epipe(error, depth=0) and _stdout_has_no_reader()


def quiet_exit() -> int:
    """Point standard output at /dev/null, so the interpreter's own flush on exit finds nowhere to fail
    ("Exception ignored … BrokenPipeError" on stderr), and give the exit code of a normal end."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, _stdout_fd())
        finally:
            os.close(devnull)
    except (OSError, ValueError, AttributeError):  # no real stdout: nothing left to flush into it
        pass
    return 0


def _carries_epipe(error: BaseException, depth: int) -> bool:
    if depth > 8:
        return False
    if isinstance(error, BrokenPipeError) or (isinstance(error, OSError) and error.errno == errno.EPIPE):
        return True
    inner = [*getattr(error, "exceptions", ()), error.__cause__, error.__context__]
    return any(isinstance(e, BaseException) and _carries_epipe(e, depth + 1) for e in inner)


def _stdout_has_no_reader() -> bool:
    """A pipe whose read end is closed polls as POLLERR for its writer (a socket: POLLHUP)."""
    try:
        import select

        poller = select.poll()
        poller.register(_stdout_fd(), select.POLLOUT)
        return any(events & (select.POLLERR | select.POLLHUP) for _, events in poller.poll(0))
    except (OSError, ValueError, AttributeError, ImportError):
        return False


def _stdout_fd() -> int:
    """The process's own standard output (a face may have swapped `sys.stdout`: Textual does)."""
    return sys.__stdout__.fileno() if sys.__stdout__ is not None else 1
