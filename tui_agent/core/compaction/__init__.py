"""Compaction: what each model call sends of the append-only history.

- `Compactor` (v2, the default): tiered and sticky; returns `CompactResult(messages, plan)`.
- `SeedCompactor`: the first landing's v1 (`mode="v1"`) or the seed article's exact behaviour
  (`mode="seed"`) behind the same interface, so every face draws one kind of plan.
- `compact_messages(messages, options)`: the legacy pure function, kept as it was.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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
    from tui_agent.core.compaction.strategies.seed import SeedCompactor
    from tui_agent.core.compaction.strategies.server import ServerStrategy

# `render` is also a submodule's name: importing the submodule would set the package's attribute to the module,
# and `from tui_agent.core.compaction import render` would then get that, so the function is bound here (it is
# light: the plan's own types).
from tui_agent.core.compaction.render import render  # noqa: E402

# Where each name this package re-exports lives. Importing any compaction module runs this file first, and
# the engine (compactor, tiers, facts, recap, the other strategies: a third of the start-up's dataclasses)
# is not needed before the TUI's first frame, which only reads a plan's types: so a name is imported from
# its module the first time it is asked for (PEP 562), not here.
_HOMES = {
    "Compactor": "compactor", "Rerunnable": "compactor", "newest_round_start": "compactor",
    "HARD_TOOL_RESULT_CHARS": "strategies.legacy", "TRUNCATION_NOTE": "strategies.legacy",
    "CompactOptions": "strategies.legacy", "CompactReport": "strategies.legacy",
    "TruncatedBlock": "strategies.legacy", "compact_messages": "strategies.legacy", "with_budget": "strategies.legacy",
    "BlockDecision": "decisions", "Cut": "decisions", "Mask": "decisions",
    "RECAP_INDEX": "plan", "CompactEvent": "plan", "CompactPlan": "plan", "CompactResult": "plan", "Recap": "plan",
    "LossReport": "plan", "MessageOp": "plan",
    "MODES": "modes", "CompactPolicy": "policy", "CompactorProtocol": "protocol",
    "SeedCompactor": "strategies.seed", "SERVER_MODES": "strategies.server_edits", "ServerStrategy": "strategies.server",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:  # (a submodule: `from tui_agent.core.compaction import drop` imports it after this)
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value


def strategies() -> tuple[type[CompactorProtocol], ...]:
    """Every strategy behind the one interface, by the type checker's word (tests/test_types.py runs mypy)."""
    from tui_agent.core.compaction.compactor import Compactor
    from tui_agent.core.compaction.strategies.seed import SeedCompactor
    from tui_agent.core.compaction.strategies.server import ServerStrategy

    return (Compactor, SeedCompactor, ServerStrategy)


def make_compactor(mode: str, context_window: int, max_output_tokens: int, *,
                   policy: CompactPolicy | None = None, options: CompactOptions | None = None,
                   rerunnable: Rerunnable | None = None, baseline_tokens: int = 0) -> CompactorProtocol:
    """The one strategy factory (sessions, the economics bench and replay): v2 (default), v1 (first
    landing), seed (the article), off. `rerunnable` is the tools' own answer to "can this result be had
    again?" (`ToolRegistry.rerunnable`)."""
    from dataclasses import replace

    from tui_agent.core.compaction.compactor import Compactor
    from tui_agent.core.compaction.modes import MODES
    from tui_agent.core.compaction.policy import CompactPolicy
    from tui_agent.core.compaction.strategies.server_edits import SERVER_MODES

    base = policy or CompactPolicy()
    base = replace(base, context_window=context_window, max_output_tokens=max_output_tokens)
    if mode == "off":
        return Compactor(replace(base, enabled=False), baseline_tokens, rerunnable=rerunnable)
    if mode in ("v1", "seed"):  # the other strategies load only when chosen (v1's: 4 ms before the first call)
        from tui_agent.core.compaction.strategies.seed import SeedCompactor

        return SeedCompactor(base, baseline_tokens, mode=mode, options=options)
    if mode in SERVER_MODES:
        from tui_agent.core.compaction.strategies.server import ServerStrategy

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
