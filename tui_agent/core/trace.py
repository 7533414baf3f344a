"""`TRACE=1` diagnostics: one `[trace] stage k=v k=v` line per event, in insertion order.

Headless mode writes trace lines to stderr; the TUI points the sink at a log file it names (a line on the
Textual screen would corrupt it). Callers never pass secrets or file contents, only sizes and names.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Callable, TextIO

_sink: Callable[[str], None] | None = None


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


def format_line(stage: str, fields: dict[str, Any]) -> str:
    parts = [f"[trace] {stage}"]
    parts += [f"{key}={value}" for key, value in fields.items()]
    return " ".join(parts)


def trace(stage: str, **fields: Any) -> None:
    if not enabled():
        return
    line = format_line(stage, fields)
    if _sink is not None:
        _sink(line)
    else:
        print(line, file=sys.stderr, flush=True)
