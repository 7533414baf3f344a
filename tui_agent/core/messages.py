"""The conversation model: plain Anthropic Messages API dicts.

History entries are `anthropic.types.MessageParam`-shaped dicts (`{"role": ..., "content": [...]}`), so the
SDK types serve as our model and nothing is converted at the edge. These helpers build and inspect them
without importing the SDK (it costs about 2 s to import).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Iterable

Message = dict[str, Any]
Block = dict[str, Any]

# The keys the Messages API accepts on each block type we build or receive. SDK response objects dumped
# with `model_dump()` carry extra keys (`citations: None`, `caller`, ...) that the API would reject.
_ALLOWED_KEYS: dict[str, tuple[str, ...]] = {
    "text": ("type", "text", "cache_control", "citations"),
    "tool_use": ("type", "id", "name", "input", "cache_control", "caller"),
    "tool_result": ("type", "tool_use_id", "content", "is_error", "cache_control"),
    "image": ("type", "source", "cache_control"),
    "document": ("type", "source", "title", "context", "citations", "cache_control"),
    "thinking": ("type", "thinking", "signature"),
    "redacted_thinking": ("type", "data"),
}


# The block types the Messages API takes back in a request (the SDK's `ContentBlockParam`, anthropic 2.16):
# an answer's other blocks (a type added after this list) are left out where the answer enters history,
# or every later request would be refused. Server tool calls go back only beside their results.
ROUND_TRIP_TYPES = frozenset({
    "text", "image", "document", "search_result", "thinking", "redacted_thinking", "tool_use", "tool_result",
    "server_tool_use", "web_search_tool_result", "web_fetch_tool_result", "code_execution_tool_result",
    "bash_code_execution_tool_result", "text_editor_code_execution_tool_result", "tool_search_tool_result",
    "container_upload", "compaction",  # the server's compaction block: sent back as it came
})
NO_CONTENT = "(no content)"  # what a message left with no blocks says (the API refuses an empty content)


def _server_result(block: Block) -> bool:
    kind = str(block.get("type", ""))
    return kind.endswith("_tool_result") and kind != "tool_result"


def round_trip_blocks(content: Iterable[Any]) -> tuple[list[Block], list[str]]:
    """(the blocks a request may send back, the types of those left out): blocks of an unknown type, and
    a server tool call without its result in the same message (or a result without its call: a turn
    paused by the server and never continued), which the API refuses in any later request."""
    content = list(content)
    kept = [b for b in content if isinstance(b, dict) and b.get("type") in ROUND_TRIP_TYPES]
    calls = {b.get("id") for b in kept if b.get("type") == "server_tool_use"}
    answered = {b.get("tool_use_id") for b in kept if _server_result(b)}
    kept = [b for b in kept if not (b.get("type") == "server_tool_use" and b.get("id") not in answered)
            and not (_server_result(b) and b.get("tool_use_id") not in calls)]
    if len(kept) == len(content):
        return content, []
    kept_ids = {id(b) for b in kept}
    left = [str(b.get("type")) if isinstance(b, dict) else type(b).__name__ for b in content if id(b) not in kept_ids]
    return kept, left


def left_out_notice(left: list[str], where: str) -> str:
    """One line naming the blocks `round_trip_blocks` left out (never dropped silently)."""
    many = len(left) != 1
    return (f"Left {len(left)} content block{'s' if many else ''} ({', '.join(sorted(set(left)))}) out of {where}: "
            f"the API would refuse {'them' if many else 'it'} in the next request.")


def user_text(text: str) -> Message:
    """A user message made only of text (the only place compaction may cut)."""
    return {"role": "user", "content": [{"type": "text", "text": text}]}


def tool_result_block(tool_use_id: str, content: str | list[Block], is_error: bool = False) -> Block:
    """`is_error` is present only when true (the API default is false; the seed's AC-T2)."""
    block: Block = {"type": "tool_result", "tool_use_id": tool_use_id, "content": content}
    if is_error:
        block["is_error"] = True
    return block


def blocks(message: Message) -> list[Block]:
    """The content blocks of a message; a plain-string content is one text block."""
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return list(content or [])


def tool_uses(message: Message) -> list[Block]:
    if message.get("role") != "assistant":
        return []
    return [b for b in blocks(message) if b.get("type") == "tool_use"]


def tool_results(message: Message) -> list[Block]:
    if message.get("role") != "user":
        return []
    return [b for b in blocks(message) if b.get("type") == "tool_result"]


def is_user_text(message: Message) -> bool:
    """A user message whose blocks are all text: a safe place to start an outbound copy.

    A user message with no blocks also qualifies (the seed's `every` on an empty list is true).
    """
    if message.get("role") != "user":
        return False
    return all(b.get("type") == "text" for b in blocks(message))


def opens_turn(message: Message) -> bool:
    """A user message that is more than tool results: a new turn of the person (or an agent's prompt). The
    assistant messages after the last one are the turn in progress (the API keeps their thinking)."""
    if message.get("role") != "user":
        return False
    content = message.get("content")
    return isinstance(content, str) or any(b.get("type") != "tool_result" for b in blocks(message))


def text_of(message: Message) -> str:
    """All text blocks of a message joined (used for previews and the demo model)."""
    return "".join(b.get("text", "") for b in blocks(message) if b.get("type") == "text")


def result_text(block: Block) -> str:
    """The text of a tool_result's content, string or list of text blocks."""
    content = block.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text")
    return ""


def result_chars(block: Block) -> int:
    return len(result_text(block))


def clean_block(block: Block) -> Block:
    """Keep only the keys the API accepts for this block type; unknown types pass through untouched."""
    allowed = _ALLOWED_KEYS.get(block.get("type", ""))
    if allowed is None:
        return block
    out = {k: v for k, v in block.items() if k in allowed and v is not None}
    if out.get("type") == "tool_result" and isinstance(out.get("content"), list):
        out["content"] = [clean_block(b) if isinstance(b, dict) else b for b in out["content"]]
    if out.get("type") == "tool_result" and out.get("is_error") is False:
        del out["is_error"]
    return out


def clean_message(message: Message) -> Message:
    """An outbound-ready copy of a message: role and content only, content blocks cleaned."""
    content = message.get("content")
    if isinstance(content, list):
        content = [clean_block(b) for b in content]
    return {"role": message["role"], "content": content}


def is_blank_text(block: Block) -> bool:
    """A text block with nothing but whitespace: the API refuses it ("text content blocks must contain
    non-whitespace text"), so assembled messages never keep one."""
    return block.get("type") == "text" and not str(block.get("text") or "").strip()


def assemble_content(content: Iterable[Block], taken: set[str] | None = None) -> list[Block]:
    """An assistant reply's blocks as history may keep them: blank text blocks dropped, and every
    tool_use id unique and non-empty (a duplicate would lose a result and break the history for good).

    `taken` holds ids already used earlier in the conversation; renamed ids are added to it.
    Never returns an empty list (the API refuses an empty content).
    """
    seen = taken if taken is not None else set()
    out: list[Block] = []
    for block in content:
        if is_blank_text(block):
            continue
        if block.get("type") == "tool_use":
            tool_id = str(block.get("id") or "")
            if not tool_id or tool_id in seen:
                base = tool_id or "toolu_unnamed"
                n = 2
                while f"{base}_{n}" in seen:
                    n += 1
                block = {**block, "id": f"{base}_{n}"}
            seen.add(block["id"])
        out.append(block)
    return out or [{"type": "text", "text": "(no content)"}]


def tool_use_ids(history: Iterable[Message]) -> set[str]:
    return {b.get("id", "") for m in history for b in tool_uses(m)}


def protocol_errors(messages: list[Message], *, allow_pending: bool = False) -> list[str]:
    """What the Anthropic Messages API would reject in this list (empty when valid).

    Checks the rules compaction and the loop must never break: the list starts with a user message, every
    tool_use is answered in the very next message (tool_results first), no tool_result lacks its
    tool_use in the message just before it, tool_use ids are unique and no text block is blank. Used by
    tests, the fake servers and as a last-line guard.

    A trailing assistant message with unanswered tool_use blocks is an error: a history left like that
    gets a 400 on the next prompt. `allow_pending=True` accepts it for a list still being built (the
    loop between appending a reply and appending its results).
    """
    errors: list[str] = []
    if not messages:
        return ["no messages"]
    if messages[0].get("role") != "user":
        errors.append("first message is not from the user")
    seen_ids: set[str] = set()
    for i, message in enumerate(messages):
        if message.get("role") not in ("user", "assistant"):
            errors.append(f"message {i}: bad role {message.get('role')!r}")
        for block in blocks(message):
            if is_blank_text(block):
                errors.append(f"message {i}: text content blocks must contain non-whitespace text")
        for block in tool_uses(message):
            if not block.get("id"):
                errors.append(f"message {i}: tool_use without an id")
            elif block["id"] in seen_ids:
                errors.append(f"message {i}: tool_use id {block['id']} is used twice")
            seen_ids.add(block.get("id", ""))
        results = tool_results(message)
        if results:
            previous = messages[i - 1] if i > 0 else {}
            asked = {b.get("id") for b in tool_uses(previous)}
            for block in results:
                if block.get("tool_use_id") not in asked:
                    errors.append(f"message {i}: tool_result {block.get('tool_use_id')} has no tool_use before it")
            content = blocks(message)
            first_other = next((j for j, b in enumerate(content) if b.get("type") != "tool_result"), len(content))
            if any(b.get("type") == "tool_result" for b in content[first_other:]):
                errors.append(f"message {i}: tool_result blocks must come first")
        uses = tool_uses(message)
        if uses:
            following = messages[i + 1] if i + 1 < len(messages) else None
            if following is None:
                if not allow_pending:
                    errors.append(f"message {i}: tool_use {', '.join(str(b.get('id')) for b in uses)} has no tool_result "
                                  "(the history ends with an unanswered tool call)")
                continue
            answered = {b.get("tool_use_id") for b in tool_results(following)}
            for block in uses:
                if block.get("id") not in answered:
                    errors.append(f"message {i}: tool_use {block.get('id')} is not answered in the next message")
    return errors


def to_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def answer_trailing_tool_uses(history: list[Message], reason: str) -> Message | None:
    """Append error results for the tool_use blocks of a trailing assistant message, if any.

    A turn that was interrupted before its results were recorded (the task cancelled while the face was
    busy, a crash) leaves such a message; without an answer every later request is a 400. Appending
    keeps the history append-only. Returns the appended message (None when nothing was pending).
    """
    if not history:
        return None
    uses = tool_uses(history[-1])
    if not uses:
        return None
    message: Message = {"role": "user", "content": [tool_result_block(u.get("id", ""), reason, True) for u in uses]}
    history.append(message)
    return message


# The one description of a tool call (placeholders, recaps, the panel's rows, tool cards and `Tool.summary`
# read it): the input a call is known by, in order of preference (a Grep/Glob is known by its pattern).
KEY_INPUTS = ("file_path", "notebook_path", "pattern", "command", "path", "skill", "url", "query", "description")


def key_value(tool_input: Any) -> str:
    """The raw value of the input a person (and the model) recognises a call by; "" when it has none."""
    if not isinstance(tool_input, dict):
        return ""
    for key in KEY_INPUTS:
        value = tool_input.get(key)
        if isinstance(value, str) and value.strip():
            return value
    return ""


def key_input(tool_input: Any, limit: int = 160) -> str:
    """`key_value` on one line, at most `limit` characters: its path, pattern or command."""
    flat = " ".join(key_value(tool_input).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


# -- what the API reports of its own context management (carried by the engine's events) ----------------
@dataclass(frozen=True)
class AppliedEdit:
    """One context edit the server applied: `kind` is the edit type, `cleared` the tool uses (or
    thinking turns) it cleared, `tokens` the input tokens that freed."""

    kind: str
    cleared: int
    tokens: int


@dataclass(frozen=True)
class CompactionUsage:
    """The server's compaction call, priced on its own (`usage.iterations`, type `compaction`)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0


@dataclass(frozen=True)
class UsageInfo:
    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0
    cache_write_1h: int = 0  # of the cache writes, those at the 1-hour TTL (priced 2x the input, not 1.25x)

    @classmethod
    def of(cls, usage: Any) -> "UsageInfo":
        """The counts of anything that carries them (an `ev.Usage`, a journal's): one conversion for prices."""
        return cls(usage.input_tokens, usage.output_tokens, usage.cache_creation_input_tokens,
                   usage.cache_read_input_tokens, getattr(usage, "cache_write_1h", 0))
