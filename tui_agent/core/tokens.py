"""Token estimates without a tokenizer.

Claude and most models average about 4 characters per token for English and code; we count characters
and divide, and mark every such number as an estimate (≈) in the UI. Real providers replace the estimate
with the API's reported usage; `/context` can ask the API for an exact count.
"""

from __future__ import annotations

import math
import re
from typing import Any

from tui_agent.core.messages import Block, Message, blocks, result_text, to_json

CHARS_PER_TOKEN = 4.0
IMAGE_TOKENS = 1600  # Anthropic's rough cost of one image block (a ~1.15 megapixel image)
MESSAGE_OVERHEAD_TOKENS = 4  # role markers and separators


_SPACE_RUN = re.compile(r"[ \t]{2,}")


def _countable(text: str) -> int:
    """Characters that cost tokens: a run of spaces or tabs is about one token however long it is
    (BPE vocabularies merge them), so it counts as one character. Column-aligned tool output
    (PowerShell tables, `ls -l`, padded logs) is otherwise overestimated by a third."""
    if "  " not in text and "\t\t" not in text and " \t" not in text and "\t " not in text:
        return len(text)
    return len(_SPACE_RUN.sub(" ", text))  # each run as one character (replaced in C)


def tokens_for_chars(chars: int) -> int:
    return math.ceil(chars / CHARS_PER_TOKEN) if chars > 0 else 0


def _parts(block: Block) -> tuple[int, str | None]:
    """What a block sends, as (characters counted as they are, text measured by the caller; None: none)."""
    kind = block.get("type")
    if kind == "text":
        return 0, block.get("text", "")
    if kind == "tool_use":
        return len(block.get("name", "")), to_json(block.get("input", {}))
    if kind == "tool_result":
        return 0, result_text(block)
    if kind == "thinking":
        return 0, block.get("thinking", "")
    if kind in ("image", "document", "redacted_thinking"):
        return 0, None
    return len(to_json(block)), None


def block_chars(block: Block, measure=len) -> int:
    """Characters that a block sends to the model (images count as 0 chars; see `block_tokens`)."""
    head, text = _parts(block)
    return head if text is None else head + measure(text)


def _image_tokens(block: Block) -> int:
    if block.get("type") == "image":
        return IMAGE_TOKENS
    if block.get("type") == "tool_result" and isinstance(block.get("content"), list):
        return sum(IMAGE_TOKENS for b in block["content"] if isinstance(b, dict) and b.get("type") == "image")
    return 0


def block_tokens(block: Block) -> int:
    return tokens_for_chars(block_chars(block, _countable)) + _image_tokens(block)


def message_chars(message: Message) -> int:
    return sum(block_chars(b) for b in blocks(message))


def message_tokens(message: Message) -> int:
    return MESSAGE_OVERHEAD_TOKENS + sum(block_tokens(b) for b in blocks(message))


def thinking_tokens(message: Message) -> int:
    """The part of `message_tokens` that is thinking (what the API leaves out of earlier turns on the models
    that do not keep it: `models.keeps_earlier_thinking`)."""
    if message.get("role") != "assistant" or not isinstance(message.get("content"), list):
        return 0
    return sum(block_tokens(b) for b in blocks(message) if b.get("type") == "thinking")


def message_sizes(message: Message) -> tuple[int, int]:
    """(`message_tokens`, `message_chars`) in one walk of the blocks: each block's text (a tool input's
    JSON, a result's joined text) is made once for both, where measuring them apart made it twice."""
    tokens, chars = MESSAGE_OVERHEAD_TOKENS, 0
    for block in blocks(message):
        head, text = _parts(block)
        counted, length = (head, head) if text is None else (head + _countable(text), head + len(text))
        tokens += tokens_for_chars(counted) + _image_tokens(block)
        chars += length
    return tokens, chars


def text_tokens(text: str) -> int:
    return tokens_for_chars(len(text))


def tools_tokens(tool_schemas: list[dict[str, Any]]) -> int:
    """The tool definitions' share of every call (they are sent each time)."""
    return tokens_for_chars(len(to_json(tool_schemas))) if tool_schemas else 0
