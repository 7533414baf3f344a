"""The API's own context management (`--compact server-clear` / `server-compact`) as strategies on the
economics replay, with the very settings `core/compaction/strategies/server.py` sends, beside ours and the peers'.

- `server-clear` — `clear_tool_uses_20250919` as we ask for it: over the trigger (our high-water mark, in
  input tokens of the whole request), every tool result but the newest 3 is replaced by a placeholder,
  results of our `Context` tool excepted, and only when that frees at least 5,000 tokens. The rule is
  stateless (the client sends the whole history every time and the server decides from it alone), so the
  replay computes exactly what the server would send at each call, on the session's ruler.
- `server-compact` — `compact_20260112`: past the trigger (our high-water mark, at least the API's 50,000)
  the server summarises; modelled like Claude Code's summary (`peers.summary_text`, ≈2.9k tokens, its own
  call priced as the compaction's usage iteration), the round in progress kept.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tui_agent.core.compaction.strategies.server_edits import CLEAR, CLEAR_AT_LEAST, COMPACT, CONTEXT_TOOL, KEEP_TOOL_USES, MIN_TRIGGER
from tui_agent.core.messages import Message, tool_results, tool_uses
from tui_agent.core.recordings.peers import ClaudeCodeStandIn, Peer, PeerEvent, PeerPlan, PeerResult
from tui_agent.core import tokens as tk

SERVER_PEERS = (CLEAR, COMPACT)
PLACEHOLDER = "[cleared: tool result removed by context editing]"


class ServerClear(Peer):
    """`clear_tool_uses_20250919` with our defaults, recomputed from the whole history at every call."""

    def __init__(self, window: int, ruler: Any | None, trigger: int) -> None:
        super().__init__(window, ruler)
        self.trigger = trigger

    def compact(self, history: Sequence[Message], call: int | None = None) -> PeerResult:
        if self.size(history) <= self.trigger:
            self.erased = set()
            return PeerResult(list(history), PeerPlan(None))
        names = {str(u.get("id")): u.get("name") for m in history for u in tool_uses(m)}
        results = [r for m in history for r in tool_results(m) if names.get(str(r.get("tool_use_id"))) != CONTEXT_TOOL]
        older = results[:-KEEP_TOOL_USES] if len(results) > KEEP_TOOL_USES else []
        freed = sum(self._ratio * tk.block_tokens(r) for r in older)
        cleared = {str(r.get("tool_use_id")) for r in older} if freed >= CLEAR_AT_LEAST else set()
        grew = bool(cleared - self.erased)
        self.erased = cleared
        return PeerResult(self.render(history, PLACEHOLDER), PeerPlan(PeerEvent(major=False) if grew else None))


def make_server_peer(name: str, policy: Any, ruler: Any | None) -> Peer:
    """`server-clear` / `server-compact` for `policy` (its high-water mark is the trigger, as in a session)."""
    high = int(policy.high_tokens)
    if name == CLEAR:
        return ServerClear(policy.context_window, ruler, high)
    if name == COMPACT:
        peer = ClaudeCodeStandIn(policy.context_window, ruler, 1.0)
        peer.trigger = max(high, MIN_TRIGGER)
        return peer
    raise ValueError(f"not a server strategy: {name!r}")
