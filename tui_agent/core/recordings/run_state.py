"""A strategy run between two calls, as data (`RunState`): what a replay's checkpoint keeps of each run, so
a far jump goes on from the nearest one instead of from call 0.

Its own concept because it is kept, not run: a watch holds dozens of these for hours, so what grows with
the session is not copied into each (the compactor's export zlib-compressed, the per-call figures as a
count of the run's own append-only list). `economics.StrategyRun.state()` makes one and
`StrategyRun.resume()` goes on from one exactly as the run would have.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from tui_agent.core.messages import Message
from tui_agent.core.recordings.strategy_result import PerCall, StrategyResult


@dataclass(frozen=True)
class RunState:
    """A `StrategyRun` between two calls, as data: the compactor's exported state (JSON, `export_state`)
    and the run's accumulators. `StrategyRun.resume` makes a run that goes on exactly as this one would."""

    k: int  # the next call to run
    compactor: bytes | None  # the compactor's export_state(), JSON zlib-compressed (None: the append-only one)
    # the accumulators, but for `times`: wall-clock seconds of the frontier run's compactions, which the
    # report reads; a step made again from a checkpoint measures its own and is never reported
    result: StrategyResult
    previous: tuple[Message, ...]  # the previous request (its prefix is what the next one reads from cache)
    previous_upto: int = 0  # or, for the append-only conversation, the history up to here (its length only)
    per_call_upto: int = 0  # `result.per_call` as its length: the first items of the run's own list
    previous_tokens: float = 0.0  # the previous request's size (what a ping before the next call reads)


def copy_result(result: StrategyResult, times: list[float] | None = None,
                 per_call: list[PerCall] | None = None) -> StrategyResult:
    return replace(result, times=list(result.times) if times is None else times, coverage=replace(result.coverage),
                   per_call=list(result.per_call) if per_call is None else per_call,
                   coverage_recap=replace(result.coverage_recap))
