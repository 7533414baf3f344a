"""What a message names, read the same way by the compaction tiers and by the recorded-session measures:
its *entities* (file paths, code identifiers, flags: tokens that contain `/`, `.`, `_` or an inner
capital), the text the model is sent of it (`held_text`), what a response mentions (`mentioned_text`), and
a request message's own text less the traces of what left (`own_text`). It lives with compaction, the
lower of the two wings that read it (`recordings/coverage.py` builds its measure on it).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from tui_agent.core.messages import Message, blocks

MIN_ENTITY_CHARS = 3

_TOKEN = re.compile(r"[\w./\-]+")
_INNER_CAPITAL = re.compile(r"[a-z0-9][A-Z]")
_SHAPE = re.compile(r"[./_]|[a-z0-9][A-Z]")  # what a token needs to hold to be an entity (before its edges go)
_EDGE = ".-/:"


def entities(text: str) -> set[str]:
    """The entity tokens of `text`: paths, dotted names, snake_case, camelCase and such flags."""
    out: set[str] = set()
    # each distinct token once (code and logs repeat theirs), and only those of an entity's shape: most
    # are plain words, and `_SHAPE` (which every entity's token matches) drops them in C
    for raw in filter(_SHAPE.search, set(_TOKEN.findall(text))):
        token = raw.strip(_EDGE) if not raw.startswith("/") else raw.rstrip(_EDGE)
        if len(token) < MIN_ENTITY_CHARS or not any(c.isalpha() for c in token):
            continue
        inner = token[1:-1]
        if "/" in token or "." in inner or "_" in inner or _INNER_CAPITAL.search(token):
            out.add(token)
    return out


def _values(value: object) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _values(item)
    elif isinstance(value, list):
        for item in value:
            yield from _values(item)


def held_text(message: Message) -> str:
    """Every text of `message` the model is sent (no JSON keys, ids or block types)."""
    parts: list[str] = []
    for block in blocks(message):
        kind = block.get("type")
        if kind == "text":
            parts.append(str(block.get("text", "")))
        elif kind == "tool_use":
            parts.extend(_values(block.get("input")))
        elif kind == "tool_result":
            parts.extend(_values(block.get("content")))
    if isinstance(message.get("content"), str):
        parts.append(message["content"])
    return "\n".join(parts)


def mentioned_text(message: Message) -> str:
    """What a response mentions: its texts and its tool inputs' values (not its thinking)."""
    parts: list[str] = []
    for block in blocks(message):
        if block.get("type") == "text":
            parts.append(str(block.get("text", "")))
        elif block.get("type") == "tool_use":
            parts.extend(_values(block.get("input")))
    if isinstance(message.get("content"), str):
        parts.append(message["content"])
    return "\n".join(parts)


# What a strategy puts in a request that is not the conversation itself: a trace of what left. The mask
# placeholder, the cut note, and the peers' placeholders (`core.peers`) match one of these.
_TRACES = re.compile(
    r"\[[^\n]{0,400}? chars, cleared from context; call \S+ again if you need it\]"  # a mask placeholder
    r"|\n?…\[tool_result cut after it was read: [^\]\n]*\]"  # a cut note
    r"|\[[^\n]{0,400}? chars of result cleared from context, the call's input kept; the Context tool can"
    r" recall it\]"  # a cleared result of a call that is not run again
    r"|\[Old tool result content cleared\]|\[cleared: [^\]\n]*\]")  # opencode's prune, clear_tool_uses


def own_text(message: Message) -> str:
    """A request message's text less every trace of what left (placeholders, cut notes)."""
    return _TRACES.sub(" ", held_text(message))
