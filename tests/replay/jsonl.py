"""Small synthetic Claude Code logs, written line by line the way Claude Code writes them (one line per
content block of a response, usage on each, parallel tool results on lines of their own)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

MODEL = "claude-sonnet-4-5-20250929"


class Log:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self._n = 0

    def raw(self, text: str) -> "Log":
        self.lines.append(text)
        return self

    def record(self, **record: Any) -> "Log":
        self._n += 1
        record.setdefault("uuid", f"u{self._n}")
        record.setdefault("sessionId", "s1")
        self.lines.append(json.dumps(record))
        return self

    def user(self, content: Any, **extra: Any) -> "Log":
        return self.record(type="user", message={"role": "user", "content": content}, **extra)

    def assistant(self, blocks: list[dict], *, input_tokens: int, model: str = MODEL, **extra: Any) -> "Log":
        """One API response: each block on its own line, all sharing the message id and its usage."""
        self._n += 1
        mid = f"msg_{self._n}"
        usage = {"input_tokens": 3, "cache_creation_input_tokens": 100,
                 "cache_read_input_tokens": max(input_tokens - 103, 0), "output_tokens": 20}
        for block in blocks:
            self.record(type="assistant", requestId=f"req_{self._n}",
                        message={"id": mid, "type": "message", "role": "assistant", "model": model,
                                 "content": [block], "usage": usage}, **extra)
        return self

    def result(self, tool_id: str, content: Any, **extra: Any) -> "Log":
        return self.user([{"type": "tool_result", "tool_use_id": tool_id, "content": content}], **extra)

    def write(self, path: Path) -> Path:
        path.write_text("\n".join(self.lines) + "\n", encoding="utf-8")
        return path


def read(tool_id: str, path: str) -> dict:
    return {"type": "tool_use", "id": tool_id, "name": "Read", "input": {"file_path": path}}


def text(value: str) -> dict:
    return {"type": "text", "text": value}


def rounds(log: Log, n: int, start_tokens: int = 5_000, prefix: str = "r", size: int = 3_000) -> Log:
    """`n` tool rounds of one Read each, the prompt growing by about `size` chars/4 a round."""
    tokens = start_tokens
    for i in range(n):
        log.assistant([text(f"Reading file {i}."), read(f"{prefix}{i}", f"src/file{i}.py")], input_tokens=tokens)
        log.result(f"{prefix}{i}", f"line {i}\n" * (size // 7))
        tokens += size // 4 + 60
    return log


def basic(path: Path, n: int = 6) -> Path:
    log = Log().user("Port the parser to Rust, please.")
    rounds(log, n)
    log.assistant([text("Done: the parser is ported.")], input_tokens=5_000 + n * 820)
    return log.write(path)
