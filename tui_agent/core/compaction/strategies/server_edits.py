"""The server strategies' names and the `context_management` edits they ask for, apart from the strategy
itself (`server.py`, a `Compactor`): the door's check, the comparison with the server's own count and the
tests read these without loading the compaction engine, which the TUI's first frame does not wait for.
"""

from __future__ import annotations

from typing import Any, Protocol

CLEAR = "server-clear"
COMPACT = "server-compact"
SERVER_MODES = (CLEAR, COMPACT)
CONTEXT_TOOL = "Context"  # core/tools/context.py's NAME (not imported: tools import the engine)
KEEP_TOOL_USES = 3  # the API's own default
CLEAR_AT_LEAST = 5_000  # below this a clearing rewrites the cache for too little
MIN_TRIGGER = 50_000  # the API refuses a compaction trigger below this
THINKING_KEEP_TURNS = 1


def server_edits(mode: str, trigger_tokens: int, thinking: bool = False) -> dict[str, Any]:
    """`context_management` for `mode` as the API takes it (edits in the order it wants them)."""
    if mode == COMPACT:
        trigger = max(trigger_tokens, MIN_TRIGGER)
        return {"edits": [{"type": "compact_20260112", "trigger": {"type": "input_tokens", "value": trigger}}]}
    if mode != CLEAR:
        raise ValueError(f"not a server strategy: {mode!r}")
    edits: list[dict[str, Any]] = []
    if thinking:
        edits.append({"type": "clear_thinking_20251015",
                      "keep": {"type": "thinking_turns", "value": THINKING_KEEP_TURNS}})
    edits.append({
        "type": "clear_tool_uses_20250919",
        "trigger": {"type": "input_tokens", "value": max(trigger_tokens, 1)},
        "keep": {"type": "tool_uses", "value": KEEP_TOOL_USES},
        "clear_at_least": {"type": "input_tokens", "value": CLEAR_AT_LEAST},
        "exclude_tools": [CONTEXT_TOOL],
    })
    return {"edits": edits}


class ContextManager(Protocol):
    """What the server strategies ask of a provider (`providers.base.Provider` declares both)."""

    @property
    def manages_context(self) -> bool: ...
    @property
    def name(self) -> str: ...


def server_strategy_error(mode: str, provider: ContextManager) -> str | None:
    """Why `mode` cannot run on `provider` (one line), or None: the server strategies are the Anthropic
    API's own, and a provider that does not send `context_management` would leave the context unmanaged."""
    if mode not in SERVER_MODES:
        return None
    if provider.manages_context:  # a provider that sends `context_management`
        return None
    return (f"--compact {mode} is the Anthropic API's own context management; the {provider.name} provider has none "
            "(choose v2, or use Claude with ANTHROPIC_API_KEY).")
