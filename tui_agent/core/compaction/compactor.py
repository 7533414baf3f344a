"""The tiered, sticky compactor: one per session, called once per model call with the whole history.

Between compaction *events* it only appends: the request of call k+1 starts with the exact messages of
call k, so the provider's prompt cache reads the whole previous request at a tenth of the price. Decisions
(cuts, masks, the dropped span and its ledger, pins, excludes) are kept here and change only at an event,
which is reported in the plan with its reason. The tiers, cheapest first:

1. append-only while the estimate is under the high-water mark;
2. cut on read: a long result the model has already read is cut once (a routine, tail-only change);
3. mask: at an event, old results of re-runnable tools beyond a protected recent budget → placeholder;
4. drop: at an event, whole old messages down to the low-water mark, cut at an assistant message so
   every tool_result keeps its tool_use, with a deterministic ledger in their place;
5. summary (optional): the model summarises the dropped span into the ledger (`attach_summary`).

History is never mutated; `render.render_message` builds each outbound message, the same way every time.
"""

from __future__ import annotations

import copy
import hashlib
import json
from dataclasses import dataclass, field, replace
from collections.abc import Callable, Mapping
from typing import Any, Sequence

from tui_agent.core import tokens as tk
from tui_agent.core.compaction.at_risk import at_risk
from tui_agent.core.compaction.cut import cut_block
from tui_agent.core.compaction.estimator import RequestEstimator
from tui_agent.core.compaction.recap import MessageFacts, build_ledger, facts_of, missing_from, request_text
from tui_agent.core.compaction.mask import key_input, placeholder_text
from tui_agent.core.compaction.plan import (
    RECAP_INDEX,
    BlockCut,
    BlockMask,
    CompactEvent,
    CompactPlan,
    CompactResult,
    EventKind,
    Recap,
    LossReport,
    fmt_tokens,
)
from tui_agent.core.compaction.policy import CompactPolicy
from tui_agent.core.compaction.pricing import calls_until_event, cut_on_read_now
from tui_agent.core.compaction.ranking import mask_protection, mask_rank, superseded_reads
from tui_agent.core.coverage import entities, held_text, mentioned_text
from tui_agent.core.compaction.render import first_message_fix, ledger_message, render_message
from tui_agent.core.messages import (
    Message,
    blocks,
    is_user_text,
    protocol_errors,
    result_text,
    tool_results,
    tool_uses,
)

Rerunnable = Callable[[str, Any], "bool | None"]  # (tool name, input) → the tool's answer, None if unknown
HARD_KEEP_CHARS = 1000  # what the newest round is cut to when it alone does not fit the window
MIN_GAIN_TOKENS = 500  # a drop must free at least this much (and MIN_GAIN_SHARE of the request) to be worth its rewrite
MIN_GAIN_SHARE = 0.05
FORCED_SHARE = 0.5  # /compact under the mark: the request gives up (at least) this share of itself
TOO_LONG_SHARE = 0.5  # after "prompt is too long" the next event aims at most at this share of the window
HEAD_SHARE = 0.5  # the kept head takes at most this share of what the low mark leaves after the baseline
RECAP_GUESS_TOKENS = 300  # room planned for a recap not yet built (and for its growth when one exists)


@dataclass
class _Facts:
    """What is known of the history, computed once per message (history is append-only)."""

    estimates: list[int] = field(default_factory=list)
    messages: list[MessageFacts] = field(default_factory=list)  # prompts, paths, commands (ledger inputs)
    total: int = 0
    calls: dict[str, tuple[str, Any]] = field(default_factory=dict)  # tool_use id → (name, input)
    first: object = None  # identity of history[0], to notice a replaced history (/clear)
    first_digest: str = ""  # its content's digest, to notice a state saved over another history


class Compactor:
    """`compact(history, call)` → `CompactResult(messages, plan)`; `observe_usage(real_input_tokens)` after a
    call. Implements `CompactorProtocol` as mode "v2" (or "off" when the policy disables compaction).

    The call number is the caller's; `calls` is only the number of the last planned call, so that
    `compact(history)` without one (the public contract) names the next call after it."""

    def __init__(self, policy: CompactPolicy | None = None, baseline_tokens: int = 0, *,
                 rerunnable: Rerunnable | None = None) -> None:
        self.policy = policy or CompactPolicy()
        # the tools' own answer (`ToolRegistry.rerunnable`); the policy's name table when it has none
        self.tool_rerunnable = rerunnable
        self.enabled = self.policy.is_enabled()
        self.mode = "v2" if self.enabled else "off"
        self.steerable = self.enabled  # pins, excludes, expands and /compact change what v2 sends
        self.tokens = RequestEstimator(baseline_tokens)
        self.calls = 0  # the number of the last planned call (the caller's number when it gave one)
        self.summary_failures = 0
        self.pins: set[int] = set()
        self.excluded: set[int] = set()
        self.expanded: set[int] = set()  # messages whose results go out whole
        self._learned_window: int | None = None  # the real window a "prompt is too long" revealed
        self._why = ""  # why the current event drops (the row reason it records)
        self._reactive_target: int | None = None  # the lower mark a "prompt is too long" asks of the next event
        self._reset()

    # -- state ----------------------------------------------------------------------------------
    def _reset(self) -> None:
        self._facts = _Facts()
        self._cuts: dict[int, dict[int, BlockCut]] = {}
        self._masks: dict[int, dict[int, BlockMask]] = {}
        self._variant: dict[int, int] = {}
        self._rendered: dict[int, Message] = {}
        self._rendered_est: dict[int, int] = {}  # chars/4 of each rendered message, computed once
        self._snapshot: tuple[dict, dict] | None = None  # the cuts and masks as the last plan saw them
        self._touched: set[int] = set()  # messages with new decisions since that snapshot
        self._touched_now: set[int] = set()  # messages with new decisions in this call (for the event line)
        self._drop_from = 0
        self._drop_until = 0
        self._ledger: Recap | None = None
        self._ledger_message: Message | None = None
        self._kept_in_drop: frozenset[int] = frozenset()
        self._cut_scan = 0
        self._out: list[Message] = []
        self._out_idx: list[int] = []
        self._pos: dict[int, int] = {}
        self._units: list[object] = []
        self._sent_est = 0
        self._dirty = False
        self._pending: list[EventKind] = []
        self._skip: set[int] = set()  # excluded messages and their partners (what is really left out)
        self._last_event: CompactEvent | None = None
        self._dropped_reason = ""
        self._drop_reasons: list[tuple[int, int, str]] = []  # (from, until, why): each drop's own reason
        self._replaced_pending = False  # a state saved over a history since replaced was imported
        self._sent_before: frozenset[int] = frozenset()  # history indices the previous request sent
        self._last_cached = 0  # the cached prefix (in messages) of the last plan
        self._before_event: list[Message] | None = None  # the request before the last event (summary call)
        self.tokens.clear()
        self._n = 0

    def set_baseline(self, baseline_tokens: int) -> None:
        """System prompt + tool definitions (chars/4); they may change between calls (MCP tools arrive)."""
        self.tokens.set_baseline(baseline_tokens)

    def observe_usage(self, input_tokens_total: int) -> None:
        """The real input size (input + cache write + cache read) of the request `compact` returned last."""
        self.tokens.observe(input_tokens_total)

    # -- user actions (outbound only: the history never changes) -------------------------------
    def pin(self, index: int, on: bool = True) -> None:
        (self.pins.add if on else self.pins.discard)(index)
        if on:
            self.excluded.discard(index)
            self._uncut(index)
        self._user_change("pin")

    def exclude(self, index: int, on: bool = True) -> None:
        (self.excluded.add if on else self.excluded.discard)(index)
        if on:
            self.pins.discard(index)
        self._user_change("exclude")

    def expand(self, index: int, on: bool = True) -> None:
        """Send message `index`'s cut or masked results whole in the next request."""
        (self.expanded.add if on else self.expanded.discard)(index)
        if on:
            self._uncut(index)
        self._user_change("expand")

    def _uncut(self, index: int) -> None:
        """Message `index` goes out as it is in the history again (its cuts and masks are undone)."""
        had = index in self._rendered
        self._snapshot = None
        self._cuts.pop(index, None)
        self._masks.pop(index, None)
        self._rendered.pop(index, None)
        self._rendered_est.pop(index, None)
        if had:
            self._variant[index] = self._variant.get(index, 0) + 1

    def _effective_excludes(self, history: Sequence[Message], newest: int) -> set[int]:
        """What the user excluded, with the tool_use/tool_result partners it cannot be sent without; the
        newest round is always sent (a request must end with what the model is to answer)."""
        skip: set[int] = set()
        for i in sorted(self.excluded):
            members = exchange(history, i) if i < len(history) else {i}
            if max(members) < newest:
                skip.update(members)
            else:
                self.excluded.discard(i)  # the newest round is what the model must answer: not excludable
        return skip

    def _skip_of(self, history: Sequence[Message]) -> set[int]:
        """What the excludes leave out of a request over `history` (no change to the excludes)."""
        newest = newest_round_start(history)
        skip: set[int] = set()
        for i in self.excluded:
            members = exchange(history, i) if i < len(history) else {i}
            if max(members) < newest:
                skip.update(members)
        return skip

    def _user_change(self, kind: EventKind) -> None:
        self._pending.append(kind)
        self._dirty = True

    def request_event(self, kind: EventKind = "drop") -> None:
        """`/compact`: run an event at the next call even under the high-water mark."""
        self._pending.append(kind)

    # -- the call -------------------------------------------------------------------------------
    def compact(self, history: Sequence[Message], call: int | None = None) -> CompactResult:
        """Plan the request for call `call` with `history` as it is now; never mutates `history`."""
        call = call if call is not None else self.calls + 1
        self.calls = call
        kinds: list[EventKind] = []
        self._touched_now = set()
        if self._replaced(history):  # /clear: a new conversation (no compaction event: nothing was compacted)
            self._forget(self.tokens.export())
            self.calls = call
        prev_out = len(self._out)
        first_change = prev_out
        self._sync(history)
        n = len(history)
        if not self.enabled:
            return self._result(history, call, None, first_change, mode="off")
        newest = newest_round_start(history)
        if self._dirty:
            self._skip = self._effective_excludes(history, newest)
            if self._drop_until > self._drop_from:  # pins bring messages back, excludes leave the ledger
                self._kept_in_drop = self._islands(history, self._drop_until)
                self._build_ledger(history, call)
        pending = self._pending
        asked = any(kind in pending for kind in ("drop", "summary"))  # /compact
        forced = asked or "reactive" in pending  # or "prompt is too long"
        kinds += [kind for kind in dict.fromkeys(pending) if kind not in ("drop", "summary")]
        self._pending = []
        # new messages join the request
        for i in range(self._n, n):
            self._append(history, i)
        self._n = n
        # what an append-only request would send now (the previous one and the new messages): the loss
        # report of an event at this call is its diff
        self._sent_before = frozenset(self._pos)
        before = self.tokens.estimate()
        # tier 2: cut what the model has read
        if self.policy.cut_on_read:
            changed = self._cut_read(history, newest, call, prev_out)
            if changed is not None:
                kinds.append("cut")
                first_change = min(first_change, changed)
        event_reason = ""
        if self._dirty:
            event_reason = "your pins, excludes or expands"
        if self.tokens.estimate() - self._transient(history, newest) > self.policy.high_tokens or forced:
            if asked:
                event_reason, self._why = "you asked to compact now", "you asked"
            elif forced:
                event_reason = self._why = "the API said the prompt is too long"
            else:
                event_reason = f"over the {fmt_tokens(self.policy.high_tokens)} high-water mark"
                self._why = f"over the {fmt_tokens(self.policy.high_tokens)} mark"
            target = self.policy.low_tokens
            if forced:  # asked for now: even a small request gives up its older half
                target = min(target, int(self.tokens.estimate() * FORCED_SHARE))
            self._event_first_change = first_change
            kinds += self._event(history, newest, call, target, asked)
            first_change = min(first_change, self._event_first_change)
            if asked and "drop" in kinds and "summary" in pending:
                kinds.append("summary")  # /compact asks for the summary of what it dropped
        if self.tokens.estimate() > self.policy.effective_window:
            kinds += self._emergency(history, newest, call)
            event_reason = event_reason or f"over the {self._budget_words()}"
        if self._dirty:
            first_change = min(first_change, self._rebuild(history))
        event = None
        if kinds:
            after = self.tokens.estimate()
            event = self._make_event(history, call, kinds, event_reason or "already read", before, after)
        return self._result(history, call, event, first_change)

    def preview(self, history: Sequence[Message], call: int | None = None) -> CompactResult:
        """What `compact(history, call)` would send, without keeping any decision (the panel's next call)."""
        twin = copy.copy(self)
        # every container of the sticky state is the twin's own (a hand-kept list of them drifted: the twin
        # appended its drop reasons to the real compactor's), the nested ones one level deeper
        for name, value in vars(self).items():
            if isinstance(value, (list, dict, set)):
                setattr(twin, name, copy.copy(value))
        twin.tokens = copy.deepcopy(self.tokens)
        twin._cuts = {k: dict(v) for k, v in self._cuts.items()}
        twin._masks = {k: dict(v) for k, v in self._masks.items()}
        facts = self._facts
        twin._facts = replace(facts, estimates=list(facts.estimates), messages=list(facts.messages),
                              calls=dict(facts.calls))
        return twin.compact(history, call=call)

    def too_long(self, history: Sequence[Message], real_tokens: int | None, limit: int | None) -> None:
        """The API said "prompt is too long": learn the real size, and compact to a lower mark next call."""
        if real_tokens:
            self.tokens.observe(real_tokens)
        if limit and limit < self.policy.context_window:
            # the model's real window is smaller than we were told: the marks follow it from now on
            self.policy = replace(self.policy, context_window=limit)
            self._learned_window = limit  # saved with the state: a resumed session keeps what the API said
        self._pending.append("reactive")
        self._reactive_target = int(min(self.policy.low_tokens, (limit or self.policy.context_window) * TOO_LONG_SHARE))

    # -- summary tier ---------------------------------------------------------------------------
    def summary_span(self, history: Sequence[Message]) -> list[Message]:
        """The dropped messages the summary should cover (empty when nothing is dropped)."""
        return [history[i] for i in range(self._drop_from, self._drop_until) if i not in self._kept_in_drop]

    @property
    def ratio(self) -> float:
        """Real tokens per estimated token, learned from usage (1.0 before any)."""
        return self.tokens.ratio

    def attach_summary(self, history: Sequence[Message], text: str | None, call: int | None = None) -> CompactResult:
        """Put the model's summary of the dropped span into the ledger (None: the summary call failed)."""
        call = call if call is not None else self.calls
        previous = self._last_event
        cached = min(self._last_cached, len(self._out))
        if not text:
            self.summary_failures += 1
            return self._result(history, call, previous, cached)
        self.summary_failures = 0
        self._build_ledger(history, call, summary=text.strip())
        first_change = min(self._rebuild(history), cached)
        after = self.tokens.estimate()
        if previous is not None and previous.call == call:  # the same event, now with its summary
            event = replace(previous, kinds=tuple(dict.fromkeys(previous.kinds + ("summary",))), tokens_after=after)
            self._last_event = event
        else:
            event = self._make_event(history, call, ["summary"], "summary of the dropped part", after, after)
        return self._result(history, call, event, first_change)

    def summary_context(self) -> tuple[list[Message], int]:
        """(the request as it stood before the last event, how many messages that event dropped)."""
        dropped = self._last_event.dropped if self._last_event is not None else 0
        return list(self._before_event or self._out), dropped

    @property
    def summary_enabled(self) -> bool:
        return self.policy.summary and self.summary_failures < self.policy.summary_max_failures

    # -- internals: sync and render -------------------------------------------------------------
    def _replaced(self, history: Sequence[Message]) -> bool:
        if self._replaced_pending:
            return True
        if len(history) < self._n:
            return True
        return bool(history) and self._n > 0 and history[0] is not self._facts.first

    def _sync(self, history: Sequence[Message]) -> None:
        facts = self._facts
        if history and facts.first is None:
            facts.first = history[0]
            facts.first_digest = digest(history[0])
        for i in range(len(facts.estimates), len(history)):
            message = history[i]
            estimate = tk.message_tokens(message)
            facts.estimates.append(estimate)
            facts.messages.append(facts_of(message))
            facts.total += estimate
            for use in tool_uses(message):
                facts.calls[use.get("id", "")] = (use.get("name", ""), use.get("input"))

    def _render(self, history: Sequence[Message], i: int) -> Message:
        return self._rendered.get(i) or history[i]

    def _render_decided(self, history: Sequence[Message], i: int) -> Message:
        cuts = self._cuts.get(i, {})
        masks = self._masks.get(i, {})
        return render_message(history[i], [cuts[j] for j in sorted(cuts)], [masks[j] for j in sorted(masks)])

    def _unit(self, i: int) -> object:
        return (i, self._variant.get(i, 0))

    def _estimate_of(self, history: Sequence[Message], i: int) -> int:
        if i not in self._rendered:
            return self._facts.estimates[i]
        estimate = self._rendered_est.get(i)
        if estimate is None:
            estimate = self._rendered_est[i] = tk.message_tokens(self._rendered[i])
        return estimate

    def _append(self, history: Sequence[Message], i: int) -> None:
        if i in self._skip:
            return
        self._pos[i] = len(self._out)
        self._out.append(self._render(history, i))
        self._out_idx.append(i)
        unit = self._unit(i)
        self._units.append(unit)
        estimate = self._estimate_of(history, i)
        self._sent_est += estimate
        self.tokens.add(unit, estimate)

    def _replace(self, history: Sequence[Message], i: int, rendered: Message) -> int | None:
        """Swap message i's outbound form in place; its position, or None when it is not sent."""
        old_unit = self._unit(i)
        old_est = self._estimate_of(history, i)
        self._rendered[i] = rendered
        self._rendered_est.pop(i, None)
        self._variant[i] = self._variant.get(i, 0) + 1
        pos = self._pos.get(i)
        if pos is None:
            return None
        self.tokens.remove(old_unit)
        estimate = self._estimate_of(history, i)
        self.tokens.add(self._unit(i), estimate)
        self._sent_est += estimate - old_est
        self._out[pos] = rendered
        self._units[pos] = self._unit(i)
        return pos

    def _rebuild(self, history: Sequence[Message]) -> int:
        """Lay out the request again after an event; returns the first position that differs."""
        old = self._out
        skip = self._skip
        indices: list[int] = [i for i in range(min(self._drop_from, len(history))) if i not in skip]
        if self._drop_until > self._drop_from:
            indices.append(RECAP_INDEX)
            indices.extend(i for i in sorted(self._kept_in_drop) if i not in skip)
        indices.extend(i for i in range(self._drop_until, len(history)) if i not in skip)
        out = [self._ledger_message if i == RECAP_INDEX else self._render(history, i) for i in indices]
        saved = dict(self.tokens._measured)  # measured sizes survive for the units still sent
        fixed = first_message_fix(out)
        if fixed is not None:
            out.insert(0, fixed)
            indices.insert(0, RECAP_INDEX - 1)
        self.tokens.clear()
        units: list[object] = []
        self._sent_est = 0
        for i, message in zip(indices, out):
            if i < 0:  # stable across processes (export/import), new with every ledger
                unit: object = ("ledger", self._ledger.call if self._ledger else 0, i,
                                self._ledger.covers if self._ledger else 0)
                estimate = tk.message_tokens(message)
            else:
                unit = self._unit(i)
                estimate = self._estimate_of(history, i)
            units.append(unit)
            self._sent_est += estimate
            self.tokens.add(unit, estimate)
        self._restore_measured(units, saved)
        first = 0
        while first < min(len(old), len(out)) and old[first] is out[first]:
            first += 1
        self._out, self._out_idx, self._units = out, indices, units
        self._pos = {i: p for p, i in enumerate(indices) if i >= 0}
        self._dirty = False
        return first

    def _restore_measured(self, units: list[object], saved: dict) -> None:
        tokens = self.tokens
        for unit in units:
            if unit in saved and unit in tokens._pending:
                tokens._measured[unit] = saved[unit]
                tokens._sum_measured += saved[unit]
                tokens._sum_unmeasured -= tokens._pending.pop(unit)

    # -- internals: tiers -------------------------------------------------------------------------
    def _cut_read(self, history: Sequence[Message], newest: int, call: int, prev_out: int = 0,
                  start: int | None = None) -> int | None:
        """Tier 2 over the messages that left the newest round since the last call: a long result is cut
        when the cut pays (`pricing.cut_on_read_now`); from `start` on at an event, where every long
        result is cut (the event rewrites what follows its first change anyway)."""
        first: int | None = None
        limit, keep = self.policy.cut_chars, self.policy.cut_keep_chars
        at_event = start is not None
        until_event = calls_until_event(self.tokens.estimate(), self.policy.high_tokens,
                                        self._facts.total / max(call, 1), call)
        for i in range(self._cut_scan if start is None else start, newest):
            if i in self.pins or i in self._masks:
                continue
            message = history[i]
            results = tool_results(message)
            if not results:
                continue
            content = blocks(message)
            new_content: bool | None = None
            for j, block in enumerate(content):
                if block.get("type") != "tool_result" or i in self.expanded or j in self._cuts.get(i, {}):
                    continue
                if len(result_text(block)) <= limit:
                    continue
                if not at_event and not self._cut_now(len(result_text(block)), i, prev_out, until_event):
                    continue
                name = self._facts.calls.get(block.get("tool_use_id", ""), ("", None))[0]
                cut = cut_block(block, keep, name)
                if cut is None:
                    continue
                _, original, kept = cut
                self._touched.add(i)
                self._touched_now.add(i)
                self._cuts.setdefault(i, {})[j] = BlockCut(i, j, block.get("tool_use_id", ""), name, original, kept, call)
                new_content = True
            if new_content is not None:
                pos = self._replace(history, i, self._render_decided(history, i))
                if pos is not None:
                    first = pos if first is None else min(first, pos)
        self._cut_scan = max(self._cut_scan, newest)
        return first

    def _cut_now(self, chars: int, i: int, prev_out: int, until_event: float) -> bool:
        """The priced decision for one long result of message i (the tail is what the previous request
        cached after it, which the cut rewrites)."""
        pos = self._pos.get(i)
        if pos is None:
            return False
        tail = sum(self.tokens.size(self._units[p]) for p in range(pos + 1, min(prev_out, len(self._units))))
        policy = self.policy
        return cut_on_read_now(chars, policy.cut_keep_chars, tail, self.tokens.estimate(), until_event,
                               read=policy.cache_read, write=policy.cache_write,
                               huge_chars=policy.huge_result_chars, always=policy.cut_always)

    def _mask_old(self, history: Sequence[Message], call: int, newest: int, target: float | None = None) -> int:
        """Tier 3: results of re-runnable tools older than the protected recent budget become placeholders,
        the least likely to be needed first (`ranking`), until the request fits `target` (all of them
        when None). The protection fits what the drop keeps, so a masked result is still sent after it."""
        protect: float = self.policy.mask_protect_tokens
        if target is not None:
            recap = self.tokens.size_of(self._ledger.tokens if self._ledger else RECAP_GUESS_TOKENS)
            protect = mask_protection(protect, target, self.tokens.baseline, self._head_size(), recap)
        seen = 0.0
        candidates: list[tuple[int, list[tuple[int, Message, str, Any, int, str]]]] = []
        for pos in range(len(self._out) - 1, -1, -1):
            seen += self.tokens.size(self._units[pos])
            if seen <= protect:
                continue
            i = self._out_idx[pos]
            if i < 0 or i < self._drop_from:
                break  # the head stays as it is (it is the cached start of every request)
            if i in self.pins or i >= newest or i in self.expanded:
                continue
            message = history[i]
            if not tool_results(message):
                continue
            current = blocks(self._render(history, i))
            chosen = []
            for j, block in enumerate(blocks(message)):
                if block.get("type") != "tool_result" or j in self._masks.get(i, {}):
                    continue
                name, tool_input = self._facts.calls.get(block.get("tool_use_id", ""), ("", None))
                if not self._rerunnable(name, tool_input):
                    continue
                original = len(result_text(block))
                text = placeholder_text(name, tool_input, original)
                if len(result_text(current[j])) < max(self.policy.mask_min_chars, len(text) * 3):
                    continue
                chosen.append((j, block, name, tool_input, original, text))
            if chosen:
                candidates.append((i, chosen))
        if target is not None and candidates:
            superseded, mentioned = self._mask_signals(history, min(i for i, _ in candidates))
            candidates.sort(key=lambda c: mask_rank(c[0], superseded, mentioned.get(c[0], False)))
        masked = 0
        for i, chosen in candidates:
            if target is not None and self.tokens.estimate() - self._transient(history, newest) <= target:
                break
            for j, block, name, tool_input, original, text in chosen:
                self._masks.setdefault(i, {})[j] = BlockMask(i, j, block.get("tool_use_id", ""), name,
                                                              key_input(tool_input), original, text, call)
                masked += 1
            self._touched.add(i)
            self._touched_now.add(i)
            self._replace(history, i, self._render_decided(history, i))
        return masked

    def _mask_signals(self, history: Sequence[Message], start: int) -> tuple[set[int], dict[int, bool]]:
        """What the ranking reads: the superseded reads, and for each result from `start` on whether a
        later assistant message mentions one of its entities."""
        uses = [(i, name, tool_input) for i in range(start, len(history)) for use in tool_uses(history[i])
                for name, tool_input in [(use.get("name", ""), use.get("input"))]]
        superseded = superseded_reads(uses)
        mentioned: dict[int, bool] = {}
        later: set[str] = set()
        for i in range(len(history) - 1, start - 1, -1):
            message = history[i]
            if message.get("role") == "assistant":
                later |= entities(mentioned_text(message))
            elif tool_results(message):
                mentioned[i] = not entities(held_text(message)).isdisjoint(later)
        return superseded, mentioned

    def _budget_words(self) -> str:
        """What "the window" means here: the room left for the request once the output is reserved."""
        policy = self.policy
        return (f"{fmt_tokens(policy.effective_window)} budget ({fmt_tokens(policy.context_window)} window − "
                f"{fmt_tokens(policy.context_window - policy.effective_window)} output reserve)")

    def _rerunnable(self, name: str, tool_input: object) -> bool:
        """Can this result be had again? The tool answers for itself; a transcript's names use the table."""
        answer = self.tool_rerunnable(name, tool_input) if self.tool_rerunnable is not None else None
        return self.policy.rerunnable(name, tool_input) if answer is None else answer

    def _event_cuts(self, history: Sequence[Message], newest: int, call: int, floor: int) -> list[EventKind]:
        """At an event every long read result after `floor` is cut (it is rewritten anyway)."""
        if not self.policy.cut_on_read or self._cut_read(history, newest, call, start=floor) is None:
            return []
        return ["cut"]

    def _event(self, history: Sequence[Message], newest: int, call: int, target: int,
               asked: bool = False) -> list[EventKind]:
        """Tiers 3 and 4 at once (one cache break): mask old results, then drop down to `target`."""
        reactive = self._reactive_target
        if reactive is not None:
            target = min(target, reactive)
            self._reactive_target = None
        kinds: list[EventKind] = []
        self._before_event = list(self._out)  # what the summary call sends (the previous call's prefix)
        head_before = self._drop_from
        first_drop = self._drop_until <= self._drop_from
        if not asked:  # the cheapest loss first: cut what was read (the head too, at the first event)
            kinds += self._event_cuts(history, newest, call, max(self._drop_until, self._drop_from))
        if self.policy.drop and first_drop:
            self._drop_from = self._choose_head(history, newest, target)  # tentative: kept only with a drop
        if not asked:  # then mask what can be run again
            if self.policy.mask and self._mask_old(history, call, newest, target):
                kinds.append("mask")
        if self.policy.drop and (asked or self.tokens.estimate() - self._transient(history, newest) > target):
            until = self._choose_drop(history, newest, target)
            if until > max(self._drop_until, self._drop_from) and self._worth_dropping(history, until):
                self._set_drop(history, until, call, self._why)
                kinds.append("drop")
        if asked:  # /compact drops (or summarises) the older part first; then the rest as at any event
            kinds += self._event_cuts(history, newest, call, max(self._drop_until, self._drop_from))
            if self.policy.mask and self._mask_old(history, call, newest):
                kinds.append("mask")
        if first_drop and "drop" not in kinds:
            self._drop_from = head_before  # no drop: no head either (else the head went out twice)
        self._dirty = True
        self._event_first_change = self._rebuild(history)  # compact() reads it: the cached prefix ends there
        return kinds

    def _transient(self, history: Sequence[Message], newest: int) -> float:
        """Tokens the newest round will give back by itself once it is read (cut on read): a spike that
        passes is no reason to rewrite the whole request, as long as the request still fits the window."""
        if not self.policy.cut_on_read or newest in self.pins:
            return 0.0
        chars = 0
        for i in range(newest, len(history)):
            for j, block in enumerate(blocks(history[i])):
                if block.get("type") == "tool_result" and i not in self.expanded:
                    size = len(result_text(block))
                    if size > self.policy.cut_chars and (self.policy.cut_always or size > self.policy.huge_result_chars):
                        chars += size - self.policy.cut_keep_chars
        return self.tokens.size_of(tk.tokens_for_chars(chars))

    def _worth_dropping(self, history: Sequence[Message], until: int) -> bool:
        """A drop rewrites the whole request after it: only worth it when it frees clearly more than the
        ledger that replaces the dropped messages takes (a drop that grows the request is no drop)."""
        return self._gain(history, until) > max(MIN_GAIN_TOKENS, MIN_GAIN_SHARE * self.tokens.estimate())

    def _gain(self, history: Sequence[Message], until: int) -> float:
        """Tokens a drop up to `until` frees, less what its recap adds."""
        floor = max(self._drop_until, self._drop_from)
        freed = sum(self.tokens.size(self._units[pos]) for pos, i in enumerate(self._out_idx) if floor <= i < until)
        ledger, _ = build_ledger(self._facts.messages, until, self._islands(history, until),
                                 prompt_chars=self.policy.ledger_prompt_chars,
                                 prompt_max_chars=self.policy.ledger_prompt_max_chars, call=0,
                                 start=self._drop_from, excluded=frozenset(self._skip))
        grows = self.tokens.size_of(ledger.tokens) - (self.tokens.size_of(self._ledger.tokens) if self._ledger else 0)
        return freed - grows

    def _set_drop(self, history: Sequence[Message], until: int, call: int, why: str, start: int | None = None) -> None:
        """Drop up to `until` (and from `start` when the head goes too); the messages that leave now keep
        this event's reason for good (a later event never rewrites why an earlier one dropped a row)."""
        old_from, old_until = self._drop_from, self._drop_until
        new_from = old_from if start is None else start
        reason = f"dropped at call {call} ({why})"
        spans = [(new_from, until)] if old_until <= old_from else [(new_from, old_from), (old_until, until)]
        self._drop_reasons += [(lo, hi, reason) for lo, hi in spans if hi > lo]
        self._drop_from, self._drop_until = new_from, until
        self._dropped_reason = reason
        self._kept_in_drop = self._islands(history, until)
        self._build_ledger(history, call)
        self._prune_dropped()

    def _islands(self, history: Sequence[Message], until: int) -> frozenset[int]:
        """Pinned messages in the dropped span, with the partners they cannot be sent without; a pinned
        prompt travels with its answer (never sent directly before the answer to another prompt)."""
        return frozenset(k for i in self.pins if self._drop_from <= i < until
                         for k in pinned_with(history, i) if self._drop_from <= k < until)

    def _choose_head(self, history: Sequence[Message], newest: int, target: int) -> int:
        """The start of the conversation that stays first in every request (and so in the cache): the
        largest assistant-message boundary within `keep_head` tokens, and within half of what the
        low-water mark leaves after the baseline (the rest is for the ledger and the recent tail), never
        into the newest round."""
        budget = min(float(self.policy.head_tokens), HEAD_SHARE * (target - self.tokens.baseline))
        if budget <= 0:
            return 0
        total = 0.0
        best = 0
        for i in range(1, newest):
            total += self.tokens.size(self._units[self._pos[i - 1]]) if (i - 1) in self._pos else 0.0
            if total > budget:
                break
            if history[i].get("role") == "assistant":
                best = i
        return best

    def _head_size(self) -> float:
        size = 0.0
        for pos, i in enumerate(self._out_idx):
            if i < 0 or i >= self._drop_from:
                break
            size += self.tokens.size(self._units[pos])
        return size

    def _choose_drop(self, history: Sequence[Message], newest: int, target: int) -> int:
        """The earliest assistant message from which the head, the ledger, the kept tail and the base fit
        `target`; at worst the newest round's own assistant message."""
        floor = max(self._drop_until, self._drop_from)
        fixed = self.tokens.baseline + self._head_size() - self._transient(history, newest)
        fixed += self.tokens.size_of(self._ledger.tokens if self._ledger else RECAP_GUESS_TOKENS) + RECAP_GUESS_TOKENS
        suffix = 0.0
        best = None
        for pos in range(len(self._out) - 1, -1, -1):
            i = self._out_idx[pos]
            if i < 0 or i <= floor:
                break
            suffix += self.tokens.size(self._units[pos])
            if i > newest or history[i].get("role") != "assistant":
                continue
            if fixed + suffix <= target:
                best = i
            else:
                break
        if best is None:
            best = _last_assistant_before(history, newest + 1, floor)
        return best

    def _emergency(self, history: Sequence[Message], newest: int, call: int) -> list[EventKind]:
        """Still over the window after an event: drop to the newest round, then cut the newest round."""
        kinds: list[EventKind] = []
        floor = max(self._drop_until, self._drop_from)
        until = _last_assistant_before(history, newest + 1, floor)
        if until > floor and self._gain(history, until) > 0:  # never a drop that frees less than its recap
            self._set_drop(history, until, call, "the window was full")
            kinds.append("drop")
            self._rebuild(history)
        if self.tokens.estimate() > self.policy.effective_window and self._drop_from:
            self._set_drop(history, until, call, "the window was full", start=0)  # even the head must go
            kinds.append("drop")
            self._rebuild(history)
        if self.tokens.estimate() > self.policy.effective_window:
            for i in range(newest, len(history)):
                touched = False
                for j, block in enumerate(blocks(history[i])):
                    if block.get("type") != "tool_result" or i in self.expanded:
                        continue
                    name = self._facts.calls.get(block.get("tool_use_id", ""), ("", None))[0]
                    cut = cut_block(block, HARD_KEEP_CHARS, name)
                    if cut is None:
                        continue
                    _, original, kept = cut
                    self._touched.add(i)
                    self._touched_now.add(i)
                    self._cuts.setdefault(i, {})[j] = BlockCut(i, j, block.get("tool_use_id", ""), name,
                                                                original, kept, call, hard=True)
                    touched = True
                if touched:
                    self._replace(history, i, self._render_decided(history, i))
                    kinds.append("cut")
        self._dirty = True
        self._event_first_change = self._rebuild(history)  # compact() reads it: the cached prefix ends there
        return kinds

    def _prune_dropped(self) -> None:
        """Decisions about messages no longer sent stop mattering: keep the maps the size of the request.

        New dicts, not deletions: a dict never shrinks its table, and iterating one that once held 5,000
        cuts costs as much as iterating 5,000 entries."""
        def sent(i: int) -> bool:
            return not (self._drop_from <= i < self._drop_until) or i in self._kept_in_drop

        self._cuts = {i: per for i, per in self._cuts.items() if sent(i)}
        self._masks = {i: per for i, per in self._masks.items() if sent(i)}
        self._rendered = {i: m for i, m in self._rendered.items() if sent(i)}
        self._rendered_est = {i: e for i, e in self._rendered_est.items() if sent(i)}
        self._snapshot = None

    def _build_ledger(self, history: Sequence[Message], call: int, summary: str | None = None) -> None:
        if summary is None and self._ledger is not None and self._ledger.covers == self._drop_until:
            summary = self._ledger.summary
        ledger, message = build_ledger(
            self._facts.messages, self._drop_until, self._kept_in_drop, prompt_chars=self.policy.ledger_prompt_chars,
            prompt_max_chars=self.policy.ledger_prompt_max_chars, call=call, summary=summary,
            start=self._drop_from, excluded=frozenset(self._skip))
        self._ledger, self._ledger_message = ledger, ledger_message(ledger.text)
        self._dirty = True

    # -- internals: the plan --------------------------------------------------------------------
    def _make_event(self, history: Sequence[Message], call: int, kinds: list[EventKind], reason: str,
                    before: int, after: int) -> CompactEvent:
        unique = tuple(dict.fromkeys(kinds))
        masked_now = sum(1 for per in self._masks.values() for m in per.values() if m.call == call)
        cut_now = sum(1 for i in self._touched_now for c in self._cuts.get(i, {}).values() if c.call == call)
        left: tuple[int, ...] = ()
        loss = LossReport()
        if "drop" in unique or "mask" in unique or "exclude" in unique or (unique and cut_now and self._touched_now):
            # this event's own loss: what the previous request sent and this one does not (its diff), and
            # what of that (or of the results masked now) appears neither in the request nor in the recap
            left = tuple(sorted(i for i in self._sent_before if i not in self._pos))
            masked_idx = tuple(sorted(i for i, per in self._masks.items() if any(m.call == call for m in per.values())))
            prompts, paths = missing_from(lambda: request_text(self._out), self._facts.messages,
                                          sorted(set(left) | set(masked_idx)), self.policy.ledger_prompt_max_chars,
                                          self._ledger)
            changed = set(left) | set(masked_idx) | {i for i in self._touched_now if i in self._cuts}
            loss = LossReport(left, masked_idx, prompts, paths, at_risk(history, changed, request_text(self._out)))
        ledger = self._ledger
        event = CompactEvent(
            call=call, kinds=unique, reason=reason, tokens_before=before, tokens_after=after,
            dropped=sum(1 for i in left if i not in self._skip), masked=masked_now, cut=cut_now,
            ledger_prompts=len(ledger.prompts) if ledger else 0, ledger_files=len(ledger.files) if ledger else 0,
            loss=loss,
        )
        if event.major:
            self._last_event = event
        return event

    def _result(self, history: Sequence[Message], call: int, event: CompactEvent | None, first_change: int,
                mode: str = "v2") -> CompactResult:
        n = len(history)
        if mode == "off":
            for i in range(self._n, n):
                self._append(history, i)
            self._n = n
        est = self.tokens.estimate()
        if self._snapshot is None:  # plans are immutable: new maps when a decision changed
            self._snapshot = ({i: tuple(per[j] for j in sorted(per)) for i, per in self._cuts.items() if per},
                              {i: tuple(per[j] for j in sorted(per)) for i, per in self._masks.items() if per})
            self._touched.clear()
        elif self._touched:  # a copy (at C speed) with only the messages decided on since the last plan redone
            new = (dict(self._snapshot[0]), dict(self._snapshot[1]))
            for i in self._touched:
                for source, target in zip((self._cuts, self._masks), new):
                    per = source.get(i)
                    if per:
                        target[i] = tuple(per[j] for j in sorted(per))
                    else:
                        target.pop(i, None)
            self._snapshot = new
            self._touched.clear()
        cuts, masks = self._snapshot
        self._last_cached = first_change
        plan = CompactPlan(
            mode=mode, enabled=mode != "off", call=call, history_len=n, drop_from=self._drop_from,
            drop_until=max(self._drop_until, self._drop_from),
            kept_in_drop=self._kept_in_drop, cuts=cuts, masks=masks,
            pins=frozenset(self.pins), excluded=frozenset(self._skip), expanded=frozenset(self.expanded),
            protected_from=newest_round_start(history) if history else 0, ledger=self._ledger,
            outbound_indices=tuple(i for i in self._out_idx if i >= 0),
            ledger_position=self._out_idx.index(RECAP_INDEX) if self._ledger is not None and self._drop_until > self._drop_from else None,
            lead_placeholder=bool(self._out_idx) and self._out_idx[0] < RECAP_INDEX, message_tokens_before=self._facts.total,
            message_tokens_after=self._sent_est, baseline_tokens=round(self.tokens.baseline),
            estimated_tokens=est, high_tokens=self.policy.high_tokens, low_tokens=self.policy.low_tokens,
            budget_tokens=self.policy.effective_window, over_budget=est > self.policy.effective_window,
            event=event, last_event=self._last_event, cached_messages=first_change,
            dropped_reason=self._dropped_reason, drop_reasons=tuple(self._drop_reasons),
            summary_requested=bool(event and "drop" in event.kinds
                                   and (self.summary_enabled or "summary" in event.kinds)),
        )
        return CompactResult(list(self._out), plan)

    # -- persistence ----------------------------------------------------------------------------
    def export_state(self) -> dict:
        """The sticky decisions as JSON-safe data (the journal stores it; `import_state` restores it)."""
        return {
            "version": 1,
            "calls": self.calls,
            "history_len": self._n,
            "first": self._facts.first_digest,
            "cuts": [[c.message_index, c.block_index, c.tool_use_id, c.tool_name, c.original_chars, c.kept_chars,
                      c.call, c.hard] for per in self._cuts.values() for c in per.values()],
            "masks": [[m.message_index, m.block_index, m.call] for per in self._masks.values() for m in per.values()],
            "drop_from": self._drop_from,
            "drop_until": self._drop_until,
            "kept_in_drop": sorted(self._kept_in_drop),
            "ledger_call": self._ledger.call if self._ledger else None,
            "summary": self._ledger.summary if self._ledger else None,
            "cut_scan": self._cut_scan,
            "pins": sorted(self.pins), "excluded": sorted(self.excluded), "skip": sorted(self._skip),
            "expanded": sorted(self.expanded),
            "dropped_reason": self._dropped_reason,
            "drop_reasons": [list(span) for span in self._drop_reasons],
            "summary_failures": self.summary_failures,
            "tokens": self.tokens.export(),
            "variant": [[i, v] for i, v in sorted(self._variant.items())],
            # what the next call is still to do (a pin, /compact or too_long since the last call)
            "pending": list(self._pending), "dirty": self._dirty, "reactive_target": self._reactive_target,
            # still the window in force (a /model since then set the new model's own)
            "learned_window": self._learned_window if self._learned_window == self.policy.context_window else None,
        }

    def import_state(self, history: Sequence[Message], state: Mapping[str, Any]) -> str | None:
        """Rebuild the decisions of `export_state` over the same history: the next request is the one the
        old process would have sent (byte for byte). None when restored; a one-line warning when the state
        is refused (malformed, stale or forged: it would render an invalid request), and then the
        compactor plans from the history as a fresh one would. Never raises."""
        tokens = self.tokens.export()
        try:
            self._import(history, state)
        except (TypeError, ValueError, KeyError, IndexError, AttributeError) as error:
            self._forget(tokens)
            return f"The saved compaction state is unreadable ({type(error).__name__}: {error}); planned from the history."
        problems = self._invalid_import() or self._invalid_next(history)
        if problems:
            self._forget(tokens)
            return f"The saved compaction state would send an invalid request ({problems}); planned from the history."
        return None

    def _invalid_next(self, history: Sequence[Message]) -> str:
        """Why the next request planned from the restored state would be refused by the API ("" when it
        would not): what the restored part allows can still break once the rest of the history joins."""
        if not history:
            return ""
        try:
            planned = self.preview(history, self.calls + 1).messages
        except (TypeError, ValueError, KeyError, IndexError, AttributeError) as error:
            return f"{type(error).__name__}: {error}"
        return "; ".join(protocol_errors(planned, allow_pending=True)[:3])

    def _forget(self, tokens: dict) -> None:
        """Back to a fresh compactor's decisions; the estimator as it was before the refused import."""
        self.calls = 0
        self.summary_failures = 0
        self.pins, self.excluded, self.expanded = set(), set(), set()
        self._reset()
        self.tokens.restore(tokens)

    def _invalid_import(self) -> str:
        """Why the restored request so far is not one the API accepts ("" when it is)."""
        if not self._out:
            return ""
        errors = protocol_errors(self._out, allow_pending=True)
        errors += [f"message {p}: empty content" for p, m in enumerate(self._out) if m.get("content") in ([], "")]
        return "; ".join(errors[:2])

    def _import(self, history: Sequence[Message], state: Mapping[str, Any]) -> None:
        self._reset()
        learned = state.get("learned_window")
        if learned is not None and 0 < int(learned) < self.policy.context_window:
            self.policy = replace(self.policy, context_window=int(learned))
            self._learned_window = int(learned)
        saved_len = int(state.get("history_len", 0))
        if saved_len > len(history) or (history and state.get("first", "") not in ("", digest(history[0]))):
            # saved over a history since replaced (/clear): what the old compactor does at its next call
            self.tokens.restore(state.get("tokens", {}))
            self.tokens.clear()
            self.calls = int(state.get("calls", 0))
            self._replaced_pending = True  # like the old compactor, forget at the next call (it sees /clear then)
            return
        self.calls = int(state.get("calls", 0))
        size = len(history)
        # steering may name a message the history does not hold yet (it applies once it does)
        unbounded = 1 << 62
        self.pins = {_index(i, unbounded) for i in state.get("pins", [])}
        self.excluded = {_index(i, unbounded) for i in state.get("excluded", [])}
        # message indices (an older journal saved (message, block) pairs: the message is what was expanded)
        self.expanded = {_index(x[0] if isinstance(x, list) else x, unbounded) for x in state.get("expanded", [])}
        self.summary_failures = int(state.get("summary_failures", 0))
        n = min(int(state.get("history_len", 0)), size)
        if n < 0:
            raise ValueError(f"history_len {n}")
        self._sync(history[:n])
        # derived, never trusted: what the excludes leave out over the history the state covers
        self._skip = self._skip_of(history[:n])
        for i, j, tool_id, name, original, kept, call, hard in state.get("cuts", []):
            _result_block(history, _index(i, size), j)
            if i >= n:
                continue
            self._snapshot = None
            self._cuts.setdefault(i, {})[j] = BlockCut(i, j, tool_id, name, original, kept, call, hard)
            self._rendered[i] = self._render_decided(history, i)
            self._rendered_est.pop(i, None)
            self._variant[i] = self._variant.get(i, 0) + 1
        for i, j, call in state.get("masks", []):
            block = _result_block(history, _index(i, size), j)
            if i >= n:
                continue
            name, tool_input = self._facts.calls.get(block.get("tool_use_id", ""), ("", None))
            text = placeholder_text(name, tool_input, len(result_text(block)))
            self._snapshot = None
            self._masks.setdefault(i, {})[j] = BlockMask(i, j, block.get("tool_use_id", ""), name,
                                                          key_input(tool_input), len(result_text(block)), text, call)
            self._rendered[i] = self._render_decided(history, i)
            self._rendered_est.pop(i, None)
            self._variant[i] = self._variant.get(i, 0) + 1
        self._drop_from = _index(min(int(state.get("drop_from", 0)), n), n + 1)
        self._drop_until = _index(min(int(state.get("drop_until", 0)), n), n + 1)
        for edge in {self._drop_from, self._drop_until} - {0, n}:  # a drop is cut before an assistant message
            if self._drop_until > self._drop_from and history[edge].get("role") != "assistant":
                raise ValueError(f"the dropped span {self._drop_from}–{self._drop_until} splits a tool round")
        # as the old process had it (a pin since then is pending and applies at the next call), but only
        # inside the dropped span; the rendered request is checked below
        self._kept_in_drop = frozenset(_index(i, self._drop_until) for i in state.get("kept_in_drop", [])
                                       if _index(i, self._drop_until) >= self._drop_from)
        self._dropped_reason = str(state.get("dropped_reason", ""))
        self._drop_reasons = [(int(lo), int(hi), str(why)) for lo, hi, why in state.get("drop_reasons", [])]
        if self._drop_until > self._drop_from:
            self._build_ledger(history, state.get("ledger_call") or 0, summary=state.get("summary"))
        self._cut_scan = int(state.get("cut_scan", 0))
        self._n = n
        self._variant = {int(i): int(v) for i, v in state.get("variant", [])}
        self._rebuild(history[:n])
        self.tokens.restore(state.get("tokens", {}))
        self._pending = [str(kind) for kind in state.get("pending", [])]
        self._dirty = bool(state.get("dirty", False))
        target = state.get("reactive_target")
        self._reactive_target = None if target is None else int(target)


def _index(value: object, size: int) -> int:
    """A message index read from a saved state: an int in [0, size), else the state is refused."""
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < size:
        raise ValueError(f"message index {value!r} outside the history (0–{size - 1})")
    return value


def _result_block(history: Sequence[Message], i: int, j: object) -> Message:
    """Block j of message i, which a saved cut or mask names: it must be a tool_result."""
    content = blocks(history[i])
    if not isinstance(j, int) or not 0 <= j < len(content) or content[j].get("type") != "tool_result":
        raise ValueError(f"block {j!r} of message {i} is not a tool result")
    return content[j]


def digest(message: Message) -> str:
    """A short digest of one message's content (tells one history's first message from another's)."""
    return hashlib.sha1(json.dumps(message, sort_keys=True, default=str).encode()).hexdigest()[:16]


def newest_round_start(history: Sequence[Message]) -> int:
    """Index where the round the model has not read yet begins (kept whole: never cut or dropped)."""
    n = len(history)
    if n == 0:
        return 0
    last = history[-1]
    if last.get("role") == "user" and tool_results(last) and n >= 2:
        return n - 2
    return n - 1


def exchange(history: Sequence[Message], i: int) -> set[int]:
    """Message i and the partner it cannot be sent without (tool_use ↔ its tool_results)."""
    out = {i}
    message = history[i]
    if tool_uses(message) and i + 1 < len(history):
        out.add(i + 1)
    elif message.get("role") == "user" and tool_results(message) and i > 0:
        out.add(i - 1)
    elif message.get("role") == "assistant" and i + 1 < len(history) and is_user_text(history[i + 1]):
        out.add(i + 1)
    return out


def pinned_with(history: Sequence[Message], i: int) -> set[int]:
    """What a pin on message i keeps: its exchange, and for a prompt the turn up to its answer (the first
    assistant message after it that calls no tool), so the pair is never split by a drop."""
    out = exchange(history, i)
    if not is_user_text(history[i]):
        return out
    for k in range(i + 1, len(history)):
        if is_user_text(history[k]):
            break
        out.add(k)
        if history[k].get("role") == "assistant" and not tool_uses(history[k]):
            break
    return out


def _last_assistant_before(history: Sequence[Message], end: int, floor: int) -> int:
    for i in range(end - 1, floor, -1):
        if history[i].get("role") == "assistant":
            return i
    return floor
