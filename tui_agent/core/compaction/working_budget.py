"""The working budget as the user sees and sets it (`/budget`, `--budget`, `COMPACT_BUDGET`).

Why a module of its own: the budget's words (its size, where it came from, the window beside it, the marks
it sets) are read by the command, and will be by the meter; one function says them, so they never disagree.
And whether a budget the user set can work at all (`below_base`): the door refuses the flag, `/budget`
refuses the command, and start-up says so once MCP tools have joined the base.
"""

from __future__ import annotations

from dataclasses import replace

from tui_agent.core.compaction.plan import fmt_tokens
from tui_agent.core.compaction.policy import CompactPolicy
from tui_agent.core.compaction.settings import CompactSettingsError, budget_of

MIN_MESSAGE_ROOM = 1000  # below this many tokens for messages, not even one Read result fits


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


def below_base(policy: CompactPolicy | None, system: int, tools: int, in_progress: int = 0) -> str | None:
    """Why the working budget the user set cannot work: it leaves less than `MIN_MESSAGE_ROOM` above what
    every call sends (system prompt + tool definitions, + the turn in progress when one is running); the
    base is named. None for a budget that can work, or one nobody set (the default is chosen to fit)."""
    if policy is None or not policy.budget_tokens:
        return None
    base = system + tools + in_progress
    if policy.budget_tokens >= base + MIN_MESSAGE_ROOM:
        return None
    where = f"{policy.budget_origin.removeprefix('flag ').removeprefix('env ')} {policy.budget_tokens:,}"
    parts = f"system prompt ≈{system:,} + tool definitions ≈{tools:,}" + (
        f" + the turn in progress ≈{in_progress:,}" if in_progress else "")
    least = f"give at least {base + MIN_MESSAGE_ROOM:,}"
    if policy.budget_tokens < base:
        return f"{where} is below what every call sends before any message: {parts} = ≈{base:,} tokens; {least}"
    return (f"{where} leaves under {MIN_MESSAGE_ROOM:,} tokens for the conversation: every call sends ≈{base:,} "
            f"before any message ({parts}); {least}")
