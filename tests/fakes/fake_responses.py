"""A strict fake of the OpenAI Responses API (`POST /v1/responses`, streamed) for the real Codex CLI.

Real HTTP and SSE on 127.0.0.1 (the `FakeServer` plumbing). Each request is checked the way the API would
check it (an invalid one gets a 400 *and* lands in `violations`): a bearer key, a model, `stream: true`,
only known top-level keys, `input` items of known types, every `function_call_output` answering a call made
before it in the same input, tools with names. Replies are scripted as lists of Responses output items
(`message_item`, `function_call_item`, `reasoning_item`), as a `Reply`, or as a callable of the body; the
usage of each is `usage_for(body)` (by default from the request's size, so successive calls grow).
"""

from __future__ import annotations

import json
from typing import Any, Callable, Union

from tests.fakes.fake_openai import error_reply
from tests.fakes.http import Reply, ScriptedAPI

Items = list[dict[str, Any]]
Scripted = Union[Reply, Items, Callable[[dict[str, Any]], Union[Reply, Items]]]

TOP_KEYS = {
    "model", "input", "instructions", "stream", "tools", "tool_choice", "parallel_tool_calls", "reasoning",
    "store", "include", "prompt_cache_key", "text", "client_metadata", "service_tier", "previous_response_id",
    "max_output_tokens", "temperature", "top_p", "truncation", "metadata", "user", "stream_options",
}
INPUT_KINDS = {
    "message", "reasoning", "function_call", "function_call_output", "custom_tool_call", "custom_tool_call_output",
    "local_shell_call", "local_shell_call_output", "web_search_call", "compaction", "compaction_summary",
    "tool_search_call", "tool_search_output", "image_generation_call", "item_reference",
    # Codex 0.171 on the built-in OpenAI provider: its tools as an input item, a settings change, and the
    # item that asks the server to compact (remote compaction: answered with a `compaction` item)
    "additional_tools", "configuration_update", "compaction_trigger",
}
CALL_KINDS = {"function_call", "custom_tool_call", "local_shell_call", "tool_search_call"}


def sse(event: dict[str, Any]) -> bytes:
    return f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode()


def message_item(text: str, n: int = 1) -> dict[str, Any]:
    return {"type": "message", "id": f"msg_{n}", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}]}


def function_call_item(name: str, arguments: dict[str, Any], call_id: str) -> dict[str, Any]:
    return {"type": "function_call", "id": f"fc_{call_id}", "call_id": call_id, "name": name,
            "arguments": json.dumps(arguments), "status": "completed"}


def compaction_item(n: int = 1, size: int = 600) -> dict[str, Any]:
    """What the API answers a `compaction_trigger` with: the conversation so far, encrypted (opaque)."""
    return {"type": "compaction", "id": f"cmp_{n}", "encrypted_content": "gAAAA" + "c" * size}


def wants_compaction(body: dict[str, Any]) -> bool:
    """A request whose last input item asks the server to compact (Codex's remote compaction)."""
    items = body.get("input")
    return isinstance(items, list) and bool(items) and isinstance(items[-1], dict) and (
        items[-1].get("type") == "compaction_trigger")


def reasoning_item(summary: str, n: int = 1) -> dict[str, Any]:
    return {"type": "reasoning", "id": f"rs_{n}", "summary": [{"type": "summary_text", "text": summary}],
            "encrypted_content": "gAAAA" + "x" * 40}


def response_events(items: Items, response_id: str, usage: dict[str, Any]) -> list[bytes]:
    """The SSE events of one streamed response: created, each item added (text deltas) and done, completed."""
    out = [sse({"type": "response.created", "response": {"id": response_id, "status": "in_progress"}})]
    for index, item in enumerate(items):
        out.append(sse({"type": "response.output_item.added", "output_index": index, "item": item}))
        if item["type"] == "message":
            for part in item["content"]:
                out.append(sse({"type": "response.output_text.delta", "output_index": index, "content_index": 0,
                                "item_id": item["id"], "delta": part["text"]}))
        out.append(sse({"type": "response.output_item.done", "output_index": index, "item": item}))
    out.append(sse({"type": "response.completed",
                    "response": {"id": response_id, "status": "completed", "output": items, "usage": usage}}))
    return out


def usage_of(input_tokens: int, cached: int = 0, output: int = 12) -> dict[str, Any]:
    return {"input_tokens": input_tokens, "input_tokens_details": {"cached_tokens": min(cached, input_tokens)},
            "output_tokens": output, "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": input_tokens + output}


def validate_request(body: Any) -> list[str]:
    """What the Responses API would answer 400 for (empty when valid)."""
    if not isinstance(body, dict):
        return ["body is not a JSON object"]
    errors = [f"Unknown parameter: '{key}'." for key in body if key not in TOP_KEYS]
    if not isinstance(body.get("model"), str) or not body["model"]:
        errors.append("Missing required parameter: 'model'.")
    if body.get("stream") is not True:
        errors.append("this fake serves streamed responses only (Codex streams)")
    items = body.get("input")
    if not isinstance(items, list) or not items:
        return errors + ["'input' must be a non-empty array"]
    calls: set[str] = set()
    for i, item in enumerate(items):
        kind = item.get("type") if isinstance(item, dict) else None
        if kind not in INPUT_KINDS:
            errors.append(f"input[{i}]: unknown item type {kind!r}")
            continue
        if kind == "message" and (item.get("role") not in ("user", "assistant", "system", "developer")
                                  or not isinstance(item.get("content"), (str, list))):
            errors.append(f"input[{i}]: a message needs a role and content")
        if kind in CALL_KINDS:
            calls.add(item.get("call_id") or item.get("id"))
        if kind.endswith("_output") and item.get("call_id") not in calls:
            errors.append(f"input[{i}]: No tool call found for output with call_id {item.get('call_id')}.")
    for i, tool in enumerate(body.get("tools") or []):
        if not isinstance(tool, dict) or not tool.get("type"):
            errors.append(f"tools[{i}]: a tool needs a type")
        elif tool["type"] in ("function", "custom") and not tool.get("name"):
            errors.append(f"tools[{i}]: a {tool['type']} tool needs a name")
    return errors


class FakeResponses(ScriptedAPI):
    """Scripted Responses API; `usage_for(body)` gives each reply's usage (default: the body's size / 4)."""

    def __init__(self, replies: list[Scripted] | None = None, *, model: Callable[..., Any] | None = None,
                 api_key: str = "test-key", usage_for: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
                 ) -> None:
        super().__init__(replies, model, api_key)
        self.usage_for = usage_for
        self.answered = 0

    @property
    def base_url(self) -> str:
        return self.origin + "/v1"

    @property
    def response_requests(self) -> list[dict[str, Any]]:
        return self.requests_to("/v1/responses")

    def handle(self, path: str, headers: dict[str, str], body: Any, raw: bytes) -> Reply:
        if headers.get("authorization") != f"Bearer {self.api_key}":
            return error_reply(401, "Incorrect API key provided", "invalid_request_error", "invalid_api_key")
        if path.split("?")[0] != "/v1/responses":
            self.violate(f"unexpected path {path}")
            return error_reply(404, f"Not found: {path}", "not_found_error")
        if (error := self.first_violation(validate_request(body))) is not None:
            return error_reply(400, error)
        item = self.next_scripted(body)
        if item is None:
            return error_reply(500, "fake has no scripted reply", "server_error")
        if isinstance(item, Reply):
            return item
        with self.lock:
            self.answered += 1
            n = self.answered
        usage = self.usage_for(body) if self.usage_for else usage_of(len(raw) // 4, cached=len(raw) // 8)
        return Reply(chunks=response_events(item, f"resp_{n}", usage))
