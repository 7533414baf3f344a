"""One line of a Claude Code log as the loader reads it: a record it can use (or not), and the blocks a
role may send.

Why apart from `core.transcripts`: this is the part that trusts nothing about a single line (not JSON, too
deep, lone surrogates, blocks a role cannot carry, fields of the wrong type), and it knows nothing of the
lines around it; the loader folds the records it hands over into one history.
"""

from __future__ import annotations

import json
import re
from sys import intern
from typing import Any

from tui_agent.core.messages import is_blank_text

SKIPPED = object()  # `read_record`: the line is not a log record (counted as skipped), not just one to ignore


# Block types a role cannot send: the API rejects a tool_use from the user, a tool_result from the model.
_NOT_FROM = {"user": {"tool_use", "server_tool_use", "thinking", "redacted_thinking"}, "assistant": {"tool_result"}}
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def content_blocks(content: Any, role: str) -> list[dict[str, Any]]:
    """The record's blocks that `role` may send, without blank text ones (the API refuses "text content
    blocks must contain non-whitespace text", and a log can hold them: the model sometimes sends "\n\n"
    before a tool call), with the fields the API requires of the kind it requires."""
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    if not isinstance(content, list):
        return []
    kept = []
    for block in content:
        if not isinstance(block, dict) or not isinstance(block.get("type"), str) or is_blank_text(block):
            continue
        kind = block["type"]
        if kind in _NOT_FROM[role] or (kind == "text" and not isinstance(block.get("text"), str)):
            continue
        if kind == "tool_use" and (not isinstance(block.get("name"), str) or not isinstance(block.get("input"), dict)):
            block = {**block, "name": str(block.get("name") or "unknown"),
                     "input": block["input"] if isinstance(block.get("input"), dict) else {}}
        if kind == "tool_result" and not isinstance(block.get("content", ""), (str, list)):
            block = {**block, "content": json.dumps(block["content"])}
        kept.append(shared_keys(block))
    return kept


def shared_keys(block: dict[str, Any]) -> dict[str, Any]:
    """`block` with its keys, its `type`, a tool's name and input's keys and its result's inner blocks' keys
    interned. `json.loads` makes a new string of every key of every line, so a long log kept as messages
    held its own "type", "tool_use_id", "input" and "file_path" per block: about a tenth of a watch's memory
    per call. Equal strings either way: no figure changes."""
    out = {intern(key): value for key, value in block.items()}
    kind = out["type"] = intern(out["type"])
    if kind == "tool_use":
        if isinstance(out.get("name"), str):
            out["name"] = intern(out["name"])
        if isinstance(out.get("input"), dict):
            out["input"] = {intern(key) if type(key) is str else key: value for key, value in out["input"].items()}
    elif kind == "tool_result" and isinstance(out.get("content"), list):
        out["content"] = [shared_keys(item) if isinstance(item, dict) and isinstance(item.get("type"), str) else item
                          for item in out["content"]]
    return out


def _scrub_surrogates(value: Any) -> Any:
    """`value` with every lone surrogate replaced by U+FFFD (walked without recursion: it may be deep)."""
    def fix(item: Any) -> Any:
        return _SURROGATE.sub("\ufffd", item) if isinstance(item, str) else item

    root = [fix(value)]
    stack: list[Any] = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            for i, item in enumerate(node):
                node[i] = fix(item)
                if isinstance(node[i], (list, dict)):
                    stack.append(node[i])
        elif isinstance(node, dict):
            for key in list(node):
                item = fix(node.pop(key))
                node[fix(key)] = item
                if isinstance(item, (list, dict)):
                    stack.append(item)
    return root[0]


def read_record(line: str) -> dict[str, Any] | None | object:
    """The record of one log line the loader folds (a user or assistant message of the main chain, or a
    `compact_boundary` marker), None for a line it ignores (blank, a sidechain, another kind of record),
    `SKIPPED` for a line that is not a record at all (not JSON, too deep, not an object)."""
    if not line.strip():
        return None
    try:
        record = json.loads(line)
    except (ValueError, RecursionError):  # not JSON, too deep, or a number too long to convert
        return SKIPPED
    if _SURROGATE_ESCAPE.search(line):
        record = _scrub_surrogates(record)
    if not isinstance(record, dict):
        return SKIPPED
    if record.get("isSidechain"):
        return None
    if record.get("type") == "system" and record.get("subtype") == "compact_boundary":
        return record  # a marker only: where the recorded agent compacted
    if record.get("type") not in ("user", "assistant") or not isinstance(record.get("message"), dict):
        return None
    if record["type"] == "assistant" and record["message"].get("model") == "<synthetic>":
        return None
    return record


def record_blocks(record: dict[str, Any], keep_thinking: bool) -> list[dict[str, Any]]:
    """The blocks a user or assistant record adds to the history (none: it adds nothing)."""
    role = "assistant" if record["type"] == "assistant" else "user"
    blocks = content_blocks(record["message"].get("content"), role)
    if not keep_thinking:
        blocks = [b for b in blocks if b.get("type") not in ("thinking", "redacted_thinking")]
    return blocks


def pre_tokens(record: dict[str, Any]) -> int | None:
    meta = record.get("compactMetadata")
    value = meta.get("preTokens") if isinstance(meta, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def timestamp(value: Any) -> float | None:
    """An ISO 8601 timestamp as POSIX seconds (None when absent or unreadable: a gap is then unknown)."""
    if not isinstance(value, str):
        return None
    from datetime import datetime, timezone

    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.timestamp()


def lands(record: dict[str, Any], keep_thinking: bool, keep_meta: bool) -> bool:
    """Whether `record` adds to the history (the same tests as the loader's fold)."""
    if record["type"] == "user" and record.get("isMeta") and not keep_meta:
        return False
    return bool(record_blocks(record, keep_thinking))


MISS_REASON_CHARS = 60  # a reason's type is a short word; a log is untrusted text


def miss_reason(message: dict[str, Any]) -> tuple[str, int | None] | None:
    """The API's own word on why a call's prompt cache missed, as Claude Code logs it with the response
    (`message.diagnostics.cache_miss_reason`: `{"type": "messages_changed", "cache_missed_input_tokens": N}`),
    or None. Whatever else a hostile log puts there is ignored."""
    diagnostics = message.get("diagnostics")
    reason = diagnostics.get("cache_miss_reason") if isinstance(diagnostics, dict) else None
    if not isinstance(reason, dict) or not isinstance(reason.get("type"), str):
        return None
    kind = "".join(c for c in reason["type"][:MISS_REASON_CHARS] if c.isalnum() or c in "_-")
    missed = reason.get("cache_missed_input_tokens")
    tokens = missed if isinstance(missed, int) and not isinstance(missed, bool) and 0 <= missed < 10**12 else None
    return (kind, tokens) if kind else None
