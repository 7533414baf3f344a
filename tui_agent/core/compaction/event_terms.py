"""An event's terms: why it happens (the chat's sentence and its short form), the size it aims at, and
the policy it runs with, from what set it off.

Its own concept because the triggers differ in more than their words: `/compact` and "prompt is too long"
give up at least a share of the request whatever its size; a cold cache's event under the mark keeps more
and may clear old results only; the marks' event aims at the low-water mark. The compactor
(`compactor.py`) decides *whether* there is an event; this decides *on what terms*.
"""

from __future__ import annotations

from dataclasses import replace

from tui_agent.core.compaction.plan import fmt_tokens
from tui_agent.core.compaction.policy import CompactPolicy

FORCED_SHARE = 0.5  # /compact under the mark: the request gives up (at least) this share of itself
COLD_MASK_MIN_CHARS = 300  # a cold cache's event clears results this long (their placeholder is ~150)


def event_terms(policy: CompactPolicy, asked: bool, forced: bool, cold: bool, relayout: bool,
                estimate: int, idle: bool = False, baseline: float = 0.0) -> tuple[str, str, int, CompactPolicy]:
    """An event's reason (for the chat), its short why, the size it aims at and the policy it runs with:
    `cold` is a cold cache's event under the mark (it keeps more, and clears results only); `idle` the idle
    policy's event while the session waits (`core/idle.py`: it is `/compact`'s drop, told as its own);
    `baseline` the base's tokens, which the low mark is measured above (`CompactPolicy.low_mark`)."""
    high, runs_with = policy.high_tokens, policy
    target = policy.low_tokens if forced else policy.low_mark(baseline)  # above the base (`low_mark`)
    if asked and idle:
        reason, why = "compacted while idle, before the cache expired", "idle"
    elif asked:
        reason, why = "you asked to compact now", "you asked"
    elif forced:
        reason = why = "the API said the prompt is too long"
    elif cold:
        reason = why = "the cache went cold (the request is written again anyway)"
    else:
        mark = f"over the {fmt_tokens(high)} high-water mark"
        reason, why = (f"your pins, excludes or expands put it {mark}" if relayout else mark,
                       f"over the {fmt_tokens(high)} mark")
    if cold:  # a cold cache's event keeps more: it was not over the mark
        target = max(policy.cold_target_tokens, target)
        if runs_with.cold_clears_only:  # clear old results, keep every input
            runs_with = replace(runs_with, drop=False, mask_any_result=True, mask_min_chars=COLD_MASK_MIN_CHARS)
    if forced:  # asked for now: even a small request gives up its older half
        target = min(target, int(estimate * FORCED_SHARE))
    return reason, why, target, runs_with
