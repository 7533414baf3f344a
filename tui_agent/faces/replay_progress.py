"""Progress of a long replay on stderr (`tui-agent replay --report / --json`): nothing for a replay that
ends within `PROGRESS_AFTER` seconds, then `replaying call N/M…` (rewritten in place on a terminal, a
line per tenth of the calls otherwise, so a log file is not flooded), cleared or ended at the last call.
Standard library only, like `replay_cli`."""

from __future__ import annotations

import sys
import time
from typing import TextIO

PROGRESS_AFTER = 0.5  # seconds: a replay faster than this shows no progress


class StderrProgress:
    """A `Replay.progress` callback: `(done, target)` per call made."""

    def __init__(self, stream: TextIO | None = None, after: float | None = None) -> None:
        self.stream = stream or sys.stderr
        self.after = PROGRESS_AFTER if after is None else after
        self.started = time.monotonic()
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.shown = False
        self._last_tenth = -1

    def __call__(self, done: int, target: int) -> None:
        if not self.shown and time.monotonic() - self.started < self.after:
            return
        tenth = done * 10 // max(target, 1)
        if self.tty:
            self.stream.write(f"\rreplaying call {done}/{target}…")
            if done >= target:
                self.stream.write("\r\033[K")
        elif tenth != self._last_tenth or done >= target:
            self.stream.write(f"replaying call {done}/{target}…\n")
        self._last_tenth = tenth
        self.shown = True
        self.stream.flush()
