"""Compaction: what each model call sends of the append-only history.

- `Compactor` (v2, the default): tiered and sticky; returns `CompactResult(messages, plan)`.
- `SeedCompactor`: the first landing's v1 (`mode="v1"`) or the seed article's exact behaviour
  (`mode="seed"`) behind the same interface, so every face draws one kind of plan.
- `compact_messages(messages, options)`: the legacy pure function, kept as it was.
"""

from tui_agent.core.compaction.compactor import Compactor, Rerunnable, newest_round_start
from tui_agent.core.compaction.strategies.legacy import (
    HARD_TOOL_RESULT_CHARS,
    TRUNCATION_NOTE,
    CompactOptions,
    CompactReport,
    TruncatedBlock,
    compact_messages,
    with_budget,
)
from tui_agent.core.compaction.decisions import BlockDecision, Cut, Mask
from tui_agent.core.compaction.plan import (
    RECAP_INDEX,
    CompactEvent,
    CompactPlan,
    CompactResult,
    Recap,
    LossReport,
    MessageOp,
)
from tui_agent.core.compaction.modes import MODES
from tui_agent.core.compaction.policy import CompactPolicy
from tui_agent.core.compaction.protocol import CompactorProtocol
from tui_agent.core.compaction.render import render
from tui_agent.core.compaction.strategies.seed import SeedCompactor
from tui_agent.core.compaction.strategies.server import SERVER_MODES, ServerStrategy



# Every strategy behind the one interface, by the type checker's word (tests/test_types.py runs mypy).
STRATEGIES: tuple[type[CompactorProtocol], ...] = (Compactor, SeedCompactor, ServerStrategy)


def make_compactor(mode: str, context_window: int, max_output_tokens: int, *,
                   policy: CompactPolicy | None = None, options: CompactOptions | None = None,
                   rerunnable: Rerunnable | None = None, baseline_tokens: int = 0) -> CompactorProtocol:
    """The one strategy factory (sessions, the economics bench and replay): v2 (default), v1 (first
    landing), seed (the article), off. `rerunnable` is the tools' own answer to "can this result be had
    again?" (`ToolRegistry.rerunnable`)."""
    from dataclasses import replace

    base = policy or CompactPolicy()
    base = replace(base, context_window=context_window, max_output_tokens=max_output_tokens)
    if mode == "off":
        return Compactor(replace(base, enabled=False), baseline_tokens, rerunnable=rerunnable)
    if mode in ("v1", "seed"):
        return SeedCompactor(base, baseline_tokens, mode=mode, options=options)
    if mode in SERVER_MODES:
        return ServerStrategy(mode, base, baseline_tokens, rerunnable=rerunnable)
    if mode != "v2":
        raise ValueError(f"unknown compaction mode {mode!r} (choose {', '.join(MODES)})")
    return Compactor(base, baseline_tokens, rerunnable=rerunnable)


__all__ = [
    "MODES", "make_compactor",
    "HARD_TOOL_RESULT_CHARS", "TRUNCATION_NOTE", "CompactOptions", "CompactReport", "TruncatedBlock",
    "compact_messages", "with_budget", "Compactor", "CompactPolicy", "CompactPlan", "CompactResult",
    "CompactEvent", "BlockDecision", "Cut", "Mask", "Recap", "LossReport", "MessageOp", "RECAP_INDEX", "render",
    "SeedCompactor", "ServerStrategy", "newest_round_start",
]
