"""The exact request of each step of a proxy recording, for the face: what was sent, part by part.

Why an index of its own: the watch replays the recording into a history (the union of what the agent sent),
but the point of the proxy is the request itself — its system prompt, its tools, its messages and where its
cache breakpoints are. `RequestIndex` follows the recording file (only the bytes added since the last look),
remembers where each exchange's line starts, and asks the same `CallSorter` as the reader which calls are
steps; `request(k)` reads step k's line again from its offset (requests are not kept in memory; a request
stored as a delta is made whole from the lines of its bases, `proxy_delta.rebuild`) and
`describe(record)` turns it into a `RequestView` of plain values, in the API's own terms (Anthropic: system,
tools, messages; OpenAI Responses: instructions, tools, input; Chat Completions: messages, tools).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tui_agent.core.recordings.proxy_delta import LIST_KEYS, RequestChain, rebuild
from tui_agent.core.recordings.side_calls import CallSorter, SideCall

MAX_LINE_BYTES = 256 * 1024 * 1024


@dataclass(frozen=True)
class Part:
    """One item of a request: a system block, a tool, a message."""

    label: str  # "system 1", "tool Read", "#3 user"
    chars: int  # its JSON size
    summary: str  # the block types and the start of its text
    cache: str | None  # its cache breakpoint ("5m", "1h"), None when it has none


@dataclass(frozen=True)
class RequestView:
    call: int
    api: str
    model: str
    chars: int  # the whole body's JSON size
    system: tuple[Part, ...]
    tools: tuple[Part, ...]
    messages: tuple[Part, ...]
    breakpoints: tuple[str, ...]  # each cache_control's place: "system[2]", "tools[24]", "messages[3].content[1]"
    cache_note: str  # how this API caches (OpenAI: automatic prefix, and its prompt_cache_key)


class RequestIndex:
    """The steps of a recording and where each one's line starts; `side` lists the side calls so far."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._read = 0  # bytes read (whole lines only)
        self._offsets: dict[int, int] = {}  # proxy call number -> its line's offset
        self._seqs: dict[int, int] = {}  # exchange seq -> its line's offset (a delta's base is found there)
        self._sorter = CallSorter()
        self._chain = RequestChain()

    @property
    def steps(self) -> int:
        return len(self._sorter.step_calls)

    @property
    def side(self) -> list[SideCall]:
        return self._sorter.side

    def step_call(self, k: int) -> int | None:
        calls = self._sorter.step_calls
        return calls[k] if 0 <= k < len(calls) else None

    def refresh(self) -> None:
        """Read what was added to the recording since the last look (a truncated file is read again)."""
        try:
            with open(self.path, "rb") as handle:
                size = handle.seek(0, 2)
                if size < self._read:  # replaced or truncated: start again
                    self._read, self._offsets, self._seqs, self._sorter = 0, {}, {}, CallSorter()
                    self._chain = RequestChain()
                handle.seek(self._read)
                data = handle.read(min(size - self._read, MAX_LINE_BYTES))
        except OSError:
            return
        end = data.rfind(b"\n") + 1
        at = self._read
        for line in data[:end].split(b"\n")[:-1]:
            self._line(at, line)
            at += len(line) + 1
        self._read += end

    def _line(self, offset: int, line: bytes) -> None:
        if b'"exchange"' not in line[:40]:
            return
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):
            return
        if isinstance(record, dict) and record.get("type") == "exchange" and isinstance(record.get("call"), int):
            if isinstance(record.get("seq"), int):
                self._seqs[record["seq"]] = offset
            record["request"] = self._chain.request(record)
            if record["call"]:
                self._offsets[record["call"]] = offset
                self._sorter.add(record)

    def request(self, k: int) -> dict[str, Any] | None:
        """Step k's exchange record, read again from the file (None: not there)."""
        call = self.step_call(k)
        if call is None or call not in self._offsets:
            return None
        try:
            with open(self.path, "rb") as handle:
                record = _line_at(handle, self._offsets[call])
                if record is not None and isinstance(record.get("request_delta"), dict):
                    record["request"] = self._whole(handle, record)
        except (OSError, ValueError, RecursionError):
            return None
        return record

    def _whole(self, handle: Any, record: dict[str, Any]) -> Any:
        """A delta's request made whole: its bases read back to one stored whole, then each delta applied."""
        deltas: list[dict[str, Any]] = []
        while isinstance(record.get("request_delta"), dict) and len(deltas) <= len(self._seqs):
            deltas.append(record)
            offset = self._seqs.get(record["request_delta"].get("base"))
            found = _line_at(handle, offset) if offset is not None else None
            if found is None:
                return None
            record = found
        body = record.get("request")
        for later in reversed(deltas):
            body = rebuild(body, LIST_KEYS.get(str(later.get("api"))), later["request_delta"])
        return body


def _line_at(handle: Any, offset: int) -> dict[str, Any] | None:
    handle.seek(offset)
    record = json.loads(handle.readline(MAX_LINE_BYTES))
    return record if isinstance(record, dict) else None


def describe(record: dict[str, Any]) -> RequestView:
    body: dict[str, Any] = record["request"] if isinstance(record.get("request"), dict) else {}
    api = str(record.get("api") or "")
    if api == "openai-responses":
        system = body.get("instructions")
        messages: list[Any] = body["input"] if isinstance(body.get("input"), list) else [
            {"role": "user", "content": body.get("input")}]
    else:
        system = body.get("system")
        messages = body["messages"] if isinstance(body.get("messages"), list) else []
    if isinstance(system, str):
        system = [{"type": "text", "text": system}]
    parts = tuple(_part(f"system {n}", block) for n, block in enumerate(system or [], 1))
    tools = tuple(_part(f"tool {_tool_name(t)}", t) for t in body.get("tools") or [])
    said = tuple(_part(f"#{n} {_role(m)}", m) for n, m in enumerate(messages, 1))
    where = "instructions" if api == "openai-responses" else "system"
    breakpoints = tuple(_marks(system or [], where) + _marks(body.get("tools") or [], "tools")
                        + _marks(messages, "input" if api == "openai-responses" else "messages"))
    note = ""
    if api.startswith("openai"):
        key = body.get("prompt_cache_key")
        note = "automatic prefix cache" + (f" · prompt_cache_key {str(key)[:40]}" if key else "")
    return RequestView(int(record.get("call") or 0), api, str(record.get("model") or body.get("model") or "?"),
                       len(json.dumps(body)), parts, tools, said, breakpoints, note)


def _tool_name(tool: Any) -> str:
    if not isinstance(tool, dict):
        return "?"
    return str(tool.get("name") or (tool.get("function") or {}).get("name") or tool.get("type") or "?")


def _role(message: Any) -> str:
    if not isinstance(message, dict):
        return "?"
    return str(message.get("role") or message.get("type") or "?")


def _part(label: str, value: Any) -> Part:
    marks = _marks([value], "")
    cache = None
    if marks:
        found = _cache_of(value)
        cache = str(found.get("ttl") or "5m") if isinstance(found, dict) else "5m"
    return Part(label, len(json.dumps(value)), _summary(value), cache)


def _summary(value: Any) -> str:
    """The kinds of blocks in `value` and the start of its first text (one line)."""
    if isinstance(value, str):
        return _one_line(value)
    if not isinstance(value, dict):
        return ""
    if "input_schema" in value or "parameters" in value or value.get("type") == "function":
        return _one_line(str(value.get("description") or (value.get("function") or {}).get("description") or ""))
    content = value.get("content", value.get("text", value.get("output", value.get("arguments"))))
    if isinstance(content, list):
        kinds = [str(b.get("type")) for b in content if isinstance(b, dict)]
        texts = [b.get("text") or b.get("content") for b in content if isinstance(b, dict)]
        first = next((t for t in texts if isinstance(t, str) and t.strip()), "")
        return " ".join(_counted(kinds)) + (f" · {_one_line(first)}" if first else "")
    kind = str(value.get("type") or "text")
    return f"{kind} · {_one_line(content)}" if isinstance(content, str) else kind


def _counted(kinds: list[str]) -> list[str]:
    out: list[str] = []
    for kind in dict.fromkeys(kinds):
        n = kinds.count(kind)
        out.append(f"{kind}×{n}" if n > 1 else kind)
    return out


def _one_line(text: str, width: int = 70) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _marks(items: Any, where: str) -> list[str]:
    """The places of every `cache_control` inside `items` (a list), as paths from `where`."""
    found: list[str] = []

    def walk(value: Any, path: str) -> None:
        if isinstance(value, dict):
            if isinstance(value.get("cache_control"), dict):
                found.append(path or where)
            for key in ("content", "system", "tools"):
                if isinstance(value.get(key), list):
                    walk(value[key], f"{path}.{key}")
        elif isinstance(value, list):
            for n, inner in enumerate(value):
                walk(inner, f"{path}[{n}]")

    walk(items, where)
    return found


def _cache_of(value: Any) -> dict[str, Any] | None:
    if isinstance(value, dict):
        if isinstance(value.get("cache_control"), dict):
            return value["cache_control"]
        for inner in value.values():
            if (found := _cache_of(inner)) is not None:
                return found
    if isinstance(value, list):
        for inner in value:
            if (found := _cache_of(inner)) is not None:
                return found
    return None
