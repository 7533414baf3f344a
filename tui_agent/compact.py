"""Public contract of the compaction engine.

`Compactor(CompactPolicy(context_window=200_000, max_output_tokens=32_000), baseline_tokens=B)`;
`compactor.compact(history) -> CompactResult(messages, plan)` once per model call with the whole history
(never mutated); `compactor.observe_usage(input_tokens_total)` after a call. `plan.estimated_tokens` is the
estimate of the whole request, baseline included. The legacy `compact_messages(messages, options)` stays
as it was, for the seed mode. The implementation lives in `tui_agent.core.compaction` (the UI-free core).
"""

from tui_agent.core.compaction import (
    TRUNCATION_NOTE,
    CompactEvent,
    CompactOptions,
    Compactor,
    CompactPlan,
    CompactPolicy,
    CompactReport,
    CompactResult,
    LossReport,
    SeedCompactor,
    TruncatedBlock,
    compact_messages,
    render,
)

__all__ = [
    "TRUNCATION_NOTE", "CompactEvent", "CompactOptions", "Compactor", "CompactPlan", "CompactPolicy",
    "CompactReport", "CompactResult", "LossReport", "SeedCompactor", "TruncatedBlock", "compact_messages",
    "render",
]
