"""Every line a client sends gets the JSON-RPC answer it deserves, and the agent keeps serving.

Why a transport of our own: the SDK's stdio reader (agent-client-protocol 0.12, `NdjsonTransport`) hands any
JSON value on. A line that is `[]`, `"x"`, `42` or `true` reaches `Connection._process_message`, whose
`.get` raises and ends the receive loop (the agent exited 1); `null` reads as the end of the stream (it
exited 0, silently); a line that is not JSON was logged with a traceback and answered with nothing; a
response whose `id` is an object or whose `error` is a string raises in `_handle_response`. The SDK's
`Connection` takes any message-level `Transport` (its public seam for HTTP and WebSocket), so this one
reads the lines itself, lets through only a well-formed JSON-RPC 2.0 message (a request, a notification, a
response), and answers every other frame here: `-32700` when the line is not JSON (or not UTF-8), `-32600`
when it is JSON but no JSON-RPC message (a scalar, a batch, a wrong `jsonrpc`, `method`, `id`, `params`
or `error`, nesting deeper than `MAX_DEPTH`, a line over `MAX_LINE`). What passes gets the SDK's own
answers: `-32601` for a method we do not serve, `-32602` for params its schema refuses.

Replies are written through the SDK's `MessageSender`, so they are serialised with everything else the
agent writes (one JSON object per line, never interleaved); on the way out, a schema refusal's message is made
to name its fields (`explain_schema_errors`).

Upstream (agentclientprotocol/python-sdk): `NdjsonTransport.receive` could check `isinstance(message, dict)`
and answer what is not, and `Connection._handle_response` could guard an unhashable `id` or a non-object
`error`; until it does, this transport is the edge.
"""

from __future__ import annotations

import asyncio
import json
import math
from dataclasses import dataclass
from typing import Any

from acp.task import MessageSender, TaskSupervisor

PARSE_ERROR, INVALID_REQUEST, INVALID_PARAMS = -32700, -32600, -32602
MAX_DEPTH = 100  # containers nested deeper are refused (an ACP message nests under 10; the SDK copies recursively)
MAX_LINE = 64 * 1024 * 1024  # bytes in one line: beyond, the rest of the line is read and dropped
READ_CHUNK = 1024 * 1024


@dataclass(frozen=True)
class Refusal:
    """A frame answered here: the JSON-RPC error and the id it is sent with (None when none can be trusted)."""

    code: int
    reason: str
    request_id: str | int | float | None = None

    def reply(self) -> dict[str, Any]:
        title = "Parse error" if self.code == PARSE_ERROR else "Invalid request"
        return {"jsonrpc": "2.0", "id": self.request_id,
                "error": {"code": self.code, "message": f"{title}: {self.reason}", "data": {"reason": self.reason}}}


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _finite(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise ValueError(f"the number {text[:40]} is too large")
    return value


def parse_line(line: bytes) -> Any:
    """The JSON value of one line, strictly: UTF-8, no NaN / Infinity, every number finite. Raises
    ValueError (a JSONDecodeError, a bad byte, an integer over Python's digit limit) or RecursionError."""
    return json.loads(line.decode("utf-8"), parse_constant=_no_constant, parse_float=_finite)


def too_deep(value: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether `value` nests containers deeper than `limit` (walked without recursion)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list)):
            if depth > limit:
                return True
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return False


def _valid_id(value: Any) -> bool:
    """JSON-RPC: a string, a number or null (a bool is JSON's `true`, not a number)."""
    return value is None or isinstance(value, str) or (isinstance(value, (int, float)) and not isinstance(value, bool))


def check_message(value: Any) -> Refusal | None:
    """None when `value` is a JSON-RPC 2.0 request, notification or response the SDK can take; else the
    answer it deserves (the request's id when it has a usable one)."""
    if isinstance(value, list):
        return Refusal(INVALID_REQUEST, "an empty batch" if not value else
                       "a batch (a JSON array) is not supported: send one JSON-RPC message per line")
    if not isinstance(value, dict):
        return Refusal(INVALID_REQUEST, f"a JSON-RPC message is an object, not {_kind(value)}")
    if too_deep(value):
        return Refusal(INVALID_REQUEST, f"the message nests deeper than {MAX_DEPTH} levels")
    has_id, request_id = "id" in value, value.get("id")
    if has_id and not _valid_id(request_id):
        return Refusal(INVALID_REQUEST, f"the id must be a string, a number or null, not {_kind(request_id)}")
    answer_id = request_id if has_id else None
    if value.get("jsonrpc") != "2.0":
        return Refusal(INVALID_REQUEST, 'the "jsonrpc" member must be exactly "2.0"', answer_id)
    if "method" in value:
        return _request_problem(value, answer_id)
    return _response_problem(value, has_id)


def _request_problem(value: dict[str, Any], answer_id: Any) -> Refusal | None:
    if not isinstance(value["method"], str):
        return Refusal(INVALID_REQUEST, f"the method must be a string, not {_kind(value['method'])}", answer_id)
    params = value.get("params")
    if params is not None and not isinstance(params, (dict, list)):
        return Refusal(INVALID_REQUEST, f"params must be an object or an array, not {_kind(params)}", answer_id)
    return None


def _response_problem(value: dict[str, Any], has_id: bool) -> Refusal | None:
    if not has_id or ("result" in value) == ("error" in value):
        return Refusal(INVALID_REQUEST, 'neither a request (a "method") nor a response (an "id" with a "result" '
                                        'or an "error")')
    error = value.get("error")
    if "error" in value and not (isinstance(error, dict) and isinstance(error.get("code"), int)
                                 and not isinstance(error.get("code"), bool) and isinstance(error.get("message"), str)):
        return Refusal(INVALID_REQUEST, 'a response\'s "error" must be an object with an integer "code" and a '
                                        'string "message"')
    return None


def _kind(value: Any) -> str:
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean", type(None): "null"}
    return names.get(type(value), "a number")


def classify(line: bytes) -> dict[str, Any] | Refusal:
    """One line → the message to hand on, or the refusal to answer with."""
    try:
        value = parse_line(line)
    except UnicodeDecodeError as error:
        return Refusal(PARSE_ERROR, f"the line is not UTF-8 (byte {error.start})")
    except RecursionError:
        return Refusal(PARSE_ERROR, "the JSON nests too deep to read")
    except ValueError as error:
        return Refusal(PARSE_ERROR, f"not JSON ({str(error)[:200]})")
    return check_message(value) or value


def explain_schema_errors(message: dict[str, Any]) -> dict[str, Any]:
    """The SDK answers params its schema refuses with `-32602 "Invalid params"` and pydantic's errors in
    `data`, each echoing its `input` (a whole prompt, for one wrong field). Clients show the message: it
    names the fields and what is wrong ("Invalid params: cwd: Field required"); the echoes are left out."""
    error = message.get("error")
    data = error.get("data") if isinstance(error, dict) else None
    if not (isinstance(error, dict) and error.get("code") == INVALID_PARAMS and error.get("message") == "Invalid params"
            and isinstance(data, dict) and isinstance(data.get("errors"), list)):
        return message
    errors = [{key: value for key, value in item.items() if key not in ("input", "url", "ctx")}
              for item in data["errors"] if isinstance(item, dict)]
    said = "; ".join(f"{'.'.join(str(part) for part in item.get('loc', ())) or 'params'}: {item.get('msg', '')}"
                     for item in errors[:5])
    return {**message, "error": {**error, "message": f"Invalid params: {said}"[:500], "data": {"errors": errors}}}


class GuardedTransport:
    """The SDK's `Transport` over stdin/stdout that answers malformed frames itself (see the module)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._tasks = TaskSupervisor(source="tui-agent acp transport")
        self._sender = MessageSender(writer, self._tasks)
        self.refused = 0  # frames answered here (a count for tests and traces)

    async def send(self, message: dict[str, Any]) -> None:
        await self._sender.send(explain_schema_errors(message))

    async def receive(self) -> dict[str, Any] | None:
        """The next well-formed message; None at the end of the stream (and only there)."""
        while True:
            line, whole = await self._read_line()
            if line is None:
                return None
            if not line.strip():
                continue
            found = classify(line) if whole else Refusal(INVALID_REQUEST, f"the line is longer than {MAX_LINE:,} bytes")
            if isinstance(found, Refusal):
                self.refused += 1
                await self._sender.send(found.reply())
                continue
            return found

    async def _read_line(self) -> tuple[bytes | None, bool]:
        """One line without its newline, and whether it is whole (a line over `MAX_LINE` is read to its end
        and dropped); None at the end of the stream."""
        chunks: list[bytes] = []
        size = 0
        while True:
            try:
                part = await self._reader.readuntil(b"\n")
                ended = True
            except asyncio.LimitOverrunError as error:
                part, ended = await self._reader.readexactly(min(error.consumed, READ_CHUNK) or 1), False
            except asyncio.IncompleteReadError as error:
                part, ended = error.partial, True
                if not part and not chunks:
                    return None, True
            size += len(part)
            if size <= MAX_LINE:
                chunks.append(part)
            if ended:
                return b"".join(chunks).rstrip(b"\r\n"), size <= MAX_LINE + 1

    async def close(self) -> None:
        await self._sender.close()
        await self._tasks.shutdown()


__all__ = ["GuardedTransport", "Refusal", "check_message", "classify", "explain_schema_errors", "parse_line",
           "too_deep"]
