"""A recorded session ready to replay: its history, its model calls and what each really cost.

Why apart from the pricing (`core.economics`): loading a log and fitting its token ruler is what a replay,
a watch and the economics table read alike, and a watch grows it as the log grows (`recorded_transcript`
with the previous load) without running any strategy. Two sources: a Claude Code JSONL log (the calls are
its assistant messages that carry usage) and one of our journals (each call record knows its history
length). Token counts come from one linear model per session, fitted to the recorded real usage
(real ≈ baseline + ratio × chars/4), so every strategy is measured with the same ruler.
"""

from __future__ import annotations

import statistics
from collections import Counter
from bisect import bisect_left
from dataclasses import dataclass, field
from itertools import accumulate
from pathlib import Path
from typing import Callable, Sequence

from tui_agent.core import tokens as tk
from tui_agent.core.messages import Message
from tui_agent.core.models import keeps_earlier_thinking
from tui_agent.core.request_check import identical_head
from tui_agent.core.recordings.transcripts import TranscriptLoad


@dataclass(frozen=True)
class TokenModel:
    """real tokens ≈ baseline + ratio × chars/4 estimate, fitted on one session's recorded calls."""

    baseline: float
    ratio: float

    def request(self, message_estimate: float) -> float:
        return self.baseline + self.ratio * message_estimate


@dataclass
class Recorded:
    """One session ready to replay: its history, the calls, and the real usage of each call."""

    name: str
    history: list[Message]
    calls: list[int]  # history index of each call's reply (the request is history[:index])
    real: list[int]  # recorded real input size of each call
    segment_start: list[int]  # where the recorded agent's own request began (after its compactions)
    model: TokenModel
    estimates: list[int] = field(default_factory=list)  # chars/4 of each history message
    skipped_lines: int = 0
    usage: list[dict[str, int]] = field(default_factory=list)  # the logged usage of each call
    summaries: list[int] = field(default_factory=list)  # history indices of the agent's own summaries
    boundaries: list[int] = field(default_factory=list)  # where the agent compacted (compact_boundary)
    models: dict[int, str] = field(default_factory=dict)  # history index → the model that wrote it
    journal: object | None = None  # the `JournalLoad`, when the file is one of our journals
    # per call: `real` is usage the provider reported (False: our own estimate stood in, e.g. the demo
    # model's journal; nothing to measure an estimator against). Empty: every call was measured.
    measured: list[bool] = field(default_factory=list)
    times: list[float | None] = field(default_factory=list)  # when each call was logged (None: unknown)
    # the thinking tokens of each history message, and whether the session's model counts earlier turns'
    # thinking (`counted.py`): when it does not, `estimates` leave thinking out and each request adds back
    # the thinking of its own turn in progress
    thinking: list[int] = field(default_factory=list)
    keeps_thinking: bool = True
    # per call: the API's logged reason its cache missed (type, tokens missed), None when the log says none
    miss_reasons: list[tuple[str, int | None] | None] = field(default_factory=list)

    def sent_estimates(self) -> Sequence[int]:
        """Each message's chars/4 size as it is sent, its thinking included (what a live session's own
        estimator sees before the API counts: `estimates` leave thinking out where the API does)."""
        if self.keeps_thinking:
            return self.estimates
        return _Sent(self.estimates, self.thinking)

    def miss_reason(self, k: int) -> tuple[str, int | None] | None:
        """Why the API said call k's cache missed, when the log holds it."""
        return self.miss_reasons[k] if k < len(self.miss_reasons) else None

    def is_measured(self, k: int) -> bool:
        return not self.measured or self.measured[k]

    def gap(self, k: int) -> float | None:
        """Seconds between call k-1 and call k (None when either time is unknown)."""
        if k <= 0 or k >= len(self.times) or self.times[k] is None or self.times[k - 1] is None:
            return None
        return self.times[k] - self.times[k - 1]  # type: ignore[operator]


class _Sent(Sequence[int]):
    """`estimates[i] + thinking[i]`, read on demand (a long session's list is not copied at each step)."""

    def __init__(self, estimates: list[int], thinking: list[int]) -> None:
        self.estimates, self.thinking = estimates, thinking

    def __len__(self) -> int:
        return len(self.estimates)

    def __getitem__(self, i):  # type: ignore[override]
        if isinstance(i, slice):
            return [e + t for e, t in zip(self.estimates[i], self.thinking[i])]
        return self.estimates[i] + self.thinking[i]


def load_recorded(path: str | Path, fit_calls: int | None = None) -> Recorded:
    """A Claude Code JSONL log, or one of our session journals (told apart by its header record).
    `fit_calls`: fit the token ruler on the first calls only (`tui-agent watch` fixes its ruler early)."""
    if is_journal(path):
        return _recorded_journal(path)
    from tui_agent.core.recordings.codex_logs import load_log  # a Claude Code log or a Codex rollout

    return recorded_transcript(load_log(path), Path(path).name, fit_calls)


def recorded_transcript(load: TranscriptLoad, name: str, fit_calls: int | None = None,
                        previous: Recorded | None = None) -> Recorded:
    """A loaded Claude Code log ready to replay; the ruler is fitted on its first `fit_calls` calls
    (all of them when None). `previous`: an earlier load of the same growing log (`tui-agent watch`),
    whose estimates stand for the messages that are the very same objects (a growth measures only what
    it adds)."""
    history = load.history
    same = 0
    if previous is not None:
        old = previous.history
        limit = min(len(old), len(history), len(previous.estimates))
        same = identical_head(old[:limit], history)  # in C: a long watch's growth walked every message here
    keeps = keeps_earlier_thinking(_main_model(load.message_models))
    thinking = previous.thinking[:same] if previous is not None else []
    thinking += [tk.thinking_tokens(m) for m in history[same:]]
    estimates = previous.estimates[:same] if previous is not None else []
    estimates += [tk.message_tokens(m) - (0 if keeps else t) for m, t in zip(history[same:], thinking[same:])]
    summaries = sorted(load.compaction_summaries)
    # the calls answered by a message that is the same object as before are the same calls (a summary
    # logged since lands after them): only the calls after those are read again
    kept = bisect_left(previous.calls, same) if previous is not None else 0
    calls, real, starts = (list(previous.calls[:kept]), list(previous.real[:kept]),
                           list(previous.segment_start[:kept])) if previous is not None else ([], [], [])
    usages = list(previous.usage[:kept]) if previous is not None else []
    times = list(previous.times[:kept]) if previous is not None else []
    reasons = list(previous.miss_reasons[:kept]) if previous is not None else []
    for index, usage in load.call_usage[bisect_left(load.call_usage, same, key=lambda c: c[0]) if kept else 0:]:
        total = _input_total(usage)
        if total <= 0 or index == 0:
            continue
        before = bisect_left(summaries, index)  # the last summary before the call's reply
        start = summaries[before - 1] if before else 0
        calls.append(index)
        real.append(total)
        starts.append(start)
        usages.append(usage)
        times.append(load.call_times.get(index))
        reasons.append(load.call_miss_reasons.get(index))
    fit_on = len(calls) if fit_calls is None else max(fit_calls, 1)
    # the ruler is fitted on the calls before the recorded agent's first own compaction (its requests are
    # the history itself there); a log that compacted almost at once is fitted on all its segments
    whole = [k for k in range(min(fit_on, len(calls))) if starts[k] == 0]
    chosen = whole if len(whole) >= MIN_FIT_CALLS else list(range(min(fit_on, len(calls))))
    cumulative = [0, *accumulate(estimates[:max((calls[k] for k in chosen), default=-1) + 1])]
    turn = _turn_thinking(history, thinking, keeps)
    model = _fit([cumulative[calls[k]] - cumulative[starts[k]] + turn(starts[k], calls[k]) for k in chosen],
                 [real[k] for k in chosen])
    return Recorded(name, history, calls, real, starts, model, estimates, load.skipped_lines,
                    usages, summaries, sorted(load.compaction_boundaries), load.message_models, times=times,
                    thinking=thinking, keeps_thinking=keeps, miss_reasons=reasons)


def _main_model(written_by: dict[int, str]) -> str | None:
    """The model that wrote most of a session's replies (whose thinking rule its requests follow)."""
    if not written_by:
        return None
    counts = Counter(written_by.values())  # counted in C: a watch's growth runs no line per message
    return max(sorted(counts), key=counts.__getitem__)


def _turn_thinking(history: list[Message], thinking: list[int], keeps: bool) -> Callable[[int, int], int]:
    """(start, index) → the thinking of the turn in progress in `history[start:index]` when the model leaves
    earlier turns' thinking out (0 otherwise: it is in the estimates already)."""
    if keeps or not any(thinking):
        return lambda start, index: 0
    from tui_agent.core.recordings.counted import ThinkingMemo, turn_thinking

    memo = ThinkingMemo.of(history, thinking)
    return lambda start, index: turn_thinking(history, memo, start, index)


MIN_FIT_CALLS = 8  # fewer calls before the first own compaction: fit on every segment


def _input_total(usage: dict[str, int]) -> int:
    return usage.get("input_tokens", 0) + usage.get("cache_creation_input_tokens", 0) + usage.get(
        "cache_read_input_tokens", 0)


def is_journal(path: str | Path) -> bool:
    """True when the first record of `path` is a tui-agent journal header."""
    import json

    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            for line in handle:
                if line.strip():
                    record = json.loads(line)
                    return isinstance(record, dict) and record.get("type") == "header"
    except (OSError, ValueError):
        return False
    return False


def _recorded_journal(path: str | Path) -> Recorded:
    """Our own journal: each `call` record knows its history length, its usage record the real size.
    The agent (tui-agent itself) compacted by its own plans, so no request is a contiguous segment: the
    ruler is fitted on the calls that sent every message (all calls when none did)."""
    from tui_agent.core.journal.reader import read_journal

    load = read_journal(Path(path))
    history = load.history
    keeps = keeps_earlier_thinking(load.model)
    thinking = [tk.thinking_tokens(m) for m in history]
    estimates = [tk.message_tokens(m) - (0 if keeps else t) for m, t in zip(history, thinking)]
    cumulative = [0]
    for e in estimates:
        cumulative.append(cumulative[-1] + e)
    calls, real, usages, whole, measured = [], [], [], [], []
    for record in load.calls:
        usage = record.usage
        if not 0 < record.history_len <= len(history):
            continue
        if usage is None:  # a provider that reports no usage (the demo model): its own estimate stands in
            numbers, total = {}, record.estimated_tokens
        else:
            numbers = {"input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens,
                       "cache_creation_input_tokens": usage.cache_creation_input_tokens,
                       "cache_read_input_tokens": usage.cache_read_input_tokens}
            total = _input_total(numbers)
        if total <= 0:
            continue
        calls.append(record.history_len)
        real.append(total)
        usages.append(numbers)
        measured.append(usage is not None)
        whole.append(not record.dropped and record.event is None)
    fit_on = [k for k, w in enumerate(whole) if w] or list(range(len(calls)))
    turn = _turn_thinking(history, thinking, keeps)
    model = _fit([cumulative[calls[k]] + turn(0, calls[k]) for k in fit_on], [real[k] for k in fit_on])
    return Recorded(Path(path).name, history, calls, real, [0] * len(calls), model, estimates,
                    len(load.warnings), usages, journal=load, measured=measured, thinking=thinking,
                    keeps_thinking=keeps)


def _fit(xs: Sequence[int], ys: Sequence[int]) -> TokenModel:
    if len(xs) < 2:
        return TokenModel(float(ys[0]) * 0.5 if ys else 0.0, 1.0)
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    var = sum((x - mx) ** 2 for x in xs)
    ratio = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / var if var else 1.0
    ratio = min(max(ratio, 0.5), 3.0)
    return TokenModel(max(my - ratio * mx, 0.0), ratio)
