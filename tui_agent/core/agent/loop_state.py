"""What the loop keeps across turns (`LoopState`, owned by the Session) and its default stop, apart from the
loop itself: a Session holds them from the start, while the loop, with everything a turn runs (the call
plan, the compactor, the tool round, the stream), is imported only when a turn starts, after the TUI's
first frame.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

from tui_agent.core.agent.server_watch import CacheTrack

if TYPE_CHECKING:
    from tui_agent.core.compaction.plan import CompactEvent, CompactPlan
    from tui_agent.core.providers.base import ModelRequest

# Model calls per turn before the loop stops and asks: far above what a real task needs (20 cut
# real tasks short; Claude Code has no such stop). It only guards against a model that never stops.
DEFAULT_MAX_TURNS = 200


@dataclass
class LoopState:
    """Counters that live across turns (owned by the Session)."""

    calls: int = 0
    last_plan: CompactPlan | None = None
    # The cache's clock: when the last request that read or wrote the prompt cache was SENT (a call whose
    # usage came, or a keep-warm ping). Its time to live runs from the request's arrival, not from the end
    # of its answer: counted from the answer, a ping after a long answer came too late and wrote it all again.
    warm_since: float | None = None
    sent_at: float | None = None  # when the call being answered was sent (it becomes `warm_since` with its usage)
    cache: CacheTrack = field(default_factory=CacheTrack)  # the previous answer's id and cached prefix
    last_request: ModelRequest | None = None  # what the last call sent: a keep-warm ping repeats it
    # `/compact`'s event, made between turns for the next call: that call reports it (the journal's event
    # field, the panel's list), since its own plan finds nothing more to change
    asked_event: CompactEvent | None = None
    clock: Callable[[], float] = time.monotonic  # the cache clock's source (a test's moves with its fake server)
