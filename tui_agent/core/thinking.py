"""Thinking blocks carry a signature that only the model which wrote them accepts back.

A Claude Code transcript continued here (`--transcript`) may have been written by another model than the
one this session talks to; sending its signed thinking blocks would get the request refused (or, on
another endpoint, leak the other model's reasoning into a prompt it was never meant for). So before the
first call, thinking written by a different model is left out of the history the session sends. Thinking
by the same model (a dated id and its alias are the same model) stays, signature and all.
"""

from __future__ import annotations

import re
from typing import Mapping

from tui_agent.core.messages import Message

THINKING_TYPES = ("thinking", "redacted_thinking")
LEFT_OUT = "[thinking left out: it was signed by another model]"
_DATE_SUFFIX = re.compile(r"-\d{8}$")


def same_model(a: str, b: str) -> bool:
    """`claude-opus-4-5-20251101` and `claude-opus-4-5` are one model; anything else is not."""
    def norm(name: str) -> str:
        return _DATE_SUFFIX.sub("", name.strip().lower())

    return bool(a) and bool(b) and norm(a) == norm(b)


def strip_foreign_thinking(history: list[Message], written_by: Mapping[int, str], model: str) -> int:
    """Replace (in place, before anything was sent) each assistant message that holds thinking written by
    another model than `model` with a copy without it; returns how many blocks were left out.

    `written_by` maps a history index to the model that wrote that message (`TranscriptLoad.message_models`);
    a message with thinking but no known author is treated as foreign, since its signature cannot be vouched
    for. A message left empty keeps one text block saying why, so the history stays valid.
    """
    removed = 0
    for index, message in enumerate(history):
        content = message.get("content")
        if message.get("role") != "assistant" or not isinstance(content, list):
            continue
        thinking = [b for b in content if isinstance(b, dict) and b.get("type") in THINKING_TYPES]
        if not thinking or same_model(written_by.get(index, ""), model):
            continue
        kept = [b for b in content if not (isinstance(b, dict) and b.get("type") in THINKING_TYPES)]
        history[index] = {**message, "content": kept or [{"type": "text", "text": LEFT_OUT}]}
        removed += len(thinking)
    return removed
