"""`tui-agent watch [FILE]`: follow a Claude Code session log while it is written.

Without `--json` it opens the replay screen on the growing log (`ui/watch_app.py`); with `--json` it is
headless and prints one JSON object per recorded call as the call is written (`core.call_figures`),
flushing each line, until SIGINT or SIGTERM ends it cleanly (exit 0, the calls still held printed first).
`--latest` follows the newest log of the current directory's Claude Code project (`--all`: of every
project) and switches, saying so on stderr, when a newer session starts there. Like `cli.py`, this
module imports only the standard library at the top (and `core/recordings/log_source.py`, which does too).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import NoReturn

from tui_agent.core.recordings.log_source import LogSource, behind_text

STEP_CALLS = 25  # calls made between two looks at the log (and the stop flag is asked before each)
PENDING_CALLS = 400  # calls read and not made yet, at most: past it the log is not read further for now
LAG_AFTER = 1.0  # seconds behind the log before saying so on stderr
LAG_EVERY = 5.0  # seconds between two "behind" lines
WATCH_STRATEGIES = ("none", "v2")  # the append-only conversation (the card's ÷append) and ours


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tui-agent watch",
        description="Follow a Claude Code session log while it is written: each model call's recorded usage "
        "and cost beside what our compactor would send and cost. No model is called.")
    parser.add_argument("file", type=Path, nargs="?", metavar="FILE", help="a Claude Code .jsonl log or a Codex rollout")
    parser.add_argument("--latest", action="store_true",
                        help="follow the newest log of this directory's Claude Code project or Codex session, and "
                        "switch to a newer session when one starts")
    parser.add_argument("--all", action="store_true", help="with --latest: the newest log of every project (both agents)")
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
    from tui_agent.core.recordings.strategy_table import default_policy

    source = LogSource(args.file, args.latest, args.all)
    path = source.first()
    if path is None:
        from tui_agent.core.recordings.claude_logs import project_dir

        where = "any project" if args.all else str(project_dir(Path.cwd()))
        return _error(f"no Claude Code session log in {where} and no Codex rollout of it")
    if args.file is not None and args.file.exists() and not args.file.is_file():
        return _error(f"{args.file} is not a file")
    from tui_agent.core.recordings.codex_logs import logged_window  # a Codex rollout says its model's window

    window = args.context_window or logged_window(path)
    policy = default_policy(window) if window else default_policy()
    if args.json:
        end_now(watch_json(source, path, policy))
    from tui_agent.ui.watch_app import run_watch

    end_now(run_watch(source, path, policy))


def end_now(code: int) -> NoReturn:
    """End the process with `code` at once. A watch holds nothing to save (it only reads a log, and its
    output is flushed here), and the interpreter's teardown of its heap (the replayed history, the view)
    took over a second at 5,000 calls under load: SIGTERM and `q` end the watch without it."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a reader gone (`| head`) or a closed stream: nothing to keep
            pass
    os._exit(code)


def watch_json(source: LogSource, path: Path, policy) -> int:
    stop = threading.Event()

    def finish(signum: int, frame: object) -> None:
        stop.set()

    previous = {sig: signal.signal(sig, finish) for sig in (signal.SIGINT, signal.SIGTERM)}
    tracer = watch_tracer()
    try:
        while True:
            switched = _follow_json(source, path, policy, stop, tracer)
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


def _follow_json(source: LogSource, path: Path, policy, stop: threading.Event, tracer) -> Path | None:  # noqa: ANN001
    """Follow `path` until `stop` (None) or a newer session starts (its path). The log is read a capped
    batch at a time and its calls made `STEP_CALLS` at a time, the stop flag looked at before each call:
    a SIGTERM far behind a fast log is obeyed within one call, never after the backlog."""
    from tui_agent.core.recordings.follow import Batch, Follower
    from tui_agent.core.recordings.watch import LiveReplay

    live = LiveReplay(path, policy, WATCH_STRATEGIES)
    out = JsonOut(path, tracer)
    lag = Lag()
    refused = False
    say(f"watching {path}")
    with Follower(path) as follower:
        while not stop.is_set():
            if live.pending >= PENDING_CALLS:  # far behind: make calls before reading more (memory)
                batch = Batch()
            elif live.pending and live.fixed:
                batch = follower.poll()
            else:
                batch = follower.wait(stop=lambda: stop.is_set() or source.due())
            if batch.not_regular and not refused:
                say(f"{path.name} is not a regular file now: not read; waiting for a regular file there")
            refused = batch.not_regular
            if batch.reset:
                say(f"{path.name} was truncated or replaced: reading it again from its start")
                out.restart()
            restarts = live.restarts
            live.feed(batch)
            if live.restarts != restarts:
                say(f"{path.name} no longer reads as it did: its calls again from call 1")
                out.restart()
            out.emit(live, live.ready(stop.is_set, STEP_CALLS))
            if (line := lag.note(live.pending if live.fixed else 0, follower.behind)) is not None:
                say(line)
            if source.due() and (switched := source.newer(path)) is not None:
                _report(live, path, follower.behind)
                return switched
        if not live.fixed:  # a short session's provisional calls (fewer than FIT_CALLS): cheap, flushed
            out.emit(live, live.flush())
        _report(live, path, follower.behind)
    return None


class JsonOut:
    """One JSON line per call on stdout (flushed), with its running figures."""

    def __init__(self, path: Path, tracer) -> None:  # noqa: ANN001
        from tui_agent.core.recordings.call_figures import FiguresRun

        self.path, self.tracer = path, tracer
        self.run = FiguresRun()

    def restart(self) -> None:
        from tui_agent.core.recordings.call_figures import FiguresRun

        self.run = FiguresRun()

    def emit(self, live, steps) -> None:  # noqa: ANN001
        import json

        if not steps:
            return
        pre = live.pre_tokens()
        for step in steps:
            if self.tracer is not None:
                self.tracer(live.replay, step)
            record = self.run.figures(live.replay, step, pre).json()
            record["session"] = self.path.stem
            sys.stdout.write(json.dumps(record, ensure_ascii=False) + "\n")
        sys.stdout.flush()


class Lag:
    """How far behind the log a watch is, said on stderr once it has been behind for `LAG_AFTER`
    seconds (then every `LAG_EVERY`), and said again when it caught up: a follower slower than its
    writer tells so instead of falling silently behind."""

    def __init__(self, clock=time.monotonic) -> None:  # noqa: ANN001
        self.clock = clock
        self.since: float | None = None  # behind since
        self.said: float | None = None  # the last "behind" line

    def note(self, calls: int, unread_bytes: int) -> str | None:
        now = self.clock()
        if not calls and not unread_bytes:
            line = f"caught up with the log after {now - self.since:.1f} s behind" if self.said is not None else None
            self.since = self.said = None
            return line
        if self.since is None:
            self.since = now
        if now - self.since < LAG_AFTER or (self.said is not None and now - self.said < LAG_EVERY):
            return None
        self.said = now
        return f"behind the log: {behind_text(calls, unread_bytes)}"


def watch_tracer():  # noqa: ANN201 - a core.recordings.spans.StepTracer or None (imported only when configured)
    """A span per call (`tui_agent.source` "watch") when OTEL_EXPORTER_OTLP_ENDPOINT is set, else None."""
    from tui_agent.core.agent import telemetry
    from tui_agent.core.recordings.spans import step_tracer

    if not telemetry.enabled():
        return None
    try:
        return step_tracer("watch")
    except RuntimeError as error:  # the [otel] extra is not installed: say so once, and watch on
        say(f"warning: {error}")
        return None


def _report(live, path: Path, unread_bytes: int = 0) -> None:
    notes = []
    if live.pending or unread_bytes:
        notes.append(f"stopped behind the log: {behind_text(live.pending, unread_bytes)}")
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
