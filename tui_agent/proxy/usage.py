"""What an answer says about its call: the usage as the API returned it, the stop reason, the model, an error.

Read after the answer was passed on (never on the way), from the bytes as they came: a JSON body or an SSE
stream, gzip or deflate encoded when the upstream chose to (the proxy passes encodings through untouched).
Each API puts these in its own place: the Messages API in `message_start` and `message_delta` events (or the
body), the Responses API in `response.completed`/`incomplete`/`failed`, Chat Completions in the last chunk.
"""

from __future__ import annotations

import json
import zlib
from dataclasses import dataclass, field
from typing import Any

MAX_DECODED = 64 * 1024 * 1024  # an answer larger than this decoded is not read for usage


@dataclass
class Outcome:
    usage: dict[str, Any] = field(default_factory=dict)
    stop_reason: str | None = None
    model: str | None = None
    error: str | None = None  # the API's error type and message, when the answer is an error
    reply: list[dict[str, Any]] = field(default_factory=list)  # the answer's content (Messages API blocks)


def decoded(body: bytes, encoding: str | None) -> bytes:
    """The answer's bytes without its content encoding (gzip, deflate; anything else: as is)."""
    encoding = (encoding or "").strip().lower()
    if encoding in ("gzip", "x-gzip", "deflate"):
        try:
            inflater = zlib.decompressobj(wbits=47 if encoding != "deflate" else 15)
            return inflater.decompress(body, MAX_DECODED)
        except zlib.error:
            return b""
    return body


def events(text: str) -> list[dict[str, Any]]:
    """The JSON objects of an SSE stream's `data:` lines (a `[DONE]` or a broken line is skipped)."""
    out = []
    for line in text.splitlines():
        if not line.startswith("data:"):
            continue
        data = line[5:].strip()
        if not data or data == "[DONE]":
            continue
        try:
            value = json.loads(data)
        except ValueError:
            continue
        if isinstance(value, dict):
            out.append(value)
    return out


def read_outcome(api: str, body: bytes, content_type: str | None, encoding: str | None) -> Outcome:
    raw = decoded(body, encoding)
    text = raw.decode("utf-8", errors="replace")
    if "text/event-stream" in (content_type or ""):
        items = events(text)
    else:
        try:
            value = json.loads(text) if text.strip() else None
        except ValueError:
            value = None
        items = [value] if isinstance(value, dict) else []
    outcome = Outcome()
    for item in items:
        _take(api, item, outcome)
    outcome.reply = reply_blocks(api, items)
    return outcome


def reply_blocks(api: str, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The answer's content as Messages API blocks: a body's `content`, a stream's blocks put together (text,
    thinking and tool input deltas), or a Responses answer's output items. Chat Completions: its text."""
    if api == "anthropic-messages":
        blocks: dict[int, dict[str, Any]] = {}
        partial: dict[int, str] = {}
        for item in items:
            kind = item.get("type")
            if kind == "message" and isinstance(item.get("content"), list):
                return [b for b in item["content"] if isinstance(b, dict)]
            index = item.get("index") if isinstance(item.get("index"), int) else -1
            if kind == "content_block_start" and isinstance(item.get("content_block"), dict):
                blocks[index] = dict(item["content_block"])
            elif kind == "content_block_delta" and index in blocks:
                delta = item.get("delta") or {}
                for key in ("text", "thinking", "signature"):
                    if isinstance(delta.get(key), str):
                        blocks[index][key] = blocks[index].get(key, "") + delta[key]
                if isinstance(delta.get("partial_json"), str):
                    partial[index] = partial.get(index, "") + delta["partial_json"]
        for index, raw in partial.items():
            try:
                blocks[index]["input"] = json.loads(raw) if raw else {}
            except ValueError:
                blocks[index]["input"] = {"partial_json": raw}
        return [blocks[i] for i in sorted(blocks)]
    if api == "openai-responses":
        from tui_agent.core.recordings.codex_rollout import item_blocks

        for item in reversed(items):
            response = item.get("response") if isinstance(item.get("response"), dict) else item
            if isinstance(response.get("output"), list):
                found = [item_blocks(o) for o in response["output"] if isinstance(o, dict)]
                return [b for f in found if f and f[0] == "assistant" for b in f[1]]
        return []
    if api == "openai-chat":
        text = "".join(str(((c.get("delta") or c.get("message") or {}).get("content")) or "")
                       for item in items for c in item.get("choices") or [] if isinstance(c, dict))
        return [{"type": "text", "text": text}] if text else []
    return []


def _take(api: str, item: dict[str, Any], out: Outcome) -> None:
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
