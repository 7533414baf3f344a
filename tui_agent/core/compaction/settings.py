"""Compaction settings from the environment and the command line (flags win over variables).

`COMPACT` / `--compact`: v2 (default), v1 (the first landing), seed (the seed article), off (`COMPACT=0`).
`COMPACT_HIGH_WATER` / `--compact-high`, `COMPACT_LOW_WATER` / `--compact-low`: the marks, as a fraction of
the working budget (≤ 1) or in tokens; `COMPACT_SUMMARY=1` / `--compact-summary`: the summary tier.
`COMPACT_BUDGET` / `--budget` (and `/budget N` in a session): the working budget in tokens, which the marks'
fractions are of (default: chosen from the model's cache prices, `compaction.pricing.default_budget`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Mapping

from tui_agent.core.compaction.modes import ENV, MODES, mode_word
from tui_agent.core.compaction.policy import CompactPolicy, _fraction_or_tokens


class CompactSettingsError(ValueError):
    """A compaction setting that cannot be used; the message names the flag or variable."""


@dataclass(frozen=True)
class CompactSettings:
    mode: str = "v2"
    high_water: float | None = None
    low_water: float | None = None
    summary: bool = False
    budget: int | None = None
    budget_origin: str = ""  # "env" or "flag": the meter says where the budget came from

    def policy(self, base: CompactPolicy | None = None) -> CompactPolicy:
        policy = base or CompactPolicy()
        if self.high_water is not None:
            policy = replace(policy, high_water=self.high_water)
        if self.low_water is not None:
            policy = replace(policy, low_water=self.low_water)
        if self.summary:
            policy = replace(policy, summary=True)
        if self.budget is not None:
            policy = replace(policy, budget_tokens=self.budget, budget_origin=self.budget_origin)
        room = policy.room
        low = _fraction_or_tokens(policy.low_water, room)
        if low > policy.high_tokens and self.low_water is None:  # only the high mark was set: follow it
            return replace(policy, low_water=float(max(policy.high_tokens // 2, 2)))
        if low > policy.high_tokens:
            raise CompactSettingsError(
                f"the low-water mark ({low:,} tokens) is above the high-water mark "
                f"({policy.high_tokens:,}); set --compact-low below --compact-high")
        return policy


def mode_of(value: str, where: str) -> str:
    mode = mode_word(value)
    if mode not in MODES:
        raise CompactSettingsError(f"{where}={value!r} is not a compaction mode (use {', '.join(MODES)}, or 0 for off)")
    return mode


MIN_MARK_TOKENS = 1000  # a mark in tokens below this leaves no room for even one tool result


def mark_of(value: str | float, where: str) -> float:
    """A mark as typed: a fraction of the effective window (0 < f <= 1) or whole tokens (>= 1000).

    `2.0` is neither (a fraction above 1, or two tokens?) and is refused rather than read as 2 tokens."""
    usage = "a fraction like 0.65, or whole tokens like 120000"
    try:
        mark = float(value)
    except (TypeError, ValueError):
        raise CompactSettingsError(f"{where}={value!r} is not a number ({usage})")
    if mark != mark or mark in (float("inf"), float("-inf")):
        raise CompactSettingsError(f"{where}={value!r} is not a number ({usage})")
    if mark <= 0:
        raise CompactSettingsError(f"{where} must be positive ({usage})")
    if mark > 1:
        written_whole = mark.is_integer() and (not isinstance(value, str) or value.strip().isdigit())
        if not written_whole:
            raise CompactSettingsError(f"{where}={value!r}: a fraction of the window is at most 1 ({usage})")
        if mark < MIN_MARK_TOKENS:
            raise CompactSettingsError(f"{where}={value!r} tokens is too small for any request (at least "
                                       f"{MIN_MARK_TOKENS:,} tokens, or a fraction like 0.65)")
    return mark


def budget_of(value: str | int, where: str) -> int:
    """A working budget as typed: whole tokens (at least `MIN_MARK_TOKENS`)."""
    text = str(value).strip().replace("_", "").replace(",", "")
    scale = 1
    if text[-1:].lower() in ("k", "m"):
        scale, text = (1_000 if text[-1].lower() == "k" else 1_000_000), text[:-1]
    try:
        tokens = int(float(text) * scale) if text else -1
    except ValueError:
        raise CompactSettingsError(f"{where}={value!r} is not a number of tokens (e.g. 120000 or 120k)")
    if tokens < MIN_MARK_TOKENS:
        raise CompactSettingsError(f"{where}={value!r}: a budget is at least {MIN_MARK_TOKENS:,} tokens")
    return tokens


def settings_from(env: Mapping[str, str], *, mode: str | None = None, high: str | float | None = None,
                  low: str | float | None = None, summary: bool | None = None,
                  budget: str | int | None = None) -> CompactSettings:
    """The settings for a session: flags (the keyword arguments) over environment variables."""
    chosen = mode_of(mode, "--compact") if mode is not None else mode_of(env.get(ENV, "v2"), ENV)
    high_value = high if high is not None else env.get("COMPACT_HIGH_WATER")
    low_value = low if low is not None else env.get("COMPACT_LOW_WATER")
    budget_value = budget if budget is not None else env.get("COMPACT_BUDGET")
    return CompactSettings(
        mode=chosen,
        high_water=mark_of(high_value, "--compact-high" if high is not None else "COMPACT_HIGH_WATER")
        if high_value not in (None, "") else None,
        low_water=mark_of(low_value, "--compact-low" if low is not None else "COMPACT_LOW_WATER")
        if low_value not in (None, "") else None,
        summary=summary if summary else env.get("COMPACT_SUMMARY", "") in ("1", "true", "on"),
        budget=budget_of(budget_value, "--budget" if budget is not None else "COMPACT_BUDGET")
        if budget_value not in (None, "") else None,
        budget_origin=("flag --budget" if budget is not None else "env COMPACT_BUDGET")
        if budget_value not in (None, "") else "",
    )
