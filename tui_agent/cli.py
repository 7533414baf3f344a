"""Command line: `tui-agent` opens the TUI; `tui-agent -p PROMPT` runs one request headless.

Start-up cost matters (`--version` and `--help` must answer in well under 0.15 s), so this module imports
only the standard library at the top; the core, Textual and the SDKs load when a mode needs them.
"""

from __future__ import annotations

import argparse
import gc
import sys
from pathlib import Path

from tui_agent import __version__
from tui_agent.session_cli import SUBCOMMANDS, add_session_flags, journal_hook, model_for, resolve_resume, workspace_for

ENV_HELP = """environment:
  ANTHROPIC_API_KEY       use Claude (default model: see --model); without any key the offline demo model runs
  ANTHROPIC_BASE_URL      any Anthropic-compatible endpoint
  ANTHROPIC_MODEL         default Claude model
  OPENAI_API_KEY          use an OpenAI-compatible endpoint (with OPENAI_BASE_URL, OPENAI_MODEL)
  CONTEXT_WINDOW_TOKENS   override the model's context window
  COMPACT=0               turn compaction off
  TRACE=1                 print [trace] lines (stderr headless; a log file in the TUI)
  ALLOW_WRITE=1           allow Write/Edit/Bash in headless mode (same as --allow-write)
  MCP_CONFIG              comma-separated MCP config files (default: .mcp.json)
  TUI_AGENT_DATA_DIR      where sessions are saved (default: the platform's user data dir)
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tui-agent",
        description="A terminal coding agent with a live context-budget panel. "
        "With no arguments it opens the TUI; with -p it answers one request headless. "
        "Subcommands: `tui-agent sessions` lists saved sessions, `tui-agent export ID` prints one.",
        epilog=ENV_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("-p", "--print", dest="prompt", nargs="?", const="-", default=None, metavar="PROMPT",
                        help="run PROMPT headless: the answer streams to stdout, tool activity to stderr "
                        "('-' or no value: read the prompt from stdin)")
    parser.add_argument("--model", help="model id, or 'demo' for the offline demo model")
    parser.add_argument("--provider", choices=["anthropic", "openai", "demo"], help="force a provider")
    parser.add_argument("--max-turns", type=int, default=None, metavar="N",
                        help="stop after N model calls in one request (default 20)")
    parser.add_argument("--allow-write", action="store_true",
                        help="headless: allow tools that change things (Write, Edit, Bash, MCP)")
    parser.add_argument("--context-window", type=int, metavar="TOKENS",
                        help="override the model's context window (same as CONTEXT_WINDOW_TOKENS)")
    parser.add_argument("--max-output-tokens", type=int, metavar="TOKENS",
                        help="max output tokens per call (same as MAX_OUTPUT_TOKENS)")
    parser.add_argument("--transcript", type=Path, metavar="FILE",
                        help="load a Claude Code session log (.jsonl) into the history, to see what compaction "
                        "would send and continue from it")
    parser.add_argument("-C", "--cwd", type=Path, default=None, metavar="DIR", help="workspace (default: current directory)")
    add_session_flags(parser)
    parser.add_argument("--version", action="version", version=f"tui-agent {__version__}")
    return parser


def _read_stdin_prompt() -> str:
    if sys.stdin is None or sys.stdin.isatty():
        return ""
    return sys.stdin.read().strip()


def _load_transcript(path: Path):
    """(history, Notice) from a Claude Code log, or None after printing a one-line error."""
    from tui_agent.core.events import Notice
    from tui_agent.core.transcripts import load_transcript

    try:
        load = load_transcript(path)
    except OSError as error:
        print(f"error: cannot read transcript {path}: {error.strerror or error}", file=sys.stderr)
        return None
    if not load.history:
        print(f"error: {path} has no user or assistant messages (is it a Claude Code .jsonl log?)", file=sys.stderr)
        return None
    note = f"Loaded {len(load.history)} messages from {path.name}"
    if load.skipped_lines:
        note += f" ({load.skipped_lines} unreadable lines skipped)"
    return load.history, Notice(note + ".", "info")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in SUBCOMMANDS:
        from tui_agent.session_cli import run_subcommand

        return run_subcommand(argv)
    args = build_parser().parse_args(argv)
    if args.max_turns is not None and args.max_turns < 1:
        print("error: --max-turns must be at least 1", file=sys.stderr)
        return 2
    for flag, value in (("--context-window", args.context_window), ("--max-output-tokens", args.max_output_tokens)):
        if value is not None and value < 1:
            print(f"error: {flag} must be a positive number of tokens", file=sys.stderr)
            return 2
    workspace = (args.cwd or Path.cwd()).resolve()
    if not workspace.is_dir():
        print(f"error: workspace {workspace} is not a directory", file=sys.stderr)
        return 2

    prompt = args.prompt
    if prompt is None and sys.stdin is not None and not sys.stdin.isatty() and not sys.stdout.isatty():
        prompt = "-"  # piped in and out: behave like -p
    if prompt == "-":
        prompt = _read_stdin_prompt()
        if not prompt.strip() and not args.print_outbound:
            print("error: no prompt given (use -p \"PROMPT\" or pipe the prompt on stdin)", file=sys.stderr)
            return 2
    resume = resolve_resume(args, workspace, headless=prompt is not None or args.print_outbound)
    if resume is None:
        return 2
    workspace = workspace_for(args, resume.load, workspace)
    model, provider = model_for(args, resume.load)
    transcript = None
    if args.transcript is not None:
        transcript = _load_transcript(args.transcript)
        if transcript is None:
            return 2
    source = f"transcript {args.transcript}" if args.transcript is not None else None

    if args.print_outbound:
        return _print_outbound(args, workspace, model, provider, prompt or None, resume.load, transcript)
    if prompt is not None:
        if not prompt.strip():
            print("error: no prompt given (use -p \"PROMPT\" or pipe the prompt on stdin)", file=sys.stderr)
            return 2
        from tui_agent.headless import run_headless

        return run_headless(prompt, workspace=workspace, model=model, provider=provider,
                            max_turns=args.max_turns, allow_write=True if args.allow_write else None,
                            history=transcript[0] if transcript else None, context_window=args.context_window,
                            max_output_tokens=args.max_output_tokens, prepare=journal_hook(resume.load, source))

    # Start-up allocates hundreds of thousands of objects that all live on; pausing the cyclic GC until
    # the first frame (the app re-enables it) saves about a tenth of the time to the first frame.
    gc.disable()
    from tui_agent.core import trace
    from tui_agent.core.factory import build_session
    from tui_agent.ui.app import run_app, setup_trace_log

    trace_notice = setup_trace_log()  # before any trace line: on the TUI they go to a log file
    trace.trace("cli.start", mode="tui")
    session, notices = build_session(workspace, model=model, provider=provider,
                                     max_turns=args.max_turns, demo_delay=0.01,
                                     context_window=args.context_window, max_output_tokens=args.max_output_tokens)
    if transcript is not None:
        history, notice = transcript
        session.history.extend(history)
        notices.append(notice)
    notices += journal_hook(resume.load, source)(session)
    if trace_notice is not None:
        notices.insert(0, trace_notice)
    return run_app(session, startup_notices=notices, resumed=resume.load is not None, pick_session=resume.pick)


def _print_outbound(args, workspace: Path, model, provider, prompt, load, transcript) -> int:
    """`--print-outbound`: the session as it would be (new, resumed or a transcript), never journaled."""
    from tui_agent.core.factory import build_session
    from tui_agent.core.journal.resume import restore
    from tui_agent.session_cli import print_outbound

    session, notices = build_session(workspace, model=model, provider=provider, headless=True,
                                     allow_write=True if args.allow_write else None,
                                     context_window=args.context_window, max_output_tokens=args.max_output_tokens)
    if transcript is not None:
        session.history.extend(transcript[0])
    if load is not None:
        notices += restore(session, load).notices
    for notice in notices:
        print(f"[{notice.level}] {notice.text}", file=sys.stderr)
    return print_outbound(session, prompt)


if __name__ == "__main__":
    raise SystemExit(main())
