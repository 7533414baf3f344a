"""The proxy's record of each exchange: one JSON line per request, in a file only its owner can read.

What is written: the request body (redacted like the journal: secret-named environment values, key shapes,
and the very keys the request carried in its headers), as what it adds to a recent request of the same
conversation when it extends one (`core/recordings/proxy_delta.py`: the recording grows with the session, not
with its square), and what the answer said of the call (usage as returned, stop reason, model, error, status,
timings, the reply). What is never written: a header. The file is created 0600 in a 0700 folder of the data
dir (`proxy/`), so a recording can be replayed (`tui-agent replay FILE`) and followed (`tui-agent watch FILE`)
like an agent's own log.

The request body reaches the recorder spooled (in memory while small, else in an unnamed 0600 file beside the
recordings), never held whole by the proxy. Writing happens on one worker thread, in the order the exchanges
end, after the answer was passed on: reading and redacting a large body is CPU the next call's first byte must
not wait for, and one body at a time is parsed.
"""

from __future__ import annotations

import json
import os
import secrets as random
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from tui_agent.core.journal.redact import Secrets, redact_record, secret_values
from tui_agent.core.recordings.proxy_delta import DeltaWriter

RECORD_TYPE = "tui-agent-proxy"  # the first line's type: how a reader knows a recording
VERSION = 2  # 2: requests may be deltas (`request_delta`); 1: every request whole (still read)
MAX_PARSED_BYTES = 64 * 1024 * 1024  # a request body larger than this is recorded by its size only
WRITE_PIECE = 1024 * 1024  # characters encoded and written at a time
LARGE_LINE = 8 * 1024 * 1024  # a request body over this is written piece by piece
AUTH_HEADERS = ("authorization", "x-api-key", "api-key", "proxy-authorization", "x-goog-api-key", "cookie")


@dataclass
class Exchange:
    """One request that passed, and what its answer said."""

    call: int
    api: str
    method: str
    path: str
    request: Any  # the JSON body (None when it was not JSON)
    keys: list[str] = field(default_factory=list)  # the values of the request's auth headers (never written)
    status: int = 0
    ms: float = 0.0
    ttfb_ms: float | None = None
    usage: dict[str, Any] = field(default_factory=dict)
    stop_reason: str | None = None
    model: str | None = None
    error: str | None = None
    outcome: str = "complete"  # or client-disconnected, upstream-dropped, upstream-unreachable
    reply: list[dict[str, Any]] = field(default_factory=list)
    time: float = field(default_factory=time.time)
    spool: Any = None  # the request body as it came (a SpooledTemporaryFile; read and closed when recorded)
    size: int = 0  # the request body's bytes

    def apply(self, outcome: Any) -> None:
        """What the answer said (`usage.Outcome`)."""
        self.usage, self.stop_reason, self.model = outcome.usage, outcome.stop_reason, outcome.model
        self.reply = outcome.reply
        self.error = self.error or outcome.error

    def read_body(self) -> None:
        """The spooled body parsed into `request` (None when it is not JSON or too large), the spool closed."""
        spool, self.spool = self.spool, None
        if spool is None:
            return
        try:
            size = self.size = spool.seek(0, 2)
            spool.seek(0)
            if size > MAX_PARSED_BYTES:
                self.error = self.error or f"request of {size:,} bytes: too large to record"
                return
            data = spool.read()
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                return
            del data  # (the bytes go before the parse: a large body is not held three times)
            self.request = _json(text)
        finally:
            spool.close()

    def record(self, env_secrets: list[str]) -> dict[str, Any]:
        """The line to write, redacted whole (every string, keys too: the usage and model an upstream
        returned are as untrusted as the body)."""
        hidden = Secrets.of(sorted(set(env_secrets) | {k for k in self.keys if len(k) >= 8}, key=len, reverse=True))
        body = self.request
        return redact_record({
            "type": "exchange", "call": self.call, "api": self.api, "method": self.method, "path": self.path,
            "time": self.time, "status": self.status, "ms": round(self.ms, 2),
            "ttfb_ms": None if self.ttfb_ms is None else round(self.ttfb_ms, 2), "model": self.model or (
                body.get("model") if isinstance(body, dict) else None),
            "usage": self.usage, "stop_reason": self.stop_reason, "error": self.error, "outcome": self.outcome,
            "reply": self.reply, "request": body}, hidden)


def _json(body: bytes | str) -> Any:
    try:
        return json.loads(body) if body else None
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None


def auth_values(headers: Any) -> list[str]:
    """The secrets a request's headers carry: each value whole, the token without its scheme word (`Bearer`,
    `bearer`, `Basic`...), and for Basic also what its base64 says (`user:password`, and the password)."""
    out = []
    for name, raw in headers.items():  # (every one of a repeated header, its name in any case)
        value = str(raw).strip()
        if name.lower() not in AUTH_HEADERS or not value:
            continue
        out.append(value)
        scheme, _, token = value.partition(" ")
        token = token.strip()
        if token:
            out.append(token)
            if scheme.lower() == "basic":
                out += _basic_secrets(token)
    return out


def _basic_secrets(token: str) -> list[str]:
    import base64
    import binascii

    try:
        pair = base64.b64decode(token, validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        return []
    return [pair, pair.partition(":")[2]] if ":" in pair else [pair]


def new_recording(folder: Path) -> Path:
    """A new recording file, created 0600 (never an existing file: O_EXCL, no symlink followed)."""
    from tui_agent.core.paths import ensure_dir

    ensure_dir(folder)
    name = time.strftime("proxy-%Y%m%d-%H%M%S-", time.gmtime()) + random.token_hex(3) + ".jsonl"
    path = folder / name
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND | getattr(os, "O_NOFOLLOW", 0), 0o600)
    os.close(fd)
    return path


class Recorder:
    """Appends exchanges to `path` on one worker thread; `on_record(record)` runs after each write."""

    def __init__(self, path: Path, on_record: Callable[[dict[str, Any]], None] | None = None) -> None:
        self.path = path
        self.on_record = on_record
        self.env_secrets = secret_values(os.environ)
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="proxy-recorder")
        self._lock = threading.Lock()
        self.calls = 0
        self.deltas = DeltaWriter()
        self._write({"type": RECORD_TYPE, "version": VERSION, "started": time.time()})

    def next_call(self) -> int:
        with self._lock:
            self.calls += 1
            return self.calls

    def spool(self, in_memory: int) -> Any:
        """Where a request body goes as it arrives: memory up to `in_memory` bytes, then an unnamed file in
        the recordings' folder (created 0600, unlinked at once)."""
        import tempfile

        return tempfile.SpooledTemporaryFile(max_size=in_memory, dir=self.path.parent)

    def submit(self, exchange: Exchange) -> None:
        self._pool.submit(self._finish, exchange)

    def _finish(self, exchange: Exchange) -> None:
        exchange.read_body()
        record = exchange.record(self.env_secrets)
        exchange.request = None  # (the parsed body goes with this call, not with the exchange's last reference)
        self._write(self.deltas.encode(record), large=exchange.size > LARGE_LINE)
        if self.on_record is not None:
            self.on_record(record)

    def _write(self, record: dict[str, Any], large: bool = False) -> None:
        """One line. A `large` one (a request body of MBs) is serialised and written piece by piece, never
        held whole a second time; the others at once (the C encoder: a line of many small values is fast)."""
        encoder = json.JSONEncoder(ensure_ascii=False)
        pieces = encoder.iterencode(record) if large else [encoder.encode(record)]
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | getattr(os, "O_NOFOLLOW", 0))
        try:
            for piece in (*pieces, "\n"):
                for at in range(0, len(piece), WRITE_PIECE):
                    data = memoryview(piece[at:at + WRITE_PIECE].encode("utf-8", errors="replace"))
                    while data:
                        data = data[os.write(fd, data):]
        finally:
            os.close(fd)

    def close(self) -> None:
        self._pool.shutdown(wait=True)
