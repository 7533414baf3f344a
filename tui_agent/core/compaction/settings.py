"""Compaction settings from the environment and the command line (flags win over variables).

`COMPACT` / `--compact`: v2 (default), v1 (the first landing), seed (the seed article), off (`COMPACT=0`).
`COMPACT_HIGH_WATER` / `--compact-high`, `COMPACT_LOW_WATER` / `--compact-low`: the marks, as a fraction of
the effective window (≤ 1) or in tokens; `COMPACT_SUMMARY=1` / `--compact-summary`: the summary tier.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Mapping

from tui_agent.core.compaction.policy import CompactPolicy, _fraction_or_tokens

MODES = ("v2", "v1", "seed", "off")
_ALIASES = {"0": "off", "1": "v2", "on": "v2", "false": "off", "true": "v2", "": "v2"}


class CompactSettingsError(ValueError):
    """A compaction setting that cannot be used; the message names the flag or variable."""


@dataclass(frozen=True)
class CompactSettings:
    mode: str = "v2"
    high_water: float | None = None
    low_water: float | None = None
    summary: bool = False

    def policy(self, base: CompactPolicy | None = None) -> CompactPolicy:
        policy = base or CompactPolicy()
        if self.high_water is not None:
            policy = replace(policy, high_water=self.high_water)
        if self.low_water is not None:
            policy = replace(policy, low_water=self.low_water)
        if self.summary:
            policy = replace(policy, summary=True)
        room = policy.effective_window
        low = _fraction_or_tokens(policy.low_water, room)
        if low > policy.high_tokens and self.low_water is None:  # only the high mark was set: follow it
            return replace(policy, low_water=float(max(policy.high_tokens // 2, 2)))
        if low > policy.high_tokens:
            raise CompactSettingsError(
                f"the low-water mark ({low:,} tokens) is above the high-water mark "
                f"({policy.high_tokens:,}); set --compact-low below --compact-high")
        return policy


def mode_of(value: str, where: str) -> str:
    mode = _ALIASES.get(value.strip().lower(), value.strip().lower())
    if mode not in MODES:
        raise CompactSettingsError(f"{where}={value!r} is not a compaction mode (use {', '.join(MODES)}, or 0 for off)")
    return mode


def mark_of(value: str | float, where: str) -> float:
    try:
        mark = float(value)
    except (TypeError, ValueError):
        raise CompactSettingsError(f"{where}={value!r} is not a number (a fraction like 0.6, or tokens like 120000)")
    if mark <= 0:
        raise CompactSettingsError(f"{where} must be positive (a fraction like 0.6, or tokens like 120000)")
    return mark


def settings_from(env: Mapping[str, str], *, mode: str | None = None, high: str | float | None = None,
                  low: str | float | None = None, summary: bool | None = None) -> CompactSettings:
    """The settings for a session: flags (the keyword arguments) over environment variables."""
    chosen = mode_of(mode, "--compact") if mode is not None else mode_of(env.get("COMPACT", "v2"), "COMPACT")
    high_value = high if high is not None else env.get("COMPACT_HIGH_WATER")
    low_value = low if low is not None else env.get("COMPACT_LOW_WATER")
    return CompactSettings(
        mode=chosen,
        high_water=mark_of(high_value, "--compact-high" if high is not None else "COMPACT_HIGH_WATER")
        if high_value not in (None, "") else None,
        low_water=mark_of(low_value, "--compact-low" if low is not None else "COMPACT_LOW_WATER")
        if low_value not in (None, "") else None,
        summary=summary if summary else env.get("COMPACT_SUMMARY", "") in ("1", "true", "on"),
    )
