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
  and the server ignores everything before it from then on: so the request starts there.

The meter's figure is what the server reads: its own count of the last request (after its clearing, from
its compaction block on), plus what joined since; never our estimate of the whole history.

The trigger is our own high-water mark (where v2 would have compacted), so the strategies are compared
on the same budget. Nothing here talks to the API: the request carries `server_edits(...)` and the
provider sends it with its beta header (`core/providers/server_context.py`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from tui_agent.core import tokens as tk
from tui_agent.core.compaction.compactor import Compactor, Rerunnable
from tui_agent.core.compaction.marks import CONTINUES
from tui_agent.core.compaction.plan import CompactEvent, CompactResult
from tui_agent.core.compaction.policy import CompactPolicy
from tui_agent.core.compaction.render import recap_message
from tui_agent.core.compaction.steps import Work
from tui_agent.core.compaction.strategies.server_edits import CLEAR, COMPACT, SERVER_MODES, server_edits
from tui_agent.core.messages import Message


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
        self.server_offset = 0  # tokens the server kept out of the last request (what it cleared)
        self._sent_estimate = 0  # our estimate of the last request as sent
        self._read_from = self._sent_from = 0  # where the last plan / the last request started (server-compact)
        self._scanned = (0, 0)  # (messages looked at, the newest compaction block's message) for `_compaction_start`

    def observe_server(self, input_tokens_total: int) -> None:
        """The server's count of the last request, after its own clearing: what it keeps out of what we send
        (the meter's figure is the server's, ≈52k of history against a 40k budget while it read 15.7k was not)."""
        if self.mode == CLEAR and self._sent_estimate > 0 and input_tokens_total > 0:  # (server-compact: the
            # next request starts at the compaction block, which is what the server reads)
            self.server_offset = max(self._sent_estimate - input_tokens_total, 0)

    def compact(self, history: Sequence[Message], call: int | None = None) -> CompactResult:
        result = super().compact(history, call)
        self._sent_estimate = result.plan.estimated_tokens + self.server_offset  # what we send, estimated
        self._sent_from = self._read_from
        return result

    def _result(self, w: Work, history: Sequence[Message], call: int, event: CompactEvent | None,
                first_change: int, mode: str = "v2") -> CompactResult:
        """The whole history, as our compaction is off; in `server-compact`, only from the newest compaction
        block on (the API ignores what is before it: 150.7k-token bodies went up with a 100k window), after a
        stand-in user message; the estimate is what the server reads (`server_offset`: what it cleared)."""
        result = super()._result(w, history, call, event, first_change, mode)
        plan, messages = result.plan, result.messages
        start = self._compaction_start(history) if self.mode == COMPACT else 0
        self._read_from = start
        estimate = plan.estimated_tokens
        if start > 0:
            pos = plan.position(start)
            assert pos is not None  # (our compaction is off: every message is sent)
            left = sum(w.tokens.size(unit) for unit in w.layout.units[:pos])
            stable = first_change - pos + 1 if start == self._sent_from else 0
            reason = f"the server summarised it into its compaction block (message #{start}); the API reads from there"
            messages = [recap_message(CONTINUES), *messages[pos:]]
            estimate = max(round(estimate - left), 0)
            plan = replace(plan, outbound_indices=plan.outbound_indices[pos:], lead_placeholder=True, drop_from=0,
                           drop_until=start, dropped_reason=reason, drop_reasons=((0, start, reason),),
                           message_tokens_after=max(plan.message_tokens_after - sum(
                               tk.message_tokens(m) for m in result.messages[:pos]), 0),
                           cached_messages=max(min(stable, len(messages)), 0))
        estimate = max(estimate - self.server_offset, 0)
        plan = replace(plan, estimated_tokens=estimate, over_budget=estimate > self.policy.effective_window)
        return CompactResult(messages, plan)

    def _compaction_start(self, history: Sequence[Message]) -> int:
        """The index of the newest message that holds the server's compaction block (0: none), found by
        looking only at the messages added since the last look (a reply starts with the block)."""
        seen, newest = self._scanned
        if len(history) < seen:  # /clear: a new conversation
            seen, newest = 0, 0
        for i in range(seen, len(history)):
            content = history[i].get("content")
            if history[i].get("role") == "assistant" and isinstance(content, list) and content \
                    and isinstance(content[0], dict) and content[0].get("type") == "compaction":
                newest = i
        self._scanned = (len(history), newest)
        return newest

    def context_management(self, thinking: bool = False) -> dict[str, Any]:
        """The `context_management` field this strategy sends (`thinking`: extended thinking is on)."""
        return server_edits(self.mode, self.trigger_tokens, thinking)


def edits_for(mode: str, compactor: object, thinking: bool) -> dict[str, Any] | None:
    """The `context_management` a request of `compactor` carries, or None for our own strategies."""
    if mode in SERVER_MODES and isinstance(compactor, ServerStrategy):
        return compactor.context_management(thinking)
    return None
