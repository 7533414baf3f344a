"""What an answer says about its call: the usage as the API returned it, the stop reason, the model, an error,
and the reply, read chunk by chunk as the answer passes (`AnswerReader`), never kept whole.

Why as it passes, and bounded: an answer may be hundreds of MB (a long generation, a large JSON body); the
proxy passes each chunk on first, then feeds it here. A JSON body or an SSE stream, gzip or deflate encoded
when the upstream chose to (the proxy passes encodings through untouched: they are undone here, in bounded
steps). Each API puts these in its own place: the Messages API in `message_start` and `message_delta`
events (or the body), the Responses API in `response.completed`/`incomplete`/`failed`, Chat Completions in
the last chunk. What is kept is bounded: the reply's text up to `KEEP_REPLY_CHARS`, a JSON body or one SSE
line up to `KEEP_LINE_BYTES`; past that only its tail is kept, where the usage sits (`usage_from_tail`).
"""

from __future__ import annotations

import json
import re
import zlib
from dataclasses import dataclass, field
from typing import Any

KEEP_LINE_BYTES = 8 * 1024 * 1024  # a JSON body or one SSE line longer than this is read from its tail
TAIL_BYTES = 256 * 1024  # the tail kept of such a line: its usage is at the end
KEEP_REPLY_CHARS = 1_000_000  # the reply's text (all blocks) kept for the recording
CUT = "[… {} more characters not recorded]"


@dataclass
class Outcome:
    usage: dict[str, Any] = field(default_factory=dict)
    stop_reason: str | None = None
    model: str | None = None
    error: str | None = None  # the API's error type and message, when the answer is an error
    reply: list[dict[str, Any]] = field(default_factory=list)  # the answer's content (Messages API blocks)


class AnswerReader:
    """Feed the answer's bytes as they pass (`feed`); `finish()` says what it held."""

    def __init__(self, api: str, content_type: str | None, encoding: str | None) -> None:
        self.api = api
        self.stream = "text/event-stream" in (content_type or "")
        encoding = (encoding or "").strip().lower()
        self._inflater = zlib.decompressobj(wbits=47 if encoding != "deflate" else 15) if encoding in (
            "gzip", "x-gzip", "deflate") else None
        self._line = bytearray()  # the SSE line (or JSON body) being gathered, up to KEEP_LINE_BYTES
        self._tail = bytearray()  # past that: only its last TAIL_BYTES
        self._over = False
        self.outcome = Outcome()
        self.fold = ReplyFold(api)

    def feed(self, chunk: bytes) -> None:
        if self._inflater is None:
            self._take_bytes(chunk)
            return
        try:
            data = self._inflater.decompress(chunk, KEEP_LINE_BYTES)
            while data:
                self._take_bytes(data)
                tail = self._inflater.unconsumed_tail
                data = self._inflater.decompress(tail, KEEP_LINE_BYTES) if tail else b""
        except zlib.error:
            self._inflater = None
            self._line, self._tail, self._over = bytearray(), bytearray(), True  # unreadable: no usage

    def _take_bytes(self, data: bytes) -> None:
        if not self.stream:
            self._gather(data)
            return
        start = 0
        while (end := data.find(b"\n", start)) >= 0:
            self._gather(data[start:end])
            self._line_done()
            start = end + 1
        self._gather(data[start:])

    def _gather(self, data: bytes) -> None:
        if self._over:
            self._tail += data
            del self._tail[:-TAIL_BYTES]
        elif len(self._line) + len(data) > KEEP_LINE_BYTES:
            self._over = True
            self._tail = (self._line + data)[-TAIL_BYTES:]
            self._line = bytearray()
        else:
            self._line += data

    def _line_done(self) -> None:
        line, tail, over = bytes(self._line), bytes(self._tail), self._over
        self._line, self._tail, self._over = bytearray(), bytearray(), False
        if over:
            self._take_usage(usage_from_tail(tail))
            self.outcome.stop_reason = self.outcome.stop_reason or _stop_from_tail(tail)
        elif line.startswith(b"data:"):
            self._take_json(line[5:])

    def _take_json(self, raw: bytes) -> None:
        data = raw.strip()
        if not data or data == b"[DONE]":
            return
        try:
            value = json.loads(data)
        except (ValueError, RecursionError):
            return
        if isinstance(value, dict):
            take(self.api, value, self.outcome)
            self.fold.take(value)

    def _take_usage(self, usage: dict[str, Any] | None) -> None:
        if usage:
            self.outcome.usage.update(usage)

    def finish(self) -> Outcome:
        if self.stream:
            if self._line or self._over:
                self._line_done()
        elif self._over:
            self._take_usage(usage_from_tail(bytes(self._tail)))
            self.outcome.stop_reason = self.outcome.stop_reason or _stop_from_tail(bytes(self._tail))
        else:
            self._take_json(bytes(self._line))
        self._line, self._tail = bytearray(), bytearray()
        self.outcome.reply = self.fold.blocks()
        return self.outcome


def usage_from_tail(tail: bytes) -> dict[str, Any] | None:
    """The last `"usage": {...}` object in the end of an answer too large to read whole."""
    text = tail.decode("utf-8", errors="replace")
    decoder = json.JSONDecoder()
    for found in reversed(list(re.finditer(r'"usage"\s*:\s*\{', text))):
        try:
            value, _ = decoder.raw_decode(text, found.end() - 1)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    return None


def _stop_from_tail(tail: bytes) -> str | None:
    found = re.findall(rb'"(?:stop_reason|finish_reason|status)"\s*:\s*"([a-z_]{1,40})"', tail)
    return found[-1].decode() if found else None


class ReplyFold:
    """The answer's content as Messages API blocks, folded event by event with its text bounded: a body's
    `content`, a stream's blocks put together (text, thinking and tool input deltas), a Responses answer's
    output items; Chat Completions: its text."""

    def __init__(self, api: str) -> None:
        self.api = api
        self._blocks: dict[int, dict[str, Any]] = {}
        self._partial: dict[int, list[str]] = {}
        self._whole: list[dict[str, Any]] | None = None  # a body's content, or a Responses answer's output
        self._items: list[dict[str, Any]] = []  # Responses output items as each one is done
        self._kept = 0  # characters of text kept so far
        self._dropped = 0

    def _keep(self, text: str) -> str:
        room = max(KEEP_REPLY_CHARS - self._kept, 0)
        self._kept += min(len(text), room)
        self._dropped += max(len(text) - room, 0)
        return text[:room]

    def take(self, item: dict[str, Any]) -> None:
        if self.api == "anthropic-messages":
            self._messages_event(item)
        elif self.api == "openai-responses":
            self._responses_event(item)
        elif self.api == "openai-chat":
            for choice in item.get("choices") or []:
                if isinstance(choice, dict):
                    content = (choice.get("delta") or choice.get("message") or {}).get("content")
                    if content:
                        self._add_text(0, "text", self._keep(str(content)))

    def _add_text(self, index: int, key: str, text: str) -> None:
        block = self._blocks.setdefault(index, {"type": "text", "text": ""})
        block[key] = block.get(key, "") + text

    def _messages_event(self, item: dict[str, Any]) -> None:
        kind = item.get("type")
        if kind == "message" and isinstance(item.get("content"), list):
            self._whole = [b for b in item["content"] if isinstance(b, dict)]
            return
        index = item.get("index") if isinstance(item.get("index"), int) else -1
        if kind == "content_block_start" and isinstance(item.get("content_block"), dict):
            self._blocks[index] = dict(item["content_block"])
        elif kind == "content_block_delta" and index in self._blocks:
            delta = item.get("delta") or {}
            for key in ("text", "thinking", "signature"):
                if isinstance(delta.get(key), str):
                    self._add_text(index, key, delta[key] if key == "signature" else self._keep(delta[key]))
            if isinstance(delta.get("partial_json"), str):
                self._partial.setdefault(index, []).append(self._keep(delta["partial_json"]))

    def _responses_event(self, item: dict[str, Any]) -> None:
        if item.get("type") == "response.output_item.done" and isinstance(item.get("item"), dict):
            self._items.append(item["item"])
            return
        response = item.get("response") if isinstance(item.get("response"), dict) else item
        if isinstance(response.get("output"), list):
            self._whole = [o for o in response["output"] if isinstance(o, dict)]

    def blocks(self) -> list[dict[str, Any]]:
        if self.api == "openai-responses":
            from tui_agent.core.recordings.codex_rollout import item_blocks

            found = [item_blocks(o) for o in (self._whole if self._whole is not None else self._items)]
            out = [b for f in found if f and f[0] == "assistant" for b in f[1]]
        elif self._whole is not None:
            out = self._whole
        else:
            for index, pieces in self._partial.items():
                raw = "".join(pieces)
                try:
                    self._blocks[index]["input"] = json.loads(raw) if raw else {}
                except ValueError:
                    self._blocks[index]["input"] = {"partial_json": raw}
            out = [self._blocks[i] for i in sorted(self._blocks)]
        if self._dropped:
            out = out + [{"type": "text", "text": CUT.format(f"{self._dropped:,}")}]
        return out


def take(api: str, item: dict[str, Any], out: Outcome) -> None:
    """What one event (or a whole body) says of the call: its usage, stop reason, model or error."""
    kind = item.get("type")
    error = item.get("error")
    if isinstance(error, dict) and (kind == "error" or "message" in error):
        out.error = f"{error.get('type') or error.get('code') or 'error'}: {error.get('message') or ''}".strip()
    if api == "anthropic-count-tokens":
        if isinstance(item.get("input_tokens"), int):
            out.usage = {"input_tokens": item["input_tokens"]}
        return
    if api == "anthropic-messages":
        message = item.get("message") if kind == "message_start" else item if kind == "message" else None
        if isinstance(message, dict):
            out.model = message.get("model") or out.model
            out.usage.update(message.get("usage") or {})
            out.stop_reason = message.get("stop_reason") or out.stop_reason
        if kind == "message_delta":
            out.usage.update({k: v for k, v in (item.get("usage") or {}).items() if v is not None})
            out.stop_reason = (item.get("delta") or {}).get("stop_reason") or out.stop_reason
        return
    if api == "openai-responses":
        response = item.get("response") if isinstance(item.get("response"), dict) else (
            item if kind is None and "output" in item else None)
        if isinstance(response, dict):
            out.model = response.get("model") or out.model
            if isinstance(response.get("usage"), dict):
                out.usage = response["usage"]
            details = response.get("incomplete_details") or {}
            out.stop_reason = details.get("reason") or response.get("status") or out.stop_reason
        return
    if api == "openai-chat":
        out.model = item.get("model") or out.model
        if isinstance(item.get("usage"), dict):
            out.usage = item["usage"]
        for choice in item.get("choices") or []:
            if isinstance(choice, dict) and choice.get("finish_reason"):
                out.stop_reason = choice["finish_reason"]
