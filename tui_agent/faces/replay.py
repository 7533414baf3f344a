"""`tui-agent replay FILE`: step through a recorded session (a Claude Code log or one of our journals).

Without flags it opens the TUI in replay mode; `--report` prints the economics table of the session (the
benchmark's own code: `session_report` + `format_report`), `--json` every number for machines. Nothing is
sent to a model. Like `cli.py`, this module imports only the standard library at the top.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


MIN_WINDOW = 1_000  # below this no request fits (the system prompt and tools alone are larger)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tui-agent replay",
        description="Replay a recorded session call by call: what our compactor would have sent at each "
        "recorded model call, the recorded real tokens beside our estimate, where the recorded agent "
        "compacted, and the running cost of each strategy. No model is called.")
    parser.add_argument("file", type=Path, metavar="FILE",
                        help="a Claude Code .jsonl log, a Codex rollout, or a tui-agent journal")
    parser.add_argument("--report", action="store_true",
                        help="print the economics table of the session (as bench/economics.py) and exit")
    parser.add_argument("--json", action="store_true",
                        help="print the report and every call's numbers as JSON and exit")
    parser.add_argument("--no-memory", action="store_true",
                        help="skip counting prompts/paths missing from each request (faster)")
    parser.add_argument("--fit-calls", type=int, default=None, metavar="N",
                        help="fit the token ruler on the first N calls only (`tui-agent watch` fits on 8: "
                        "this gives its figures)")
    parser.add_argument("--call", type=int, default=1, metavar="N", help="TUI: open at call N (default 1)")
    parser.add_argument("--context-window", type=int, default=None, metavar="TOKENS",
                        help="the recorded model's context window, which our compactor replays against "
                        "(default 200000; a journal of a 16k demo session needs 16000)")
    return parser


def replay_command(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    if args.report and args.json:
        return _error("choose --report or --json")
    path: Path = args.file
    if not path.is_file():
        return _error(f"{path} is not a file")
    if args.fit_calls is not None and args.fit_calls < 1:
        return _error(f"--fit-calls must be at least 1 (got {args.fit_calls})")
    if args.context_window is not None and args.context_window < MIN_WINDOW:
        return _error(f"--context-window must be at least {MIN_WINDOW} tokens (got {args.context_window})")
    from tui_agent.core.recordings.strategy_table import default_policy
    from tui_agent.core.journal import JournalError

    from tui_agent.core.recordings.codex_logs import logged_window  # a Codex rollout says its model's window

    window = args.context_window or logged_window(path)
    policy = default_policy(window) if window else default_policy()

    try:
        if args.report or args.json:
            from tui_agent.core.recordings.strategy_table import STRATEGIES
            from tui_agent.core.recordings.recorded import is_journal
            from tui_agent.core.recordings.replay import open_replay
            from tui_agent.faces.replay_progress import StderrProgress

            if args.report and not is_journal(path):
                _check_transcript(path)
            replay = open_replay(path, STRATEGIES, policy, check_memory=not args.no_memory,
                                 fit_calls=args.fit_calls)
            replay.progress = StderrProgress()
            replay.run_all()
            _trace(replay)
            if args.report:
                from tui_agent.core.recordings.economics_report import format_report
                from tui_agent.core.sanitize import strip_controls

                report = replay.report()
                if not report.calls:
                    return _error(f"{path} has no recorded model call with usage to replay")
                sys.stdout.write(strip_controls(format_report([report])) + "\n")  # model names come from the file
                return 0
            import json

            from tui_agent.core.recordings.replay_json import replay_json

            from tui_agent.core.sanitize import escape_json_controls

            sys.stdout.write(escape_json_controls(json.dumps(replay_json(replay), ensure_ascii=False)) + "\n")
            return 0
        from tui_agent.core.recordings.replay import open_replay

        replay = open_replay(path, policy=policy, fit_calls=args.fit_calls)
    except JournalError as error:
        return _error(str(error))
    except BrokenPipeError:
        raise  # standard output's reader is gone (`| head`): `cli.main` ends quietly
    except OSError as error:
        return _error(f"cannot read {path}: {error.strerror or error}")
    except ValueError as error:
        return _error(str(error))
    from tui_agent.ui.replay_app import run_replay

    code = run_replay(replay, start=max(args.call, 1) - 1)
    _trace(replay)  # the calls the screen replayed
    return code


def _trace(replay) -> None:  # noqa: ANN001 - a core.replay.Replay (imported lazily)
    """One span per replayed call when OTEL_EXPORTER_OTLP_ENDPOINT is set (nothing imported otherwise)."""
    from tui_agent.core.agent import telemetry
    from tui_agent.core.recordings.spans import step_tracer

    if not telemetry.enabled():
        return
    try:
        tracer = step_tracer("replay")
    except RuntimeError as error:
        print(f"warning: {error}", file=sys.stderr)
        return
    if tracer is not None:
        for step in replay.steps:
            tracer(replay, step)
        tracer.close()


def _check_transcript(path: Path) -> None:
    from tui_agent.core.recordings.codex_logs import load_log

    if not load_log(path).history:
        raise ValueError(f"{path} has no user or assistant messages (is it a Claude Code .jsonl log?)")


def _error(message: str) -> int:
    from tui_agent.core.sanitize import strip_controls

    print(strip_controls(f"error: {message}"), file=sys.stderr)
    return 2
