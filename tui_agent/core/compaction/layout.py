"""The request laid out from the decisions: (state, history, facts) → the outbound messages and the plan.

`Layout` is derived, never a second source of truth: every field can be rebuilt from the `CompactState`
and the history (`rebuild`, which an imported state uses), and the incremental steps a call takes
(`append` a new message, `replace` one whose cuts or masks changed) give the same request as a rebuild.
They exist for speed: a call with no event costs O(new messages), not O(history). Rendered messages are
cached per (index, version of its decisions); the recap per the span and the choices it covers.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Sequence

from tui_agent.core import tokens as tk
from tui_agent.core.compaction.estimator import RECAP_UNIT, RequestEstimator
from tui_agent.core.compaction.facts import Facts, newest_round_start
from tui_agent.core.compaction.plan import RECAP_INDEX, CompactEvent, CompactPlan, CompactResult, Recap
from tui_agent.core.compaction.policy import CompactPolicy
from tui_agent.core.compaction.recap import build_recap
from tui_agent.core.compaction.render import first_message_fix, recap_message, render_message
from tui_agent.core.compaction.state import CompactState
from tui_agent.core.messages import Message

LEAD_INDEX = RECAP_INDEX - 1  # the stand-in user message that opens a request starting with an answer


def recap_of(state: CompactState, facts: Facts, policy: CompactPolicy, until: int | None = None,
             kept: frozenset[int] | None = None, call: int | None = None, summary: str | None = None) -> tuple[Recap, Message]:
    """The recap of the state's dropped span (or of a candidate span up to `until`), from the facts."""
    return build_recap(facts.messages, state.drop_until if until is None else until,
                        state.kept_in_drop if kept is None else kept, prompt_chars=policy.recap_prompt_chars,
                        prompt_max_chars=policy.recap_prompt_max_chars,
                        call=state.recap_call if call is None else call,
                        summary=state.summary if summary is None and until is None else summary,
                        start=state.drop_from, excluded=state.skip, mark=state.recap_mark)


@dataclass
class Layout:
    """The request as it stands: outbound messages, their history indices, estimator units and sizes."""

    out: list[Message] = field(default_factory=list)
    indices: list[int] = field(default_factory=list)  # history index per message (RECAP_INDEX, LEAD_INDEX)
    units: list[object] = field(default_factory=list)
    pos: dict[int, int] = field(default_factory=dict)  # history index → position
    sent_estimate: int = 0  # chars/4 of the request's messages
    rendered: dict[int, tuple[int, Message, int]] = field(default_factory=dict)  # i → (version, message, est)
    recap: Recap | None = None
    recap_message: Message | None = None
    recap_key: tuple | None = None

    def copy(self) -> Layout:
        twin = copy.copy(self)
        twin.out, twin.indices, twin.units, twin.pos = list(self.out), list(self.indices), list(self.units), dict(self.pos)
        twin.rendered = dict(self.rendered)
        return twin

    # -- one message --------------------------------------------------------------------------
    def message(self, state: CompactState, history: Sequence[Message], i: int) -> Message:
        return self._rendered(state, history, i)[1]

    def estimate(self, state: CompactState, history: Sequence[Message], facts: Facts, i: int) -> int:
        if i not in state.blocks:
            return facts.estimates[i]
        return self._rendered(state, history, i)[2]

    def _rendered(self, state: CompactState, history: Sequence[Message], i: int) -> tuple[int, Message, int]:
        decisions = state.blocks.get(i, ())
        if not decisions:
            return (0, history[i], -1)
        version = state.version(i)
        cached = self.rendered.get(i)
        if cached is None or cached[0] != version:
            message = render_message(history[i], decisions)
            cached = self.rendered[i] = (version, message, tk.message_tokens(message))
        return cached

    @staticmethod
    def unit(state: CompactState, i: int) -> object:
        return (i, state.version(i))

    # -- incremental steps (equal to a rebuild) -----------------------------------------------
    def append(self, state: CompactState, history: Sequence[Message], facts: Facts, tokens: RequestEstimator,
               i: int) -> None:
        """A new message joins the end of the request (unless the excludes leave it out)."""
        if i in state.skip:
            return
        self.pos[i] = len(self.out)
        self.out.append(self.message(state, history, i))
        self.indices.append(i)
        unit = self.unit(state, i)
        self.units.append(unit)
        estimate = self.estimate(state, history, facts, i)
        self.sent_estimate += estimate
        tokens.add(unit, estimate)

    def replace(self, state: CompactState, history: Sequence[Message], facts: Facts, tokens: RequestEstimator,
                i: int, old_estimate: int) -> int | None:
        """Message i's decisions changed (its version moved): swap its outbound form in place; its
        position, or None when it is not sent. `old_estimate`: its size before the change."""
        pos = self.pos.get(i)
        if pos is None:
            return None
        estimate = self.estimate(state, history, facts, i)
        unit = self.unit(state, i)
        tokens.swap(self.units[pos], unit, estimate)
        self.sent_estimate += estimate - old_estimate
        self.out[pos] = self.message(state, history, i)
        self.units[pos] = unit
        return pos

    def recap_for(self, state: CompactState, facts: Facts, policy: CompactPolicy) -> tuple[Recap, Message]:
        key = (state.drop_from, state.drop_until, state.kept_in_drop, state.skip, state.summary, state.recap_call,
               state.recap_mark, policy.recap_prompt_chars, policy.recap_prompt_max_chars)
        if self.recap_key != key or self.recap is None or self.recap_message is None:
            recap, _ = recap_of(state, facts, policy)
            self.recap, self.recap_message, self.recap_key = recap, recap_message(recap.text), key
        return self.recap, self.recap_message

    def rebuild(self, state: CompactState, history: Sequence[Message], facts: Facts, tokens: RequestEstimator,
                policy: CompactPolicy) -> int:
        """Lay out the whole request from the state; returns the first position that differs."""
        old = self.out
        n = min(state.history_len, len(history))
        skip = state.skip
        indices = [i for i in range(min(state.drop_from, n)) if i not in skip]
        recap_message: Message | None = None
        if state.dropping:
            recap, recap_message = self.recap_for(state, facts, policy)
            indices.append(RECAP_INDEX)
            indices.extend(i for i in sorted(state.kept_in_drop) if i not in skip)
        indices.extend(i for i in range(state.drop_until, n) if i not in skip)
        out: list[Message] = [recap_message if i == RECAP_INDEX and recap_message is not None
                              else self.message(state, history, i) for i in indices]
        saved = tokens.measured()  # measured sizes survive for the units still sent
        fixed = first_message_fix(out)
        if fixed is not None:
            out.insert(0, fixed)
            indices.insert(0, LEAD_INDEX)
        tokens.clear()
        units: list[object] = []
        self.sent_estimate = 0
        shown = self.recap if state.dropping else None
        for i, message in zip(indices, out):
            if i < 0:  # stable across processes (export/import), new with every recap
                # (states saved before the rename tag it "ledger" in their token export: `RequestEstimator.restore`)
                unit: object = (RECAP_UNIT, shown.call if shown else 0, i, shown.covers if shown else 0)
                estimate = tk.message_tokens(message)
            else:
                unit = self.unit(state, i)
                estimate = self.estimate(state, history, facts, i)
            units.append(unit)
            self.sent_estimate += estimate
            tokens.add(unit, estimate)
        tokens.reuse(units, saved)
        first = 0
        while first < min(len(old), len(out)) and old[first] is out[first]:
            first += 1
        self.out, self.indices, self.units = out, indices, units
        self.pos = {i: p for p, i in enumerate(indices) if i >= 0}
        self.rendered = {i: r for i, r in self.rendered.items() if i in self.pos}
        return first

    # -- the plan -----------------------------------------------------------------------------
    def result(self, state: CompactState, history: Sequence[Message], facts: Facts, tokens: RequestEstimator,
               policy: CompactPolicy, call: int, event: CompactEvent | None, last_event: CompactEvent | None,
               first_change: int, mode: str, summary_enabled: bool) -> CompactResult:
        """The outbound messages and the plan that describes them (what every face reads)."""
        est = tokens.estimate()
        dropping = state.dropping
        plan = CompactPlan(
            mode=mode, enabled=mode != "off", call=call, history_len=len(history), drop_from=state.drop_from,
            drop_until=max(state.drop_until, state.drop_from), kept_in_drop=state.kept_in_drop,
            blocks=state.blocks,
            pins=state.pins, excluded=state.skip, expanded=state.expanded,
            protected_from=newest_round_start(history) if history else 0, recap=self.recap if dropping else None,
            outbound_indices=tuple(filter((0).__le__, self.indices)),  # i >= 0: the history's (in C)
            recap_position=self.indices.index(RECAP_INDEX) if dropping else None,
            lead_placeholder=bool(self.indices) and self.indices[0] == LEAD_INDEX,
            message_tokens_before=facts.total, message_tokens_after=self.sent_estimate,
            baseline_tokens=round(tokens.baseline), estimated_tokens=est, high_tokens=policy.high_tokens,
            low_tokens=policy.low_mark(tokens.baseline), budget_tokens=policy.effective_window,
            over_budget=est > policy.effective_window, event=event, last_event=last_event,
            cached_messages=first_change, dropped_reason=state.dropped_reason, drop_reasons=state.drop_reasons,
            summary_requested=bool(event and "drop" in event.kinds and (summary_enabled or "summary" in event.kinds)),
            budget_room=policy.room, budget_source=budget_source(policy, state),
        )
        # The plan's per-message views are the state's (kept from call to call while its blocks are the same
        # object): made again for every plan, they cost a walk of every decision per call (the panel's update
        # at 10,000 messages grew 1.35x -> 1.55x).
        plan.__dict__.update(cuts=state.cuts, masks=state.masks)
        return CompactResult(list(self.out), plan)


def budget_source(policy: CompactPolicy, state: CompactState) -> str:
    """Where the working budget came from, for the meter: the policy's words, and "learned" when the window
    that bounds it is the one a "prompt is too long" answer revealed."""
    bound = policy.budget_bound
    if bound == "the window" and state.learned_window is not None:
        return "the window, learned from a too-long answer"
    return bound
