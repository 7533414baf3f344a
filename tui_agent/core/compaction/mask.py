"""Tier 3, mask: an old result of a re-runnable tool becomes a placeholder that says how to get it back.

Masking old observations (instead of summarising them) keeps the agent's own reasoning and tool calls in
place, costs no model call, and halved cost at an equal solve rate in "The Complexity Trap" (JetBrains,
2025). Only results the model can fetch again are masked (Read, Grep, Glob, read-only Bash and MCP).
"""

from __future__ import annotations

from typing import Any

from tui_agent.core.formats import fmt_tokens
from tui_agent.core.messages import Block, key_input  # (the one key-input table: messages.KEY_INPUTS)

CLEARED = "cleared from context"  # a placeholder's own words (readers tell it from content by them)


def placeholder_text(tool_name: str, tool_input: Any, original_chars: int) -> str:
    """`[Read src/app.py — 12.4k chars, cleared from context; Read it again if you need it]`"""
    key = key_input(tool_input)
    what = f"{tool_name} {key}".strip()
    path = tool_input.get("path") if isinstance(tool_input, dict) else None
    if isinstance(path, str) and path and key != path:  # Grep/Glob: the folder searched is a touched path
        what += f" in {path}"
    if not _can_run_again(tool_name, tool_input):  # a write, a build, a test run: its input stays, the
        # result is recalled from memory, never by running the call again
        return (f"[{what} — {fmt_tokens(original_chars)} chars of result {CLEARED}, the call's "
                f"input kept; the Context tool can recall it]")
    return f"[{what} — {fmt_tokens(original_chars)} chars, {CLEARED}; call {tool_name} again if you need it]"


def _can_run_again(tool_name: str, tool_input: Any) -> bool:
    """The default policy's answer (the placeholder's words must not depend on a session's settings: a
    restored state writes the same bytes)."""
    from tui_agent.core.compaction.policy import CompactPolicy

    return CompactPolicy().rerunnable(tool_name, tool_input)


def masked_block(block: Block, text: str) -> Block:
    """The placeholder in the block's place: same id and error flag, so the pairing stays valid."""
    out: Block = {"type": "tool_result", "tool_use_id": block.get("tool_use_id", ""), "content": text}
    if block.get("is_error"):
        out["is_error"] = True
    return out
