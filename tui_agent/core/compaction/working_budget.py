"""The working budget as the user sees and sets it (`/budget`, `--budget`, `COMPACT_BUDGET`).

Why a module of its own: the budget's words (its size, where it came from, the window beside it, the marks
it sets) are read by the command, and will be by the meter; one function says them, so they never disagree.
"""

from __future__ import annotations

from dataclasses import replace

from tui_agent.core.compaction.plan import fmt_tokens
from tui_agent.core.compaction.policy import CompactPolicy
from tui_agent.core.compaction.settings import CompactSettingsError, budget_of


def describe(policy: CompactPolicy) -> str:
    """`budget 168k (default for this model's prices) · window 1M · compacts above 109k down to 50k`."""
    return (f"budget {fmt_tokens(policy.room)} ({policy.budget_bound}) · window {fmt_tokens(policy.context_window)} "
            f"· compacts above {fmt_tokens(policy.high_tokens)} down to {fmt_tokens(policy.low_tokens)}")


def set_budget(policy: CompactPolicy, typed: str, origin: str = "/budget") -> CompactPolicy:
    """The policy with the budget the user typed (tokens, `150k`); raises CompactSettingsError, also for a
    budget over the organisation policy's (`budget_cap`: a setting may narrow it, never widen it)."""
    tokens = budget_of(typed, origin)
    if policy.budget_cap is not None and tokens > policy.budget_cap:
        raise CompactSettingsError(f"{origin} {tokens:,} refused: the {policy.budget_cap_origin or 'organisation policy'} "
                                   f"sets at most {policy.budget_cap:,} tokens (a setting may narrow it, never widen it)")
    return replace(policy, budget_tokens=tokens, budget_origin=origin)


def budget_command(policy: CompactPolicy, args: str) -> tuple[CompactPolicy | None, str]:
    """`/budget` alone: the budget in words; `/budget N`: the new policy and its words (None: not changed)."""
    if not args.strip():
        return None, describe(policy)
    try:
        changed = set_budget(policy, args.strip())
    except CompactSettingsError as error:
        return None, f"{error} (usage: /budget [TOKENS], e.g. /budget 120k)"
    return changed, "Working budget set: " + describe(changed)
