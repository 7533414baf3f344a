"""A replay of a Claude Code log that is still being written: `tui-agent watch`'s engine.

The lines `core.follow` reads are folded as they come by one `TranscriptReader` (the loader replay uses:
each load says what a parse of the whole log so far says, but a growth folds and measures only the lines it
adds), and the calls they hold are stepped by the very `Replay` that `tui-agent replay` runs, so a watch
and a replay of the finished file cannot disagree on how a log is read or compacted. The lines themselves
are not kept: memory holds the log's messages once, not its text beside them.

The token ruler. Replay fits one linear model (real ≈ baseline + ratio × chars/4) on every call of the
file; a watch cannot know the calls to come, and refitting as it grows would change every figure already
shown (and, since our compactor reads its own request sizes on that ruler, every decision after). So the
watch's ruler is fitted on the first `FIT_CALLS` calls and then fixed: until that many calls exist the
figures are provisional (each growth refits them; `ready()` hands none out) and from then on every call's
figures are final the moment it is written. `tui-agent replay FILE --json --fit-calls 8` on the finished
file gives the same figures; a session that ends before call 8 is flushed (`flush()`) on its ruler of
the calls there, which is what `--fit-calls 8` fits too.

Growth keeps the steps already made: the new parse must agree with the old one on everything those
steps read (the history before the last stepped call's reply, and each call's index, usage and time);
it then replaces only what lies after, so the sticky compactors go on from where they were. When it
does not agree (a rewrite the follower could not see) the replay starts again from the first call.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tui_agent.core.compaction import CompactPolicy
from tui_agent.core.recordings.recorded import Recorded, recorded_transcript
from tui_agent.core.recordings.follow import Batch
from tui_agent.core.messages import to_json
from tui_agent.core.request_check import identical_head
from tui_agent.core.recordings.replay import (
    REPLAY_STRATEGIES,
    Replay,
    ReplayStep,
    agent_compactions,
    replay_of,
)
from tui_agent.core.recordings.transcripts import TranscriptLoad
from tui_agent.core.recordings.codex_logs import LogReader

FIT_CALLS = 8
# A watch runs for hours: its replay keeps only the newest steps (a face keeps what it shows itself, the
# `--json` path prints each step once) and a bounded number of checkpoints, thinned as the log grows.
KEEP_STEPS = 32
MAX_CHECKPOINTS = 64  # over 10,000 calls: one per 200 calls at most, so a step made again replays <= 200


@dataclass
class LiveReplay:
    """The replay of the log at `path` as far as it has been read; `feed` it the follower's batches."""

    path: Path
    policy: CompactPolicy | None = None
    strategies: Sequence[str] = REPLAY_STRATEGIES
    fit_calls: int = FIT_CALLS
    replay: Replay | None = None
    load: TranscriptLoad | None = None
    reader: LogReader = field(default_factory=LogReader)  # a Claude Code log or a Codex rollout
    handed: int = 0  # calls handed out as final by `ready` / `flush`
    unreadable: int = 0  # lines the follower could not read
    resets: int = 0  # the file was truncated or replaced and read again from its start
    restarts: int = 0  # a new parse disagreed with the steps made: replayed again from call 1

    @property
    def calls(self) -> int:
        return self.replay.calls if self.replay is not None else 0

    @property
    def fixed(self) -> bool:
        """Whether the ruler is fixed (the first `fit_calls` calls are in): figures are final."""
        return self.calls >= self.fit_calls

    @property
    def skipped_lines(self) -> int:
        """Lines that were read but are not a log record (not JSON): counted by the loader."""
        return self.load.skipped_lines if self.load is not None else 0

    def pre_tokens(self) -> dict[int, int | None]:
        """History index of each recorded `compact_boundary` → its logged `preTokens`."""
        load = self.load
        return dict(zip(load.compaction_boundaries, load.boundary_pre_tokens)) if load is not None else {}

    def feed(self, batch: Batch) -> bool:
        """Take one batch of lines; True when the replay changed."""
        self.unreadable += batch.unreadable
        if batch.reset:
            self.resets += 1
            self.reader = LogReader()
            self.replay, self.load, self.handed = None, None, 0
        if not batch.lines:
            return batch.reset
        self.reader.feed(batch.lines)
        self._reload()
        return True

    @property
    def pending(self) -> int:
        """Calls read and not handed out yet (how far behind the log the replay is, in calls)."""
        return self.calls - self.handed

    def ready(self, stop: Callable[[], bool] | None = None, limit: int | None = None) -> list[ReplayStep]:
        """The calls whose figures are final and not handed out yet (none while the ruler is provisional).
        `stop` is asked before each call is made and `limit` caps how many are: a log read far ahead is
        made a few calls at a time, so a stop is obeyed within one call (the rest stay `pending`)."""
        return self._take(stop, limit) if self.fixed else []

    def flush(self, stop: Callable[[], bool] | None = None) -> list[ReplayStep]:
        """Every call not handed out yet, on the ruler as it stands (the end of a short session)."""
        return self._take(stop, None)

    def _take(self, stop: Callable[[], bool] | None, limit: int | None) -> list[ReplayStep]:
        replay = self.replay
        steps: list[ReplayStep] = []
        while replay is not None and self.handed < replay.calls:
            if (limit is not None and len(steps) >= limit) or (stop is not None and stop()):
                break
            steps.append(replay.step(self.handed))
            self.handed += 1
        return steps

    def _reload(self) -> None:
        load = self.reader.load()
        old = self.replay
        recorded = recorded_transcript(load, self.path.name, self.fit_calls, old.recorded if old is not None else None)
        self.load = load
        if not recorded.history or not recorded.calls:
            self.replay = None
            return
        if old is not None and old.calls >= self.fit_calls and _extends(old, recorded):
            _grow(old, recorded)
            return
        if old is not None and old.made and old.calls >= self.fit_calls:
            self.restarts += 1
            self.handed = 0
        self.replay = replay_of(self.path, recorded, self.strategies, self.policy)
        self.replay.bound(KEEP_STEPS, MAX_CHECKPOINTS)


def _extends(old: Replay, new: Recorded) -> bool:
    """Whether `new` (a later parse) says the same as `old.recorded` about every step already made."""
    was = old.recorded
    made = old.made
    if was.model != new.model or len(new.calls) < len(was.calls):
        return False
    if made == 0:
        return True
    if (was.calls[:made], was.real[:made], was.segment_start[:made], was.usage[:made], was.times[:made]) != (
            new.calls[:made], new.real[:made], new.segment_start[:made], new.usage[:made], new.times[:made]):
        return False
    stable = was.calls[made - 1]
    old_head, new_head = was.history[:stable], new.history[:stable]
    same = identical_head(old_head, new_head)  # mostly the very same objects (the reader keeps them): found in C
    return all(a is b or to_json(a) == to_json(b) for a, b in zip(old_head[same:], new_head[same:]))


def stable_index(replay: Replay) -> int:
    """The history before this index is what the steps made so far read: a growth keeps it as it is."""
    return replay.recorded.calls[replay.made - 1] if replay.made else 0


def _grow(replay: Replay, new: Recorded) -> None:
    """Give `replay` the calls of `new`, keeping the messages its steps were made from (the compactors
    and the price runs know them by identity)."""
    was = replay.recorded
    stable = stable_index(replay)
    was.history[stable:] = new.history[stable:]
    for name in ("calls", "real", "segment_start", "estimates", "usage", "summaries", "boundaries", "models",
                 "times", "measured", "skipped_lines", "thinking", "keeps_thinking", "miss_reasons"):
        setattr(was, name, getattr(new, name))
    replay.agent_compactions = agent_compactions(was)
    replay.grown(stable)
