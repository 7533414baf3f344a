"""Load a real Claude Code session log (JSONL) as a Messages API history.

Used to open someone's agent session in the budget panel ("what did my agent forget?"), and by tests
and benchmarks as realistic data. Follows `shared/reference/transcripts-format.md` §4: keep user and
assistant records of the main chain, merge the lines of one API response, group parallel tool_results
into one user message, and answer any unanswered tool_use so the history is valid for the API.

A log is untrusted input (`--transcript`, `replay`): whatever it holds, the loader repairs or drops it
and never hands the engine a history the API would reject (`protocol_errors` is empty): blocks a role
cannot carry are dropped (tool_use from the user, tool_result from the assistant), a tool_use without
an id or with one already used gets a fresh id (its result follows it), lone surrogates become U+FFFD
(they cannot be encoded to print or send), and a line too deep or too large to parse is skipped.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from tui_agent.core.config_files import read_bytes_capped
from tui_agent.core.messages import Message, is_blank_text, tool_result_block

MISSING_RESULT = "[result missing]"
MAX_TRANSCRIPT_BYTES = 512 * 1024 * 1024  # the largest real logs are tens of MB
CONTINUATION_PREFIX = "This session is being continued from a previous conversation"


@dataclass
class TranscriptLoad:
    history: list[Message]
    skipped_lines: int = 0
    compaction_summaries: list[int] = field(default_factory=list)  # history indices of summary messages
    usage: list[dict[str, int]] = field(default_factory=list)  # per API response, deduplicated
    models: set[str] = field(default_factory=set)
    # (history index of an assistant message, the logged usage of the API call that began it): the real
    # prompt size of each recorded call, for the economics replay and the estimator's error.
    call_usage: list[tuple[int, dict[str, int]]] = field(default_factory=list)
    # history index of the first message after each `compact_boundary` record (the agent compacted there)
    compaction_boundaries: list[int] = field(default_factory=list)
    # the `compactMetadata.preTokens` of each `compact_boundary` (the context size the agent compacted
    # from, as it logged it; None when absent), in the order of `compaction_boundaries`
    boundary_pre_tokens: list[int | None] = field(default_factory=list)
    # history index of an assistant message → the model that wrote it (whose signature its thinking carries)
    message_models: dict[int, str] = field(default_factory=dict)
    # history index of an assistant message → when the call that began it was logged (POSIX seconds): the
    # gaps price cache expiry
    call_times: dict[int, float] = field(default_factory=dict)


# Block types a role cannot send: the API rejects a tool_use from the user, a tool_result from the model.
_NOT_FROM = {"user": {"tool_use", "server_tool_use", "thinking", "redacted_thinking"}, "assistant": {"tool_result"}}
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _content_blocks(content: Any, role: str) -> list[dict[str, Any]]:
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
        kept.append(block)
    return kept


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


def _records(lines: Iterable[str], load: TranscriptLoad) -> list[dict[str, Any]]:
    records = []
    for line in lines:
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):  # not JSON, too deep, or a number too long to convert
            load.skipped_lines += 1
            continue
        if _SURROGATE_ESCAPE.search(line):
            record = _scrub_surrogates(record)
        if not isinstance(record, dict):
            load.skipped_lines += 1
            continue
        if record.get("isSidechain"):
            continue
        if record.get("type") == "system" and record.get("subtype") == "compact_boundary":
            records.append(record)  # a marker only: where the recorded agent compacted
            continue
        if record.get("type") not in ("user", "assistant") or not isinstance(record.get("message"), dict):
            continue
        if record["type"] == "assistant" and record["message"].get("model") == "<synthetic>":
            continue
        records.append(record)
    return records


def load_transcript(path: str | Path, *, keep_thinking: bool = True, keep_meta: bool = True) -> TranscriptLoad:
    """Parse `path`; never raises on bad lines (they are counted in `skipped_lines`)."""
    # Only a regular file, and not without end: `--transcript` may name a FIFO or /dev/zero.
    data = read_bytes_capped(path, MAX_TRANSCRIPT_BYTES)
    if data is None:
        raise FileNotFoundError(2, "No such file or directory", str(path))
    return parse_transcript(data.decode("utf-8", errors="replace").split("\n"), keep_thinking=keep_thinking,
                            keep_meta=keep_meta)


def parse_transcript(lines: Iterable[str], *, keep_thinking: bool = True, keep_meta: bool = True) -> TranscriptLoad:
    """`load_transcript` of lines already read (`tui-agent watch` reads a growing log as lines)."""
    load = TranscriptLoad(history=[])
    records = _records(lines, load)
    history = load.history
    seen_usage: set[str] = set()
    started: list[tuple[Message, dict[str, int]]] = []  # assistant message → usage of the call that began it
    # each compact_boundary names the message the next record lands in (a summary merged into the
    # user message before it lands there, not in a new one)
    boundaries: list[int] = []
    boundary_pending = False
    written_by: list[tuple[Message, str]] = []
    stamped: list[tuple[Message, float]] = []
    for record in records:
        if record.get("type") == "system":
            if not boundary_pending:
                load.boundary_pre_tokens.append(_pre_tokens(record))
            boundary_pending = True
            continue
        if boundary_pending and _lands(record, keep_thinking, keep_meta):
            boundary_pending = False
            boundaries.append(_landing_index(history, record))
        message = record["message"]
        role = "assistant" if record["type"] == "assistant" else "user"
        if role == "user" and record.get("isMeta") and not keep_meta:
            continue
        blocks = _content_blocks(message.get("content"), role)
        if not keep_thinking:
            blocks = [b for b in blocks if b.get("type") not in ("thinking", "redacted_thinking")]
        if not blocks:
            continue
        if role == "assistant":
            model = message.get("model") if isinstance(message.get("model"), str) else None
            if model:
                load.models.add(model)
            key = f"{message.get('id')}:{record.get('requestId')}"
            usage = None
            if isinstance(message.get("usage"), dict) and key not in seen_usage:
                seen_usage.add(key)
                usage = {k: v for k, v in message["usage"].items() if isinstance(v, int)}
                load.usage.append(usage)
            # One API response is logged as one line per block; consecutive assistant lines (same
            # response or not) form one assistant message, as the API would see them.
            if history and history[-1]["role"] == "assistant":
                history[-1]["content"].extend(blocks)
            else:
                history.append({"role": "assistant", "content": list(blocks)})
                if usage is not None:
                    started.append((history[-1], usage))
                    stamp = _timestamp(record.get("timestamp"))
                    if stamp is not None:
                        stamped.append((history[-1], stamp))
                if isinstance(model, str) and model:
                    written_by.append((history[-1], model))
            continue
        is_results = any(b.get("type") == "tool_result" for b in blocks)
        text = "".join(b.get("text", "") for b in blocks if b.get("type") == "text")
        summary = bool(record.get("isCompactSummary")) or text.startswith(CONTINUATION_PREFIX)
        if history and history[-1]["role"] == "user":
            previous = history[-1]["content"]
            if is_results:
                # tool_results must lead the user message: put them before any text already there
                first_text = next((i for i, b in enumerate(previous) if b.get("type") != "tool_result"), len(previous))
                results = [b for b in blocks if b.get("type") == "tool_result"]
                previous[first_text:first_text] = results
                previous.extend(b for b in blocks if b.get("type") != "tool_result")
            else:
                previous.extend(blocks)
        else:
            if not history and role == "user" and is_results:
                continue  # a log that starts mid-round: drop orphan results
            history.append({"role": "user", "content": list(blocks)})
        if summary:
            load.compaction_summaries.append(len(history) - 1)
    if boundary_pending:
        boundaries.append(len(history))
    if history and history[0]["role"] != "user":
        history.insert(0, {"role": "user", "content": [{"type": "text", "text": "[transcript starts here]"}]})
    _pair(history)
    # (indices as the summaries': counted while reading, before the repairs above)
    load.compaction_boundaries = boundaries
    where = {id(message): i for i, message in enumerate(history)}
    load.call_usage = [(where[id(message)], usage) for message, usage in started if id(message) in where]
    load.message_models = {where[id(message)]: model for message, model in written_by if id(message) in where}
    load.call_times = {where[id(message)]: stamp for message, stamp in stamped if id(message) in where}
    return load


def _pre_tokens(record: dict[str, Any]) -> int | None:
    meta = record.get("compactMetadata")
    value = meta.get("preTokens") if isinstance(meta, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _timestamp(value: Any) -> float | None:
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


def _lands(record: dict[str, Any], keep_thinking: bool, keep_meta: bool) -> bool:
    """Whether `record` adds to the history (the same tests as `load_transcript`'s loop)."""
    if record["type"] == "user" and record.get("isMeta") and not keep_meta:
        return False
    role = "assistant" if record["type"] == "assistant" else "user"
    blocks = _content_blocks(record["message"].get("content"), role)
    if not keep_thinking:
        blocks = [b for b in blocks if b.get("type") not in ("thinking", "redacted_thinking")]
    return bool(blocks)


def _landing_index(history: list[Message], record: dict[str, Any]) -> int:
    """The history index `record` will be in: merged into the last message when the role repeats."""
    role = "assistant" if record["type"] == "assistant" else "user"
    if history and history[-1]["role"] == role:
        return len(history) - 1
    return len(history)


def _pair(history: list[Message]) -> None:
    """Every tool_use answered in the next message (results first); no tool_result without its tool_use
    before it; every tool_use id a unique non-empty string (a renamed use takes its result along)."""
    taken = {b.get("id") for m in history for b in m["content"]
             if b.get("type") == "tool_use" and isinstance(b.get("id"), str)}
    seen: set[str] = set()
    fresh = 0
    i = 0
    while i < len(history):
        message = history[i]
        if message["role"] == "assistant":
            renamed: dict[str | None, list[str]] = {}  # id as logged → the ids its uses got, in order
            content = []
            for block in message["content"]:
                if block.get("type") == "tool_use":
                    logged = block.get("id") if isinstance(block.get("id"), str) else None
                    if not logged or logged in seen:
                        while f"toolu_transcript_{fresh}" in taken:
                            fresh += 1
                        taken.add(f"toolu_transcript_{fresh}")
                        block = {**block, "id": f"toolu_transcript_{fresh}"}
                    seen.add(block["id"])
                    renamed.setdefault(logged, []).append(block["id"])
                content.append(block)
            message["content"] = content
            ids = [b["id"] for b in content if b.get("type") == "tool_use"]
            following = history[i + 1] if i + 1 < len(history) else None
            if ids and (following is None or following["role"] != "user"):
                following = {"role": "user", "content": []}
                history.insert(i + 1, following)
            if following is not None and following["role"] == "user":
                following["content"] = _answer(ids, renamed, following["content"])
        elif i == 0 or history[i - 1]["role"] != "assistant":
            message["content"] = [b for b in message["content"] if b.get("type") != "tool_result"] or [
                {"type": "text", "text": "[empty]"}]
        i += 1


def _answer(ids: list[str], renamed: dict[str | None, list[str]], content: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The user message after a tool_use round: one result per use (renamed along with its use, a missing
    one made up, extras dropped), results before anything else."""
    queues = {key: list(new_ids) for key, new_ids in renamed.items() if key is not None}
    results, others, answered = [], [], set()
    for block in content:
        if block.get("type") != "tool_result":
            others.append(block)
            continue
        key = block.get("tool_use_id")
        queue = queues.get(key) if isinstance(key, str) else None
        if not queue:
            continue  # no tool_use before it, or that use is answered already
        new_id = queue.pop(0)
        results.append(block if new_id == key else {**block, "tool_use_id": new_id})
        answered.add(new_id)
    missing = [tool_result_block(t, MISSING_RESULT, True) for t in ids if t not in answered]
    return missing + results + others or [{"type": "text", "text": "[empty]"}]
