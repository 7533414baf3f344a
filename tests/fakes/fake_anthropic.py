"""A fake Anthropic Messages API on 127.0.0.1 that the real `anthropic` SDK talks to.

It speaks the real wire protocol (SSE `event:` + `data:` lines, the API's JSON error bodies), validates
every request the way the API would (an invalid one is answered with the API's 400 *and* recorded in
`violations`, so the test fails), simulates prompt caching from the request's `cache_control`
breakpoints, and can reject prompts over a token limit with the real "prompt is too long" error.

Replies are scripted per request (`replies`), or produced by a "model" function of the request
(`model`) once the script is used up.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any, Callable, Union

from tests.fakes.http import FakeServer, Reply, next_reply
from tui_agent.core.messages import protocol_errors

Blocks = list[dict[str, Any]]
Scripted = Union[Reply, Blocks, Callable[[dict[str, Any]], Union[Reply, Blocks]]]

_TOP_KEYS = {
    "model", "max_tokens", "messages", "system", "tools", "tool_choice", "stream", "metadata",
    "stop_sequences", "temperature", "top_k", "top_p", "thinking", "service_tier",
}
_COUNT_KEYS = {"model", "messages", "system", "tools", "tool_choice", "thinking"}
_BLOCK_KEYS = {
    "text": {"type", "text", "cache_control", "citations"},
    "tool_use": {"type", "id", "name", "input", "cache_control", "caller"},
    "tool_result": {"type", "tool_use_id", "content", "is_error", "cache_control"},
    "image": {"type", "source", "cache_control"},
    "document": {"type", "source", "title", "context", "citations", "cache_control"},
    "thinking": {"type", "thinking", "signature"},
    "redacted_thinking": {"type", "data"},
    "server_tool_use": {"type", "id", "name", "input", "cache_control"},  # a server tool (web search) and
    "web_search_tool_result": {"type", "tool_use_id", "content", "cache_control"},  # its result
    "compaction": {"type", "content", "encrypted_content", "signature", "tool_changes", "cache_control"},  # fake_context
}
_TOOL_KEYS = {"name", "description", "input_schema", "cache_control", "type"}
_TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,128}$")


def sse(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


def error_body(kind: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}, "request_id": "req_fake"}


def error_reply(status: int, kind: str, message: str, headers: dict[str, str] | None = None) -> Reply:
    return Reply(status=status, json_body=error_body(kind, message), headers=dict(headers or {}))


def rate_limited(retry_after_ms: int | None = 10) -> Reply:
    headers = {"retry-after-ms": str(retry_after_ms)} if retry_after_ms is not None else {}
    return error_reply(429, "rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit", headers)


def overloaded() -> Reply:
    return error_reply(529, "overloaded_error", "Overloaded", {"retry-after-ms": "5"})


def chunk_text(text: str, size: int = 6) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def message_events(
    content: Blocks,
    stop_reason: str | None = None,
    *,
    usage: dict[str, int] | None = None,
    output_tokens: int | None = None,
    model: str = "claude-fake-1",
    ping: bool = True,
) -> list[bytes]:
    """The real SSE sequence for an assistant message made of `content` blocks.

    Text is sent in several `text_delta`s, tool_use input as fragmented `input_json_delta`s, thinking as
    `thinking_delta` + `signature_delta`.
    """
    if stop_reason is None:
        stop_reason = "tool_use" if any(b.get("type") == "tool_use" for b in content) else "end_turn"
    start_usage = {"input_tokens": 10, "output_tokens": 1, "cache_creation_input_tokens": 0,
                   "cache_read_input_tokens": 0, **(usage or {})}
    out = [sse("message_start", {"type": "message_start", "message": {
        "id": "msg_fake", "type": "message", "role": "assistant", "model": model, "content": [],
        "stop_reason": None, "stop_sequence": None, "usage": start_usage}})]
    for index, block in enumerate(content):
        kind = block["type"]
        if kind == "text":
            out.append(sse("content_block_start", {"type": "content_block_start", "index": index,
                                                   "content_block": {"type": "text", "text": ""}}))
            if ping and index == 0:
                out.append(sse("ping", {"type": "ping"}))
            for piece in chunk_text(block["text"]):
                out.append(sse("content_block_delta", {"type": "content_block_delta", "index": index,
                                                       "delta": {"type": "text_delta", "text": piece}}))
        elif kind in ("tool_use", "server_tool_use"):
            out.append(sse("content_block_start", {"type": "content_block_start", "index": index, "content_block": {
                "type": kind, "id": block["id"], "name": block["name"], "input": {}}}))
            raw = json.dumps(block.get("input", {}))
            for piece in [""] + chunk_text(raw, 9):
                out.append(sse("content_block_delta", {"type": "content_block_delta", "index": index,
                                                       "delta": {"type": "input_json_delta", "partial_json": piece}}))
        elif kind == "thinking":
            out.append(sse("content_block_start", {"type": "content_block_start", "index": index, "content_block": {
                "type": "thinking", "thinking": "", "signature": ""}}))
            out.append(sse("content_block_delta", {"type": "content_block_delta", "index": index,
                                                   "delta": {"type": "thinking_delta", "thinking": block["thinking"]}}))
            out.append(sse("content_block_delta", {"type": "content_block_delta", "index": index,
                                                   "delta": {"type": "signature_delta", "signature": block["signature"]}}))
        else:  # a server tool's result, or a block type this client does not know: whole at its start
            out.append(sse("content_block_start", {"type": "content_block_start", "index": index,
                                                   "content_block": block}))
        out.append(sse("content_block_stop", {"type": "content_block_stop", "index": index}))
    if output_tokens is None:
        output_tokens = max(1, len(json.dumps(content)) // 4)
    out.append(sse("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                                     "usage": {"output_tokens": output_tokens}}))
    out.append(sse("message_stop", {"type": "message_stop"}))
    return out


def stream_reply(content: Blocks, **kwargs: Any) -> Reply:
    return Reply(chunks=message_events(content, **kwargs))


def text(value: str) -> Blocks:
    return [{"type": "text", "text": value}]


def tool_use(name: str, tool_input: dict[str, Any], tool_id: str, say: str = "") -> Blocks:
    blocks: Blocks = [{"type": "text", "text": say}] if say else []
    return blocks + [{"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}]


def validate_request(body: Any, *, count_only: bool = False) -> list[str]:
    """What the Messages API would answer 400 for (empty when the request is valid)."""
    if not isinstance(body, dict):
        return ["body is not a JSON object"]
    errors: list[str] = []
    allowed = _COUNT_KEYS if count_only else _TOP_KEYS
    errors += [f"{key}: Extra inputs are not permitted" for key in body if key not in allowed]
    if not isinstance(body.get("model"), str) or not body.get("model"):
        errors.append("model: Field required")
    if not count_only and (not isinstance(body.get("max_tokens"), int) or body["max_tokens"] < 1):
        errors.append("max_tokens: Field required (a positive integer)")
    breakpoints = 0
    system = body.get("system")
    if system is not None:
        if isinstance(system, list):
            for i, block in enumerate(system):
                if block.get("type") != "text" or set(block) - _BLOCK_KEYS["text"]:
                    errors.append(f"system.{i}: only text blocks with known keys are allowed")
                if not block.get("text"):
                    errors.append(f"system.{i}: text content blocks must be non-empty")
                breakpoints += "cache_control" in block
        elif not isinstance(system, str):
            errors.append("system: must be a string or a list of text blocks")
    names: set[str] = set()
    for i, tool in enumerate(body.get("tools") or []):
        extra = set(tool) - _TOOL_KEYS
        if extra:
            errors.append(f"tools.{i}: Extra inputs are not permitted: {sorted(extra)}")
        if not _TOOL_NAME.match(str(tool.get("name", ""))):
            errors.append(f"tools.{i}.name: String should match pattern")
        if tool.get("name") in names:
            errors.append(f"tools: Tool names must be unique ({tool.get('name')})")
        names.add(tool.get("name"))
        schema = tool.get("input_schema")
        if not isinstance(schema, dict) or schema.get("type") != "object":
            errors.append(f"tools.{i}.input_schema: must be a JSON schema of type object")
        breakpoints += "cache_control" in tool
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return errors + ["messages: at least one message is required"]
    seen_ids: set[str] = set()
    for i, message in enumerate(messages):
        if not isinstance(message, dict):
            errors.append(f"messages.{i}: must be an object")
            continue
        extra = set(message) - {"role", "content"}
        if extra:
            errors.append(f"messages.{i}: Extra inputs are not permitted: {sorted(extra)}")
        content = message.get("content")
        last_assistant = i == len(messages) - 1 and message.get("role") == "assistant"
        if isinstance(content, str):
            if not content and not last_assistant:
                errors.append(f"messages.{i}: all messages must have non-empty content")
            continue
        if not isinstance(content, list) or (not content and not last_assistant):
            errors.append(f"messages.{i}: all messages must have non-empty content")
            continue
        for j, block in enumerate(content):
            kind = block.get("type")
            keys = _BLOCK_KEYS.get(kind)
            where = f"messages.{i}.content.{j}"
            if keys is None:
                errors.append(f"{where}: unknown block type {kind!r}")
                continue
            extra = set(block) - keys
            if extra:
                errors.append(f"{where}.{kind}: Extra inputs are not permitted: {sorted(extra)}")
            if kind == "text" and (not isinstance(block.get("text"), str) or not block["text"]):
                errors.append(f"{where}: text content blocks must be non-empty")
            if kind == "tool_use":
                if block.get("id") in seen_ids:
                    errors.append(f"{where}: tool_use ids must be unique ({block.get('id')})")
                seen_ids.add(block.get("id"))
                if not isinstance(block.get("input"), dict):
                    errors.append(f"{where}.input: Input should be a valid dictionary")
            if kind in ("thinking", "redacted_thinking") and message.get("role") != "assistant":
                errors.append(f"{where}: thinking blocks are only allowed in assistant messages")
            if kind == "tool_result" and message.get("role") != "user":
                errors.append(f"{where}: tool_result blocks are only allowed in user messages")
            if kind == "tool_result" and isinstance(block.get("content"), list):
                for k, inner in enumerate(block["content"]):
                    if inner.get("type") not in ("text", "image", "document"):
                        errors.append(f"{where}.content.{k}: bad block type")
                    elif set(inner) - _BLOCK_KEYS[inner["type"]]:
                        errors.append(f"{where}.content.{k}: Extra inputs are not permitted")
            if "cache_control" in block:
                breakpoints += 1
                if block["cache_control"].get("type") != "ephemeral":
                    errors.append(f"{where}.cache_control: type must be ephemeral")
    for i, message in enumerate(messages[:-1]):  # only the last (a paused turn sent back) may wait for results
        content = message.get("content") if isinstance(message, dict) else None
        blocks = content if isinstance(content, list) else []
        answered = {b.get("tool_use_id") for b in blocks if isinstance(b, dict)}
        for block in blocks:
            if isinstance(block, dict) and block.get("type") == "server_tool_use" and block.get("id") not in answered:
                errors.append(f"messages.{i}: server_tool_use {block.get('id')} has no result after it")
    if breakpoints > 4:
        errors.append(f"A maximum of 4 blocks with cache_control may be provided. Found {breakpoints}.")
    errors += protocol_errors(messages)
    return errors


def _strip_cache(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip_cache(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_strip_cache(v) for v in value]
    return value


def cache_segments(body: dict[str, Any]) -> list[tuple[str, bool]]:
    """The request as the cache sees it: (canonical JSON of each tool/system/message block, has breakpoint)."""
    items: list[tuple[str, bool]] = []
    for tool in body.get("tools") or []:
        items.append((json.dumps(_strip_cache(tool), sort_keys=True), "cache_control" in tool))
    system = body.get("system")
    if isinstance(system, str):
        items.append((json.dumps(system), False))
    for block in system or [] if isinstance(system, list) else []:
        items.append((json.dumps(_strip_cache(block), sort_keys=True), "cache_control" in block))
    for message in body.get("messages") or []:
        content = message.get("content")
        if isinstance(content, str):
            items.append((json.dumps([message["role"], content]), False))
            continue
        for k, block in enumerate(content or []):
            key = json.dumps([message["role"], k, _strip_cache(block)], sort_keys=True)
            items.append((key, "cache_control" in block))
    return items


class FakeAnthropic(FakeServer):
    """`replies`: scripted per request (Reply, content blocks, or a callable of the request body).

    `model`: called with the request body once `replies` is empty. `token_limit`: reject prompts whose
    estimate (JSON body chars / 4) is over it with the real prompt-too-long 400, recorded in `rejected`.
    """

    def __init__(
        self,
        replies: list[Scripted] | None = None,
        *,
        model: Callable[[dict[str, Any]], Union[Reply, Blocks]] | None = None,
        token_limit: int | None = None,
        api_key: str = "test-key",
    ) -> None:
        super().__init__()
        self.replies: list[Scripted] = list(replies or [])
        self.model = model
        self.token_limit = token_limit
        self.api_key = api_key
        self.rejected: list[int] = []
        self.cache: set[str] = set()
        self.usages: list[dict[str, int]] = []

    @property
    def base_url(self) -> str:
        return self.origin

    @property
    def message_requests(self) -> list[dict[str, Any]]:
        return [r for r in self.requests if r["path"].split("?")[0] == "/v1/messages"]

    def handle(self, path: str, headers: dict[str, str], body: Any, raw: bytes) -> Reply:
        route = path.split("?")[0]
        if headers.get("authorization") != f"Bearer {self.api_key}" and headers.get("x-api-key") != self.api_key:
            return error_reply(401, "authentication_error", "invalid x-api-key")
        if route not in ("/v1/messages", "/v1/messages/count_tokens"):
            return error_reply(404, "not_found_error", f"Not found: {route}")
        count_only = route.endswith("count_tokens")
        errors = validate_request(body, count_only=count_only)
        if errors:
            for error in errors:
                self.violate(f"request {len(self.requests)}: {error}")
            return error_reply(400, "invalid_request_error", errors[0])
        tokens = len(raw) // 4
        if count_only:
            return Reply(json_body={"input_tokens": tokens})
        if self.token_limit is not None and tokens > self.token_limit:
            with self.lock:
                self.rejected.append(tokens)
            return error_reply(400, "invalid_request_error",
                               f"prompt is too long: {tokens} tokens > {self.token_limit} maximum")
        item = next_reply(self.replies, self.model, body)
        if item is None:
            self.violate("no scripted reply left for a request")
            return error_reply(500, "api_error", "fake has no scripted reply")
        if isinstance(item, Reply):
            return item
        usage = self._cache_usage(body, tokens)
        with self.lock:
            self.usages.append(usage)
        return stream_reply(item, usage=usage)

    def _cache_usage(self, body: dict[str, Any], total: int) -> dict[str, Any]:
        """Simulated prompt caching, as the API documents it.

        Each breakpoint writes the prefix ending there; a later request reads the longest written prefix
        found at its breakpoints or up to 20 blocks before one (the API's automatic lookback).
        """
        items = cache_segments(body)
        digest = hashlib.sha256()
        keys: list[str] = []
        sizes: list[int] = []
        chars = 0
        for text_item, _ in items:
            digest.update(text_item.encode())
            chars += len(text_item)
            keys.append(digest.hexdigest())
            sizes.append(chars // 4)
        marks = [i for i, (_, breakpoint) in enumerate(items) if breakpoint]
        read = 0
        with self.lock:
            for mark in marks:
                for i in range(mark, max(mark - 20, -1), -1):
                    if keys[i] in self.cache:
                        read = max(read, sizes[i])
                        break
            written = max(sizes[marks[-1]] - read, 0) if marks else 0
            self.cache.update(keys[i] for i in marks)
        hour = '"ttl": "1h"' in json.dumps(body)  # the API splits the writes by the breakpoints' TTL
        return {
            "input_tokens": max(total - read - written, 1),
            "cache_creation_input_tokens": written,
            "cache_read_input_tokens": read,
            "cache_creation": {"ephemeral_5m_input_tokens": 0 if hour else written,
                               "ephemeral_1h_input_tokens": written if hour else 0},
        }


def reader_model(files: list[str], tool: str = "Read", path_key: str = "file_path") -> Callable[[dict[str, Any]], Blocks]:
    """A "model" that Reads `files` one per call, then answers; it finds its place from the request.

    The next file is one past the highest `toolu_read_N` id still in the (possibly compacted) request.
    """

    def respond(body: dict[str, Any]) -> Blocks:
        highest = -1
        for message in body["messages"]:
            for block in message["content"] if isinstance(message["content"], list) else []:
                if block.get("type") == "tool_use" and block["id"].startswith("toolu_read_"):
                    highest = max(highest, int(block["id"].rsplit("_", 1)[1]))
        index = highest + 1
        if index >= len(files):
            return text(f"I read {len(files)} files.")
        return tool_use(tool, {path_key: files[index]}, f"toolu_read_{index}", say=f"Reading file {index}.")

    return respond
