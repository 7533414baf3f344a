"""The API's own context management as compaction strategies: `--compact server-clear` and `server-compact`.

In these modes the client sends the whole history (our compaction stays out of the way: a `Compactor`
with compaction off, so the cached prefix only grows) and asks the server to manage the context:

- `server-clear`: context editing, `clear_tool_uses_20250919`. Once the prompt passes `trigger` input
  tokens, the server replaces the oldest tool results with a placeholder, keeping the newest `keep`
  tool uses, and only when it can clear at least `clear_at_least` tokens (each clearing moves the cached
  prefix, so a small one costs more in cache writes than it saves). Our `Context` tool is never cleared:
  its results are the model's own notes about the context. With extended thinking on,
  `clear_thinking_20251015` comes first (the API wants it first) and keeps the newest turn's thinking.
- `server-compact`: `compact_20260112`. Past `trigger` the server summarises the conversation into a
  compaction block that the reply starts with; the block is kept in history and sent back as it came,
  and the server ignores everything before it from then on.

The trigger is our own high-water mark (where v2 would have compacted), so the strategies are compared
on the same budget. Nothing here talks to the API: the request carries `server_edits(...)` and the
provider sends it with its beta header (`core/providers/server_context.py`).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Protocol

from tui_agent.core.compaction.compactor import Compactor, Rerunnable
from tui_agent.core.compaction.policy import CompactPolicy

CLEAR = "server-clear"
COMPACT = "server-compact"
SERVER_MODES = (CLEAR, COMPACT)
CONTEXT_TOOL = "Context"  # core/tools/context.py's NAME (not imported: tools import the engine)
KEEP_TOOL_USES = 3  # the API's own default
CLEAR_AT_LEAST = 5_000  # below this a clearing rewrites the cache for too little
MIN_TRIGGER = 50_000  # the API refuses a compaction trigger below this
THINKING_KEEP_TURNS = 1


class ServerStrategy(Compactor):
    """Sends the history whole (compaction off) and names the edits the server is asked to make.

    Pins, excludes and `/compact` change nothing here (`steerable` is False): the server decides."""

    def __init__(self, mode: str, policy: CompactPolicy | None = None, baseline_tokens: int = 0, *,
                 rerunnable: Rerunnable | None = None) -> None:
        if mode not in SERVER_MODES:
            raise ValueError(f"not a server strategy: {mode!r}")
        base = policy or CompactPolicy()
        super().__init__(replace(base, enabled=False), baseline_tokens, rerunnable=rerunnable)
        self.mode = mode
        self.trigger_tokens = base.high_tokens

    def context_management(self, thinking: bool = False) -> dict[str, Any]:
        """The `context_management` field this strategy sends (`thinking`: extended thinking is on)."""
        return server_edits(self.mode, self.trigger_tokens, thinking)


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


def edits_for(mode: str, compactor: object, thinking: bool) -> dict[str, Any] | None:
    """The `context_management` a request of `compactor` carries, or None for our own strategies."""
    if mode in SERVER_MODES and isinstance(compactor, ServerStrategy):
        return compactor.context_management(thinking)
    return None


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
