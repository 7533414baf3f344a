"""`tui-agent report [PATH ...]`: every recorded session replayed and priced, in the terminal, as one HTML page
(`--html`) and as a table (`--table FILE.parquet|.csv`).

With no PATH it reads this user's Claude Code projects, Codex sessions and our own journals
(`report/sources.py`). Each session's figures come from the engine (`core/recordings/session_figures.py`),
kept by content hash (`report/cache.py`: a second run replays only what changed), computed on every core
(`--jobs`) or on a Ray cluster (`--ray ADDRESS`, `report/runner.py`). A progress bar (count, rate, time
left) is drawn on stderr when it is a terminal; a session that cannot be read is one line of the report,
never a stop. Like `cli.py`, this module imports only the standard library at the top.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tui-agent report",
        description="Replay every recorded session (Claude Code, Codex, tui-agent journals) under tui-agent's "
        "compactor and idle policy and the peers' rules, and show what was spent at list prices, what ours would "
        "have spent, and what each agent forgot. No model is called.")
    parser.add_argument("paths", nargs="*", type=Path, metavar="PATH",
                        help="session logs or folders searched for *.jsonl (default: ~/.claude/projects, "
                        "~/.codex/sessions and tui-agent's own journals)")
    parser.add_argument("--html", type=Path, metavar="FILE", help="write the report as one self-contained HTML page")
    parser.add_argument("--table", type=Path, metavar="FILE",
                        help="write the per-session table as FILE.parquet (pyarrow) or FILE.csv")
    parser.add_argument("--ray", metavar="ADDRESS",
                        help="run the per-session replays on a Ray cluster (auto, HOST:6379, ray://HOST:10001)")
    parser.add_argument("--jobs", type=int, default=None, metavar="N",
                        help="processes replaying sessions at once (default: every core)")
    parser.add_argument("--idle", choices=("auto", "ping", "compact", "cold"), default=None,
                        help="the idle policy ours is replayed under (default: the organisation policy's or auto)")
    parser.add_argument("--no-cache", action="store_true", help="replay every session again, keep nothing")
    parser.add_argument("--top", type=int, default=10, metavar="N", help="how many costliest sessions to list")
    return parser


def report_command(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    if args.jobs is not None and args.jobs < 1:
        return _error(f"--jobs must be at least 1 (got {args.jobs})")
    if args.table is not None and args.table.suffix.lower() not in (".parquet", ".csv"):
        return _error(f"--table {args.table}: write a .parquet or a .csv file")
    from tui_agent.core.sanitize import strip_controls
    from tui_agent.report.sources import default_paths, find_sessions

    files, missing = find_sessions(args.paths or default_paths())
    for line in missing if args.paths else ():
        print(strip_controls(f"warning: {line}"), file=sys.stderr)
    if not files:
        where = ", ".join(str(p) for p in (args.paths or default_paths()))
        return _error(f"no session logs (*.jsonl) found under {where}")
    idle = args.idle or _idle_default()
    from tui_agent.report.collect import Collector
    from tui_agent.report.runner import RayUnavailable

    collector = Collector(files, idle, cache=not args.no_cache)
    try:
        rows = collector.run(args.jobs, args.ray)
    except RayUnavailable as error:
        return _error(str(error))
    return _show(rows, args)


def _show(rows, args: argparse.Namespace) -> int:  # noqa: ANN001 - report.table.Row values (imported lazily)
    from tui_agent.core.sanitize import strip_controls
    from tui_agent.report.terminal import summary_text
    from tui_agent.report.totals import totals

    summary = totals(rows, top=max(args.top, 0))
    sys.stdout.write(strip_controls(summary_text(summary)) + "\n")
    try:
        if args.table is not None:
            from tui_agent.report.table import write_table

            write_table(rows, args.table)
            print(f"table: {args.table}", file=sys.stderr)
        if args.html is not None:
            from tui_agent.report.page import write_page

            write_page(summary, args.html)
            print(f"page: {args.html}", file=sys.stderr)
    except RuntimeError as error:  # an optional extra is missing
        return _error(str(error))
    except OSError as error:
        return _error(f"cannot write {error.filename}: {error.strerror or error}")
    _metrics(rows)
    return 0


def _idle_default() -> str:
    """The idle policy a live session would default to (the organisation policy, then the user's settings)."""
    from tui_agent.core.access.effective_settings import effective_settings

    return effective_settings(Path.cwd()).idle


def _metrics(rows) -> None:  # noqa: ANN001 - report.table.Row values
    """The report's figures as OpenTelemetry metrics when an endpoint is configured (nothing imported else)."""
    from tui_agent.core.agent import telemetry

    if not telemetry.enabled():
        return
    from tui_agent.report.report_metrics import send_report_metrics

    try:
        send_report_metrics(rows)
    except RuntimeError as error:
        print(f"warning: {error}", file=sys.stderr)


def _error(message: str) -> int:
    from tui_agent.core.sanitize import strip_controls

    print(strip_controls(f"error: {message}"), file=sys.stderr)
    return 2
