"""A crash, reported politely: one line on stderr, the details in a private log file.

Why: a traceback with locals holds the conversation (prompts, tool results, file contents). Printed on
the terminal it lands in scroll-back, screen shares and pasted bug reports, and a crash of a Textual
app printed ~2,000 lines of it. Every face (the TUI, `watch`, `replay`, `serve`'s tabs, `-p`) reports a
crash here instead: the whole traceback with its locals goes to `crash-<time>-<pid>.log` in the log
folder (`core.paths.log_dir`, the folder 0700, the file 0600, created afresh so no link is followed),
and stderr gets one line that names the exception's type and that file, never its message (a message
may quote content too).

Standard library only at the top: `cli.py` imports this on the way out of a crash, and the TUI's app.
"""

from __future__ import annotations

import os
import sys
import time
import traceback
from pathlib import Path
from typing import TextIO

CRASH_EXIT = 1
LOCAL_REPR_CHARS = 2_000  # one local's repr in the log (a whole history is not useful there)


def crash_details(error: BaseException) -> str:
    """The traceback of `error` (its causes too) with each frame's locals, for the log file."""
    error = _inner(error)
    try:
        frames = traceback.TracebackException.from_exception(error, capture_locals=True)
        lines = list(frames.format())
    except Exception:  # a local whose repr fails: the traceback without locals still helps
        lines = traceback.format_exception(type(error), error, error.__traceback__)
    return "".join(_shorten(line) for line in lines)


def _shorten(line: str) -> str:
    if len(line) <= LOCAL_REPR_CHARS:
        return line
    return line[:LOCAL_REPR_CHARS] + f" … ({len(line) - LOCAL_REPR_CHARS:,} more characters)\n"


def write_crash_log(error: BaseException, directory: Path | None = None) -> Path | None:
    """Write `error`'s details to a new 0600 file in the log folder; None when it cannot be written."""
    try:
        if directory is None:
            from tui_agent.core.paths import log_dir

            directory = log_dir()
        from tui_agent.core.paths import ensure_dir

        ensure_dir(directory)
        stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
        path = directory / f"crash-{stamp}-{os.getpid()}.log"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
        with os.fdopen(fd, "w", encoding="utf-8", errors="replace") as handle:
            handle.write(f"tui-agent crashed at {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}\n")
            handle.write(f"argv: {sys.argv[:1]} (arguments left out)\n\n")
            handle.write(crash_details(error))
        return path
    except Exception:  # noqa: BLE001 - a crash report must never raise a second crash
        return None


def _inner(error: BaseException) -> BaseException:
    """A failed Textual worker's own error (`WorkerFailed` is made, not raised: it has no traceback)."""
    inner = getattr(error, "error", None)
    return inner if isinstance(inner, BaseException) and type(error).__name__ == "WorkerFailed" else error


def crash_name(error: BaseException) -> str:
    """The exception's type as the one line names it (a failed Textual worker: the error inside it)."""
    return type(_inner(error)).__name__


def crash_line(error: BaseException, path: Path | None) -> str:
    where = f"details in {path}" if path is not None else "the details could not be written to the log folder"
    return f"tui-agent crashed: {crash_name(error)}; {where}"


def report_crash(error: BaseException, stream: TextIO | None = None, directory: Path | None = None) -> int:
    """Write the details file, print the one line, and give the exit code of a crash."""
    line = crash_line(error, write_crash_log(error, directory))
    try:
        print(line, file=stream or sys.stderr, flush=True)
    except (OSError, ValueError):  # stderr closed: the file is all there is
        pass
    return CRASH_EXIT
