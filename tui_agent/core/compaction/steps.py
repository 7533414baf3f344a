"""One call's steps that change the request as a whole: an event (cut, mask, then drop: one cache break) and
fitting the window. They run the tiers (pure: state in, state out) in order and lay the request out again
between them, since each next tier decides from the sizes the previous one left.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from tui_agent.core.compaction import drop, tiers
from tui_agent.core.compaction.estimator import RequestEstimator
from tui_agent.core.compaction.facts import WRITERS, Facts, last_assistant_before
from tui_agent.core import tokens as tk
from tui_agent.core.compaction.clip import clip_prompts
from tui_agent.core.compaction.decisions import BlockDecision, Mask, merged
from tui_agent.core.compaction.island_edits import edited_islands
from tui_agent.core.compaction.keep_for_use import choose_kept, choose_own_words, choose_recurring
from tui_agent.core.compaction.mask import placeholder_text
from tui_agent.core.compaction.layout import Layout
from tui_agent.core.compaction.plan import CompactEvent, EventKind
from tui_agent.core.compaction.policy import CompactPolicy
from tui_agent.core.compaction.request_view import RequestView, protected_from, transient
from tui_agent.core.compaction.state import CompactState
from tui_agent.core.messages import Message


@dataclass
class Work:
    """One call's working set: the state it starts from and the derived parts it updates. `compact`
    keeps it afterwards; `preview` works on copies of the derived parts and drops it."""

    state: CompactState
    facts: Facts
    layout: Layout
    tokens: RequestEstimator
    last_event: CompactEvent | None
    before_event: list[Message] | None = None  # the request before this call's event (the summary call's)
    touched: set[int] = field(default_factory=set)  # messages cut at this call (the event line counts them)

    def view(self, history: Sequence[Message], policy: CompactPolicy, newest: int, call: int) -> RequestView:
        """What the tiers read of this call now (the layout and sizes as the last step left them)."""
        return RequestView(history, self.facts, policy, self.layout, self.tokens, newest, call)


def apply(w: Work, history: Sequence[Message], state: CompactState, changed: list[int], cut: bool = True) -> int | None:
    """A tier's new state, with the messages it decided on swapped in place; the first position changed
    (`cut`: the decisions are cuts, which the event line counts)."""
    old = {i: w.layout.estimate(w.state, history, w.facts, i) for i in changed}
    w.state = state
    if cut:
        w.touched.update(changed)
    positions = [p for i in changed if (p := w.layout.replace(state, history, w.facts, w.tokens, i, old[i])) is not None]
    return min(positions) if positions else None


def relayout(w: Work, history: Sequence[Message], policy: CompactPolicy) -> int:
    """The request laid out again from the state; the first position that differs."""
    return w.layout.rebuild(w.state, history, w.facts, w.tokens, policy)


def cut_read(w: Work, history: Sequence[Message], policy: CompactPolicy, newest: int, call: int,
             prev_out: int = 0, start: int | None = None, keep_from: int | None = None) -> int | None:
    """Tier 2 (`tiers.cut_on_read`) applied: the first position changed, None when nothing sent changed."""
    if not policy.cut_on_read:
        return None
    return apply(w, history, *tiers.cut_on_read(w.state, w.view(history, policy, newest, call), prev_out, start,
                                                keep_from))


def _mask(w: Work, history: Sequence[Message], policy: CompactPolicy, newest: int, call: int,
          target: int | None, keep_from: int | None = None) -> int | None:
    state, changed, masked = tiers.mask_old(w.state, w.view(history, policy, newest, call), target, keep_from)
    return apply(w, history, state, changed, cut=False) if masked else None


def event(w: Work, history: Sequence[Message], policy: CompactPolicy, newest: int, call: int, target: int,
          why: str, asked: bool = False) -> tuple[list[EventKind], int]:
    """Tiers 2–4 at once (one cache break), the cheapest loss first: cut every long result the event
    rewrites anyway (the head too, at the first event), mask what can be run again down to `target`, then
    drop down to it. An asked `/compact` does what the user asked first (drop or summarise the older
    part), then cuts and masks what stays. Unasked, it takes nothing of the turn in progress (the prompt
    being answered and its results: the model is still using them) unless that turn alone is over the
    high mark (`request_view.protected_from`)."""
    if w.state.reactive_target is not None:
        target = min(target, w.state.reactive_target)
        w.state = w.state.evolve(reactive_target=None)
    kinds: list[EventKind] = []
    first = len(w.layout.out)
    view = w.view(history, policy, newest, call)  # the same layout and sizes, as each step leaves them
    w.before_event = list(w.layout.out)  # what the summary call sends (the previous call's prefix)
    head_before, first_drop = w.state.drop_from, not w.state.dropping
    keep_from = None if asked else protected_from(view)

    def did(kind: EventKind, changed: int | None) -> None:
        nonlocal first
        if changed is not None:
            kinds.append(kind)
            first = min(first, changed)

    def cut_all() -> None:  # every long result after the drop point (before a tentative head: the head too)
        did("cut", cut_read(w, history, policy, newest, call, start=max(w.state.drop_until, w.state.drop_from),
                            keep_from=keep_from))

    if not asked:
        cut_all()
    if policy.drop and first_drop:  # tentative: kept only with a drop (else the head went out twice)
        w.state = w.state.evolve(drop_from=drop.choose_head(w.state, view, target))
    if not asked and policy.mask:  # then mask what can be run again, down to the target
        did("mask", _mask(w, history, policy, newest, call, target, keep_from))
    kept_before = w.state.kept_for_use
    if policy.drop and (asked or w.tokens.estimate() - transient(w.state, view) > target):
        blocks_before, cleared = w.state.blocks, None
        if policy.keep_for_use and not asked:
            kept, own = _kept_for_use(w, history, policy, newest, target)
            w.state = w.state.evolve(kept_for_use=kept | own)
            cleared = _clear_results(w, history, own, call)
        until = drop.choose_drop(w.state, view, target, keep_from)
        if until > max(w.state.drop_until, w.state.drop_from) and drop.worth_dropping(
                drop.drop_gain(w.state, view, until), w.tokens):
            w.state = drop.set_drop(w.state, view, until, why)
            if policy.islands_show_edits:
                w.state = edited_islands(w.state, w.facts, history, call)
            kinds.append("drop")
            did("mask", cleared)
        elif cleared is not None:  # no drop: the own-words islands' results go out as they were
            w.state = w.state.evolve(blocks=blocks_before)
    if asked:  # /compact dropped (or summarised) the older part first; then the rest as at any event
        cut_all()
        if policy.mask:
            did("mask", _mask(w, history, policy, newest, call, None))
    if first_drop and "drop" not in kinds:
        w.state = w.state.evolve(drop_from=head_before)
    if "drop" not in kinds:
        w.state = w.state.evolve(kept_for_use=kept_before)
    return kinds, min(first, relayout(w, history, policy))


def _kept_for_use(w: Work, history: Sequence[Message], policy: CompactPolicy, newest: int,
                  target: int) -> tuple[frozenset[int], frozenset[int]]:
    """The exchanges this event keeps for the agent's own use (`keep_for_use`), within shares of the low
    mark: whole (its writes, what recurs) and as its own words (`choose_own_words`: their results cleared);
    pinned and excluded messages are the user's, never chosen here."""
    layout = w.layout

    def size_of(i: int) -> float:
        if i in layout.pos:
            return w.tokens.size(layout.units[layout.pos[i]])
        return w.tokens.size_of(layout.estimate(w.state, history, w.facts, i))

    protected = w.state.pins | w.state.skip
    kept = choose_kept(history, w.state.drop_from, newest, size_of, policy.keep_for_use_share * target,
                       policy.keep_for_use_tools, protected=protected,
                       tools_of=lambda i: w.facts.messages[i].tools,
                       writers=w.facts.writers if WRITERS.issuperset(policy.keep_for_use_tools) else None)
    share = policy.keep_recurring_share
    tail_room = target * (1 - policy.keep_for_use_share - share) - w.tokens.baseline
    tail_from, seen = newest, 0.0
    while tail_from > w.state.drop_from and seen + size_of(tail_from - 1) <= tail_room:
        tail_from -= 1
        seen += size_of(tail_from)
    entities_of = lambda i: w.facts.entities_of(history, i)  # noqa: E731
    counts = w.facts.recurrence_of(history) if share > 0 or policy.keep_own_words_share > 0 else None
    if share > 0:
        kept |= choose_recurring(history, w.state.drop_from, tail_from, size_of, share * target, entities_of, kept,
                                 protected, counts=counts)
    own: frozenset[int] = frozenset()
    if policy.keep_own_words_share > 0:
        own = choose_own_words(history, w.state.drop_from, tail_from, lambda i: _cleared_size(w, size_of, i),
                               policy.keep_own_words_share * target, entities_of, kept, protected, counts)
    return kept, own


def _cleared_size(w: Work, size_of: Callable[[int], float], i: int) -> float:
    """Message i's size with its results cleared (a placeholder each): what an own-words island sends."""
    results = w.facts.results[i]
    if not results:
        return size_of(i)
    return w.tokens.size_of(4 + sum(tk.tokens_for_chars(len(placeholder_text(r.tool, r.input, r.chars)))
                                    for r in results))


def _clear_results(w: Work, history: Sequence[Message], islands: frozenset[int], call: int) -> int | None:
    """Every result of the own-words islands becomes its placeholder (kept in place, the calls' inputs
    with them); the first position changed."""
    new: dict[int, dict[int, BlockDecision]] = {}
    for i in islands:
        done = {m.block_index for m in w.state.masks.get(i, ())}
        chosen = {r.index: Mask.of_facts(i, r, call) for r in w.facts.results[i] if r.index not in done}
        if chosen:
            new[i] = chosen  # type: ignore[assignment]
    if not new:
        return None
    return apply(w, history, tiers.with_decisions(w.state, merged(w.state.blocks, new), set(new)), sorted(new),
                 cut=False)


def fit_window(w: Work, history: Sequence[Message], policy: CompactPolicy, newest: int, call: int) -> tuple[list[EventKind], int]:
    """Still over the window after an event: drop to the newest round, then the head, then cut the
    newest round itself. The first position changed is the lowest of every step's (each re-layout
    compares with the one before it)."""
    kinds: list[EventKind] = []
    first = len(w.layout.out)
    w.state = w.state.evolve(kept_for_use=frozenset())  # the window comes first: no island kept for use
    view = w.view(history, policy, newest, call)
    floor = max(w.state.drop_until, w.state.drop_from)
    until = last_assistant_before(history, newest + 1, floor)
    if until > floor and drop.drop_gain(w.state, view, until) > 0:
        w.state = drop.set_drop(w.state, view, until, "the window was full")  # never one that grows it
        kinds.append("drop")
        first = min(first, relayout(w, history, policy))
    if w.tokens.estimate() > policy.effective_window and w.state.drop_from:
        w.state = drop.set_drop(w.state, view, until, "the window was full", start=0)  # the head too
        kinds.append("drop")
        first = min(first, relayout(w, history, policy))
    if w.tokens.estimate() > policy.effective_window:
        state, changed = tiers.hard_cut_newest(w.state, view)
        if changed:
            position = apply(w, history, state, changed)
            first = min(first, len(w.layout.out) if position is None else position)
            kinds += ["cut"] * len(changed)
    if w.tokens.estimate() > policy.effective_window:  # a prompt larger than the window (`clip.py`)
        state, changed = clip_prompts(w.state, w.view(history, policy, newest, call), policy.effective_window)
        if changed:
            position = apply(w, history, state, changed)
            first = min(first, len(w.layout.out) if position is None else position)
            kinds.append("clip")
    return kinds, min(first, relayout(w, history, policy))
