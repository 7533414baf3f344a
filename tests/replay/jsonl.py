"""Small synthetic Claude Code logs, written line by line the way Claude Code writes them (one line per
content block of a response, usage on each, parallel tool results on lines of their own)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

MODEL = "claude-sonnet-4-5-20250929"
SYSTEM_TOKENS = 16_000  # what Claude Code's system prompt and tool list weigh, about


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


def _tool(tool_id: str, name: str, **tool_input: Any) -> dict:
    return {"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}


def _work(i: int) -> tuple[dict, Any, bool]:
    """Call `i`'s tool, its result and whether it failed: reads, writes, edits, a search and shell runs (one
    failing), on a cycle, the reads large enough that a long session grows past what compaction leaves alone."""
    path = f"src/module{i % 9}.py"
    kind = i % 6
    if kind == 0:
        return _tool(f"t{i}", "Bash", command=f"pytest tests/test_{i % 9}.py -q"), \
            f"FAILED tests/test_{i % 9}.py::test_case - AssertionError\n" * 40, i % 12 == 0
    if kind == 1:
        return _tool(f"t{i}", "Write", file_path=path, content=f"def f{i}():\n    return {i}\n" * 30), \
            f"File created successfully at: {path}", False
    if kind == 2:
        return _tool(f"t{i}", "Edit", file_path=path, old_string=f"return {i - 1}", new_string=f"return {i}"), \
            f"The file {path} has been updated.", False
    if kind == 3:
        return _tool(f"t{i}", "Grep", pattern=f"def f{i}", path="src"), f"{path}:{i}: def f{i}():\n" * 25, False
    return _tool(f"t{i}", "Read", file_path=path), "".join(f"{n:>6}\tline {n} of {path}\n" for n in range(400)), False


def long_session(path: Path, calls: int = 48, compact_at: int = 30) -> Path:
    """A deterministic Claude Code log long enough for the checks written against real sessions: `calls`
    API calls over three user prompts, Read/Write/Edit/Grep/Bash rounds (one in twelve a failing command),
    and Claude Code's own compaction (boundary + summary, naming one file) before call `compact_at`. Each
    call's logged input tokens follow its prompt's size (chars/4 plus the system prompt and tools), as a
    real tokenizer would; records are stamped 20 s apart, with a 10-minute pause before the third prompt
    (the 5-minute cache goes cold there)."""
    log = Log()
    prompt_chars = 0
    clock = [0]

    def stamp(seconds: int = 20) -> str:
        clock[0] += seconds
        minutes, second = divmod(clock[0], 60)
        return f"2026-12-01T{10 + minutes // 60:02d}:{minutes % 60:02d}:{second:02d}.000Z"

    def add_user(content: Any, seconds: int = 20, **extra: Any) -> None:
        nonlocal prompt_chars
        prompt_chars += len(json.dumps(content))
        log.user(content, timestamp=stamp(seconds), **extra)

    add_user("Port the parser to Rust, please.")
    for i in range(calls - 1):
        if i == compact_at - 1:
            log.record(type="system", subtype="compact_boundary", content="Conversation compacted",
                       parentUuid=None, timestamp=stamp(),
                       compactMetadata={"trigger": "auto", "preTokens": SYSTEM_TOKENS + prompt_chars // 4})
            prompt_chars = 0
            add_user("This session is being continued from a previous conversation that ran out of context. "
                     "Summary: the parser is half ported (src/module1.py done); module tests fail.",
                     isCompactSummary=True, isVisibleInTranscriptOnly=True)
        elif i in (16, 40):
            add_user(f"Now step {i // 16 + 1}: keep going with the next modules.", 600 if i == 40 else 20)
        use, result, failed = _work(i)
        blocks = [text(f"Step {i}: {use['name']} on the next module."), use]
        prompt_chars += len(json.dumps(blocks))
        log.assistant(blocks, input_tokens=SYSTEM_TOKENS + prompt_chars // 4, timestamp=stamp())
        answer = {"type": "tool_result", "tool_use_id": use["id"], "content": result}
        if failed:
            answer["is_error"] = True
        add_user([answer])
    log.assistant([text("Done: the parser is ported and the tests pass.")],
                  input_tokens=SYSTEM_TOKENS + prompt_chars // 4, timestamp=stamp())
    return log.write(path)
