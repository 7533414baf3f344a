"""ACP survives any frame: every malformed line gets its JSON-RPC error (-32700, -32600, -32601, -32602),
never an exit, and the agent still serves a valid request after. The fuzz runs against the real
`tui-agent acp` process over raw pipes (the SDK's client would refuse to send most of these frames)."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.acp.malformed_frames import INVALID, PARSE, malformed_frames
from tests.acp.test_acp_client import agent_env, workspace
from tui_agent.faces.acp.frames import MAX_DEPTH, Refusal, check_message, classify, explain_schema_errors, too_deep

TIMEOUT = 60


class RawAgent:
    """`tui-agent acp --model demo` on pipes: frames in, one JSON line at a time out."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process

    @classmethod
    async def start(cls, tmp_path: Path) -> "RawAgent":
        stderr = open(tmp_path / "agent.stderr", "wb")  # a file: a full pipe could never block the agent
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "tui_agent", "acp", "--model", "demo", stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE, stderr=stderr, env=agent_env(tmp_path), cwd=str(tmp_path),
            limit=64 * 1024 * 1024)
        stderr.close()
        return cls(process)

    async def send(self, line: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line + b"\n")
        await self.process.stdin.drain()

    async def message(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        line = await asyncio.wait_for(self.process.stdout.readline(), TIMEOUT)
        assert line, f"the agent closed its output (exit code {self.process.returncode})"
        return json.loads(line)

    async def response(self) -> dict[str, Any]:
        """The next response, past any notification (session updates)."""
        while "method" in (message := await self.message()):
            pass
        return message

    async def request(self, request_id: Any, method: str, params: dict[str, Any]) -> dict[str, Any]:
        await self.send(json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}).encode())
        answer = await self.response()
        assert answer["id"] == request_id, answer
        return answer

    async def close(self) -> int:
        assert self.process.stdin is not None
        self.process.stdin.close()
        return await asyncio.wait_for(self.process.wait(), TIMEOUT)


def test_each_kind_of_bad_frame_is_classified_with_the_answer_it_deserves() -> None:
    assert classify(b"{bad").code == PARSE and classify(b"\xff{}").code == PARSE
    assert classify(b"NaN").code == PARSE and classify(b'{"id":Infinity}').code == PARSE
    assert classify(b'{"jsonrpc":"2.0","id":1e999,"method":"x"}').code == PARSE
    assert classify(b"[" * 50_000).code == PARSE
    for line, reason in ((b"[]", "an empty batch"), (b"null", "not null"), (b"42", "not a number"),
                         (b'"x"', "not a string"), (b"true", "not a boolean"), (b"[1]", "batch")):
        refusal = classify(line)
        assert isinstance(refusal, Refusal) and refusal.code == INVALID and reason in refusal.reason
        assert refusal.reply()["id"] is None and refusal.reply()["error"]["message"].startswith("Invalid request: ")
    wrong_version = check_message({"jsonrpc": "1.0", "id": 7, "method": "initialize"})
    assert wrong_version is not None and wrong_version.request_id == 7  # a usable id is answered with
    assert check_message({"jsonrpc": "2.0", "id": [7], "method": "initialize"}).request_id is None
    assert check_message({"jsonrpc": "2.0", "id": 3, "error": "boom"}) is not None  # the SDK would raise on it
    for good in ({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}},
                 {"jsonrpc": "2.0", "method": "session/cancel", "params": None},
                 {"jsonrpc": "2.0", "id": "a", "result": None},
                 {"jsonrpc": "2.0", "id": 2, "error": {"code": -1, "message": "no"}}):
        assert check_message(good) is None and classify(json.dumps(good).encode()) == good
    nested: Any = 1
    for _ in range(MAX_DEPTH):
        nested = [nested]
    assert not too_deep({"a": nested[0]}) and too_deep({"a": nested})


def test_a_schema_refusal_names_the_fields_in_its_message_without_echoing_the_input() -> None:
    errors = [{"type": "missing", "loc": ["cwd"], "msg": "Field required", "input": {"x": "a whole prompt " * 999},
               "url": "https://errors.pydantic.dev"}]
    reply = {"jsonrpc": "2.0", "id": 4, "error": {"code": -32602, "message": "Invalid params", "data": {"errors": errors}}}
    explained = explain_schema_errors(reply)["error"]
    assert explained["message"] == "Invalid params: cwd: Field required"
    assert explained["data"] == {"errors": [{"type": "missing", "loc": ["cwd"], "msg": "Field required"}]}
    other = {"jsonrpc": "2.0", "id": 4, "error": {"code": -32602, "message": "Invalid params: cwd is empty"}}
    assert explain_schema_errors(other) is other


@pytest.mark.asyncio
async def test_scalars_and_null_no_longer_end_the_agent(tmp_path: Path) -> None:
    """The issue's frames: `[]`, `"x"`, `42`, `true` killed it (rc 1), `null` ended it silently."""
    agent = await RawAgent.start(tmp_path)
    for line in (b"[]", b'"x"', b"42", b"true", b"null", b"{not json"):
        await agent.send(line)
        reply = await agent.message()
        assert reply["id"] is None and reply["error"]["code"] in (INVALID, PARSE), (line, reply)
    init = await agent.request(1, "initialize", {"protocolVersion": 1})
    assert init["result"]["agentCapabilities"]["loadSession"] is True
    assert await agent.close() == 0


@pytest.mark.asyncio
async def test_a_fuzz_of_1000_malformed_frames_is_answered_frame_by_frame_and_a_prompt_still_works(
        tmp_path: Path) -> None:
    root = workspace(tmp_path)
    frames = malformed_frames(1000)
    agent = await RawAgent.start(tmp_path)
    wrong: list[str] = []
    for number, frame in enumerate(frames):
        await agent.send(frame.line)
        reply = await agent.message()
        error = reply.get("error") or {}
        if error.get("code") not in frame.codes or reply.get("id") != frame.reply_id or "result" in reply:
            wrong.append(f"#{number} {frame.kind}: {str(reply)[:300]}")
    assert wrong == []
    assert {frame.kind for frame in frames} >= {"truncated", "not an object", "deep nesting", "invalid UTF-8", "binary",
                                                "huge id", "unknown method", "bad response"}
    # nothing more was said, and a whole session still works: initialize, session/new, a prompt to the end
    init = await agent.request("after", "initialize", {"protocolVersion": 1})
    assert init["result"]["protocolVersion"] == 1
    session = await agent.request(2, "session/new", {"cwd": str(root), "mcpServers": []})
    sid = session["result"]["sessionId"]
    answer = await agent.request(3, "session/prompt", {"sessionId": sid, "prompt": [{"type": "text",
                                                                                       "text": "what is in this repo?"}]})
    assert answer["result"] == {"stopReason": "end_turn"}
    assert await agent.close() == 0
    assert "Traceback" not in (tmp_path / "agent.stderr").read_text(errors="replace")
