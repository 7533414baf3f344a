"""Does a cut on read pay? The priced decision behind "no loss without pressure".

Cutting a long result the moment the model has read it saves its cut part at every later call, but only
until the next compaction event: there the request is rewritten after the drop point anyway, so whatever is
still long can be cut then at no extra write. Cutting *before* that costs a rewrite of the cached tail after
the result (at the write price instead of the read price) and, because the model may need what was cut, a
read again: one more call that reads the whole request from the cache and writes the part again. Below the
high-water mark the request fits; a cut there is a loss the agent did not have to take, so it must pay
for itself against those costs in the model's own prices (`core.models`).

How many calls are left until the next event is not known; it is estimated from the recent growth of the
request, and capped at as many calls as the session has already had (a session is expected to go on about
as long as it has lasted, the only length estimate a live session has). A single result over
`HUGE_RESULT_CHARS` is cut whatever the budget: one such result can take a large share of the window.

Pure functions of explicit numbers, so a test or the benchmark can price any corner case.
"""

from __future__ import annotations

from dataclasses import dataclass

from tui_agent.core import tokens as tk

HUGE_RESULT_CHARS = 60_000  # one result over this (about 15k tokens) is cut on read whatever the budget


@dataclass(frozen=True)
class CutCase:
    """One candidate for a cut on read, in estimated tokens."""

    saved_tokens: float  # what the cut takes out of every later request
    kept_tokens: float  # what the cut copy still sends (written once at the write price)
    tail_tokens: float  # what the previous request cached after this result (rewritten by the cut)
    request_tokens: float  # the whole request now (what one more call reads from the cache)
    calls_until_event: float  # expected calls before the next event rewrites the tail anyway


def calls_until_event(estimate: float, high: float, growth_per_call: float, calls_so_far: int) -> float:
    """Expected calls before the estimate crosses the high-water mark at `growth_per_call`, at most as many
    calls as the session has had so far (0 when already over: the event is this call)."""
    if estimate >= high:
        return 0.0
    lasting = float(max(calls_so_far, 1))
    if growth_per_call <= 0:
        return lasting
    return min((high - estimate) / growth_per_call, lasting)


def cut_saving(case: CutCase, read: float) -> float:
    """Prompt tokens the cut saves until the next event, priced at the cache read."""
    return case.saved_tokens * read * case.calls_until_event


def cut_cost(case: CutCase, read: float, write: float) -> float:
    """What the cut costs before that event: the cut copy and the cached tail written instead of read, and
    one read again of what was cut (the whole request read once more, the part written again)."""
    rewrite = (case.kept_tokens + case.tail_tokens) * write - (case.kept_tokens + case.saved_tokens + case.tail_tokens) * read
    read_again = case.request_tokens * read + case.saved_tokens * write
    return max(rewrite, 0.0) + read_again


def cut_pays(case: CutCase, read: float, write: float) -> bool:
    """Cut now only when what it saves until the next event outweighs what it costs."""
    return cut_saving(case, read) > cut_cost(case, read, write)


def is_huge(result_chars: int, limit: int = HUGE_RESULT_CHARS) -> bool:
    """A single result so long that it is cut on read whatever the budget."""
    return result_chars > limit


def cut_on_read_now(result_chars: int, keep_chars: int, tail_tokens: float, request_tokens: float,
                    until_event: float, *, read: float, write: float, huge_chars: int,
                    always: bool = False) -> bool:
    """The hook the compactor asks for each long result that has just been read: cut it now?"""
    if always or is_huge(result_chars, huge_chars):
        return True
    kept = tk.tokens_for_chars(keep_chars)
    case = CutCase(saved_tokens=tk.tokens_for_chars(result_chars) - kept, kept_tokens=kept,
                   tail_tokens=tail_tokens, request_tokens=request_tokens, calls_until_event=until_event)
    return cut_pays(case, read, write)


# ---- the working budget (compaction 4): a size in tokens, not a share of the window ----

# What one call of agentic coding work adds to its request, in tokens: a tool round (a file read, a command's
# output, an edit) and the reply. A prior, not a measurement of any one session; with it the rule below
# puts the high mark of a 0.05× read model where the marks of a 200k window were (≈109k).
WORK_GROWTH_TOKENS = 2_740
# The smallest working budget (what the marks' fractions are of): the room a 200k window left after a 32k
# reply reserve, where the measured default sat on the frontier of cost against what it keeps.
DEFAULT_BUDGET_TOKENS = 168_000


def event_pays_above(read: float, write: float, kept_share: float, growth: float = WORK_GROWTH_TOKENS) -> float:
    """The high mark H above which an event pays for itself: it rewrites what it keeps (L = kept_share × H)
    once at the write price, and saves the read of (H − L) at every call until the request is back at H,
    (H − L) / growth calls later: r·(H − L)² / g ≥ w·L, so H ≥ w·λ·g / (r·(1 − λ)²). Below it, compacting
    costs more in rewrites than the reads it saves: the cheaper the cache read, the larger the budget."""
    kept_share = min(max(kept_share, 0.0), 0.95)
    if read <= 0:
        return float("inf")
    return write * kept_share * growth / (read * (1 - kept_share) ** 2)


def default_budget(read: float, write: float, high_share: float, low_share: float, from_prices: bool = False) -> int:
    """The working budget for a model: the default size, the same at every window and every price.

    `from_prices`: the larger of that and the budget whose high mark (`high_share` of it) is where an
    event starts to pay (`event_pays_above`), so cheaper reads buy a larger budget. Measured on the shared
    sessions at a 1M window and 0.025× reads it raised the budget to 336k and cost 0.862× append-only for
    coverage 0.995, against 0.638× for 0.958 at 168k: coverage bought at a price no target asks, and a 1M
    window would no longer cost what a 200k one does. So it is off by default."""
    if high_share <= 0 or high_share > 1 or not from_prices:
        return DEFAULT_BUDGET_TOKENS
    pays = event_pays_above(read, write, low_share / high_share if high_share else 0.5)
    return int(max(DEFAULT_BUDGET_TOKENS, min(pays / high_share, 10_000_000)))
