"""The tiers as steps on the decisions: each takes the state (and the facts, the policy, the request as laid
out now) and returns a new state with what it changed; none mutates anything. The orchestrator
(`Compactor`) runs them in order and lays the request out again after the ones that change it.

The rules, cheapest first (each function's docstring says its own):
cut on read → mask → drop (head, span, worth it: `drop.py`) → fit the window (emergency). What a cut is
worth below the high mark is priced in `pricing`; which results a mask takes first, and how much of the
tail it protects, is `ranking`'s rule. What every tier reads of the call is a `RequestView`
(`request_view.py`).
"""

from __future__ import annotations

from typing import Sequence

from tui_agent.core import tokens as tk
from tui_agent.core.compaction.cut import cut_block
from tui_agent.core.compaction.drop import RECAP_GUESS_TOKENS, head_size, islands
from tui_agent.core.compaction.decisions import BlockDecision, Cut, Mask, merged
from tui_agent.core.compaction.estimator import RequestEstimator
from tui_agent.core.compaction.facts import Facts, exchange
from tui_agent.core.compaction.island_edits import edited_islands
from tui_agent.core.compaction.layout import Layout
from tui_agent.core.compaction.mask import placeholder_text
from tui_agent.core.compaction.policy import CompactPolicy
from tui_agent.core.compaction.pricing import calls_until_event, cut_on_read_now
from tui_agent.core.compaction.ranking import mask_protection, mask_rank, mask_signals
from tui_agent.core.compaction.request_view import RequestView, transient
from tui_agent.core.compaction.render import render_message
from tui_agent.core.compaction.state import CompactState, effective_skip
from tui_agent.core.messages import Message, blocks, result_text

HARD_KEEP_CHARS = 1000  # what the newest round is cut to when it alone does not fit the window


def with_decisions(state: CompactState, decided: dict, touched: set[int]) -> CompactState:
    """The state with new per-message block decisions; each touched message's version moves on."""
    versions = dict(state.versions)
    for i in touched:
        versions[i] = versions.get(i, 0) + 1
    return state.evolve(blocks=decided, versions=versions)


def apply_user_changes(state: CompactState, view: RequestView) -> CompactState:
    """Pins, excludes and expands since the last call take effect: a pinned or expanded message goes out
    as it is in the history again; the excludes leave out their partners too (never the newest round,
    which the model must answer); pins inside the drop come back as islands, and the recap follows."""
    history, facts, newest, call = view.history, view.facts, view.newest, view.call
    decided, touched = dict(state.blocks), set()
    for i in state.pins | state.expanded:
        if decided.pop(i, None) is not None:
            touched.add(i)
    excludes = frozenset(i for i in state.excludes
                         if max(exchange(history, i) if i < len(history) else {i}) < newest)
    state = with_decisions(state, decided, touched).evolve(excludes=excludes,
                    skip=effective_skip(history, excludes, newest), dirty=False)
    if state.dropping:
        state = state.evolve(kept_in_drop=islands(state, facts, history, state.drop_until), recap_call=call)
        if view.policy.islands_show_edits:  # a pinned Edit is sent now: the islands show no more than before it
            state = edited_islands(state, facts, history, call)
    return state


def cut_on_read(state: CompactState, view: RequestView, prev_out: int = 0,
                start: int | None = None, keep_from: int | None = None) -> tuple[CompactState, list[int]]:
    """Tier 2: a result longer than `cut_chars` that the model has read (it left the newest round) is cut
    to its head, once, and frozen; pinned, masked and expanded messages are left as they are.

    No loss without pressure: below the high mark a result is cut only when the cut pays at the cache
    prices (`pricing.cut_on_read_now`: what it saves until the next expected event against rewriting the
    tail the previous request cached after it, `prev_out` messages long), or when it is one huge result.
    At an event (`start`: from there on) every long result is cut: the event rewrites what follows anyway,
    except from `keep_from` on (the turn in progress, `protected_from`)."""
    history, facts, policy, layout, tokens, newest, call = view.history, view.facts, view.policy, view.layout, view.tokens, view.newest, view.call
    limit, keep = policy.cut_chars, policy.cut_keep_chars
    at_event = start is not None
    until_event = calls_until_event(tokens.estimate(), policy.high_tokens, facts.total / max(call, 1), call)
    new: dict[int, dict[int, BlockDecision]] = {}
    end = newest if keep_from is None else min(newest, keep_from)
    for i in range(state.read_upto if start is None else start, end):
        if i in state.pins or i in state.masks or i in state.expanded or i in state.kept_in_drop:
            continue
        if not facts.results[i]:
            continue
        done = {c.block_index for c in state.cuts.get(i, ())}
        for result in facts.results[i]:
            if result.index in done or result.chars <= limit:
                continue
            if not at_event and not _cut_pays(policy, layout, tokens, i, result.chars, prev_out, until_event):
                continue
            cut = cut_block(blocks(history[i])[result.index], keep, result.tool)
            if cut is None:
                continue
            _, original, kept = cut
            new.setdefault(i, {})[result.index] = Cut(i, result.index, result.tool_use_id, result.tool, original,
                                                      kept, call)
    state = state.evolve(read_upto=max(state.read_upto, end if at_event else newest))
    if not new:
        return state, []
    return with_decisions(state, merged(state.blocks, new), set(new)), sorted(new)


def _cut_pays(policy: CompactPolicy, layout: Layout, tokens: RequestEstimator, i: int, chars: int, prev_out: int,
              until_event: float) -> bool:
    """The priced decision for one long result of message i (the tail is what the previous request
    cached after it, which the cut rewrites)."""
    pos = layout.pos.get(i)
    if pos is None:
        return False
    tail = sum(tokens.size(layout.units[p]) for p in range(pos + 1, min(prev_out, len(layout.units))))
    return cut_on_read_now(chars, policy.cut_keep_chars, tail, tokens.estimate(), until_event,
                           read=policy.cache_read, write=policy.cache_write, huge_chars=policy.huge_result_chars,
                           always=policy.cut_always)


def mask_old(state: CompactState, view: RequestView, target: int | None = None,
             keep_from: int | None = None) -> tuple[CompactState, list[int], int]:
    """Tier 3: results of re-runnable tools older than the protected recent budget (counted from the end of
    the request) become placeholders, when the placeholder is clearly smaller; the head before the drop
    stays as it is (it is the cached start of every request).

    With a `target` (an event's low mark) the protection fits what the drop keeps (`ranking.mask_protection`,
    so a masked result is still sent after it), the least likely to be needed first (`ranking.mask_rank`),
    and masking stops once the request fits the target; without one (after `/compact`'s drop) every
    candidate is masked. Nothing from `keep_from` on is masked (the turn in progress, `protected_from`)."""
    history, facts, policy, layout, tokens, newest, call = view.history, view.facts, view.policy, view.layout, view.tokens, view.newest, view.call
    protect: float = policy.mask_protect_tokens
    if target is not None:
        recap = tokens.size_of(layout.recap.tokens if state.dropping and layout.recap else RECAP_GUESS_TOKENS)
        protect = mask_protection(protect, target, tokens.baseline, head_size(state, layout, tokens), recap)
    seen = 0.0
    last = newest if keep_from is None else min(newest, keep_from)
    candidates: list[tuple[int, int, dict[int, BlockDecision]]] = []  # (message, position, its new masks)
    for pos in range(len(layout.out) - 1, -1, -1):
        seen += tokens.size(layout.units[pos])
        if seen <= protect:
            continue
        i = layout.indices[pos]
        if i < 0 or i < state.drop_from:
            break
        if i in state.pins or i >= last or i in state.expanded or i in state.kept_in_drop:
            continue  # a pinned island goes out verbatim, with the partners it needs
        if not facts.results[i]:
            continue
        current = blocks(layout.message(state, history, i))
        done = {m.block_index for m in state.masks.get(i, ())}
        chosen: dict[int, BlockDecision] = {}
        for result in facts.results[i]:
            j = result.index
            if j in done or not result.rerunnable(policy):
                continue
            text = placeholder_text(result.tool, result.input, result.chars)
            if len(result_text(current[j])) < max(policy.mask_min_chars, len(text) * 3):
                continue
            chosen[j] = Mask.of_facts(i, result, call)
        if chosen:
            candidates.append((i, pos, chosen))
    if target is not None and candidates:
        superseded, mentioned = mask_signals(history, min(i for i, _, _ in candidates),
                                             lambda i: facts.entities_of(history, i), {i for i, _, _ in candidates})
        candidates.sort(key=lambda c: mask_rank(c[0], superseded, mentioned.get(c[0], False)))
    new: dict[int, dict[int, BlockDecision]] = {}
    size = tokens.baseline + tokens.messages_estimate()
    passing = transient(state, view) if target is not None else 0.0
    for i, pos, chosen in candidates:
        if target is not None and round(size) - passing <= target and not policy.mask_all_at_event:
            break
        new[i] = chosen
        if target is not None:
            size -= _mask_saving(state, facts, history, layout, tokens, i, pos, chosen)
    if not new:
        return state, [], 0
    count = sum(len(per) for per in new.values())
    return with_decisions(state, merged(state.blocks, new), set(new)), sorted(new), count


def _mask_saving(state: CompactState, facts: Facts, history: Sequence[Message], layout: Layout,
                 tokens: RequestEstimator, i: int, pos: int, chosen: dict[int, BlockDecision]) -> float:
    """Tokens the request gives back when message i (at `pos`) gets the masks `chosen`: its new form is
    sized at the rate its old form was (`RequestEstimator.swap`), so the stop at the target is exact."""
    old = layout.estimate(state, history, facts, i)
    new = tk.message_tokens(render_message(history[i], merged(state.blocks, {i: chosen})[i]))
    size = tokens.size(layout.units[pos])
    return size - (size * new / old if old else tokens.size_of(new))


def hard_cut_newest(state: CompactState, view: RequestView) -> tuple[CompactState, list[int]]:
    """Fit the window, last resort: the newest round's results cut to `HARD_KEEP_CHARS` (it alone is
    larger than the window; the model gets their heads and a note instead of an API error)."""
    history, facts, newest, call = view.history, view.facts, view.newest, view.call
    new: dict[int, dict[int, BlockDecision]] = {}
    for i in range(newest, len(history)):
        if i in state.expanded:
            continue
        for result in facts.results[i]:
            cut = cut_block(blocks(history[i])[result.index], HARD_KEEP_CHARS, result.tool)
            if cut is None:
                continue
            _, original, kept = cut
            new.setdefault(i, {})[result.index] = Cut(i, result.index, result.tool_use_id, result.tool, original,
                                                      kept, call, hard=True)
    if not new:
        return state, []
    return with_decisions(state, merged(state.blocks, new), set(new)), sorted(new)
