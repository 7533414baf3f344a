"""Tier 2, cut on read: a long tool result the model has already read is cut to its head, once.

The model read the whole result when it was the newest round, and what it concluded is in its reply; later
calls send the head and a note that says how much was left out and how to see it again. The cut copy is
decided once and frozen, so every later request repeats it byte for byte (and reads it from the cache).
"""

from __future__ import annotations

from tui_agent.core.messages import Block, result_text
from tui_agent.core.formats import fmt_tokens


def cut_note(original_chars: int, kept_chars: int, tool_name: str) -> str:
    again = f"; call {tool_name} again (e.g. with an offset) to see the rest" if tool_name else ""
    return (f"\n…[tool_result cut after it was read: {fmt_tokens(kept_chars)} of {fmt_tokens(original_chars)} "
            f"chars kept{again}]")


def cut_block(block: Block, keep_chars: int, tool_name: str = "") -> tuple[Block, int, int] | None:
    """A copy of a tool_result keeping its first `keep_chars` characters of text, with a note.

    Returns (cut block, original chars, kept chars), or None when the text already fits. Images and other
    non-text parts of a list result are dropped from the cut copy (the note says the result was cut), and
    a cut that lands exactly on a text-part boundary still carries the note.
    """
    text = result_text(block)
    original = len(text)
    if original <= keep_chars:
        return None
    content = block.get("content")
    note = cut_note(original, keep_chars, tool_name)
    if isinstance(content, str):
        return {**block, "content": content[:keep_chars] + note}, original, keep_chars
    budget = keep_chars
    parts: list[Block] = []
    for inner in content if isinstance(content, list) else []:
        if not isinstance(inner, dict) or inner.get("type") != "text" or budget <= 0:
            continue
        piece = inner.get("text", "")
        if len(piece) >= budget:
            parts.append({"type": "text", "text": piece[:budget]})
            budget = 0
        else:
            parts.append({"type": "text", "text": piece})
            budget -= len(piece)
    if parts:
        parts[-1] = {"type": "text", "text": parts[-1]["text"] + note}
    else:
        parts = [{"type": "text", "text": note.lstrip()}]
    return {**block, "content": parts}, original, keep_chars - budget


HEAD_SHARE = 0.75  # a clipped prompt keeps this share of what it keeps at its beginning, the rest at its end


def clip_note(original_chars: int, kept_chars: int) -> str:
    return (f"\n\n[… {original_chars - kept_chars:,} of this prompt's {original_chars:,} characters are not sent "
            "here: the whole prompt is larger than the model's context window. Its beginning and its end are "
            "sent; if the part left out matters, say so and ask for it in smaller pieces …]\n\n")


def clip_block(block: Block, keep_chars: int) -> Block | None:
    """A copy of a text block keeping its first and last characters (`keep_chars` in all) with a note between
    them; None when the text already fits. The history's block is never changed."""
    text = block.get("text")
    if not isinstance(text, str) or len(text) <= keep_chars:
        return None
    head = int(keep_chars * HEAD_SHARE)
    tail = keep_chars - head
    kept = text[:head] + clip_note(len(text), keep_chars) + (text[len(text) - tail:] if tail else "")
    return {**block, "text": kept}
