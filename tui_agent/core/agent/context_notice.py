"""The "N tokens left" notice: a short line that tells the model about its own context, outbound only.

Codex tells its model how much room is left; we do the same, but only when it matters (the budget is
getting short, or an event just took something out of the request), and always at the request's very
end, after the last cache breakpoint: the notice is never part of the cached prefix and never enters the
history, so the next request's prefix is byte for byte what this one cached (the provider appends it
after placing its breakpoints: `ModelRequest.sent_messages`).
"""

from __future__ import annotations

from tui_agent.core.compaction.plan import CompactPlan, fmt_tokens

NOTICE_MARK = "[tui-agent: context]"
# Told when less than this share of the request's budget (window less the reply's reserve) is left.
NOTICE_LEFT_SHARE = 0.25


def context_notice(plan: CompactPlan) -> str:
    """The notice for the request `plan` describes, or "" when there is nothing worth saying."""
    if plan.budget_tokens <= 0:
        return ""
    left = plan.tokens_left
    short = left < plan.budget_tokens * NOTICE_LEFT_SHARE
    event = plan.event is not None and plan.event.major
    if not short and not event:
        return ""
    missing = len(plan.not_sent_whole())
    line = f"{NOTICE_MARK} ≈{fmt_tokens(left)} tokens left of {fmt_tokens(plan.budget_tokens)}"
    if missing:
        line += (f"; {missing} earlier message{'s are' if missing != 1 else ' is'} not sent whole "
                 "(the Context tool's status lists them, its recall brings any back)")
    return line + "."


__all__ = ["NOTICE_LEFT_SHARE", "NOTICE_MARK", "context_notice"]
