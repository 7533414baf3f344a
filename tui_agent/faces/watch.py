"""`tui-agent watch [FILE]`: follow a Claude Code session log while it is written.

Without `--json` it opens the replay screen on the growing log (`ui/watch_app.py`); with `--json` it is
headless and prints one JSON object per recorded call as the call is written (`core.call_figures`),
flushing each line, until SIGINT or SIGTERM ends it cleanly (exit 0, the calls still held printed first).
`--latest` follows the newest log of the current directory's Claude Code project (`--all`: of every
project) and switches, saying so on stderr, when a newer session starts there. Like `cli.py`, this
module imports only the standard library at the top.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
import time
from pathlib import Path

LATEST_CHECK_SECONDS = 1.0
WATCH_STRATEGIES = ("none", "v2")  # the append-only conversation (the card's ÷append) and ours


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tui-agent watch",
        description="Follow a Claude Code session log while it is written: each model call's recorded usage "
        "and cost beside what our compactor would send and cost. No model is called.")
    parser.add_argument("file", type=Path, nargs="?", metavar="FILE", help="a Claude Code .jsonl log")
    parser.add_argument("--latest", action="store_true",
                        help="follow the newest log of this directory's Claude Code project, and switch to a "
                        "newer session when one starts")
    parser.add_argument("--all", action="store_true", help="with --latest: the newest log of every project")
    parser.add_argument("--json", action="store_true",
                        help="headless: print one JSON object per recorded call as it is written")
    parser.add_argument("--context-window", type=int, default=None, metavar="TOKENS",
                        help="the recorded model's context window our compactor replays against (default 200000)")
    return parser


def watch_command(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    from tui_agent.faces.replay import MIN_WINDOW

    if args.all and not args.latest:
        return _error("--all goes with --latest")
    if (args.file is None) == (not args.latest):
        return _error("give a log FILE or --latest")
    if args.context_window is not None and args.context_window < MIN_WINDOW:
        return _error(f"--context-window must be at least {MIN_WINDOW} tokens (got {args.context_window})")
    from tui_agent.core.recordings.economics import default_policy

    policy = default_policy(args.context_window) if args.context_window else default_policy()
    source = LogSource(args.file, args.latest, args.all)
    path = source.first()
    if path is None:
        from tui_agent.core.recordings.claude_logs import project_dir

        where = "any project" if args.all else str(project_dir(Path.cwd()))
        return _error(f"no Claude Code session log in {where}")
    if args.file is not None and args.file.exists() and not args.file.is_file():
        return _error(f"{args.file} is not a file")
    if args.json:
        return watch_json(source, path, policy)
    from tui_agent.ui.watch_app import run_watch

    return run_watch(source, path, policy)


class LogSource:
    """The log to follow: one FILE, or the newest session of a project (`latest`), which moves on to a
    session that starts later (a log that did not exist before and is now the newest)."""

    def __init__(self, file: Path | None, latest: bool, all_projects: bool, cwd: Path | None = None,
                 env: dict[str, str] | None = None) -> None:
        self.file, self.latest, self.all_projects = file, latest, all_projects
        self.cwd = cwd or Path.cwd()
        self.env = env
        self.known: set[Path] = set()
        self._next_check = 0.0

    def _logs(self) -> list[Path]:
        from tui_agent.core.recordings.claude_logs import session_logs

        return session_logs(self.cwd, all_projects=self.all_projects, env=self.env)

    def first(self) -> Path | None:
        if not self.latest:
            return self.file
        logs = self._logs()
        self.known = set(logs)
        return logs[0] if logs else None

    def due(self) -> bool:
        return self.latest and time.monotonic() >= self._next_check

    def newer(self, current: Path) -> Path | None:
        """A session started since the last look that is now the newest log (None: keep `current`)."""
        self._next_check = time.monotonic() + LATEST_CHECK_SECONDS
        if not self.latest:
            return None
        logs = self._logs()
        fresh = [p for p in logs if p not in self.known]
        self.known |= set(logs)
        return logs[0] if fresh and logs[0] in fresh and logs[0] != current else None


def watch_json(source: LogSource, path: Path, policy) -> int:
    import json

    from tui_agent.core.recordings.call_figures import FiguresRun
    from tui_agent.core.recordings.follow import Follower
    from tui_agent.core.recordings.watch import LiveReplay

    stop = threading.Event()

    def finish(signum: int, frame: object) -> None:
        stop.set()

    previous = {sig: signal.signal(sig, finish) for sig in (signal.SIGINT, signal.SIGTERM)}
    out = sys.stdout
    tracer = watch_tracer()

    def emit(live: LiveReplay, run: FiguresRun, steps) -> None:
        for step in steps:
            if tracer is not None:
                tracer(live.replay, step)
            record = run.figures(live.replay, step, live.pre_tokens()).json()
            record["session"] = path.stem
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
        out.flush()

    try:
        while True:
            live = LiveReplay(path, policy, WATCH_STRATEGIES)
            run = FiguresRun()
            switched: Path | None = None
            say(f"watching {path}")
            with Follower(path) as follower:
                while not stop.is_set():
                    batch = follower.wait(stop=lambda: stop.is_set() or source.due())
                    if batch.reset:
                        say(f"{path.name} was truncated or replaced: reading it again from its start")
                        run = FiguresRun()
                    restarts = live.restarts
                    live.feed(batch)
                    if live.restarts != restarts:
                        say(f"{path.name} no longer reads as it did: its calls again from call 1")
                        run = FiguresRun()
                    emit(live, run, live.ready())
                    if source.due() and (switched := source.newer(path)) is not None:
                        break
                # what is written by now is read before the end, even when the signal came first
                live.feed(follower.poll())
                emit(live, run, live.flush())
            _report(live, path)
            if switched is None:
                return 0
            say(f"a newer session started: {switched.name}; following it")
            path = switched
    except BrokenPipeError:  # the reader went away (`| head`): nothing left to say
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    finally:
        if tracer is not None:
            tracer.close()
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def watch_tracer():  # noqa: ANN201 - a core.telemetry.StepTracer or None (imported only when configured)
    """A span per call (`tui_agent.source` "watch") when OTEL_EXPORTER_OTLP_ENDPOINT is set, else None."""
    from tui_agent.core import telemetry

    if not telemetry.enabled():
        return None
    try:
        return telemetry.step_tracer("watch")
    except RuntimeError as error:  # the [otel] extra is not installed: say so once, and watch on
        say(f"warning: {error}")
        return None


def _report(live, path: Path) -> None:
    notes = []
    if live.unreadable:
        notes.append(f"{live.unreadable} unreadable line(s) skipped")
    if live.skipped_lines:
        notes.append(f"{live.skipped_lines} line(s) that are not JSON skipped")
    say(f"{path.name}: {live.handed} call(s)" + (f"; {', '.join(notes)}" if notes else ""))


def say(line: str) -> None:
    from tui_agent.core.sanitize import strip_controls

    print(f"watch: {strip_controls(line)}", file=sys.stderr, flush=True)


def _error(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return 2
