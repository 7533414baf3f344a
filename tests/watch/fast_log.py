"""A synthetic Claude Code log, and a writer thread that grows it fast (the shape `bench/bench_watch_memory.py`
writes: one Read per call, a tool result of about 1.6k characters), for the watch's speed and stop tests."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

MODEL = "claude-sonnet-4-5-20250929"


def call_lines(i: int) -> list[str]:
    """The lines of call `i` (0-based; call 0 also holds the opening prompt)."""
    def record(n: int, **fields) -> str:
        fields.update(uuid=f"u{i}-{n}", sessionId="s1", timestamp=f"2026-12-01T10:{(i // 60) % 60:02d}:{i % 60:02d}.000Z")
        return json.dumps(fields)

    lines = [record(0, type="user", message={"role": "user", "content": "Work through the files, please."})] if i == 0 else []
    usage = {"input_tokens": 3, "cache_creation_input_tokens": 500, "cache_read_input_tokens": 8_000 + 450 * i,
             "output_tokens": 40}
    for n, block in enumerate(({"type": "text", "text": f"Reading file {i}."},
                               {"type": "tool_use", "id": f"t{i}", "name": "Read",
                                "input": {"file_path": f"src/file{i}.py"}}), 1):
        lines.append(record(n, type="assistant", requestId=f"req_{i}", message={
            "id": f"msg_{i}", "type": "message", "role": "assistant", "model": MODEL, "content": [block],
            "usage": usage}))
    lines.append(record(3, type="user", message={"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": f"t{i}", "content": f"def f{i}(x):\n    return x + {i}\n" * 60}]}))
    return lines


def log_text(first: int, end: int) -> str:
    return "".join(line + "\n" for i in range(first, end) for line in call_lines(i))


def write_log(path: Path, calls: int) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        for at in range(0, calls, 500):
            handle.write(log_text(at, min(at + 500, calls)))


class FastWriter(threading.Thread):
    """Appends `calls` calls to `path` at about `rate` calls a second (a batch every 10 ms), cut mid-line."""

    def __init__(self, path: Path, calls: int, rate: float, start_at: int = 0) -> None:
        super().__init__(daemon=True)
        self.path, self.calls, self.rate, self.start_at = path, calls, rate, start_at
        self.written = start_at
        self.stop = threading.Event()

    def run(self) -> None:
        started = time.monotonic()
        pending = b""
        with open(self.path, "ab") as handle:
            while self.written < self.start_at + self.calls and not self.stop.is_set():
                due = min(self.start_at + self.calls, self.start_at + int((time.monotonic() - started) * self.rate) + 1)
                if due > self.written:
                    data = pending + log_text(self.written, due).encode()
                    cut = len(data) - 7 if due < self.start_at + self.calls else len(data)  # a line left unfinished
                    handle.write(data[:cut])
                    handle.flush()
                    pending = data[cut:]
                    self.written = due
                self.stop.wait(0.01)
            handle.write(pending)
