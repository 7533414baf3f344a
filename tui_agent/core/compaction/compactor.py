"""The tiered, sticky compactor: one per session, called once per model call with the whole history.

Between compaction *events* it only appends: the request of call k+1 starts with the exact messages of
call k, so the provider's prompt cache reads the whole previous request at a tenth of the price. The
decisions are one value, `CompactState` (state.py); the tiers (tiers.py) turn one state into the next;
the request and its plan are laid out from it (layout.py). This class only orders the steps:

1. append-only while the estimate is under the high-water mark;
2. cut on read: a long result already read is cut once where the cut pays, or when huge (pricing.py);
3. event: every long result cut, then re-runnable results masked, least needed first (ranking.py);
4. drop: at an event, whole old messages down to the low-water mark, cut at an assistant message so
   every tool_result keeps its tool_use, with a deterministic recap in their place;
5. summary (optional): the model summarises the dropped span into the recap (`attach_summary`).

`preview()` runs the same steps on the same state and keeps nothing. History is never mutated. An event's
reason, target and policy are `event_terms.py`; saving and reading back the decisions `saved_state.py`."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import replace
from typing import Any, Sequence

from tui_agent.core.compaction import steps, tiers
from tui_agent.core.compaction.estimator import RequestEstimator
from tui_agent.core.compaction.event_terms import event_terms
from tui_agent.core.compaction.events_of import budget_words, make_event, quiet_reason
from tui_agent.core.compaction.facts import Facts, Rerunnable, newest_round_start
from tui_agent.core.compaction.layout import Layout
from tui_agent.core.compaction.marks import RECAP_MARK
from tui_agent.core.compaction.steps import Work
from tui_agent.core.compaction.plan import CompactEvent, CompactResult, EventKind
from tui_agent.core.compaction.policy import CompactPolicy
from tui_agent.core.compaction.request_view import still_over, transient
from tui_agent.core.compaction.saved_state import export_state, import_state
from tui_agent.core.compaction.state import CompactState
from tui_agent.core.compaction.undo import UndoRefused, undo_event
from tui_agent.core.messages import Message

TOO_LONG_SHARE = 0.5  # after "prompt is too long" the next event aims at most at this share of the window
__all__ = ["Compactor", "Rerunnable", "UndoRefused", "newest_round_start"]


UNDO_HOLD_SHARE = 0.1  # an undone event holds until the request grows this share of the budget past it


class Compactor:
    """`compact(history, call)` → `CompactResult(messages, plan)`; `observe_usage(real_input_tokens)` after a
    call. Implements `CompactorProtocol` as mode "v2" (or "off" when the policy disables compaction)."""

    def __init__(self, policy: CompactPolicy | None = None, baseline_tokens: int = 0, *,
                 rerunnable: Rerunnable | None = None) -> None:
        self.policy = policy or CompactPolicy()
        self.tool_rerunnable = rerunnable  # the tools' own answer; the policy's name table when it has none
        self.enabled = self.policy.is_enabled()
        self.mode = "v2" if self.enabled else "off"
        self.steerable = self.enabled  # pins, excludes, expands and /compact change what v2 sends
        self.tokens, self.state = RequestEstimator(baseline_tokens), CompactState()
        self._fresh()

    def _fresh(self) -> None:
        """The derived parts of a fresh history (and the memory of the last event)."""
        self.facts = Facts(self.tool_rerunnable)
        self.layout = Layout()
        self.tokens.clear()
        self.last_event: CompactEvent | None = None
        self._before_event: list[Message] | None = None
        self._last_cached = 0
        self._undo_to: tuple[CompactState, CompactEvent | None, CompactEvent] | None = None  # `undo_event`

    # -- what the state holds, by name ----------------------------------------------------------
    @property
    def calls(self) -> int:
        return self.state.calls

    @property
    def pins(self) -> frozenset[int]:
        return self.state.pins

    @property
    def ratio(self) -> float:  # real tokens per estimated token, learned from usage (1.0 before any)
        return self.tokens.ratio

    @property
    def summary_enabled(self) -> bool:
        return self.policy.summary and self.state.summary_failures < self.policy.summary_max_failures

    def set_baseline(self, baseline_tokens: int) -> None:
        """System prompt + tool definitions (chars/4); they may change between calls (MCP tools arrive)."""
        self.tokens.set_baseline(baseline_tokens)

    def retarget(self, context_window: int, max_output_tokens: int, cache_read: float, cache_write: float) -> None:
        self.policy = self.policy.for_model(context_window, max_output_tokens, cache_read, cache_write)

    def observe_usage(self, input_tokens_total: int, server_edited: bool = False) -> None:
        """The real input size (input + cache write + cache read) of the request `compact` returned last. A
        size the server edited is of another request than our estimate's: it calibrates nothing, and goes to
        `observe_server` instead."""
        if server_edited:
            self.observe_server(input_tokens_total)
        else:
            self.tokens.observe(input_tokens_total)

    def observe_server(self, input_tokens_total: int) -> None:
        """What this strategy learns from the server's count of a request the server edited on its own. v2
        sends what the API reads: nothing; the server strategies (`strategies/server.py`) make it their meter."""

    # -- user actions (outbound only; they apply at the next call) --------------------------------
    def pin(self, index: int, on: bool = True) -> None:
        s = self.state
        self._change("pin", index, pins=s.pins | {index} if on else s.pins - {index},
                     excludes=s.excludes - {index} if on else s.excludes)

    def exclude(self, index: int, on: bool = True) -> None:
        s = self.state
        self._change("exclude", index, excludes=s.excludes | {index} if on else s.excludes - {index},
                     pins=s.pins - {index} if on else s.pins)

    def expand(self, index: int, on: bool = True) -> None:
        """Send message `index`'s cut or masked results whole in the next request."""
        expanded = self.state.expanded
        self._change("expand", index, expanded=expanded | {index} if on else expanded - {index})

    def _change(self, kind: EventKind, index: int, **fields: Any) -> None:
        """A user's change, for message `index`: a negative one names no message (a state holding it could
        not be saved and read back), so it is refused here; one beyond the history applies once it is there."""
        if isinstance(index, bool) or not isinstance(index, int) or index < 0:
            raise ValueError(f"message index {index!r} is not a message of the history")
        self.state = self.state.evolve(pending=self.state.pending + (kind,), dirty=True, **fields)

    def request_event(self, kind: str = "drop") -> None:
        """`/compact`: run an event at the next call even under the high-water mark (`"idle"`: the idle
        policy's drop while the session waits, the same event with its own reason)."""
        self.state = self.state.evolve(pending=self.state.pending + (kind,))

    def postpone(self, on: bool = True) -> None:
        """The user postponed the event the next call would make (approve-before-compacting): that call is
        sent without one by the marks (a request over the window is still fitted); the next asks again."""
        pending = tuple(kind for kind in self.state.pending if kind != "postpone")
        self.state = self.state.evolve(pending=pending + ("postpone",) * on)

    def cache_expired(self) -> None:
        """The prompt cache went cold (idle past its time to live): the next request is written again in
        full whatever it holds, so an event there costs no extra write. The next call compacts when the
        request is above `policy.cold_mark_tokens`, not only above the high mark."""
        self.state = self.state.evolve(pending=self.state.pending + ("cold",))

    def too_long(self, history: Sequence[Message], real_tokens: int | None, limit: int | None) -> None:
        """The API said "prompt is too long": learn the real size, and compact to a lower mark next call."""
        if real_tokens:
            self.tokens.observe(real_tokens)
        learned = self.state.learned_window
        if limit and limit < self.policy.context_window:  # the marks follow the model's real window from now on
            self.policy = replace(self.policy, context_window=limit)
            learned = limit
        target = int(min(self.policy.low_tokens, (limit or self.policy.context_window) * TOO_LONG_SHARE))
        self.state = self.state.evolve(pending=self.state.pending + ("reactive",), reactive_target=target,
                                       learned_window=learned)

    # -- the call -------------------------------------------------------------------------------
    def compact(self, history: Sequence[Message], call: int | None = None) -> CompactResult:
        """Plan and keep the request for call `call` with `history` as it is now; never mutates `history`."""
        state, last_event = self.state, self.last_event
        work, result = self._plan(history, call, self._work())
        self._keep(work, result)
        event = result.plan.event
        if event is not None and event.major:  # what `undo_event` takes back to
            self._undo_to = (state, last_event, event)
        return result

    @property
    def undoable(self) -> CompactEvent | None:
        """The last event, while `undo_event` can still take it back (not after /clear or a resume)."""
        return self._undo_to[2] if self._undo_to is not None else None

    def undo_event(self, history: Sequence[Message], hold_share: float = UNDO_HOLD_SHARE) -> CompactEvent | None:
        """Take the last event back and hold (`compaction/undo.py`); None: nothing to undo."""
        return undo_event(self, history, hold_share)

    def preview(self, history: Sequence[Message], call: int | None = None) -> CompactResult:
        """What `compact(history, call)` would send: the same steps on the same state, nothing kept but the
        facts of the messages (a cache of the history itself, learned by the compact after anyway: a resumed
        long session's preview and first call learned its 200,000 messages twice)."""
        return self.preview_with(history, (), call)

    def preview_with(self, history: Sequence[Message], pending: tuple[str, ...], call: int | None = None) -> CompactResult:
        """What the next call would send if `pending` had been asked before it (`("cold",)`: the cache went
        cold; `("drop",)`: an event now): the idle policy prices these (`core/idle.py`). Nothing is kept."""
        if not self._replaced(self._work(), history):
            self.facts.sync(history)
        state = self.state.evolve(pending=self.state.pending + pending)
        work = Work(state, self.facts.copy(), self.layout.copy(), copy.deepcopy(self.tokens), self.last_event)
        return self._plan(history, call, work)[1]

    def _work(self) -> Work:
        return Work(self.state, self.facts, self.layout, self.tokens, self.last_event)

    def _keep(self, work: Work, result: CompactResult) -> None:
        self.state, self.facts, self.layout, self.tokens = work.state, work.facts, work.layout, work.tokens
        self.last_event, self._last_cached = work.last_event, result.plan.cached_messages
        if work.before_event is not None:
            self._before_event = work.before_event

    def _plan(self, history: Sequence[Message], call: int | None, w: Work) -> tuple[Work, CompactResult]:
        call = call if call is not None else w.state.calls + 1
        if self._replaced(w, history):  # /clear: a new conversation (no compaction event: nothing was compacted)
            w.tokens.clear()
            w.state = CompactState(summary_failures=w.state.summary_failures, learned_window=w.state.learned_window)
            w.facts, w.layout, w.last_event = Facts(self.tool_rerunnable), Layout(), None
        learned = w.state.learned_window  # what a "prompt is too long" taught holds until /model sets another
        w.state = w.state.evolve(calls=call, learned_window=learned if learned == self.policy.context_window else None)
        first_change = prev_out = len(w.layout.out)  # the previous request (what the cache holds)
        w.facts.sync(history)
        n = len(history)
        newest = newest_round_start(history)
        relayout = False
        if self.enabled and w.state.dirty:
            w.state = tiers.apply_user_changes(w.state, w.view(history, self.policy, newest, call))
            relayout = True
        pending = w.state.pending
        asked = any(kind in pending for kind in ("drop", "summary", "idle"))  # /compact, or the idle policy's
        forced = asked or "reactive" in pending  # or "prompt is too long"
        cold = "cold" in pending and self.policy.cold_event  # the cache went cold: an event writes nothing extra
        kinds: list[EventKind] = [k for k in dict.fromkeys(pending) if k not in ("drop", "summary", "cold", "postpone", "idle")]  # type: ignore[misc]
        old_n, w.state = w.state.history_len, w.state.evolve(pending=(), history_len=n)
        for i in range(old_n, n):  # new messages join the request
            w.layout.append(w.state, history, w.facts, w.tokens, i)
        if not self.enabled:
            return w, self._result(w, history, call, None, first_change, "off")
        sent_before = frozenset(w.layout.pos)  # the append-only request: an event's loss report is its diff
        before = w.tokens.estimate()
        if relayout:
            first_change = min(first_change, steps.relayout(w, history, self.policy))
        hold = w.state.hold_until
        # an undone event holds: nothing sent changes (not even a cut on read: the undo promised "no event
        # until ≈N", and the next call was one) until the request passes the hold, /compact, or the window
        holding = hold is not None and not forced and w.tokens.estimate() - transient(
            w.state, w.view(history, self.policy, newest, call)) <= hold
        changed = None if holding else steps.cut_read(w, history, self.policy, newest, call, prev_out)
        if changed is not None:
            kinds.append("cut")
            first_change = min(first_change, changed)
        reason = "your pins, excludes or expands" if relayout else ""
        high = self.policy.high_tokens
        over = w.tokens.estimate() - transient(w.state, w.view(history, self.policy, newest, call))
        cold = cold and over > self.policy.cold_mark_tokens and not forced
        postponed = "postpone" in pending and not forced  # the user postponed this call's event (`postpone`)
        held = holding or postponed
        if hold is not None and not holding:
            w.state = w.state.evolve(hold_until=None)
        tried = not held and (over > high or forced or cold)
        if tried:
            reason, why, target, policy = event_terms(self.policy, asked, forced, cold and over <= high, relayout,
                                                      w.tokens.estimate(), "idle" in pending, w.tokens.baseline)
            event_kinds, changed = steps.event(w, history, policy, newest, call, target, why, asked)
            kinds += event_kinds
            first_change = min(first_change, changed)
            if asked and "drop" in kinds and "summary" in pending:
                kinds.append("summary")  # /compact asks for the summary of what it dropped
        if w.tokens.estimate() > self.policy.effective_window:
            event_kinds, changed = steps.fit_window(w, history, self.policy, newest, call)
            kinds += event_kinds
            first_change = min(first_change, changed)
            reason = reason or f"over the {budget_words(self.policy)}"
        if kinds and not forced and w.tokens.estimate() > high:
            reason += still_over(w.view(history, self.policy, newest, call))
        event = None
        if kinds:
            event = make_event(w.state, w.facts, w.layout, self.policy, history, call, kinds,
                               reason or "already read", before, w.tokens.estimate(), sent_before, w.touched)
            if event.major:
                w.last_event = event
        result = self._result(w, history, call, event, first_change)
        if (event is None or not event.major) and w.tokens.estimate() > high:  # the meter's "passed the mark"
            why = quiet_reason(hold if held and not postponed else None, tried, over > high, postponed,
                               still_over(w.view(history, self.policy, newest, call)))
            result = CompactResult(result.messages, replace(result.plan, quiet_reason=why))
        return w, result

    def _result(self, w: Work, history: Sequence[Message], call: int, event: CompactEvent | None,
                first_change: int, mode: str = "v2") -> CompactResult:
        return w.layout.result(w.state, history, w.facts, w.tokens, self.policy, call, event, w.last_event,
                               first_change, mode, self.summary_enabled)

    def _replaced(self, w: Work, history: Sequence[Message]) -> bool:
        if w.state.replaced or len(history) < w.state.history_len:
            return True
        return bool(history) and w.state.history_len > 0 and history[0] is not w.facts.first

    # -- summary tier ---------------------------------------------------------------------------
    def attach_summary(self, history: Sequence[Message], text: str | None, call: int | None = None) -> CompactResult:
        """Put the model's summary of the dropped span into the recap (None: the summary call failed)."""
        call = call if call is not None else self.state.calls
        w, previous = self._work(), self.last_event
        # the state holds what its layout holds: over a shorter history the rest joins at the next call
        w.state = w.state.evolve(history_len=min(w.state.history_len, len(history)))
        cached = min(self._last_cached, len(self.layout.out))
        if not text:
            w.state = w.state.evolve(summary_failures=w.state.summary_failures + 1)
            result = self._result(w, history, call, previous, cached)
            self._keep(w, result)
            return result
        w.state = w.state.evolve(summary_failures=0, summary=text.strip(), recap_call=call, recap_mark=RECAP_MARK)
        first_change = min(steps.relayout(w, history, self.policy), cached)
        after = w.tokens.estimate()
        if previous is not None and previous.call == call:  # the same event, now with its summary
            event = replace(previous, kinds=tuple(dict.fromkeys(previous.kinds + ("summary",))), tokens_after=after)
        else:
            event = make_event(w.state, w.facts, w.layout, self.policy, history, call, ["summary"],
                               "summary of the dropped part", after, after, frozenset(w.layout.pos), set())
        w.last_event = event
        result = self._result(w, history, call, event, first_change)
        self._keep(w, result)
        return result

    def summary_context(self) -> tuple[list[Message], int]:
        """(the request as it stood before the last event, how many messages that event dropped)."""
        dropped = self.last_event.dropped if self.last_event is not None else 0
        return list(self._before_event or self.layout.out), dropped

    # -- persistence (`saved_state.py`) ----------------------------------------------------------
    def export_state(self) -> dict:
        return export_state(self)

    def import_state(self, history: Sequence[Message], data: Mapping[str, Any]) -> str | None:
        return import_state(self, history, data)
