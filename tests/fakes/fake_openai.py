"""A fake OpenAI-compatible chat completions server (DeepSeek / Ollama style) for the real `openai` SDK.

Streams `data: {chunk}` lines ending in `data: [DONE]`, with fragmented tool_calls and a final usage chunk
when `stream_options.include_usage` is set; answers errors with the API's JSON error body; validates each
request the way such servers do (an invalid one gets a 400 *and* is recorded in `violations`).
Replies are scripted as Anthropic-style content blocks (the same helpers as the Anthropic fake), as a
`Reply`, or as a callable of the request body.
"""

from __future__ import annotations

import json
from typing import Any, Callable, Union

from tests.fakes.http import Reply, ScriptedAPI

Blocks = list[dict[str, Any]]
Scripted = Union[Reply, Blocks, Callable[[dict[str, Any]], Union[Reply, Blocks]]]

_TOP_KEYS = {
    "model", "messages", "stream", "stream_options", "tools", "tool_choice", "max_tokens",
    "max_completion_tokens", "temperature", "top_p", "stop", "n", "seed", "parallel_tool_calls",
}
_ROLE_KEYS = {
    "system": {"role", "content", "name"},
    "user": {"role", "content", "name"},
    "assistant": {"role", "content", "tool_calls", "name"},
    "tool": {"role", "content", "tool_call_id"},
}


def data_line(obj: Any) -> bytes:
    return f"data: {json.dumps(obj) if not isinstance(obj, str) else obj}\n\n".encode()


def chunk(delta: dict[str, Any] | None = None, finish: str | None = None, usage: dict | None = None,
          choices: bool = True) -> dict[str, Any]:
    body: dict[str, Any] = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 1700000000,
                            "model": "fake-chat", "choices": []}
    if choices:
        body["choices"] = [{"index": 0, "delta": delta or {}, "finish_reason": finish}]
    if usage is not None:
        body["usage"] = usage
    return body


def completion_chunks(content: Blocks, *, usage: dict[str, Any] | None = None, finish: str | None = None,
                      include_usage: bool = True) -> list[bytes]:
    """The chunk sequence for Anthropic-style `content`: role, text pieces, fragmented tool_calls, finish."""
    out = [data_line(chunk({"role": "assistant", "content": ""}))]
    calls = [b for b in content if b["type"] == "tool_use"]
    for block in content:
        if block["type"] == "text":
            text = block["text"]
            for i in range(0, len(text), 5):
                out.append(data_line(chunk({"content": text[i : i + 5]})))
    for index, block in enumerate(calls):
        out.append(data_line(chunk({"tool_calls": [{"index": index, "id": block["id"], "type": "function",
                                                    "function": {"name": block["name"], "arguments": ""}}]})))
        raw = json.dumps(block["input"])
        for i in range(0, len(raw), 7):
            out.append(data_line(chunk({"tool_calls": [{"index": index, "function": {"arguments": raw[i : i + 7]}}]})))
    out.append(data_line(chunk({}, finish or ("tool_calls" if calls else "stop"))))
    if include_usage:
        out.append(data_line(chunk(usage=usage or {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
                                   choices=False)))
    out.append(data_line("[DONE]"))
    return out


def error_body(message: str, kind: str = "invalid_request_error", code: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


def error_reply(status: int, message: str, kind: str = "invalid_request_error", code: str | None = None,
                headers: dict[str, str] | None = None) -> Reply:
    return Reply(status=status, json_body=error_body(message, kind, code), headers=dict(headers or {}))


def rate_limited() -> Reply:
    return error_reply(429, "Rate limit reached", "rate_limit_error", "rate_limit_exceeded", {"retry-after-ms": "10"})


def server_busy() -> Reply:
    return error_reply(503, "Server is busy, please try again later", "server_error", headers={"retry-after-ms": "5"})


def validate_request(body: Any) -> list[str]:
    """What an OpenAI-compatible server would answer 400 for (empty when valid)."""
    if not isinstance(body, dict):
        return ["body is not a JSON object"]
    errors = [f"Unrecognized request argument supplied: {key}" for key in body if key not in _TOP_KEYS]
    if not body.get("model"):
        errors.append("you must provide a model parameter")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return errors + ["messages: must be a non-empty array"]
    pending: set[str] = set()
    seen_non_system = False
    for i, message in enumerate(messages):
        role = message.get("role")
        keys = _ROLE_KEYS.get(role)
        where = f"messages[{i}]"
        if keys is None:
            errors.append(f"{where}: invalid role {role!r}")
            continue
        extra = set(message) - keys
        if extra:
            errors.append(f"{where}: unknown keys {sorted(extra)}")
        if role != "tool" and pending:
            errors.append(f"{where}: an assistant message with 'tool_calls' must be followed by tool messages "
                          f"responding to each 'tool_call_id' (missing {sorted(pending)})")
            pending = set()
        if role == "system":
            if seen_non_system:
                errors.append(f"{where}: system message after the conversation started")
            if not isinstance(message.get("content"), str):
                errors.append(f"{where}: system content must be a string")
            continue
        if not seen_non_system and role != "user":
            errors.append(f"{where}: the first non-system message must be from the user")
        seen_non_system = True
        content = message.get("content")
        if role == "user":
            if not content or not isinstance(content, (str, list)):
                errors.append(f"{where}: user content must be a non-empty string or array")
        elif role == "assistant":
            calls = message.get("tool_calls")
            if content is None and not calls:
                errors.append(f"{where}: assistant content may be null only with tool_calls")
            if content is not None and not isinstance(content, str):
                errors.append(f"{where}: assistant content must be a string")
            for call in calls or []:
                if set(call) != {"id", "type", "function"} or call.get("type") != "function":
                    errors.append(f"{where}: malformed tool_call {call}")
                    continue
                try:
                    json.loads(call["function"]["arguments"])
                except (KeyError, TypeError, ValueError):
                    errors.append(f"{where}: tool_call arguments must be a JSON string")
                pending.add(call["id"])
        elif role == "tool":
            if message.get("tool_call_id") not in pending:
                errors.append(f"{where}: messages with role 'tool' must be a response to a preceding message "
                              f"with 'tool_calls' ({message.get('tool_call_id')})")
            pending.discard(message.get("tool_call_id"))
            if not isinstance(content, str):
                errors.append(f"{where}: tool content must be a string")
    if pending:
        errors.append(f"tool_calls without responses: {sorted(pending)}")
    for i, tool in enumerate(body.get("tools") or []):
        function = tool.get("function") or {}
        if tool.get("type") != "function" or not function.get("name"):
            errors.append(f"tools[{i}]: must be a function with a name")
        if set(function) - {"name", "description", "parameters", "strict"}:
            errors.append(f"tools[{i}].function: unknown keys")
        if (function.get("parameters") or {}).get("type") != "object":
            errors.append(f"tools[{i}].function.parameters: must be an object schema")
    return errors


class FakeOpenAI(ScriptedAPI):
    """Scripted OpenAI-compatible server; `token_limit` rejects prompts over it (JSON chars / 4)."""

    def __init__(
        self,
        replies: list[Scripted] | None = None,
        *,
        model: Callable[[dict[str, Any]], Union[Reply, Blocks]] | None = None,
        token_limit: int | None = None,
        api_key: str = "test-key",
        cached_tokens: int = 0,
    ) -> None:
        super().__init__(replies, model, api_key)
        self.token_limit = token_limit
        self.cached_tokens = cached_tokens
        self.rejected: list[int] = []
        self.reject_stream_options = False

    @property
    def base_url(self) -> str:
        return self.origin + "/v1"

    @property
    def chat_requests(self) -> list[dict[str, Any]]:
        return self.requests_to("/v1/chat/completions")

    def handle(self, path: str, headers: dict[str, str], body: Any, raw: bytes) -> Reply:
        if headers.get("authorization") != f"Bearer {self.api_key}":
            return error_reply(401, "Authentication Fails, Your api key is invalid", "authentication_error",
                               "invalid_api_key")
        if path.split("?")[0] != "/v1/chat/completions":
            return error_reply(404, f"Not found: {path}", "not_found_error")
        if self.reject_stream_options and "stream_options" in (body or {}):
            return error_reply(400, "Unrecognized request argument supplied: stream_options")
        if (error := self.first_violation(validate_request(body))) is not None:
            return error_reply(400, error)
        tokens = len(raw) // 4
        if self.token_limit is not None and tokens > self.token_limit:
            with self.lock:
                self.rejected.append(tokens)
            return error_reply(
                400,
                f"This model's maximum context length is {self.token_limit} tokens. However, you requested "
                f"{tokens} tokens ({tokens} in the messages, 0 in the completion). Please reduce the length "
                "of the messages or completion.",
                code="context_length_exceeded",
            )
        item = self.next_scripted(body)
        if item is None:
            return error_reply(500, "fake has no scripted reply", "server_error")
        if isinstance(item, Reply):
            return item
        usage = {"prompt_tokens": tokens, "completion_tokens": 7, "total_tokens": tokens + 7,
                 "prompt_tokens_details": {"cached_tokens": min(self.cached_tokens, tokens)}}
        include = bool((body.get("stream_options") or {}).get("include_usage"))
        return Reply(chunks=completion_chunks(item, usage=usage, include_usage=include))
