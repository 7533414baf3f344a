"""What every compaction strategy offers the engine: the one interface the loop, the session, the
journal and replay call, so none of them asks a compactor what it can do (`hasattr`, `isinstance`,
`inspect`) or reads its private attributes.

The call number is the caller's (the session's one counter, `core/agent/call.py`): a compactor never counts
calls of its own, so a preview and the real call name the same call. The sticky decisions cross the
process boundary as JSON-safe data (`CompactState.to_json()` for v2): `export_state` gives it,
`import_state` validates it against the history and either restores it or refuses it with a warning
(the request is then planned from the history, which is always complete).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from tui_agent.core.compaction.plan import CompactResult
from tui_agent.core.compaction.policy import CompactPolicy
from tui_agent.core.messages import Message


@runtime_checkable
class CompactorProtocol(Protocol):
    """One compaction strategy (v2, v1, seed, off) behind one interface."""

    policy: CompactPolicy
    #: the strategy's name as `--compact` spells it (the journal restores a state into the same kind)
    mode: str
    #: whether pins, excludes, expands and `/compact` change what this strategy sends (v2 only)
    steerable: bool

    def set_baseline(self, baseline_tokens: int) -> None:
        """System prompt + tool definitions (chars/4); they may change between calls (MCP tools arrive)."""

    def retarget(self, context_window: int, max_output_tokens: int, cache_read: float, cache_write: float) -> None:
        """`/model`: the marks follow the new model's window and its cuts its cache prices from the next call
        (the decisions made so far stay)."""

    def compact(self, history: Sequence[Message], call: int | None = None) -> CompactResult:
        """Plan and keep the request of call `call` over `history` (never mutated)."""

    def preview(self, history: Sequence[Message], call: int | None = None) -> CompactResult:
        """What `compact(history, call)` would send, keeping no decision (the panel's next call)."""

    def observe_usage(self, input_tokens_total: int, server_edited: bool = False) -> None:
        """The real input size (input + cache write + cache read) of the request `compact` returned last.
        `server_edited`: the server managed that request on its own (cleared tool results, read from its
        compaction block on), so the size is of what the server kept, not of what was sent. One method for
        the one fact a call tells its strategy: each strategy knows what its own estimate was of, so it, not
        the engine, decides whether an edited size calibrates it (ours: no) or is its meter (server-clear)."""

    def too_long(self, history: Sequence[Message], real_tokens: int | None, limit: int | None) -> None:
        """The API said "prompt is too long": learn the real size and compact harder at the next call."""

    def request_event(self, kind: str = "drop") -> None:
        """`/compact`: an event at the next call even under the high-water mark."""

    def pin(self, index: int, on: bool = True) -> None: ...

    def exclude(self, index: int, on: bool = True) -> None: ...

    def expand(self, index: int, on: bool = True) -> None: ...

    @property
    def summary_enabled(self) -> bool:
        """Whether the summary tier may ask the model now (setting on, circuit breaker closed)."""

    @property
    def ratio(self) -> float:
        """Real tokens per estimated token, learned from usage (1.0 before any)."""

    def summary_context(self) -> tuple[list[Message], int]:
        """(the request as it stood before the last event, how many messages that event dropped)."""

    def attach_summary(self, history: Sequence[Message], text: str | None, call: int) -> CompactResult:
        """Put the model's summary of the dropped span into the recap (None: the summary call failed)."""

    def export_state(self) -> dict[str, Any]:
        """The sticky decisions as JSON-safe data (what the journal stores, as it is)."""

    def import_state(self, history: Sequence[Message], state: Mapping[str, Any]) -> str | None:
        """Restore `export_state`'s data over the same history; None when restored, else a one-line warning
        saying why it was refused (a stale or forged state that would render an invalid request)."""
