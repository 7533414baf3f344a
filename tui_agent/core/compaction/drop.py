"""The drop tier: whole old messages leave the request, down to the low mark, with a recap in their place.

Where it starts (the head kept first in every request, `choose_head`), where it ends (an assistant message,
so every tool_result keeps its tool_use, `choose_drop`), whether it is worth its rewrite (`drop_gain`,
`worth_dropping`), and what stays inside it as islands (pins with their partners, what an event kept for
use, the prompt in progress: `islands`). Its own concept because a drop is the one tier that removes
messages rather than shortening them: it owns the head, the span, the recap's room and the reasons the
rows keep. Like the other tiers (`tiers.py`) every function is state + `RequestView` in, state out.
"""

from __future__ import annotations

from typing import Sequence

from tui_agent.core.compaction.estimator import RequestEstimator
from tui_agent.core.compaction.facts import Facts, last_assistant_before, pinned_with
from tui_agent.core.compaction.layout import Layout, recap_of
from tui_agent.core.compaction.marks import RECAP_MARK
from tui_agent.core.compaction.request_view import RequestView, transient
from tui_agent.core.compaction.state import CompactState
from tui_agent.core.messages import Message

MIN_GAIN_TOKENS = 500  # a drop must free at least this much (and MIN_GAIN_SHARE of the request) to be worth its rewrite
MIN_GAIN_SHARE = 0.05
HEAD_SHARE = 0.5  # the kept head takes at most this share of what the low mark leaves after the baseline
RECAP_GUESS_TOKENS = 300  # room planned for a recap not yet built (and for its growth when one exists)


def choose_head(state: CompactState, view: RequestView, target: int) -> int:
    """The start of the conversation that stays first in every request (and so in the cache): the
    largest assistant-message boundary within `keep_head` tokens, and within half of what the
    low-water mark leaves after the baseline (the rest is for the recap and the recent tail), never
    into the newest round."""
    history, policy, layout, tokens, newest = view.history, view.policy, view.layout, view.tokens, view.newest
    budget = min(float(policy.head_tokens), HEAD_SHARE * (target - tokens.baseline))
    # The task as first stated stays whatever the base takes of the low mark (a long AGENTS.md, many tools):
    # the first message, when it fits `keep_head` (the head was lost whole once the base neared the mark).
    first = tokens.size(layout.units[layout.pos[0]]) if 0 in layout.pos else 0.0
    budget = max(budget, min(first, float(policy.head_tokens)))
    if budget <= 0:
        return 0
    total = 0.0
    best = 0
    for i in range(1, newest):
        total += tokens.size(layout.units[layout.pos[i - 1]]) if (i - 1) in layout.pos else 0.0
        if total > budget:
            break
        if history[i].get("role") == "assistant":
            best = i
    return best


def choose_drop(state: CompactState, view: RequestView, target: int, upto: int | None = None) -> int:
    """The earliest assistant message from which the head, the recap, the kept tail and the base fit
    `target`; at worst the newest round's own assistant message, or `upto` (the turn in progress's first
    one, `protected_from`: its rounds stay)."""
    history, layout, tokens, newest = view.history, view.layout, view.tokens, view.newest
    last = newest if upto is None else min(upto, newest)
    floor = max(state.drop_until, state.drop_from)
    fixed = tokens.baseline + head_size(state, layout, tokens) - transient(state, view)
    fixed += tokens.size_of(layout.recap.tokens if state.dropping and layout.recap else RECAP_GUESS_TOKENS)
    fixed += RECAP_GUESS_TOKENS
    fixed += sum(tokens.size(layout.units[layout.pos[i]]) for i in state.kept_for_use if i in layout.pos)
    suffix = 0.0
    best = None
    for pos in range(len(layout.out) - 1, -1, -1):
        i = layout.indices[pos]
        if i < 0 or i <= floor:
            break
        if i not in state.kept_for_use:  # an island kept for use is counted in `fixed` already
            suffix += tokens.size(layout.units[pos])
        if i > last or history[i].get("role") != "assistant":
            continue
        if fixed + suffix <= target:
            best = i
        else:
            break
    return last_assistant_before(history, last + 1, floor) if best is None else best


def head_size(state: CompactState, layout: Layout, tokens: RequestEstimator) -> float:
    """Tokens of the kept head (the messages sent before the drop point)."""
    head = 0.0
    for pos, i in enumerate(layout.indices):
        if i < 0 or i >= state.drop_from:
            break
        head += tokens.size(layout.units[pos])
    return head


def drop_gain(state: CompactState, view: RequestView, until: int) -> float:
    """Tokens a drop up to `until` frees, less what its recap adds (the recap of the span it would be)."""
    history, facts, policy, layout, tokens = view.history, view.facts, view.policy, view.layout, view.tokens
    floor = max(state.drop_until, state.drop_from)
    kept = islands(state, facts, history, until)
    freed = sum(tokens.size(layout.units[pos]) for pos, i in enumerate(layout.indices)
                if floor <= i < until and i not in kept)  # an island stays: it frees nothing
    recap, _ = recap_of(state, facts, policy, until=until, kept=kept, call=0)
    grows = tokens.size_of(recap.tokens) - (tokens.size_of(layout.recap.tokens) if state.dropping and layout.recap else 0)
    return freed - grows


def worth_dropping(gain: float, tokens: RequestEstimator) -> bool:
    """A drop rewrites the whole request after it: only worth it when it frees clearly more than the
    recap that replaces the dropped messages takes (a drop that grows the request is no drop)."""
    return gain > max(MIN_GAIN_TOKENS, MIN_GAIN_SHARE * tokens.estimate())


def set_drop(state: CompactState, view: RequestView, until: int, why: str, start: int | None = None) -> CompactState:
    """Drop up to `until` (and from `start` when the head goes too); the messages that leave now keep
    this event's reason for good (a later event never rewrites why an earlier one dropped a row).
    Decisions about messages no longer sent stop mattering and leave the state."""
    history, facts, call = view.history, view.facts, view.call
    old_from, old_until = state.drop_from, state.drop_until
    new_from = old_from if start is None else start
    reason = f"dropped at call {call} ({why})"
    spans = [(new_from, until)] if old_until <= old_from else [(new_from, old_from), (old_until, until)]
    state = state.evolve(drop_reasons=state.drop_reasons + tuple((lo, hi, reason) for lo, hi in spans if hi > lo),
                    drop_from=new_from, drop_until=until, dropped_reason=reason, recap_call=call, recap_mark=RECAP_MARK,
                    summary=state.summary if until == old_until else None,
                    kept_for_use=frozenset(i for i in state.kept_for_use if new_from <= i < until))
    kept = islands(state, facts, history, until)

    def sent(i: int) -> bool:
        return not (new_from <= i < until) or i in kept

    return state.evolve(kept_in_drop=kept, blocks={i: per for i, per in state.blocks.items() if sent(i)})


def islands(state: CompactState, facts: Facts, history: Sequence[Message], until: int) -> frozenset[int]:
    """Pinned messages in the dropped span, with the partners they cannot be sent without; a pinned
    prompt travels with its answer (never sent directly before the answer to another prompt).

    The prompt of the turn in progress is never dropped (between turns, as at `/compact`, none is): it stays as an island of its own (the tool
    rounds after it leave whole, as pairs, since a drop ends before an assistant message), so the model
    always sees what it is answering; a turn too big for the window is fitted by cutting inside it."""
    lo = state.drop_from
    kept = {k for i in state.pins if lo <= i < until for k in pinned_with(history, i) if lo <= k < until}
    kept |= {i for i in state.kept_for_use if lo <= i < until}  # an event kept them for the agent's use
    prompt = facts.last_prompt  # in progress while the history ends with the user's side (a prompt, results)
    if prompt is not None and lo <= prompt < until and history and history[-1].get("role") == "user":
        kept.add(prompt)
    return frozenset(kept)
