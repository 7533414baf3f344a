"""The Anthropic Messages API over plain HTTP and server-sent events (httpx2), without the `anthropic` SDK.

Why not the SDK: importing it loads about 3,500 modules (thousands of pydantic classes) and took 1–2 s of
every `-p` run before the first request (bench/bench_turn.py's "start-up"), and each streamed event became
pydantic objects that the provider turned straight back into dicts. What the provider needs is small:
POST one JSON body, read `event:`/`data:` lines, and build the final message from the deltas. httpx2 (the
SDK's own HTTP client, so proxies, TLS and timeouts behave as before) imports in a tenth of the time.

The wire details follow the installed SDK (tests/providers/test_anthropic_wire.py compares them):
the key as a bearer token, its `anthropic-version`, `ANTHROPIC_CUSTOM_HEADERS`, a 10-minute read timeout
with a 5-second connect timeout. Failures are raised as `StatusError` (an HTTP status, or an `event:
error` inside a 200 stream) for the provider to turn into its one-line messages.
"""

from __future__ import annotations

import json
import os
from typing import Any, AsyncIterator, Mapping

API_VERSION = "2026-10-21"  # the installed SDK's ANTHROPIC_API_VERSION (checked by a test)
DEFAULT_BASE_URL = "https://api.anthropic.com"
CONNECT_TIMEOUT = 5.0
USER_AGENT = "tui-agent (anthropic-wire)"


class StatusError(Exception):
    """The API answered with an error: an HTTP status >= 400, or `event: error` in a 200 stream."""

    def __init__(self, status_code: int, body: Any, headers: Mapping[str, str] | None = None) -> None:
        self.status_code = status_code
        self.body = body
        self.headers = headers
        inner = body.get("error") if isinstance(body, dict) else None
        self.type = inner.get("type") if isinstance(inner, dict) else None
        self.api_message = (inner.get("message") if isinstance(inner, dict) else None) or (
            body if isinstance(body, str) and body else None)
        super().__init__(f"{status_code} {self.type or ''}: {self.api_message or ''}".strip())


class MessageBuilder:
    """Builds the assistant message from the stream's events, as the API documents them.

    `message_start` carries the message with empty content and the input usage; each block opens with
    `content_block_start`, grows through `content_block_delta`s (text, tool input as partial JSON,
    thinking, its signature, citations) and closes with `content_block_stop`, where a tool's input JSON is
    parsed; `message_delta` sets the stop reason and output usage; `message_stop` ends it.
    """

    def __init__(self) -> None:
        self.message: dict[str, Any] = {"role": "assistant", "content": [], "stop_reason": None, "usage": {}}
        self.stopped = False
        self._partial: dict[int, list[str]] = {}

    def apply(self, event: dict[str, Any]) -> str | None:
        """Fold one event in; the text it adds to the reply, if any. Raises `StatusError` on `error`
        and `ValueError` on an event that does not fit the message (a malformed stream)."""
        kind = event.get("type")
        if kind == "content_block_delta":
            return self._delta(int(event["index"]), event["delta"])
        if kind == "message_start":
            start = event["message"]
            self.message = {**start, "content": list(start.get("content") or []),
                            "usage": dict(start.get("usage") or {})}
        elif kind == "content_block_start":
            blocks = self.message["content"]
            index = int(event["index"])
            block = dict(event["content_block"])
            if index == len(blocks):
                blocks.append(block)
            elif index < len(blocks):
                blocks[index] = block
            else:
                raise ValueError(f"content block {index} started before block {len(blocks)}")
        elif kind == "content_block_stop":
            index = int(event["index"])
            raw = self._partial.pop(index, None)
            if raw is not None:
                text = "".join(raw)
                self._block(index)["input"] = json.loads(text) if text.strip() else {}
        elif kind == "message_delta":
            delta = event.get("delta") or {}
            for key in ("stop_reason", "stop_sequence"):
                if key in delta:
                    self.message[key] = delta[key]
            usage = event.get("usage") or {}
            self.message["usage"].update({k: v for k, v in usage.items() if v is not None})
        elif kind == "message_stop":
            self.stopped = True
        elif kind == "error":
            raise StatusError(200, event)
        return None  # ping and event types added later are ignored, as the API asks

    def _block(self, index: int) -> dict[str, Any]:
        blocks = self.message["content"]
        if not 0 <= index < len(blocks):
            raise ValueError(f"a delta for content block {index}, which was never started")
        return blocks[index]

    def _delta(self, index: int, delta: dict[str, Any]) -> str | None:
        block = self._block(index)
        kind = delta.get("type")
        if kind == "text_delta":
            text = delta.get("text") or ""
            block["text"] = block.get("text", "") + text
            return text
        if kind == "input_json_delta":
            self._partial.setdefault(index, []).append(delta.get("partial_json") or "")
        elif kind == "thinking_delta":
            block["thinking"] = block.get("thinking", "") + (delta.get("thinking") or "")
        elif kind == "signature_delta":
            block["signature"] = block.get("signature", "") + (delta.get("signature") or "")
        elif kind == "citations_delta":
            block.setdefault("citations", []).append(delta.get("citation"))
        return None


async def sse_events(lines: AsyncIterator[str]) -> AsyncIterator[dict[str, Any]]:
    """The JSON `data:` of each server-sent event (an event ends at a blank line)."""
    data: list[str] = []
    async for line in lines:
        if not line:
            if data:
                yield _parse("\n".join(data))
                data = []
        elif line.startswith("data:"):
            data.append(line[5:].lstrip(" ") if line[5:6] == " " else line[5:])
        # `event:` repeats the JSON's own "type"; `id:`, `retry:` and `:` comments are not used
    if data:
        yield _parse("\n".join(data))


def _parse(raw: str) -> dict[str, Any]:
    value = json.loads(raw)
    if not isinstance(value, dict):
        raise ValueError("an event whose data is not a JSON object")
    return value


class WireClient:
    """One HTTP connection pool for the provider's requests; created on first use, closed with it."""

    def __init__(self, api_key: str, base_url: str | None, timeout: float) -> None:
        import httpx2  # about a tenth of the SDK's import time; still only when a call needs it

        self._httpx = httpx2
        self.base_url = (base_url or os.environ.get("ANTHROPIC_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
        self.headers = {**custom_headers(os.environ.get("ANTHROPIC_CUSTOM_HEADERS")),
                        "Authorization": f"Bearer {api_key}", "anthropic-version": API_VERSION,
                        "content-type": "application/json", "accept": "application/json", "user-agent": USER_AGENT}
        self.client = httpx2.AsyncClient(timeout=httpx2.Timeout(timeout, connect=CONNECT_TIMEOUT))

    async def stream(self, body: dict[str, Any], builder: MessageBuilder) -> AsyncIterator[str]:
        """POST a streaming request; yields text as it arrives while `builder` assembles the message.
        The body is serialised once, here (no per-field transformation of the whole history)."""
        payload = encode({**body, "stream": True})
        async with self.client.stream("POST", f"{self.base_url}/v1/messages", content=payload,
                                      headers={**self.headers, "accept": "text/event-stream"}) as response:
            if response.status_code >= 400:
                raise await _status_error(response)
            async for event in sse_events(response.aiter_lines()):
                text = builder.apply(event)
                if text:
                    yield text

    async def count_tokens(self, body: dict[str, Any]) -> int:
        payload = encode(body)
        response = await self.client.post(f"{self.base_url}/v1/messages/count_tokens", content=payload,
                                          headers=self.headers)
        if response.status_code >= 400:
            raise await _status_error(response)
        return int(response.json()["input_tokens"])

    def is_connection_error(self, error: BaseException) -> bool:
        """No response came (refused, DNS, TLS, a timeout): worth a retry when nothing was shown."""
        return isinstance(error, (self._httpx.ConnectError, self._httpx.TimeoutException))

    async def close(self) -> None:
        """Named as the SDK clients' `close`, which `SdkProvider.aclose` calls."""
        await self.client.aclose()


def encode(body: dict[str, Any]) -> bytes:
    """The JSON body as UTF-8; text with a lone surrogate (undecodable bytes kept by a tool) is sent
    escaped (ensure_ascii) instead of failing the call."""
    try:
        return json.dumps(body, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(body).encode("ascii")


async def _status_error(response: Any) -> StatusError:
    raw = await response.aread()
    try:
        body: Any = json.loads(raw)
    except ValueError:
        body = raw.decode("utf-8", "replace").strip()
    return StatusError(response.status_code, body, response.headers)


def custom_headers(value: str | None) -> dict[str, str]:
    """`ANTHROPIC_CUSTOM_HEADERS`: one `Name: value` per line, as the SDK reads it."""
    headers: dict[str, str] = {}
    for line in (value or "").split("\n"):
        name, colon, rest = line.partition(":")
        if colon and name.strip():
            headers[name.strip()] = rest.strip()
    return headers
