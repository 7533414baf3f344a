"""A server's stderr, kept in its log file without letting the file grow without bound.

The child writes into a pipe; a thread copies it into `<name>.log`, and when that file passes
`max_bytes` it becomes `<name>.log.1` (replacing the previous one) and a new file starts: at most twice
`max_bytes` on disk per server, however long the server runs and however much it prints.

The SDK's own log records (e.g. "Failed to parse JSONRPC message from server" with a traceback when a
server prints junk on stdout) would go to our stderr through Python's last-resort handler, painting over
the TUI: they are kept out of it and written, one line each and without the traceback, to `sdk.log` in
the same folder, rotated the same way. Each (re)start writes a header into the server's log
(`start_log`), and a failed start reads back the last line the server wrote since (`log_tail`).
"""

from __future__ import annotations

import datetime as _dt
import logging
import os
import threading
from pathlib import Path
from typing import IO

from tui_agent.core.mcp.config import ServerConfig

MAX_LOG_BYTES = 1_000_000


class RotatingLog:
    """Append-only text log that rotates to `.1` past `max_bytes` (thread-safe)."""

    def __init__(self, path: Path, max_bytes: int = MAX_LOG_BYTES) -> None:
        self.path = path
        self.max_bytes = max_bytes
        self._lock = threading.Lock()

    def write(self, data: bytes) -> None:
        with self._lock:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                size = self.path.stat().st_size if self.path.exists() else 0
                if size and size + len(data) > self.max_bytes:
                    os.replace(self.path, self.path.with_name(self.path.name + ".1"))
                data = data[-self.max_bytes:]
                with open(self.path, "ab") as handle:
                    handle.write(data)
            except OSError:
                pass  # a log that cannot be written must not break the server or the agent


def stderr_pipe(log: RotatingLog) -> IO[bytes]:
    """A writable file for the child's stderr; a daemon thread copies what it writes into `log`.

    The caller closes the returned file once the child has been started (the child keeps its own copy),
    so the thread sees end-of-file when the child exits.
    """
    read_fd, write_fd = os.pipe()
    os.set_inheritable(write_fd, True)

    def pump() -> None:
        with os.fdopen(read_fd, "rb", buffering=0) as source:
            while True:
                try:
                    chunk = source.read(65536)
                except OSError:
                    return
                if not chunk:
                    return
                log.write(chunk)

    thread = threading.Thread(target=pump, name=f"mcp-log-{log.path.name}", daemon=True)
    thread.start()
    out = os.fdopen(write_fd, "wb", buffering=0)
    out.pump = thread  # type: ignore[attr-defined]  # joined (bounded) before a failed start reads the log
    return out


class _OneLine(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        text = f"{self.formatTime(record)} {record.levelname} {record.name}: {record.getMessage()}"
        if record.exc_info and record.exc_info[1] is not None:
            error = record.exc_info[1]
            text += f" ({type(error).__name__}: {str(error)[:200]})"
        return " ".join(text.split())[:2000]


class _LogHandler(logging.Handler):
    def __init__(self, log: RotatingLog) -> None:
        super().__init__(logging.INFO)
        self.log = log
        self.setFormatter(_OneLine())

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.log.write((self.format(record) + "\n").encode("utf-8", errors="replace"))
        except Exception:  # noqa: BLE001 - logging must never raise into the SDK
            pass


_sdk_handler: _LogHandler | None = None


def quiet_sdk_logging(folder: Path) -> None:
    """Send the `mcp` SDK's log records to `folder/sdk.log` (one line each), never to our stderr."""
    global _sdk_handler
    logger = logging.getLogger("mcp")
    logger.propagate = False
    if _sdk_handler is None:
        _sdk_handler = _LogHandler(RotatingLog(folder / "sdk.log"))
        logger.addHandler(_sdk_handler)
    else:
        _sdk_handler.log.path = folder / "sdk.log"


def start_log(log_path: Path, name: str, config: ServerConfig) -> int:
    """Open the log for a (re)start: cut it when large, write a header, return where this run begins."""
    try:
        log_path.parent.mkdir(parents=True, exist_ok=True)
        mode = "w" if log_path.exists() and log_path.stat().st_size > MAX_LOG_BYTES else "a"
        with open(log_path, mode, encoding="utf-8") as log:
            stamp = _dt.datetime.now().isoformat(timespec="seconds")
            log.write(f"\n=== {stamp} starting {name}: {config.describe()} ===\n")
            return log.tell()
    except OSError:
        return 0


def log_tail(log_path: Path, offset: int) -> str:
    """The last line the server wrote to stderr during this start (often the reason it failed)."""
    try:
        with open(log_path, encoding="utf-8", errors="replace") as log:
            log.seek(offset)
            lines = [line.strip() for line in log.read()[-4000:].splitlines() if line.strip()]
    except OSError:
        return ""
    return lines[-1][:300] if lines else ""
