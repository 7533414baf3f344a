"""Every session's figures for a report: from the cache when its bytes were replayed before, else replayed
(here on every core, or on a Ray cluster) and kept. A progress bar on stderr counts both.

The bar (rich's) shows the sessions done of all, the rate and the time left; it is drawn only when stderr
is a terminal, so a pipe or a CI log gets none of its redraws.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from tui_agent.report.cache import FiguresCache, content_hash, engine_fingerprint
from tui_agent.report.runner import Outcome, Task, cores, run_local, run_ray
from tui_agent.report.table import Row

Tick = Callable[[int], None]


class Collector:
    def __init__(self, files: Sequence[Path], idle: str = "auto", *, cache: bool = True,
                 cache_root: Path | None = None, window: int | None = None) -> None:
        from tui_agent.core.paths import cache_dir

        self.files, self.idle, self.window = list(files), idle, window
        root = cache_root or cache_dir() / "report"
        self.cache = FiguresCache(root / engine_fingerprint(f"idle={idle};window={window}") if cache else None)
        self.replayed = 0

    def run(self, jobs: int | None = None, ray_address: str | None = None, *, progress: bool | None = None) -> list[Row]:
        """Every file's row, sorted by path. `progress`: draw the bar (None: when stderr is a terminal)."""
        with _bar(len(self.files), progress) as tick:
            rows: dict[int, Row] = {}
            keys: dict[int, str] = {}
            tasks: list[Task] = []
            for index, path in enumerate(self.files):
                row, key = self._cached(path)
                if row is not None:
                    rows[index] = row
                    tick(1)
                    continue
                if key:
                    keys[index] = key
                    tasks.append(Task(index, str(path), self.idle, self.window))
                else:
                    rows[index] = Row(str(path), None, "cannot be read")

            def done(outcome: Outcome) -> None:
                path = str(self.files[outcome.index])
                rows[outcome.index] = Row(path, outcome.figures, outcome.error)
                self.cache.put(keys[outcome.index], outcome.figures, outcome.error)
                tick(1)

            self.replayed = len(tasks)
            if ray_address:
                run_ray(tasks, ray_address, done)
            else:
                run_local(tasks, jobs or cores(), done)
        return sorted(rows.values(), key=lambda row: row.path)

    def _cached(self, path: Path) -> tuple[Row | None, str]:
        """(the row kept for `path`'s bytes, or None; the key to keep a new one under, "" when unreadable)."""
        try:
            key = content_hash(path)
        except OSError as failure:
            return Row(str(path), None, failure.strerror or str(failure)), ""
        kept = self.cache.get(key)
        if kept is None:
            return None, key
        figures, why = kept
        return Row(str(path), figures, why), key


class _bar:
    """A context manager giving `tick(n)`: rich's progress bar on stderr, or nothing."""

    def __init__(self, total: int, show: bool | None) -> None:
        self.total, self.show = total, show
        self.progress: Any = None

    def __enter__(self) -> Tick:
        from rich.console import Console

        console = Console(file=sys.stderr)
        show = console.is_terminal if self.show is None else self.show
        if not show:
            return lambda n: None
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

        self.progress = Progress(TextColumn("sessions"), BarColumn(), MofNCompleteColumn(), _rate_column(),
                                 TextColumn("left"), TimeRemainingColumn(), console=console)
        self.progress.start()
        task = self.progress.add_task("sessions", total=self.total)
        return lambda n: self.progress.advance(task, n)

    def __exit__(self, *exc: object) -> None:
        if self.progress is not None:
            self.progress.stop()


def _rate_column() -> Any:
    from rich.progress import ProgressColumn
    from rich.text import Text

    class Rate(ProgressColumn):
        """Sessions a second, over rich's recent samples."""

        def render(self, task: Any) -> Text:
            speed = task.finished_speed or task.speed
            return Text(f"{speed:.1f}/s" if speed else "–/s", style="progress.data.speed")

    return Rate()

