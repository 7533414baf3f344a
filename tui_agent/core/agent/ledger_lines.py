"""The ledger said in one line: the folded panel's meter, the Context tool's line, `-p`'s closing line.

Its own concept because these are words, not figures: the ledger (`budget.py`) hears events and keeps
numbers; a face without the panel (a folded panel, headless, an ACP client) needs them said in a line,
with the same rounding, "≈" for an estimate and no cost when any call had no price. They read only what
they are handed, so every face that prints a line prints the same one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tui_agent.core.agent.figures import CallFigures
from tui_agent.core.formats import fmt_tokens, fmt_usd, plural


@dataclass(frozen=True)
class ContextUse:
    """One use of the Context tool: what it asked and what its result cost (tokens added to the context)."""

    call: int
    summary: str
    tokens: int
    is_error: bool = False


def context_line(figures: CallFigures | None, cost: float | None) -> str:
    """`ctx 62% · 14 dropped · $0.12`: the one-line meter for a folded panel (and headless); `cost`: None
    when the session's cost is not known."""
    if figures is None:
        return "ctx: no call yet"
    approx = "" if figures.exact_total is not None else "≈"
    parts = [f"ctx {approx}{figures.percent}% of {fmt_tokens(figures.room)}"]
    if figures.dropped:
        parts.append(f"{figures.dropped} dropped")
    if cost is not None:
        parts.append(fmt_usd(cost))
    return " · ".join(parts)


def context_tool_line(uses: Sequence[ContextUse]) -> str:
    """"Context tool: 2 uses · ≈3.1k tok (last: recall 'README.md' ≈1.2k tok)", or "" before any use."""
    if not uses:
        return ""
    last = uses[-1]
    total = sum(use.tokens for use in uses)
    what = f"{last.summary} " if last.summary else ""
    failed = " failed" if last.is_error else ""
    return (f"Context tool: {len(uses)} use{'s' * (len(uses) != 1)} · ≈{fmt_tokens(total)} tok "
            f"(last, call #{last.call}: {what}≈{fmt_tokens(last.tokens)} tok{failed})")


def summary_line(figures: CallFigures | None, calls: int, events: int, summary_tokens: int, summary_cost: float,
                 cost: float | None, earlier_usd: float | None = None, counted_before: float = 0.0) -> str:
    """Headless prints this at the end of a run: the same figures the panel shows. `cost`: the ledger's (this
    run's calls only; None when not known); after `--continue` (`earlier_usd`: what the session's earlier
    calls cost) the cost says "this run" and gives the session's beside it, never this run's as the
    session's. `counted_before`: what the ledger held when the run began (a resumed session's keep-warm
    pings, fed back by the resume): the session's, never this run's."""
    if figures is None:
        return "no model call"
    parts = [f"{calls} call{'s' * (calls != 1)}",
             f"last {'' if figures.exact_total is not None else '≈'}{fmt_tokens(figures.shown_total)} tok "
             f"(cached {fmt_tokens(figures.cached)} · "
             f"new {fmt_tokens(figures.new)})",
             plural(events, "compaction event")]
    if figures.dropped:
        parts.append(f"{plural(figures.dropped, 'message')} not sent")
    if summary_tokens:
        parts.append(f"summaries {fmt_tokens(summary_tokens)} tok"
                     + (f" {fmt_usd(summary_cost)}" if cost is not None else ""))
    if cost is not None and earlier_usd is not None:
        parts.append(f"this run {fmt_usd(cost - counted_before)} (session {fmt_usd(cost + earlier_usd)})")
    elif cost is not None:
        parts.append(f"session {fmt_usd(cost)}")
    return " · ".join(parts)
