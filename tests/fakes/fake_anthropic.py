"""A fake Anthropic Messages API on 127.0.0.1 that the real `anthropic` SDK talks to.

It speaks the real wire protocol (SSE `event:` + `data:` lines, the API's JSON error bodies), validates
every request the way the API would (an invalid one is answered with the API's 400 *and* recorded in
`violations`, so the test fails), simulates prompt caching from the request's `cache_control`
breakpoints, and can reject prompts over a token limit with the real "prompt is too long" error.

Replies are scripted per request (`replies`), or produced by a "model" function of the request
(`model`) once the script is used up.
"""

from __future__ import annotations

import json
import re
import time
from typing import Any, Callable, Union

from tests.fakes.http import Reply, ScriptedAPI
from tests.fakes.prompt_cache import PromptCache, _strip_cache, cache_segments  # noqa: F401 - re-exported
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


def _max_tokens_errors(body: dict[str, Any]) -> list[str]:
    """`max_tokens` as the API takes it: an integer ≥ 0 (0: "populate the prompt cache without generating a
    response"); with extended thinking, a budget of at least 1,024 below any `max_tokens` that generates."""
    limit = body.get("max_tokens")
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 0:
        return ["max_tokens: Field required (an integer >= 0)"]
    thinking = body.get("thinking")
    if not isinstance(thinking, dict) or thinking.get("type") != "enabled":
        return []
    budget = thinking.get("budget_tokens")
    if not isinstance(budget, int) or budget < 1024:
        return ["thinking.budget_tokens: Input should be greater than or equal to 1024"]
    if limit and limit <= budget:
        return [f"`max_tokens` must be greater than `thinking.budget_tokens` ({limit} <= {budget})"]
    return []


def validate_request(body: Any, *, count_only: bool = False) -> list[str]:
    """What the Messages API would answer 400 for (empty when the request is valid)."""
    if not isinstance(body, dict):
        return ["body is not a JSON object"]
    errors: list[str] = []
    allowed = _COUNT_KEYS if count_only else _TOP_KEYS
    errors += [f"{key}: Extra inputs are not permitted" for key in body if key not in allowed]
    if not isinstance(body.get("model"), str) or not body.get("model"):
        errors.append("model: Field required")
    if not count_only:
        errors += _max_tokens_errors(body)
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


class FakeAnthropic(ScriptedAPI):
    """`replies`: scripted per request (Reply, content blocks, or a callable of the request body).

    `model`: called with the request body once `replies` is empty (after the prompt cache was read and
    written: a model that moves `clock` on is a slow answer). `token_limit`: reject prompts whose estimate
    (JSON body chars / 4) is over it with the real prompt-too-long 400, recorded in `rejected`.
    The prompt cache (`prompt_cache.PromptCache`): `caching=False` caches nothing, `cache_ttl` its time to
    live on the server's `clock`. `max_tokens_zero=False`: an endpoint that refuses `max_tokens: 0` with a
    400 (not a violation: the client must survive it); otherwise such a request reads and writes the cache
    and answers no content (`stop_reason` "max_tokens", 0 output tokens).
    """

    def __init__(
        self,
        replies: list[Scripted] | None = None,
        *,
        model: Callable[[dict[str, Any]], Union[Reply, Blocks]] | None = None,
        token_limit: int | None = None,
        api_key: str = "test-key",
        caching: bool = True,
        cache_ttl: float = 300.0,
        clock: Callable[[], float] = time.monotonic,
        max_tokens_zero: bool = True,
    ) -> None:
        super().__init__(replies, model, api_key)
        self.token_limit = token_limit
        self.rejected: list[int] = []
        self.prompt_cache = PromptCache(ttl_seconds=cache_ttl, clock=clock, enabled=caching)
        self.max_tokens_zero = max_tokens_zero
        self.refused_zero = 0  # `max_tokens: 0` requests refused (max_tokens_zero=False)
        self.usages: list[dict[str, int]] = []

    @property
    def base_url(self) -> str:
        return self.origin

    @property
    def message_requests(self) -> list[dict[str, Any]]:
        return self.requests_to("/v1/messages")

    def handle(self, path: str, headers: dict[str, str], body: Any, raw: bytes) -> Reply:
        route = path.split("?")[0]
        if headers.get("authorization") != f"Bearer {self.api_key}" and headers.get("x-api-key") != self.api_key:
            return error_reply(401, "authentication_error", "invalid x-api-key")
        if route not in ("/v1/messages", "/v1/messages/count_tokens"):
            return error_reply(404, "not_found_error", f"Not found: {route}")
        count_only = route.endswith("count_tokens")
        if (error := self.first_violation(validate_request(body, count_only=count_only))) is not None:
            return error_reply(400, "invalid_request_error", error)
        tokens = len(raw) // 4
        if count_only:
            return Reply(json_body={"input_tokens": tokens})
        if body["max_tokens"] == 0 and not self.max_tokens_zero:
            with self.lock:
                self.refused_zero += 1
            return error_reply(400, "invalid_request_error", "max_tokens: Input should be greater than or equal to 1")
        if self.token_limit is not None and tokens > self.token_limit:
            with self.lock:
                self.rejected.append(tokens)
            return error_reply(400, "invalid_request_error",
                               f"prompt is too long: {tokens} tokens > {self.token_limit} maximum")
        scripted_failure = bool(self.replies) and isinstance(self.replies[0], Reply)
        usage = None if scripted_failure else self._cache_usage(body, tokens)  # on arrival, before the answer
        item = self.next_scripted(body)
        if item is None:
            return error_reply(500, "api_error", "fake has no scripted reply")
        if isinstance(item, Reply):
            return item
        usage = usage or self._cache_usage(body, tokens)
        with self.lock:
            self.usages.append(usage)
        if body["max_tokens"] == 0:  # the cache is populated, nothing is generated
            return stream_reply([], stop_reason="max_tokens", usage=usage, output_tokens=0)
        return stream_reply(item, usage=usage)

    def _cache_usage(self, body: dict[str, Any], total: int) -> dict[str, Any]:
        """What the prompt cache read and wrote for this request (`prompt_cache.PromptCache`)."""
        return self.prompt_cache.usage(body, total)


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
