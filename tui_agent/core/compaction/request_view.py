"""What a tier reads of one call (`RequestView`), and what that view says before any tier runs: where the
turn in progress begins (`protected_from`), what the newest round gives back by itself once read
(`transient`), and why an event that ends above the high mark could not go lower (`still_over`).

Its own concept because every tier (cut and mask in `tiers.py`, the drop in `drop.py`, the prompt clip in
`clip.py`) and the compactor read the request through it, and none of them may change it: one read-only
value instead of seven parameters, so a tier can be called (and tested) with no `Compactor`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from tui_agent.core import tokens as tk
from tui_agent.core.compaction.estimator import RequestEstimator
from tui_agent.core.compaction.facts import Facts
from tui_agent.core.compaction.layout import Layout
from tui_agent.core.compaction.policy import CompactPolicy
from tui_agent.core.compaction.ranking import in_progress_floor
from tui_agent.core.compaction.state import CompactState
from tui_agent.core.formats import fmt_tokens
from tui_agent.core.messages import Message


@dataclass(frozen=True)
class RequestView:
    """What a tier reads of one call, and only reads: the history and its facts, the policy, the request
    as laid out now (positions and sizes: `layout`, `tokens`, whose estimate is the request's), the newest
    round and the call's number. One value instead of seven parameters, so a tier can be called (and
    tested) with no `Compactor`: lay a request out, make a view, pass a state in, get one back."""

    history: Sequence[Message]
    facts: Facts
    policy: CompactPolicy
    layout: Layout
    tokens: RequestEstimator
    newest: int
    call: int


def protected_from(view: RequestView) -> int:
    """The first message of the turn in progress that no cut, mask or drop takes (`ranking.in_progress_floor`)."""
    history, facts, tokens = view.history, view.facts, view.tokens
    return in_progress_floor(facts.last_prompt, tokens.size_of(facts.turn_total), tokens.baseline,
                             view.policy.high_tokens, view.newest,
                             bool(history) and history[-1].get("role") == "user")


def still_over(view: RequestView) -> str:
    """Why an event ends above the high mark, when the part it may not take is itself over it: "; the
    newest round alone is 15.1k" (base included). Nothing is left to take, so the next call makes no new
    event for it until a new round arrives or the request grows."""
    keep_from, newest = protected_from(view), view.newest
    if view.tokens.baseline > view.policy.high_tokens:  # the real cause: a budget below what every call sends
        return (f"; system prompt and tools alone are {fmt_tokens(round(view.tokens.baseline))}, over the "
                f"budget's {fmt_tokens(view.policy.high_tokens)} mark")
    alone = view.tokens.baseline + view.tokens.size_of(sum(view.facts.estimates[keep_from:]))
    if alone <= view.policy.high_tokens:
        return ""
    what = "newest round" if keep_from == newest else "turn in progress"
    return f"; the {what} alone is {fmt_tokens(round(alone))}"


def transient(state: CompactState, view: RequestView) -> float:
    """Tokens the newest round will give back by itself once it is read (cut on read whatever the budget:
    a huge result, or every long one under `cut_always`): a spike that passes is no reason to rewrite the
    whole request, as long as the request still fits the window."""
    history, facts, policy, tokens, newest = view.history, view.facts, view.policy, view.tokens, view.newest
    if not policy.cut_on_read or newest in state.pins:
        return 0.0
    chars = 0
    for i in range(newest, len(history)):
        if i in state.expanded:
            continue
        for result in facts.results[i]:
            size = result.chars
            if size > policy.cut_chars and (policy.cut_always or size > policy.huge_result_chars):
                chars += size - policy.cut_keep_chars  # below the mark only these are cut on read
    return tokens.size_of(tk.tokens_for_chars(chars))
