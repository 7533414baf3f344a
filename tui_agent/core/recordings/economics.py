"""Replay a recorded session call by call through compaction strategies and price each request.

Used by `bench/economics.py` and `tui-agent replay FILE --report`. For every recorded model call (an
assistant message in the loaded transcript), each strategy is asked for the request it would send with
the history before that message. A request is priced with Anthropic's caching prices in units of one
uncached input token: the longest message prefix identical to the strategy's previous request is read
from the cache (0.1), the rest is written (1.25); the first call is all written. The append-only
conversation (`none`) never changes its prefix: it is the physical limit of the price per prompt token.

Token counts come from one linear model per session, fitted to the recorded real usage
(real ≈ baseline + ratio × chars/4), so every strategy is measured with the same ruler. Which strategies
there are, by name, and the policy a replay runs them under are `strategy_table.py`.
"""

from __future__ import annotations

import json
import time
import zlib
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Callable, Sequence

from tui_agent.core.idle import PRIOR, IdleSizes, Returns
from tui_agent.core.compaction import CompactorProtocol, CompactPlan, CompactPolicy
from tui_agent.core.compaction.memo import MessageMemo
from tui_agent.core.recordings.counted import ThinkingMemo, turn_thinking_split
from tui_agent.core.recordings.coverage import IdentifierIndex, future_identifiers
from tui_agent.core.recordings.idle_replay import NO_WAIT, IdleOutcome, IdleReplay
from tui_agent.core.recordings.run_state import RunState, copy_result
from tui_agent.core.recordings.strategy_result import StrategyResult
from tui_agent.core.recordings.strategy_table import STRATEGIES, default_policy, idle_mode, make_strategy
from tui_agent.core.models import CLASSIC, CachePrice
from tui_agent.core.messages import Message
from tui_agent.core.request_check import RequestCheck
from tui_agent.core.recordings.replay_checks import SessionMemo, common_prefix, newest_intact, required_memory
from tui_agent.core.recordings.recorded import Recorded
from tui_agent.core.recordings.text_presence import TextPresence

if TYPE_CHECKING:
    from tui_agent.core.recordings.peers import Peer, PeerPlan

@dataclass(frozen=True)
class CallPrice:
    """One strategy's request for one recorded call, and what it costs (units of one uncached input token)."""

    messages: list[Message]
    plan: "CompactPlan | PeerPlan | None"  # the compactor's or a peer's (None for the append-only conversation)
    tokens: float  # the request's size on the session's fitted ruler
    cached: float  # the part read from the cache (the prefix shared with this strategy's previous request)
    cost: float
    wait: IdleOutcome = NO_WAIT  # how the session spent the wait before this call (pings, idle event, prices)


class StrategyRun:
    """One strategy stepping through the recorded calls in order, accumulating its `StrategyResult`.

    `replay` runs it to the end for the table; `core.replay` steps several in lockstep, one call at a
    time, so a face can show the running cost of each strategy at every call with the very same numbers.
    """

    def __init__(self, name: str, recorded: Recorded, policy: CompactPolicy, compactor: "CompactorProtocol | Peer | None",
                 required: list[tuple[list[tuple[str, ...]], list[str]]] | None = None,
                 future: list[frozenset[str]] | None = None, price: CachePrice = CLASSIC, *,
                 entities: IdentifierIndex | None = None, check: RequestCheck | None = None,
                 texts: MessageMemo | None = None, sent: SessionMemo | None = None) -> None:
        self.name, self.recorded, self.policy, self.compactor = name, recorded, policy, compactor
        self.required = required
        self.future = future  # per call: the entities the agent's next replies use (`core.coverage`)
        # per-message memos, shared by the runs of one session (their requests share most messages)
        self._entities = entities or IdentifierIndex(recorded.history)
        self._check = check or RequestCheck()
        self._texts = texts or MessageMemo()
        self._presence = TextPresence(self._texts.text)  # this run's own: it reads its previous request
        self.price = price
        self.result = StrategyResult(name)
        self.k = 0  # the next call to run
        self._previous: list[Message] = []
        # the previous request's running size sums: [0, size of message 0, + size of message 1, …] (not in a
        # RunState); kept and extended in place, so a call adds only its new messages, never a whole re-sum
        self._sums: list[int] = [0]
        self._sent = sent or SessionMemo()  # each sent message's size and cache key: requests repeat them
        # the per-call lists (`result.times`, `result.per_call`) are what a report reads; a watch, which
        # never reports, turns them off so that a run does not grow by a few hundred bytes a call for hours
        self.keeps_per_call = True
        # the request check's lane: the frontier run's own (a run made again from a checkpoint uses another,
        # so the frontier's lane holds only its own previous request)
        self.lane: object = name
        # how the session waits between calls and after the last (`idle_replay.py`; set by `strategy_runs`):
        # the append-only conversation and the peers never ping unless named `…+warm`
        self.idle = IdleReplay(recorded, price)
        self._previous_tokens = 0.0  # the previous request's size: what a ping reads
        # each message's thinking where the model leaves earlier turns' thinking out (`counted.py`)
        self._thinking = (ThinkingMemo.of(recorded.history, recorded.thinking)
                          if not recorded.keeps_thinking and any(recorded.thinking) else None)

    def state(self) -> RunState:
        """This run between two calls, as data (a replay keeps one every few calls: `core.replay`).

        A watch keeps dozens of these for hours, so what grows with the session is not copied into each:
        the compactor's export (its per-block decisions) is kept zlib-compressed, and the per-call figures
        as their count (this run's own list is append-only: `resume` takes its first `per_call_upto`)."""
        exported = self.compactor.export_state() if self.compactor is not None else None  # type: ignore[attr-defined,union-attr]
        previous: tuple[Message, ...]
        if self.compactor is None:  # the append-only request is the history up to the call: kept as its length
            previous, upto = (), len(self._previous)
        else:
            previous, upto = tuple(self._previous), 0
        # (without the compaction times: a checkpoint per few calls would copy one per call made)
        result = copy_result(self.result, times=[], per_call=[])
        packed = None if exported is None else zlib.compress(json.dumps(exported).encode(), 1)
        return RunState(self.k, packed, result, previous, upto, len(self.result.per_call), self._previous_tokens)

    def resume(self, state: RunState, compactor: "CompactorProtocol | Peer | None") -> StrategyRun:
        """A run like this one (same session, checks and memos) that goes on from `state`, with `compactor`
        (a fresh one of the same strategy) restored from the state's export. Raises ValueError when the
        compactor refuses it."""
        run = StrategyRun(self.name, self.recorded, self.policy, compactor, self.required, self.future, self.price,
                          entities=self._entities, check=self._check, texts=self._texts, sent=self._sent)
        run.keeps_per_call, run.lane = self.keeps_per_call, (self.name, "made again")
        run.idle = self.idle.at(state.k)
        if compactor is not None and state.compactor is not None:
            upto = self.recorded.calls[state.k - 1] if state.k else 0
            data = json.loads(zlib.decompress(state.compactor))
            warning = compactor.import_state(self.recorded.history[:upto], data)  # type: ignore[attr-defined,union-attr]
            if warning:
                raise ValueError(warning)
        run.k, run.result = state.k, copy_result(state.result, per_call=self.result.per_call[:state.per_call_upto])
        run._previous = list(state.previous) or self.recorded.history[:state.previous_upto]
        run._previous_tokens = state.previous_tokens
        return run

    def step(self) -> CallPrice:
        """Run the next recorded call; raises IndexError past the last one."""
        recorded, result, compactor, k = self.recorded, self.result, self.compactor, self.k
        index = recorded.calls[k]
        model = recorded.model
        prefix = recorded.history[:index]
        started = time.perf_counter()
        wait = self.idle.before(k, self._previous_tokens, lambda: self._idle_sizes(prefix, k + 1),
                                self.result.cost) if k else NO_WAIT
        idle = wait.idle
        if compactor is None:
            messages = prefix
            plan = None
        else:
            waited = getattr(compactor, "waited", None)
            if waited is not None:  # a peer that acts on how long the session waited (`cc-idle`)
                waited(self.recorded.gap(k) if k else None)
            if wait.compacted is not None and hasattr(compactor, "request_event"):
                compactor.request_event("drop")  # the event the session made while it waited
            elif k and self.price.expired(idle) and hasattr(compactor, "cache_expired"):
                compactor.cache_expired()  # what a live session's cache clock tells its compactor
            compacted = compactor.compact(prefix, k + 1)  # the call number is the caller's (one counter)
            messages, plan = compacted.messages, compacted.plan
        if self.keeps_per_call:
            result.times.append(time.perf_counter() - started)
        if plan is not None and plan.event is not None and plan.event.major:
            result.events += 1
        said = len(self._previous) if compactor is None else getattr(plan, "cached_messages", 0)
        # the append-only request is a longer slice of the history than the previous one: its head is sure
        cached_n = common_prefix(self._previous, messages, self._sent.key, said, sure=compactor is None)
        self._previous = messages
        sums = self._running_sums(messages, cached_n)
        # the thinking the API still counts (the turn in progress) where the model leaves earlier turns' out
        extra, extra_cached = turn_thinking_split(messages, self._thinking, cached_n) if self._thinking else (0, 0)
        total = model.request(sums[len(messages)] + extra)
        if compactor is not None:
            compactor.observe_usage(round(total))
        warm = model.request(sums[cached_n] + extra_cached) if k else 0.0
        if wait.compacted is not None:  # the idle event's request was written then: this call reads it
            warm = min(wait.compacted, total)
        if k == 0:
            cached = 0.0
        elif self.price.expired(idle):  # the whole prefix went cold: written again in full
            cached = 0.0
            result.expired += 1
        else:
            cached = warm
        made = self._summary_call(compactor)
        cost = self.price.cost(total, cached) + self._summary_cost(made, k, idle) + wait.cost
        result.pings += wait.pings
        self._previous_tokens = total
        if self.keeps_per_call:
            result.per_call.append((total, warm, *(made or (0.0, 0.0)), wait.pings, idle, wait.reads,
                                    wait.compacted or 0.0))
        result.calls += 1
        result.tokens += total
        result.cost += cost
        result.cached += cached
        result.peak = max(result.peak, total)
        result.over_window += total > self.policy.context_window
        result.invalid += not self._check.valid(messages, lane=self.lane, grows=compactor is None and self.lane == self.name)
        result.newest_intact += newest_intact(prefix, messages)
        if self.required is not None and compactor is not None:  # the whole history holds everything
            prompts, paths = self.required[k]
            pieces = [piece for prompt in prompts for piece in prompt]  # a prompt of several blocks: each
            missing = self._presence.missing(messages, cached_n, [*pieces, *paths])
            at = 0
            for prompt in prompts:  # found when each of its blocks is found
                result.prompts_missing += any(missing[at:at + len(prompt)])
                at += len(prompt)
            result.paths_missing += sum(missing[len(pieces):])
        if self.future is not None:
            wanted = self.future[k]
            # the append-only request is the history before the call, where every wanted entity was seen
            own = len(wanted) if compactor is None else self._entities.present(wanted, messages, recap=False)
            result.coverage.add(len(wanted), own)
            with_recap = own if own == len(wanted) else self._entities.present(wanted, messages, recap=True)
            result.coverage_recap.add(len(wanted), with_recap)
        self.k += 1
        return CallPrice(messages, plan, total, cached, cost, wait)

    def finish(self) -> None:
        """After the last call: the wait that never ends (the person left). A live session still pings until
        its idle policy stops; those pings are priced here (`result.tail`), once."""
        if self.k < len(self.recorded.calls) or self.result.tail != (0, 0.0, 0.0) or not self.k:
            return
        history = self.recorded.history
        wait = self.idle.tail(self._previous_tokens, lambda: self._idle_sizes(history, self.k + 1), self.result.cost)
        self.result.tail = (wait.pings, wait.reads, wait.compacted or 0.0)
        self.result.tail_cost = wait.cost
        self.result.cost += wait.cost
        self.result.pings += wait.pings
        self.result.idle_choices = dict(self.idle.decisions)

    def _idle_sizes(self, history: Sequence[Message], call: int) -> IdleSizes:
        """The requests the idle policy chooses between: the last one (what a ping reads), what the next call
        would write once the cache is cold, and what an event now would send (the compactor's what-ifs)."""
        prefix, compactor = self._previous_tokens, self.compactor
        what_if = getattr(compactor, "preview_with", None)
        if what_if is None:
            return IdleSizes(prefix, prefix, prefix)
        cold = what_if(history, ("cold",), call).plan.estimated_tokens
        compacted = what_if(history, ("drop",), call).plan.estimated_tokens
        return IdleSizes(prefix, min(cold, prefix), min(compacted, prefix))

    def seed_sizes(self, messages: Sequence[Message], estimates: Sequence[int]) -> None:
        """`SessionMemo.seed`: the sizes a growing log's load measured of its new messages."""
        self._sent.seed(messages, estimates)

    def _running_sums(self, messages: list[Message], cached_n: int) -> list[int]:
        """`messages`' running size sums (`sums[i]`: the first i messages), made from the previous request's:
        its first `cached_n` messages are the same (byte for byte), so their sums stand and only the rest
        is sized and added. A long session's call costs what it adds, not its whole length again."""
        sums, size = self._sums, self._sent.size
        del sums[min(cached_n, len(sums) - 1) + 1:]
        total = sums[-1]
        for message in messages[len(sums) - 1:]:
            total += size(message)
            sums.append(total)
        return sums

    def _summary_call(self, compactor: object) -> tuple[float, float] | None:
        """A summary call the strategy made before this call (a peer's at its event): (tokens read, written)."""
        take = getattr(compactor, "take_summary_call", None)
        made = take() if take is not None else None
        self.result.summary_calls += made is not None
        return made

    def _summary_cost(self, made: tuple[float, float] | None, k: int, idle: float | None) -> float:
        """A summary call reads the previous request (from the cache unless it went cold) and writes its
        summary at the output price."""
        if made is None:
            return 0.0
        read_tokens, output_tokens = made
        made_after = getattr(self.compactor, "summary_idle", None)  # a summary made while the session waited
        if made_after is not None:
            self.compactor.summary_idle, idle = None, min(made_after, idle or made_after)  # type: ignore[union-attr]
        cold = k == 0 or self.price.expired(idle)
        return self.price.cost(read_tokens, 0.0 if cold else read_tokens) + self.price.output * output_tokens


def strategy_runs(recorded: Recorded, strategies: Sequence[str] = STRATEGIES, policy: CompactPolicy | None = None,
                  *, check_memory: bool = True, factories: dict[str, Callable[[], "CompactorProtocol | Peer | None"]] | None = None,
                  price: CachePrice = CLASSIC, prior: Returns = PRIOR) -> dict[str, StrategyRun]:
    """A fresh `StrategyRun` per strategy, each at call 0; the compactors price their cuts at `price`
    (what a live session's compactor does at its model's prices)."""
    policy = replace(policy or default_policy(), cache_read=price.read, cache_write=price.write)
    model = recorded.model
    baseline_estimate = round(model.baseline / model.ratio)
    required = required_memory(recorded) if check_memory else None
    entities, check, texts, sent = IdentifierIndex(recorded.history), RequestCheck(), MessageMemo(), SessionMemo(recorded)
    future = future_identifiers(recorded.history, recorded.calls, known=entities) if check_memory else None
    out: dict[str, StrategyRun] = {}
    for name in strategies:
        compactor = factories[name]() if factories and name in factories else make_strategy(
            name, policy, baseline_estimate, model)
        out[name] = run = StrategyRun(name, recorded, policy, compactor, required, future, price, entities=entities,
                                      check=check, texts=texts, sent=sent)
        run.idle = IdleReplay(recorded, price, idle_mode(name), prior)
    return out


def replay(recorded: Recorded, strategies: Sequence[str] = STRATEGIES, policy: CompactPolicy | None = None,
           *, check_memory: bool = True, factories: dict[str, Callable[[], "CompactorProtocol | Peer | None"]] | None = None,
           price: CachePrice = CLASSIC, prior: Returns = PRIOR) -> dict[str, StrategyResult]:
    """Run each strategy over the recorded calls; `check_memory` counts prompts/paths missing and the
    future-entity coverage (slower)."""
    out: dict[str, StrategyResult] = {}
    for name, run in strategy_runs(recorded, strategies, policy, check_memory=check_memory,
                                   factories=factories, price=price, prior=prior).items():
        for _ in recorded.calls:
            run.step()
        run.finish()
        out[name] = run.result
    return out
