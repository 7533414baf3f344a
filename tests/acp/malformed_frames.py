"""A seeded generator of malformed JSON-RPC frames, each with the answer it deserves.

Every frame is one line (no newline inside) that deserves exactly one reply, so a test can send a frame, read
one reply and check its code and id. Nothing here starts real work (no valid `session/new`): the kinds are
truncated JSON, JSON that is no object, wrong member types, huge ids, deep nesting, bad UTF-8, random bytes,
unknown methods and known methods with params their schema refuses.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from typing import Any, Callable

PARSE, INVALID, NO_METHOD, PARAMS = -32700, -32600, -32601, -32602


@dataclass(frozen=True)
class Frame:
    kind: str
    line: bytes
    codes: frozenset[int]  # the error codes it may get (one, but for random bytes and nesting depth)
    reply_id: Any = None  # the id the reply must carry (None: JSON null)


def _dump(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


def _request(rng: random.Random, method: str = "initialize", params: Any = None) -> dict[str, Any]:
    params = params if params is not None else {"protocolVersion": 1}
    return {"jsonrpc": "2.0", "id": rng.randrange(1, 10_000), "method": method, "params": params}


def truncated(rng: random.Random) -> Frame:
    whole = _dump(_request(rng, "session/prompt", {"sessionId": "s", "prompt": [{"type": "text", "text": "hi"}]}))
    return Frame("truncated", whole[:rng.randrange(1, len(whole) - 1)], frozenset({PARSE}))


def not_an_object(rng: random.Random) -> Frame:
    value = rng.choice([[], [1, 2], [{"jsonrpc": "2.0", "id": 1, "method": "initialize"}], "x", 42, -7.5, True,
                        False, None, "", 0])
    return Frame("not an object", _dump(value), frozenset({INVALID}))


def wrong_member(rng: random.Random) -> Frame:
    request = _request(rng)
    key, value = rng.choice([("jsonrpc", "1.0"), ("jsonrpc", None), ("jsonrpc", 2), ("method", 7), ("method", None),
                             ("method", ["initialize"]), ("params", "x"), ("params", 3), ("params", True),
                             ("id", {"a": 1}), ("id", [1]), ("id", True)])
    request[key] = value
    if key == "jsonrpc" and value is None:
        del request["jsonrpc"]
    reply_id = None if key == "id" else request["id"]
    return Frame(f"wrong {key}", _dump(request), frozenset({INVALID}), reply_id)


def bad_response(rng: random.Random) -> Frame:
    frame = rng.choice([{"jsonrpc": "2.0", "id": 3}, {"jsonrpc": "2.0", "id": 3, "error": "boom"},
                        {"jsonrpc": "2.0", "id": 3, "error": {"code": "x", "message": "m"}},
                        {"jsonrpc": "2.0", "id": 3, "result": 1, "error": {"code": 1, "message": "m"}},
                        {"jsonrpc": "2.0", "id": {"a": 1}, "result": {}}, {"jsonrpc": "2.0", "result": {}}, {}])
    return Frame("bad response", _dump(frame), frozenset({INVALID}))


def huge_id(rng: random.Random) -> Frame:
    choice = rng.randrange(4)
    if choice == 0:  # more digits than Python reads: not parseable into a number
        return Frame("huge id", b'{"jsonrpc":"2.0","id":' + b"9" * rng.randrange(5_000, 20_000) + b',"method":"x"}',
                     frozenset({PARSE}))
    if choice == 1:  # out of a double's range
        return Frame("huge id", b'{"jsonrpc":"2.0","id":1e' + str(rng.randrange(400, 9_000)).encode()
                     + b',"method":"x"}', frozenset({PARSE}))
    big = int("9" * rng.randrange(20, 300)) if choice == 2 else "i" * rng.randrange(1_000, 100_000)
    return Frame("huge id", _dump({"jsonrpc": "2.0", "id": big, "method": "no/such"}), frozenset({NO_METHOD}), big)


def deep(rng: random.Random) -> Frame:
    depth = rng.randrange(101, 20_000)
    nested = b"[" * depth + b"]" * depth
    line = b'{"jsonrpc":"2.0","id":5,"method":"initialize","params":{"x":' + nested + b"}}"
    return Frame("deep nesting", line, frozenset({INVALID, PARSE}))


def bad_utf8(rng: random.Random) -> Frame:
    whole = _dump(_request(rng, "session/new", {"cwd": "/tmp", "mcpServers": []}))
    at = rng.randrange(whole.index(b"/tmp") + 1, whole.index(b"/tmp") + 4)
    bad = rng.choice([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x80\x80"])
    return Frame("invalid UTF-8", whole[:at] + bad + whole[at:], frozenset({PARSE}))


def binary(rng: random.Random) -> Frame:
    size = rng.choice([rng.randrange(1, 200), rng.randrange(1_000, 1_000_000)])
    data = bytes(rng.randrange(256) for _ in range(min(size, 4096))) * (size // 4096 + 1)
    data = data[:size].replace(b"\n", b"\x00").replace(b"\r", b"\x01")
    if not data.strip():
        data = b"\x00" + data
    return Frame("binary", data, frozenset({PARSE, INVALID}))


def unknown_method(rng: random.Random) -> Frame:
    request = _request(rng, rng.choice(["no/such", "session/nope", "", "rpc.discover", "fs/read_text_file",
                                        "session/cancel", "x" * 5_000]), {})
    return Frame("unknown method", _dump(request), frozenset({NO_METHOD}), request["id"])


def bad_params(rng: random.Random) -> Frame:
    method, params = rng.choice([
        ("initialize", {"protocolVersion": 70_000}), ("initialize", {}), ("initialize", [1, 2]),
        ("session/new", {"cwd": 5, "mcpServers": []}), ("session/new", {"mcpServers": []}),
        ("session/new", {"cwd": "relative/folder", "mcpServers": []}), ("session/new", {"cwd": "", "mcpServers": []}),
        ("session/new", {"cwd": "/no/such/folder/anywhere", "mcpServers": []}),
        ("session/new", {"cwd": "/tmp", "mcpServers": "none"}),
        ("session/load", {"cwd": "/tmp", "sessionId": "no-such-session", "mcpServers": []}),
        ("session/prompt", {"sessionId": "no-such", "prompt": [{"type": "text", "text": "hi"}]}),
        ("session/prompt", {"sessionId": "s", "prompt": "hi"}), ("session/prompt", {"prompt": []}),
    ])
    request = _request(rng, method, params)
    return Frame(f"bad params of {method}", _dump(request), frozenset({PARAMS}), request["id"])


KINDS: list[Callable[[random.Random], Frame]] = [truncated, not_an_object, wrong_member, bad_response, huge_id, deep,
                                                  bad_utf8, binary, unknown_method, bad_params]


def malformed_frames(count: int, seed: int = 41) -> list[Frame]:
    rng = random.Random(seed)
    return [rng.choice(KINDS)(rng) for _ in range(count)]


__all__ = ["Frame", "KINDS", "malformed_frames"]
