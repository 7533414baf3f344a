"""Map an MCP `CallToolResult` to tool_result content the model can read.

Text blocks stay text (joined with newlines into one string when that is all there is, like the seed);
images become Anthropic image blocks so the model sees them; audio, binary resources and image types the
API cannot take become a short bracketed note instead of megabytes of base64. Structured content is
added as JSON text only when the server sent no text, because the spec asks servers to mirror it in a
text block and we should not show the model the same data twice. Works on the SDK's objects by
attribute (`mcp` 2.x snake_case), without importing the SDK.
"""

from __future__ import annotations

import json
from typing import Any

from tui_agent.core.tools.base import ToolOutput

# Image media types the Anthropic API accepts in an image block.
MODEL_IMAGE_TYPES = ("image/jpeg", "image/png", "image/gif", "image/webp")
NO_CONTENT = "(no content)"
# Claude Code caps MCP output at 25k tokens; at ~4 characters a token that is 100,000 characters. One
# 50 MB result would otherwise fill the context window on its own.
MAX_RESULT_CHARS = 100_000
CAPPED_NOTE = ("\n\n[MCP result truncated: {shown:,} of {total:,} characters shown (the limit is "
               f"{MAX_RESULT_CHARS:,}). Ask the tool for less, e.g. a narrower query or a page of results.]")


def _capped(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """At most MAX_RESULT_CHARS of text (images count their base64 size), with a note saying what was cut."""
    def size(block: dict[str, Any]) -> int:
        if block["type"] == "text":
            return len(block["text"])
        return len(str(block.get("source", {}).get("data", "")))

    total = sum(size(b) for b in blocks)
    if total <= MAX_RESULT_CHARS:
        return blocks
    room = MAX_RESULT_CHARS
    out: list[dict[str, Any]] = []
    for block in blocks:
        if room <= 0:
            break
        if block["type"] == "text":
            text = block["text"][:room]
            room -= len(text)
            out.append({**block, "text": text})
        elif size(block) <= room:
            room -= size(block)
            out.append(block)
        else:
            out.append({"type": "text", "text": "[image omitted: over the MCP result limit]"})
    shown = MAX_RESULT_CHARS - max(room, 0)
    note = CAPPED_NOTE.format(shown=shown, total=total)
    if out and out[-1]["type"] == "text":
        out[-1] = {**out[-1], "text": out[-1]["text"] + note}
    else:
        out.append({"type": "text", "text": note.strip()})
    return out


def format_result(result: Any) -> ToolOutput:
    """`result` is an `mcp.types.CallToolResult` (or anything with the same attributes)."""
    blocks: list[dict[str, Any]] = []
    for item in getattr(result, "content", None) or []:
        blocks.append(_block(item))
    structured = getattr(result, "structured_content", None)
    if structured is not None and not any(b["type"] == "text" for b in blocks):
        blocks.append({"type": "text", "text": json.dumps(structured, indent=2, ensure_ascii=False)})
    is_error = bool(getattr(result, "is_error", False))
    blocks = _capped(blocks)
    if not blocks:
        return ToolOutput(NO_CONTENT, is_error)
    if all(b["type"] == "text" for b in blocks):
        return ToolOutput("\n".join(b["text"] for b in blocks), is_error)
    return ToolOutput(blocks, is_error)


def _block(item: Any) -> dict[str, Any]:
    kind = getattr(item, "type", None)
    if kind == "text":
        return {"type": "text", "text": str(getattr(item, "text", ""))}
    if kind == "image":
        mime = getattr(item, "mime_type", None) or "unknown"
        if mime in MODEL_IMAGE_TYPES:
            return {"type": "image", "source": {"type": "base64", "media_type": mime, "data": item.data}}
        return {"type": "text", "text": f"[image: {mime}, a type the model cannot read; omitted]"}
    if kind == "audio":
        return {"type": "text", "text": f"[audio: {getattr(item, 'mime_type', None) or 'unknown'}; omitted]"}
    if kind == "resource":
        resource = getattr(item, "resource", None)
        uri = str(getattr(resource, "uri", ""))
        text = getattr(resource, "text", None)
        if isinstance(text, str):
            return {"type": "text", "text": f"[resource: {uri}]\n{text}"}
        mime = getattr(resource, "mime_type", None) or "unknown"
        return {"type": "text", "text": f"[resource: {uri} ({mime}), binary content omitted]"}
    if kind == "resource_link":
        name = getattr(item, "name", "") or ""
        return {"type": "text", "text": f"[resource link: {getattr(item, 'uri', '')}{' ' + name if name else ''}]"}
    return {"type": "text", "text": _compact_json(item)}


def _compact_json(item: Any) -> str:
    dump = getattr(item, "model_dump", None)
    data = dump(mode="json", by_alias=True, exclude_none=True) if callable(dump) else item
    try:
        return json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    except TypeError:
        return str(data)
