"""One real Claude Code `-p` turn (three Reads, then an answer) against a Messages API fake.

The fake answers Claude Code's side requests (no Read tool: titles, topics) with a short text and its main
requests with the next Read; each request is checked for what the API would refuse (a tool_use without its
result, roles out of order: `messages.protocol_errors`), which Claude Code must never send.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from tests.fakes.fake_anthropic import FakeAnthropic, reader_model, stream_reply, text
from tests.fakes.http import Reply
from tui_agent.core.messages import protocol_errors

MODEL = "claude-sonnet-4-5"


class ClaudeCodeFake(FakeAnthropic):
    def __init__(self, files: list[str]) -> None:
        super().__init__(model=reader_model(files))
        self.usage_by_body: list[tuple[dict[str, Any], dict[str, int]]] = []

    def handle(self, path: str, headers: dict[str, str], body: Any, raw: bytes) -> Reply:
        route = path.split("?")[0]
        if headers.get("x-api-key") != self.api_key and headers.get("authorization") != f"Bearer {self.api_key}":
            return super().handle(path, headers, body, raw)  # (the 401)
        if route.endswith("/count_tokens"):
            return Reply(json_body={"input_tokens": len(raw) // 4})
        if route != "/v1/messages" or not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            self.violate(f"not a Messages request: {path}")
            return super().handle(path, headers, body, raw)
        messages = [{"role": m.get("role"), "content": m["content"] if isinstance(m.get("content"), list) else
                     [{"type": "text", "text": m.get("content")}]} for m in body["messages"]]
        for problem in protocol_errors(messages):
            self.violate(problem)
        usage = {"input_tokens": len(raw) // 4, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
        with self.lock:
            self.usage_by_body.append((body, usage))
        if not any(t.get("name") == "Read" for t in body.get("tools") or []):
            return stream_reply(text("ok"), usage=usage)
        return stream_reply(self.model(body), usage=usage)


def workspace(root: Path) -> list[str]:
    root.mkdir(parents=True, exist_ok=True)
    files = []
    for i in range(3):
        path = root / f"f{i}.txt"
        path.write_text(f"file {i} holds beta-{i}\n")
        files.append(str(path))
    return files


def run_claude_turn(exe: Path, env: dict[str, str], root: Path, timeout: float = 180) -> subprocess.CompletedProcess:
    return subprocess.run([str(exe), "-p", "Read f0.txt, f1.txt and f2.txt one by one.", "--model", MODEL],
                          cwd=root, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=timeout)
