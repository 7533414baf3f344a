"""The SDK's accumulated message as history keeps it: plain dicts with only the keys the API takes back.

The SDK builds its final message with pydantic's `construct` (no validation), so whatever the stream
carried arrives here: `citations: null` then a citation delta, a citation that is not an object, usage
counts that are not numbers, a `tool_use` without an `id`. Each is tolerated here, field by field, so
an answer already shown is never lost to a shape the SDK accepted. `model_dump()` output is
never kept as is: keys such as `citations: None` or `parsed_output` are refused when sent back.
"""

from __future__ import annotations

from typing import Any, Mapping

from tui_agent.core.messages import Block, Message, assemble_content, clean_block
from tui_agent.core.providers.base import UsageInfo


def count(value: Any) -> int:
    """A usage count as an int: numbers and numeric strings are read, anything else counts as 0."""
    if isinstance(value, bool):
        return 0
    if isinstance(value, (int, float)):
        return max(int(value), 0) if value == value and abs(value) != float("inf") else 0
    if isinstance(value, str):
        try:
            return count(float(value.strip()))
        except ValueError:
            return 0
    return 0


def usage_from(usage: Mapping[str, Any] | Any | None) -> UsageInfo:
    """UsageInfo from the message's usage (a dict or the SDK's object); unreadable counts are 0."""
    if usage is None:
        return UsageInfo()
    if not isinstance(usage, Mapping):
        usage = as_dict(usage)
    return UsageInfo(
        input_tokens=count(usage.get("input_tokens")),
        output_tokens=count(usage.get("output_tokens")),
        cache_creation_input_tokens=count(usage.get("cache_creation_input_tokens")),
        cache_read_input_tokens=count(usage.get("cache_read_input_tokens")),
        cache_write_1h=_hour_writes(usage.get("cache_creation")),
    )


def _hour_writes(split: Any) -> int:
    """The 1-hour share of the cache writes (`usage.cache_creation.ephemeral_1h_input_tokens`), 0 if absent."""
    if split is not None and not isinstance(split, Mapping):
        split = as_dict(split)
    return count(split.get("ephemeral_1h_input_tokens")) if isinstance(split, Mapping) else 0


def as_dict(value: Any) -> dict[str, Any]:
    """An SDK model (or a dict) as a plain dict, without pydantic's serialisation warnings for the
    values `construct` let through."""
    if isinstance(value, Mapping):
        return dict(value)
    to_dict = getattr(value, "to_dict", None)
    if callable(to_dict):
        try:
            return to_dict(warnings=False)
        except TypeError:
            return to_dict()
    return {}


def _citations(raw: Any) -> list[dict[str, Any]]:
    """The citations worth keeping: objects only, without null fields."""
    if not isinstance(raw, list):
        return []
    return [{k: v for k, v in c.items() if v is not None} for c in raw if isinstance(c, Mapping) and c]


def block_from_response(block: Mapping[str, Any]) -> Block | None:
    """One content block as an API-clean dict (None for an empty text block the API would refuse).

    Thinking blocks keep their text and signature verbatim: the API checks the signature when they
    are sent back, so not one byte may change.
    """
    kind = block.get("type")
    if kind == "text":
        text = block.get("text")
        if not isinstance(text, str) or not text.strip():
            return None  # blank text: the API refuses it when sent back
        out: Block = {"type": "text", "text": text}
        citations = _citations(block.get("citations"))
        if citations:
            out["citations"] = citations
        return out
    if kind == "tool_use":
        tool_input = block.get("input")
        out = {"type": "tool_use", "id": str(block.get("id") or ""), "name": str(block.get("name") or ""),
               "input": tool_input if isinstance(tool_input, dict) else {}}
        if isinstance(block.get("caller"), Mapping):  # who called the tool (the API takes it back)
            out["caller"] = _without_nones(block["caller"])
        return out
    if kind == "thinking":
        return {"type": "thinking", "thinking": block.get("thinking") or "", "signature": block.get("signature") or ""}
    if kind == "redacted_thinking":
        return {"type": "redacted_thinking", "data": block.get("data") or ""}
    if kind == "fallback":  # sent back where it stood, its `trigger` echoed verbatim (a null category too)
        return {k: v for k, v in block.items() if v is not None or k == "trigger"}
    return clean_block(_without_nones(block))


def _without_nones(value: Any) -> Any:
    """`value` without null fields at any depth (the SDK's models carry every optional field as None)."""
    if isinstance(value, Mapping):
        return {k: _without_nones(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_nones(v) for v in value]
    return value


def message_from_response(message: Mapping[str, Any] | Any) -> Message:
    """The final assistant message as history wants it: plain dicts, API-clean keys, no blank text,
    unique non-empty tool_use ids (a missing one is named), never empty."""
    if not isinstance(message, Mapping):
        message = as_dict(message)
    blocks = message.get("content")
    content = [b for b in (block_from_response(block) for block in blocks if isinstance(block, Mapping))
               if b is not None] if isinstance(blocks, list) else []
    return {"role": "assistant", "content": assemble_content(content)}
