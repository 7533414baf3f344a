"""What the compactor aims for: the window, the water marks and each tier's switch.

One frozen value, so a plan can say which policy made it and a test can build any corner case. The
defaults are the app's defaults; they were picked with `bench/economics.py` on real Claude Code sessions
(the marks trade total cost against the price per prompt token and against how much context is kept).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from tui_agent.core.compaction.modes import off_in_env
from tui_agent.core.compaction.pricing import HUGE_RESULT_CHARS, default_budget
from tui_agent.core.tools.readonly import is_read_only_command

# Tools whose results can be fetched again by calling them again: masking their old output loses
# nothing the model cannot get back (the placeholder says how).
RERUNNABLE_TOOLS = frozenset({
    "Read", "Grep", "Glob", "LS", "NotebookRead", "WebFetch", "WebSearch", "ToolSearch",
})
# Which Bash commands only look at things lives with the tools (`tools/readonly.py`); the table here is
# only for transcripts and tools that do not answer for themselves (`CompactPolicy.rerunnable`).


def _fraction_or_tokens(value: float, room: int) -> int:
    """A mark given as a fraction of the effective window (≤ 1) or as tokens (> 1)."""
    return int(room * value) if value <= 1 else int(value)


@dataclass(frozen=True)
class CompactPolicy:
    """Knobs of the tiered compactor. Marks ≤ 1 are fractions of the working budget (`room`: a size in
    tokens chosen from the model's cache prices, or `budget_tokens`; never more than the window less the
    output reserve, nor the model's long-context price step); larger values are tokens. So a 200k and a 1M
    window give the same marks unless told otherwise: the work and the price set the bill, not the window.

    `enabled=None` means on unless the environment says `COMPACT=0` (read when the compactor is built).
    """

    context_window: int = 200_000
    max_output_tokens: int = 32_000
    budget_tokens: int | None = None  # the working budget; None: chosen from the cache prices
    budget_origin: str = "default for this model"  # where a set budget came from (env, flag, /budget, learned)
    budget_cap: int | None = None  # the organisation policy's budget: /budget may narrow it, never widen it
    budget_cap_origin: str = ""  # its words ("organisation policy /etc/tui-agent/policy.json")
    long_context_step: int | None = None  # tokens above which the model charges more per token
    budget_from_prices: bool = False  # a larger default budget where cheap reads make events pay later
    enabled: bool | None = None
    # Above the high mark an event leaves little but the head, the turn in progress and what the agent will
    # name (its writes, what recurs: `keep_for_use_share`, `keep_recurring_share` of the low mark); a live
    # session keeps its cache warm while idle when that pays (`core.idle`), so the few events are the only
    # rewrites. The marks were chosen by leaving one session out over 17 real sessions (bench/held_out.py,
    # docs/compaction-5.md): 60 %/10 % (compaction 4, tuned on three) kept 0.926 of what the agent named next
    # on all 17 at 0.551 of append-only's cost; 80 %/15 % kept 0.967 at 0.615 (0.963 held out). Since the low
    # mark is a share of the room above the base (`low_mark`, ADR 0014) the folds pick 80 %/10 %: 0.970 at 0.624
    # on all 17, every session ≥ 0.92 (held out 0.969 at 0.624, worst session 0.906).
    high_water: float = 0.80
    low_water: float = 0.10
    # Cut on read: a tool result longer than `cut_chars` that the model has already seen is cut once to
    # its first `cut_keep_chars` and frozen that way -- below the high-water mark only where it pays at the
    # cache prices below, or when it is one huge result (`compaction.pricing`); at an event for free.
    # `cut_always` is the old rule (every long result as soon as it is read), kept for the benchmark.
    cut_on_read: bool = True
    cut_chars: int = 4000
    cut_keep_chars: int = 1500
    cut_always: bool = False
    huge_result_chars: int = HUGE_RESULT_CHARS
    cache_read: float = 0.1  # the model's cache read and write prices (units of one uncached input token)
    cache_write: float = 1.25
    # Mask: at an event, results of re-runnable tools older than the newest `mask_protect_tokens` become a
    # placeholder (only when the placeholder is much smaller than what it replaces).
    mask: bool = True
    mask_protect_tokens: int = 20_000
    mask_min_chars: int = 1200
    # "Clear the result, keep the input" for any old tool result (not only re-runnable ones): the call's
    # input and the agent's reasoning stay, the result is recalled through the Context tool if needed.
    mask_any_result: bool = False
    # An event masks every candidate older than the protected tail, not only down to the low mark: one
    # batch, so the cached prefix changes at fewer events.
    mask_all_at_event: bool = False
    # Keep for use: at a drop, the newest write of each file the agent wrote stays as an island (its
    # exchange), newest first, within this share of the low mark (`compaction.keep_for_use`).
    # A cold cache (idle past its time to live) rewrites the whole request anyway: compact there when the
    # request is above `cold_mark` (a share of the way from the low to the high mark), down to
    # `cold_target` (the same scale): the event writes nothing the cold cache would not. With the 5 % head
    # a drop there beats clearing results only on the shared sessions at 0.05 + TTL (cost 0.605 -> 0.567,
    # coverage 0.961 -> 0.956, price 1.117 -> 1.094) and at 0.025 + TTL (0.659/0.959 -> 0.605/0.956);
    # targets of 0.15-0.35 all keep coverage ≥ 0.956, 0.0 falls to 0.929.
    cold_event: bool = True
    cold_mark: float = 0.5
    cold_target: float = 0.2
    cold_clears_only: bool = False  # True: a cold cache's event clears old results (inputs kept), drops nothing
    keep_for_use: bool = True
    keep_for_use_share: float = 0.7
    keep_for_use_tools: tuple[str, ...] = ("Write",)
    # A kept Write island is shown as the file stood after its later Edits that left the request
    # (`compaction.island_edits`): without it 28 % of the Write islands sent on the 17 shared and held-out
    # sessions showed a version of the file that no longer existed (3.7 % with it: `bench/stale_islands.py`).
    # On: a stale file misleads the agent (its next Edit's old_string is gone), which no coverage figure
    # sees; the price is small: the edited islands are larger, so v2 cost 0.6172 -> 0.6188 of append-only at
    # 0.05 + TTL for coverage 0.9716 -> 0.9719 (both windows alike), held out (`bench/held_out.py --set
    # islands_show_edits=false`) cost 0.617 against 0.616 without, coverage 0.962 against 0.963.
    islands_show_edits: bool = True
    # Beside the writes, the exchanges holding the most identifiers that recur in the session and that the
    # kept tail lacks, within this share of the low mark (`keep_for_use.choose_recurring`). The tail an event
    # keeps is short, and what recurs is what it lacks. 0.3 since the low mark is measured above the base
    # (`low_mark`, ADR 0014): with 0.2 no setting of the grid kept every one of the 17 sessions at ≥ 0.92 (on
    # the 80 %/10 % marks: 0.2 keeps 0.914 of the worst at 0.615 of append-only, 0.3 0.922 at 0.624).
    keep_recurring_share: float = 0.3
    # Beside them, the agent's own words: exchanges kept in place with their results cleared (the text it
    # wrote, the commands and paths it called with), within this share of the low mark
    # (`keep_for_use.choose_own_words`). 0: off.
    keep_own_words_share: float = 0.0
    # Drop: whole old messages leave at an event, replaced by a deterministic recap. The first
    # `keep_head` of the conversation (the task as first stated) stays in front: it is never rewritten,
    # so it is read from the cache at every call. 5 %, not 20 %: the oldest part is the least named later,
    # and what the head does not take the tail and the kept writes do (shared sessions, 0.05 + TTL:
    # coverage 0.952 -> 0.961 for cost 0.598 -> 0.605; at 0.1 and 0.1/1-hour better on both axes).
    drop: bool = True
    keep_head: float = 0.05
    recap_prompt_chars: int = 80_000  # the user's own prompts kept verbatim, newest first
    recap_prompt_max_chars: int = 2_000  # a longer prompt is kept as its head
    # Summary (optional): the model summarises the dropped span into the recap.
    summary: bool = False
    summary_max_failures: int = 3
    extra_rerunnable: frozenset[str] = field(default_factory=frozenset)

    @property
    def effective_window(self) -> int:
        return max(self.context_window - self.max_output_tokens, 1)

    @property
    def budget(self) -> int:
        """The working budget before the window's bound: set, or the default for the cache prices."""
        if self.budget_tokens:
            return self.budget_tokens
        return default_budget(self.cache_read, self.cache_write, self.high_water if self.high_water <= 1 else 0,
                              self.low_water if self.low_water <= 1 else 0, self.budget_from_prices)

    @property
    def room(self) -> int:
        """What the marks' fractions are of: the budget, bounded by the window less the output reserve
        and by the long-context price step."""
        bounds = [self.budget, self.effective_window]
        if self.long_context_step:
            bounds.append(max(self.long_context_step - self.max_output_tokens, 1))
        return max(min(bounds), 1)

    @property
    def budget_bound(self) -> str:
        """Why the room is what it is, in words (the meter's line)."""
        if self.room == self.budget:
            return self.budget_origin if self.budget_tokens else "default for this model"
        if self.long_context_step and self.room < self.effective_window:
            return "the long-context price step"
        return "the window"

    @property
    def high_tokens(self) -> int:
        return max(_fraction_or_tokens(self.high_water, self.room), 1)

    @property
    def head_tokens(self) -> int:
        return _fraction_or_tokens(self.keep_head, self.room) if self.keep_head > 0 else 0

    @property
    def cold_mark_tokens(self) -> int:
        """Above this, a call after the cache went cold compacts (the event costs no extra write there)."""
        return int(self.low_tokens + self.cold_mark * (self.high_tokens - self.low_tokens))

    @property
    def cold_target_tokens(self) -> int:
        return int(self.low_tokens + self.cold_target * (self.high_tokens - self.low_tokens))

    @property
    def low_tokens(self) -> int:
        return min(max(_fraction_or_tokens(self.low_water, self.room), 1), self.high_tokens)

    def low_mark(self, baseline: float) -> int:
        """The size an event aims at, measured above the base (system prompt and tools, sent at every call
        whatever an event does): the base plus `low_water` of the room the base leaves. A fraction of the
        whole room left a session whose base neared it (a long AGENTS.md, many MCP tools: 24k of a 25k mark)
        with only its newest round after a drop, and one whose base passed it (45k) dropping all it could.
        A mark set in tokens means what it says (`low_tokens`)."""
        if self.low_water > 1 or baseline <= 0:
            return self.low_tokens
        above = int(baseline + self.low_water * max(self.room - baseline, 0))
        return min(max(above, self.low_tokens), self.high_tokens)

    def for_model(self, context_window: int, max_output_tokens: int, cache_read: float,
                  cache_write: float) -> "CompactPolicy":
        """This policy for another model (`/model`): its window, output reserve and cache prices."""
        return replace(self, context_window=context_window, max_output_tokens=max_output_tokens,
                       cache_read=cache_read, cache_write=cache_write)

    def is_enabled(self) -> bool:
        if self.enabled is not None:
            return self.enabled
        return not off_in_env()

    def rerunnable(self, name: str, tool_input: object) -> bool:
        """Can this call's result be had again by running it again (so masking it loses nothing)?"""
        if self.mask_any_result or name in RERUNNABLE_TOOLS or name in self.extra_rerunnable:
            return True
        if name == "Bash" and isinstance(tool_input, dict):
            return is_read_only_command(tool_input.get("command"))
        return name.startswith("mcp__") and name.rsplit("__", 1)[-1].startswith(("get", "list", "read", "search"))
