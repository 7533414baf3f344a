"""The raw events of a Messages stream, read from the SDK's response and gathered into one plain message.

The SDK sends the request (its headers, User-Agent, auth, error classes); the body it hands back is read
here instead of through its `MessageStream`, which builds a typed snapshot of the whole message and a
typed event object for every delta (most of a long turn's client time). What is gathered is
the same message the SDK's accumulation gives (`tests/providers/test_sdk_streams.py` replays the SDK's
own recorded streams through both), as plain dicts, with what the SDK leaves vague said plainly:

- invalid UTF-8 becomes U+FFFD and the reply goes on (the SDK's decoder raises, ending the turn);
- a stream whose last event has no blank line after it still counts that event (the SDK drops it, and a
  missing `message_stop` looked like a dropped connection);
- an event that cannot be applied (a delta for a block that never started, data that is not JSON) raises
  `MalformedEvent` with one line saying which, never a bare IndexError;
- blocks keep every field as sent (a `fallback` block's `trigger` is echoed back verbatim).

Bedrock frames its events as AWS event-stream messages: those go through the platform client's own
decoder, and are gathered here the same way.
"""

from __future__ import annotations

import json
from typing import Any, AsyncIterator

# Blocks whose `input` arrives as `input_json_delta` fragments (the SDK's TRACKS_TOOL_INPUT).
_TOOL_INPUT = {"tool_use", "server_tool_use", "mcp_tool_use"}
_EVENT_STREAM = "application/vnd.amazon.eventstream"


class MalformedEvent(ValueError):
    """An event the stream cannot be read past: its one-line reason names the event."""


class StreamError(Exception):
    """An `event: error` inside a 200 stream (e.g. overloaded): its JSON body, or its text."""

    def __init__(self, body: Any, text: str) -> None:
        super().__init__(text)
        self.body = body


async def sse_events(chunks: AsyncIterator[bytes]) -> AsyncIterator[tuple[str, str]]:
    """(event name, data) for each server-sent event in `chunks`, decoded leniently (see the module). Lines
    are split as bytes, on CR and LF only (a U+2028 inside a JSON string is not a line end), then decoded."""
    pending = b""
    name = ""
    data: list[str] = []
    async for chunk in chunks:
        pending += chunk
        if pending.endswith(b"\r"):
            continue  # its LF may be in the next chunk
        lines = pending.splitlines(keepends=True)
        pending = lines.pop() if lines and not lines[-1].endswith((b"\n", b"\r")) else b""
        for raw in lines:
            line = raw.rstrip(b"\r\n").decode("utf-8", "replace")
            if not line:
                if data:
                    yield name, "\n".join(data)
                name, data = "", []
            elif line.startswith("data:"):
                data.append(line[6:] if line.startswith("data: ") else line[5:])
            elif line.startswith("event:"):
                name = line[6:].strip()
    for raw in pending.splitlines():  # the last event, with no blank line after it
        line = raw.decode("utf-8", "replace")
        if line.startswith("data:"):
            data.append(line[6:] if line.startswith("data: ") else line[5:])
        elif line.startswith("event:"):
            name = line[6:].strip()
    if data:
        yield name, "\n".join(data)


async def decoded_events(client: Any, response: Any) -> AsyncIterator[tuple[str, str]]:
    """The (name, data) events of the SDK's streaming `response`: Bedrock's frames through the client's own
    decoder, server-sent events through `sse_events`."""
    chunks = response.iter_bytes()
    if response.headers.get("content-type", "").split(";")[0].strip().lower() == _EVENT_STREAM:
        async for sse in client._make_sse_decoder().aiter_bytes(chunks):
            yield sse.event or "", sse.data
        return
    async for item in sse_events(chunks):
        yield item


class Gathered:
    """The message so far, as the SDK's accumulation would make it, in plain dicts."""

    def __init__(self) -> None:
        self.message: dict[str, Any] | None = None
        self.stopped = False
        self._json: dict[int, str] = {}

    def apply(self, name: str, data: str) -> str | None:
        """Apply one event; returns the text it adds to a text block (for the screen), else None."""
        if name == "ping" or not data:
            return None
        try:
            event = json.loads(data)
        except ValueError as error:
            if name == "error":
                raise StreamError(data, data) from None
            raise MalformedEvent(f"{name or 'an event'} whose data is not JSON ({error})") from None
        if name == "error" or (isinstance(event, dict) and event.get("type") == "error"):
            raise StreamError(event, str(event))
        if not isinstance(event, dict):
            raise MalformedEvent(f"{name or 'an event'} whose data is not an object")
        kind = event.get("type")
        if self.message is None:
            if kind == "message_start" and isinstance(event.get("message"), dict):
                self.message = dict(event["message"])
                self.message["content"] = list(self.message.get("content") or [])
                self.message["usage"] = dict(self.message.get("usage") or {})
                return None
            if kind in ("message_stop", "content_block_stop", "message_delta", "content_block_delta",
                        "content_block_start"):
                raise MalformedEvent(f"{kind} before message_start")
            return None  # an event type this version does not know: passed by, as the SDK does
        return self._apply(kind, event)

    def _apply(self, kind: Any, event: dict[str, Any]) -> str | None:
        message = self.message
        assert message is not None
        content: list[Any] = message["content"]
        if kind == "content_block_start":
            block = event.get("content_block")
            if not isinstance(block, dict):
                raise MalformedEvent("content_block_start without a block")
            content.append(dict(block))
            if block.get("type") == "fallback" and isinstance(block.get("to"), dict):
                message["model"] = block["to"].get("model", message.get("model"))
        elif kind == "content_block_delta":
            return self._delta(self._block(event, kind), event)
        elif kind == "content_block_stop":
            self._block(event, kind)
        elif kind == "message_delta":
            self._message_delta(message, event)
        elif kind == "message_stop":
            self.stopped = True
        return None

    def _block(self, event: dict[str, Any], kind: str) -> dict[str, Any]:
        index = event.get("index")
        content = self.message["content"] if self.message else []
        if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < len(content):
            raise MalformedEvent(f"{kind} for block {index!r}, which never started ({len(content)} started)")
        return content[index]

    def _delta(self, block: dict[str, Any], event: dict[str, Any]) -> str | None:
        delta = event.get("delta")
        if not isinstance(delta, dict):
            raise MalformedEvent("content_block_delta without a delta")
        kind, block_kind = delta.get("type"), block.get("type")
        if kind == "text_delta" and block_kind == "text":
            text = delta.get("text")
            if isinstance(text, str) and text:
                block["text"] = (block.get("text") or "") + text
                return text
        elif kind == "input_json_delta" and block_kind in _TOOL_INPUT:
            index = event["index"]
            self._json[index] = self._json.get(index, "") + str(delta.get("partial_json") or "")
        elif kind == "citations_delta" and block_kind == "text":
            block["citations"] = [*(block.get("citations") or []), delta.get("citation")]
        elif kind == "thinking_delta" and block_kind == "thinking":
            block["thinking"] = (block.get("thinking") or "") + str(delta.get("thinking") or "")
        elif kind == "signature_delta" and block_kind == "thinking":
            block["signature"] = delta.get("signature")
        elif kind == "compaction_delta" and block_kind == "compaction":
            block["content"] = delta.get("content")
            block["encrypted_content"] = delta.get("encrypted_content")
        return None

    @staticmethod
    def _message_delta(message: dict[str, Any], event: dict[str, Any]) -> None:
        delta: dict[str, Any] = event["delta"] if isinstance(event.get("delta"), dict) else {}
        for key in ("stop_reason", "stop_sequence", "stop_details"):
            message[key] = delta.get(key)
        if delta.get("container") is not None:
            message["container"] = delta["container"]
        for key in ("context_management", "input_transformations"):
            if event.get(key) is not None:
                message[key] = event[key]
        usage: dict[str, Any] = event["usage"] if isinstance(event.get("usage"), dict) else {}
        message["usage"]["output_tokens"] = usage.get("output_tokens")
        for key, value in usage.items():  # cumulative totals: a count left out keeps message_start's
            if value is not None and key != "output_tokens":
                message["usage"][key] = value

    def final(self) -> dict[str, Any] | None:
        """The message with each tool's input parsed from its fragments (partly, as the SDK does, when the
        reply was cut off); `MalformedEvent` when the input is not JSON at all."""
        if self.message is None:
            return None
        for index, raw in self._json.items():
            if raw:
                self.message["content"][index]["input"] = _partial_json(raw)
        return self.message


def _partial_json(raw: str) -> Any:
    from jiter import from_json  # the SDK's own parser (its dependency), partial mode as it uses it

    try:
        return from_json(raw.encode("utf-8", "surrogatepass"), partial_mode=True)
    except ValueError as error:
        raise MalformedEvent(f"a tool's input that is not JSON ({error})") from None
