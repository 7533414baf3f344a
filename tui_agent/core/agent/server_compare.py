"""`/context` under our own strategy: what the API's context editing (`server-clear`) would have done with
this session, asked of the token-counting endpoint, beside what ours sends.

The counting endpoint takes `context_management` and answers the tokens after the edits it would apply and
the original count, so the comparison is the server's own word, not a model of it: the whole history, as
`--compact server-clear` would send it (same trigger: our high-water mark), against our compacted request.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from tui_agent.core.compaction.strategies.server_edits import CLEAR, SERVER_MODES, server_edits
from tui_agent.core.messages import clean_message

if TYPE_CHECKING:
    from tui_agent.core.agent.session import Session


@dataclass(frozen=True)
class ServerClearCount:
    whole: int  # the whole history's request, counted
    after: int  # the same after server-clear's edits

    @property
    def cleared(self) -> int:
        return max(self.whole - self.after, 0)

    def line(self, ours: int | None) -> str:
        """"server-clear would send 48,200 tok (cleared 42,800 of 91,000) · ours 40,100"."""
        what = f"cleared {self.cleared:,} of {self.whole:,}" if self.cleared else f"nothing cleared: {self.whole:,} " \
            "under its trigger or too little to clear"
        mine = f" · ours {ours:,}" if ours is not None else ""
        return f"server-clear would send {self.after:,} tok ({what}){mine}"


async def server_clear_count(session: "Session") -> ServerClearCount | None:
    """The count, or None when the session already runs a server strategy, has nothing to send, or its
    provider cannot count with context editing."""
    if session.compactor.mode in SERVER_MODES or not session.history:
        return None
    thinking = session.provider.thinking_budget > 0
    whole = replace(session.next_request(), messages=[clean_message(m) for m in session.history], stable_prefix=0,
                    context_management=server_edits(CLEAR, session.compactor.policy.high_tokens, thinking))
    counted = await session.provider.count_edited(whole)
    return None if counted is None else ServerClearCount(whole=counted[1], after=counted[0])


async def server_clear_line(session: "Session", ours: int | None) -> str | None:
    """`server_clear_count` as the meter's line beside the exact count (a failure says so in one line)."""
    try:
        counted = await server_clear_count(session)
    except Exception as error:  # noqa: BLE001 - ProviderError or a transport failure: the exact count stands
        return f"server-clear count failed: {str(error) or type(error).__name__}"
    return counted.line(ours) if counted is not None else None
