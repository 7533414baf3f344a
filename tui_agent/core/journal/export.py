"""Export a session: the whole history as Markdown, or our JSONL journal as it is.

The Markdown keeps everything, including what compaction kept out of later calls: each message in
order, tool calls and their results folded in `<details>` (long outputs do not bury the conversation),
and before each model reply a marked line saying what that call sent (which messages, ≈ tokens, what
compaction did, the real usage and price when known).
"""

from __future__ import annotations

import json
from typing import Any, Iterable

from tui_agent.core.journal.reader import CallRecord, JournalLoad
from tui_agent.core.messages import Message, blocks, result_text
from tui_agent.core.formats import plural

FORMATS = ("md", "jsonl")


def export_jsonl(load: JournalLoad) -> str:
    """The journal file itself: it is already the complete, documented record (bytes that are not
    UTF-8, which the reader skipped, come out as U+FFFD)."""
    from tui_agent.core.journal.safe_read import read_journal_bytes

    return read_journal_bytes(load.path).decode("utf-8", "replace")


def export_markdown(history: list[Message], calls: Iterable[CallRecord] = (), *, title: str = "Session",
                    meta: dict[str, str] | None = None) -> str:
    out = [f"# {title}", ""]
    for key, value in (meta or {}).items():
        out.append(f"- **{key}:** {value}")
    if meta:
        out.append("")
    by_position: dict[int, list[CallRecord]] = {}
    for call in calls:
        by_position.setdefault(call.history_len, []).append(call)
    for index, message in enumerate(history):
        for call in by_position.pop(index, []):
            out += _call(call)
        out += _message(index, message)
    for pending in by_position.values():  # a call whose reply never arrived (stopped mid-stream)
        for call in pending:
            out += _call(call, " — no reply recorded")
    return "\n".join(out).rstrip() + "\n"


def markdown_of(load: JournalLoad) -> str:
    header = load.header
    meta = {"session": header.session_id, "workspace": header.workspace, "model": load.model,
            "started": header.started, "last activity": load.last_activity}
    if header.parent:
        meta["continues"] = header.parent
    meta["compaction events"] = events_words(load.calls)
    return export_markdown(load.history, load.calls, title=f"tui-agent session {header.session_id}", meta=meta)


def events_words(calls: Iterable[CallRecord]) -> str:
    """"2 (call 12, call 30; 1 undone: call 41)": the session's compaction events by call, as the panel and
    `-p` count them (an undone one named apart, not counted)."""
    made = [call for call in calls if call.event]
    kept = [f"call {call.call}" for call in made if not call.undone]
    undone = [f"call {call.call}" for call in made if call.undone]
    words = f"{len(kept)}" + (f" ({', '.join(kept)})" if kept else "")
    return words + (f"; {len(undone)} undone: {', '.join(undone)}" if undone else "")


def _call(call: CallRecord, tail: str = "") -> list[str]:
    """The marker before a reply: what its call sent, and the compaction event (and summary) of that call."""
    lines = [_call_line(call) + tail, ""]
    if call.event:
        lines += [f"> ⟲ **compaction{' (undone)' if call.undone else ''}** · {call.event}", ""]
    for line in call.server:  # the API's own context management, or why this call missed the cache
        lines += [f"> ⟲ **{'cache' if line.startswith('cache') else 'server'}** · {line}", ""]
    if call.summary:
        lines += _folded(f"summary written at call {call.call} (sent instead of the dropped messages)", call.summary, "")
    return lines


def _call_line(call: CallRecord) -> str:
    text = f"> ▶ **call {call.call}** · {call.model} · sent ≈{call.estimated_tokens:,} tokens"
    if call.sent is not None:
        text += f": {call.sent} of {plural(call.history_len, 'message')}"
        if call.dropped:
            text += f" ({call.dropped} left out)"
    else:
        text += f" of a {call.history_len}-message history"
    if call.usage is not None:
        u = call.usage
        text += (f" · real {u.context_tokens:,} in (cache read {u.cache_read_input_tokens:,}, "
                 f"written {u.cache_creation_input_tokens:,}) / {u.output_tokens:,} out")
    if call.cost_usd is not None:
        text += f" · ${call.cost_usd:.4f}"
    return text


def _message(index: int, message: Message) -> list[str]:
    role = message.get("role", "?")
    lines = [f"## {index + 1}. {role}", ""]
    for block in blocks(message):
        kind = block.get("type")
        if kind == "text":
            lines += [str(block.get("text", "")), ""]
        elif kind == "tool_use":
            lines += _folded(f"tool call: {block.get('name')} ({block.get('id')})",
                             json.dumps(block.get("input"), indent=2, ensure_ascii=False), "json")
        elif kind == "tool_result":
            label = "tool result" + (" (error)" if block.get("is_error") else "")
            lines += _folded(f"{label} for {block.get('tool_use_id')}", _result(block), "")
        elif kind in ("thinking", "redacted_thinking"):
            lines += _folded("thinking", str(block.get("thinking", "(redacted)")), "")
        else:
            lines += _folded(f"{kind} block", json.dumps(block, ensure_ascii=False)[:2000], "json")
    return lines


def _result(block: dict[str, Any]) -> str:
    text = result_text(block)
    content = block.get("content")
    if isinstance(content, list):
        others = [b.get("type") for b in content if isinstance(b, dict) and b.get("type") != "text"]
        if others:
            text += "\n" + "\n".join(f"[{kind}]" for kind in others)
    return text


def _folded(summary: str, body: str, lang: str) -> list[str]:
    fence = "````" if "```" in body else "```"
    return ["<details>", f"<summary>{_escape(summary)}</summary>", "", f"{fence}{lang}", body, fence, "",
            "</details>", ""]


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
