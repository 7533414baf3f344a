"""`TRACE=1` diagnostics: one `[trace] stage k=v k=v ts=… session=…` line per event, in insertion order.

Headless mode writes trace lines to stderr; the TUI points the sink at a log file it names (a line on the
Textual screen would corrupt it). Every TUI process appends to the same log file, so each line ends with
its UTC time and the session id it belongs to (after the caller's fields: the stage and key order stay as
the seed defined them, and `grep 'compact.run before='` keeps working). The session is a context
variable, so two sessions in one process (tests, a future web face) each stamp their own lines.
Callers never pass secrets or file contents, only sizes and names.
"""

from __future__ import annotations

import os
import sys
from contextvars import ContextVar
from datetime import datetime, timezone
from typing import Any, Callable, TextIO

_sink: Callable[[str], None] | None = None
_session: ContextVar[str] = ContextVar("trace_session", default="-")


def bind_session(session_id: str) -> None:
    """Stamp this context's trace lines (and those of tasks started from it) with `session_id`."""
    _session.set(session_id)


def enabled() -> bool:
    """Exactly `TRACE=1` turns tracing on (`true` does not; the seed's AC-TR1)."""
    return os.environ.get("TRACE") == "1"


def set_sink(sink: Callable[[str], None] | None) -> None:
    """Send trace lines somewhere other than stderr (the TUI uses its log file); None restores stderr."""
    global _sink
    _sink = sink


def file_sink(stream: TextIO) -> Callable[[str], None]:
    def write(line: str) -> None:
        stream.write(line + "\n")
        stream.flush()

    return write


def format_line(stage: str, fields: dict[str, Any], *, when: datetime | None = None,
                session: str | None = None) -> str:
    stamp = (when or datetime.now(timezone.utc)).astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
    parts = [f"[trace] {stage}"]
    parts += [f"{key}={value}" for key, value in fields.items()]
    parts += [f"ts={stamp}", f"session={session or _session.get()}"]
    return " ".join(parts)


def trace(stage: str, **fields: Any) -> None:
    """Write one trace line (only with `TRACE=1`). Callers pass sizes and names; a field can still hold a
    server's words (an error body that echoes the key): each line passes the one redaction."""
    if not enabled():
        return
    from tui_agent.core.redact import redact

    line = redact(format_line(stage, fields))
    if _sink is not None:
        _sink(line)
    else:
        print(line, file=sys.stderr, flush=True)
