"""An event's report, made from the state after it: what the event did, why, and its own loss (what the
previous request sent and this one does not — its diff — and what of that, or of the results masked now,
appears neither in the request nor in the recap, and the identifiers it put at risk: `at_risk`)."""

from __future__ import annotations

from typing import Sequence

from tui_agent.core.compaction.at_risk import at_risk
from tui_agent.core.compaction.decisions import KINDS, Clip, Edited
from tui_agent.core.compaction.facts import Facts
from tui_agent.core.compaction.in_use import in_use_kept
from tui_agent.core.compaction.layout import Layout
from tui_agent.core.compaction.plan import CompactEvent, EventKind, LossReport, fmt_tokens
from tui_agent.core.compaction.policy import CompactPolicy
from tui_agent.core.compaction.recap import missing_from, request_text
from tui_agent.core.compaction.state import CompactState
from tui_agent.core.messages import Message


def make_event(state: CompactState, facts: Facts, layout: Layout, policy: CompactPolicy, history: Sequence[Message],
               call: int, kinds: Sequence[EventKind], reason: str, before: int, after: int,
               sent_before: frozenset[int], cut_messages: set[int]) -> CompactEvent:
    """The event of call `call` (kinds in order, once each); `sent_before` the history indices the
    append-only request would have sent, `cut_messages` the messages cut at this call."""
    unique = tuple(dict.fromkeys(kinds))
    masked_now = sum(1 for per in state.masks.values() for m in per if m.call == call)
    edited_now = sum(1 for per in state.blocks.values() for d in per
                     if isinstance(d, Edited) and d.call == call and d.content is not None)
    cut_now = sum(1 for i in cut_messages for c in state.cuts.get(i, ()) if c.call == call and not isinstance(c, Clip))
    left: tuple[int, ...] = ()
    loss = LossReport()
    recap = layout.recap if state.dropping else None
    lost_kinds = tuple(kind for kind in KINDS.values() if kind.lost)  # (the masks)
    if ("drop" in unique or "exclude" in unique or "clip" in unique or any(kind.tag in unique for kind in lost_kinds)
            or cut_now):
        left = tuple(sorted(i for i in sent_before if i not in layout.pos))
        masked_idx = tuple(sorted(i for i, per in state.blocks.items()
                                  if any(d.call == call and isinstance(d, lost_kinds) for d in per)))
        text: list[str] = []  # the request's text, made once and only when asked for

        def request() -> str:
            if not text:
                text.append(request_text(layout.out))
            return text[0]

        prompts, paths = missing_from(request, facts.messages,
                                      sorted(set(left) | set(masked_idx)), policy.recap_prompt_max_chars, recap)
        cut_idx = {i for i in cut_messages if any(c.call == call for c in state.cuts.get(i, ()))}
        changed = set(left) | set(masked_idx) | cut_idx
        risk = at_risk(history, changed, request(), entities_of=lambda i: facts.entities_of(history, i))
        loss = LossReport(left, masked_idx, prompts, paths, risk, in_use_kept(state, facts, layout, history))
    return CompactEvent(
        call=call, kinds=unique, reason=reason, tokens_before=before, tokens_after=after,
        dropped=sum(1 for i in left if i not in state.skip), masked=masked_now, cut=cut_now, edited=edited_now,
        recap_prompts=len(recap.prompts) if recap else 0, recap_files=len(recap.files) if recap else 0,
        loss=loss,
    )


def budget_words(policy: CompactPolicy) -> str:
    """What "the window" means here: the room left for the request once the output is reserved."""
    return (f"{fmt_tokens(policy.effective_window)} budget ({fmt_tokens(policy.context_window)} window − "
            f"{fmt_tokens(policy.context_window - policy.effective_window)} output reserve)")


def quiet_reason(hold: int | None, tried: bool, over: bool, postponed: bool, still_over: str) -> str:
    """Why a request above the high mark made no event, in words the meter's warning ends with (the "did not
    fire" users report of other agents: here it is always said why)."""
    if postponed:
        return "you postponed this call's event (the next call asks again)"
    if hold is not None:
        return f"an undone event holds until the request passes ≈{fmt_tokens(hold)} (or /compact)"
    if tried:
        alone = still_over.removeprefix("; ")
        return f"nothing older could leave ({alone})" if alone else "nothing older could leave"
    if not over:
        return "the part over it is the newest results, cut once the model has read them"
    return "no compaction this call"
