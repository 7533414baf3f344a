"""A crash, reported politely: one line on stderr, the details in a private log file.

Why: a traceback holds the conversation in its locals (prompts, tool results, file contents, the
environment with its keys) and often in its messages. Printed on the terminal it lands in scroll-back,
screen shares and pasted bug reports, and a crash of a Textual app printed ~2,000 lines of it. Every face
(the TUI, `watch`, `replay`, `serve`'s tabs, `-p`) reports a crash here instead: stderr gets one line that
names the exception's type and a file, `crash-<time>-<pid>.log` in the log folder (`core.paths.log_dir`,
the folder 0700, the file 0600, created afresh so no link is followed). The file says where and what:
files, line numbers, functions and our own source lines, each exception's class, and its message
cleaned of conversation and secrets (`crash_text.py`). Never locals: they held the prompt.

Standard library only at the top: `cli.py` imports this on the way out of a crash, and the TUI's app.
"""

from __future__ import annotations

import os
import platform
import sys
import time
import traceback
from pathlib import Path
from typing import TextIO

from tui_agent.core.crash_text import open_conversation, safe_message

CRASH_EXIT = 1
CHAIN_DEPTH = 8  # causes, contexts and an exception group's members followed this deep


def crash_details(error: BaseException) -> str:
    """Where `error` happened and what it was (its causes too), without locals or conversation."""
    conversation = open_conversation()
    lines: list[str] = []
    _describe(_inner(error), conversation, lines, set(), 0)
    return "".join(lines)


def _describe(error: BaseException, conversation: str, lines: list[str], seen: set[int], depth: int) -> None:
    """Python's own order: the cause or context first, then "The above exception…", then this one."""
    seen.add(id(error))
    earlier = error.__cause__ or (None if error.__suppress_context__ else error.__context__)
    if earlier is not None and id(earlier) not in seen and depth < CHAIN_DEPTH:
        _describe(earlier, conversation, lines, seen, depth + 1)
        lines.append("\nThe above exception was the direct cause of the following exception:\n\n"
                     if error.__cause__ is not None else
                     "\nDuring handling of the above exception, another exception occurred:\n\n")
    try:
        frames = traceback.extract_tb(error.__traceback__)  # no locals: `capture_locals` stays off
        lines += ["Traceback (most recent call last):\n", *frames.format()] if frames else []
    except Exception:  # noqa: BLE001 - a frame that cannot be read: the rest still helps
        lines.append("(the frames could not be read)\n")
    kind = type(error)
    lines.append(f"{kind.__module__}.{kind.__qualname__}: {safe_message(error, conversation)}\n")
    for index, member in enumerate(getattr(error, "exceptions", ()) or ()):
        if isinstance(member, BaseException) and id(member) not in seen and depth < CHAIN_DEPTH:
            lines.append(f"\n+-- member {index + 1} of the exception group:\n")
            _describe(member, conversation, lines, seen, depth + 1)


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
            handle.write(f"argv: {sys.argv[:1]} (arguments left out)\n")
            handle.write(f"tui-agent {_version()}, Python {platform.python_version()}, {sys.platform}\n")
            handle.write("(no locals; messages cleaned of conversation text and secrets)\n\n")
            handle.write(crash_details(error))
        return path
    except Exception:  # noqa: BLE001 - a crash report must never raise a second crash
        return None


def _version() -> str:
    try:
        from tui_agent import __version__

        return __version__
    except Exception:  # noqa: BLE001
        return "?"


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
