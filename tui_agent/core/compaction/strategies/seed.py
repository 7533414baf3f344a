"""The first landing's v1 and the seed article's compaction behind the `Compactor` interface.

`--compact v1` keeps the first landing's behaviour (truncation, a 40-message window, the token budget);
`--compact seed` the seed article's exact `compactMessages()` (no protected round, no budget). Both are
the legacy pure function `compact_messages`; this adapter only describes its report as a `CompactPlan`,
so the panel, the trace and the benchmark read one kind of plan whatever the strategy.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any, Sequence

from tui_agent.core.compaction.strategies.legacy import CompactOptions, compact_messages
from tui_agent.core.compaction.memo import MessageMemo
from tui_agent.core.compaction.decisions import BlockDecision, Cut
from tui_agent.core.compaction.plan import CompactPlan, CompactResult
from tui_agent.core.compaction.policy import CompactPolicy
from tui_agent.core.messages import Message

TOO_LONG_SHARE = 0.5  # after "prompt is too long", v1 compacts to this share of the window


class SeedCompactor:
    """Stateless v1/seed compaction with the calibration v1 had (one ratio for the whole request).

    Implements `CompactorProtocol` with `steerable = False`: every call decides anew from the history,
    so pins, excludes, expands and `/compact` are documented no-ops, and there is no summary tier. The
    call number is the caller's; `calls` is only the last planned call's number (for `compact(history)`)."""

    steerable = False
    summary_enabled = False  # the legacy strategies never ask the model for a summary

    def __init__(self, policy: CompactPolicy | None = None, baseline_tokens: int = 0, mode: str = "v1",
                 options: CompactOptions | None = None) -> None:
        self.policy = policy or CompactPolicy()
        self.mode = mode
        self.options = options or (CompactOptions(protect_recent_rounds=0) if mode == "seed" else CompactOptions())
        if self.policy.enabled is not None:
            self.options = replace(self.options, enabled=self.policy.enabled)
        self.baseline = baseline_tokens
        self.calls = 0  # the number of the last planned call
        self.calibration = 1.0
        self._last_estimate = 0
        self._override: int | None = None
        self._last: list[Message] = []
        self._memo = MessageMemo()  # the history's sizes and cut copies, made once per message

    @property
    def ratio(self) -> float:
        """Real tokens per estimated token (v1's one calibration ratio)."""
        return self.calibration

    def set_baseline(self, baseline_tokens: int) -> None:
        self.baseline = baseline_tokens

    def retarget(self, context_window: int, max_output_tokens: int, cache_read: float, cache_write: float) -> None:
        self.policy = self.policy.for_model(context_window, max_output_tokens, cache_read, cache_write)

    def _budget(self) -> int | None:
        if self.mode == "seed":
            return None
        if self._override is not None:
            return self._override
        room = self.policy.effective_window - self.baseline
        return max(int(room / max(self.calibration, 0.1)), 1000)

    def compact(self, history: Sequence[Message], call: int | None = None) -> CompactResult:
        call = call if call is not None else self.calls + 1
        self.calls = call
        result = self._plan(history, call)
        self._last_estimate = result.plan.message_tokens_after + self.baseline
        self._last = list(result.messages)
        return result

    def preview(self, history: Sequence[Message], call: int | None = None) -> CompactResult:
        return self._plan(history, call if call is not None else self.calls + 1)

    def _plan(self, history: Sequence[Message], call: int) -> CompactResult:
        options = self.options if self.options.max_tokens is not None else replace(self.options, max_tokens=self._budget())
        result = compact_messages(list(history), options, self._memo)
        report = result.report
        cuts: dict[int, tuple[BlockDecision, ...]] = {}
        for cut in report.truncated:
            cuts[cut.message_index] = cuts.get(cut.message_index, ()) + (Cut(
                cut.message_index, cut.block_index, cut.tool_use_id, "", cut.original_chars, cut.kept_chars, call),)
        estimate = round((report.tokens_after + self.baseline) * self.calibration)
        plan = CompactPlan(
            mode=self.mode, enabled=report.enabled, call=call, history_len=len(history),
            drop_until=report.first_kept, blocks=cuts, protected_from=min(report.protected, default=len(history)),
            protected_indices=tuple(report.protected),
            outbound_indices=tuple(range(report.first_kept, len(history))),
            message_tokens_before=report.tokens_before, message_tokens_after=report.tokens_after,
            baseline_tokens=self.baseline, estimated_tokens=estimate, high_tokens=self.policy.effective_window,
            low_tokens=self.policy.effective_window, budget_tokens=self.policy.effective_window,
            over_budget=report.over_budget, dropped_reason=f"outside the last {self.options.max_messages} messages",
        )
        return CompactResult(result.messages, plan)

    def observe_usage(self, input_tokens_total: int, server_edited: bool = False) -> None:
        """Calibrates on the real size; v1 and seed send what the API reads: nothing to learn of a server's
        own edits."""
        if not server_edited and input_tokens_total > 0 and self._last_estimate > 0:
            self.calibration = min(max(input_tokens_total / self._last_estimate, 0.5), 3.0)

    def too_long(self, history: Sequence[Message], real_tokens: int | None, limit: int | None) -> None:
        """From now on compact to half the window (v1's answer to "prompt is too long")."""
        self._override = max(int(self.policy.context_window * TOO_LONG_SHARE) - self.baseline, 1000)

    # -- steering: documented no-ops (every call decides anew; nothing is sticky) ----------------
    def request_event(self, kind: str = "drop") -> None:
        """No-op: v1/seed have no events to force."""

    def pin(self, index: int, on: bool = True) -> None:
        """No-op: v1/seed cannot keep a message (steerable is False)."""

    def exclude(self, index: int, on: bool = True) -> None:
        """No-op: v1/seed cannot leave a message out (steerable is False)."""

    def expand(self, index: int, on: bool = True) -> None:
        """No-op: v1/seed cut anew at every call (steerable is False)."""

    def summary_context(self) -> tuple[list[Message], int]:
        """The last request and no dropped span: these strategies never summarise."""
        return list(self._last), 0

    def attach_summary(self, history: Sequence[Message], text: str | None, call: int) -> CompactResult:
        """No summary tier: the plan of call `call` as it is."""
        return self._plan(history, call)

    # -- persistence ------------------------------------------------------------------------------
    def export_state(self) -> dict[str, Any]:
        return {"version": 1, "mode": self.mode, "calls": self.calls, "calibration": self.calibration,
                "override": self._override}

    def import_state(self, history: Sequence[Message], state: Mapping[str, Any]) -> str | None:
        """Restore the calibration (the only thing v1 learns); a warning instead when it is unreadable."""
        try:
            calls = int(state.get("calls", 0))
            calibration = float(state.get("calibration", 1.0))
            override = state.get("override")
            override = None if override is None else int(override)
        except (TypeError, ValueError, AttributeError) as error:
            return f"The saved {self.mode} compaction state is unreadable ({error}); planned from the history."
        if not 0.5 <= calibration <= 3.0:
            return f"The saved {self.mode} calibration {calibration} is out of range; planned from the history."
        self.calls, self.calibration, self._override = calls, calibration, override
        return None
