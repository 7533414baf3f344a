"""Command line: `tui-agent` opens the TUI; `tui-agent -p PROMPT` runs one request headless;
`tui-agent serve` serves the TUI to browser tabs.

Start-up cost matters (`--version` and `--help` must answer in well under 0.15 s), so this module imports
only the standard library at the top; the core, Textual and the SDKs load when a mode needs them. The
flags themselves (their names, defaults and help) are `arguments.py`; this module runs what they ask for.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
from pathlib import Path
from typing import Mapping, TextIO

from tui_agent.faces import exit_codes
from tui_agent.faces.arguments import build_parser, help_defaults, wants_help
from tui_agent.faces.sessions import journal_hook, model_for, print_notice, resolve_resume, workspace_for
from tui_agent.faces.table import SUBCOMMANDS, run_subcommand
from tui_agent.core.formats import plural

# The session flags `serve` passes on to the app it starts for each browser tab.
SERVE_PASSTHROUGH = ("model", "provider", "max_turns", "context_window", "max_output_tokens", "transcript",
                     "compact", "compact_high", "compact_low", "budget", "approve_compaction")


def headless_prompt(prompt: str | None, stdin: TextIO | None, environ: Mapping[str, str]) -> str | None:
    """The prompt to answer headless ('-': read it from stdin), or None to open the app.

    `-p` always means headless. Without it, the TUI needs a keyboard: when stdin is not a terminal
    (`echo … | tui-agent`, `tui-agent < prompt.txt`) the prompt is read from it and answered headless;
    Textual would otherwise draw a TUI that cannot read a key. Except under a Textual driver host:
    textual-serve starts the app with stdin and stdout piped and sets TEXTUAL_DRIVER, and those pipes
    carry the driver's packets, not a prompt. stdout does not matter (a TTY or `> answer.md`).
    """
    if prompt is not None:
        return prompt
    if environ.get("TEXTUAL_DRIVER"):
        return None
    if stdin is None or not stdin.isatty():
        return "-"
    return None


def _read_stdin_prompt() -> str:
    if sys.stdin is None or sys.stdin.isatty():
        return ""
    return sys.stdin.read().strip()


def _load_transcript(path: Path):
    """(history, Notice, the model that wrote each assistant message) from a Claude Code log, or None
    after printing a one-line error."""
    from tui_agent.core.events import Notice
    from tui_agent.core.recordings.codex_logs import load_log  # a Claude Code log or a Codex rollout

    try:
        load = load_log(path)
    except OSError as error:
        print(f"error: cannot read transcript {path}: {error.strerror or error}", file=sys.stderr)
        return None
    if not load.history:
        print(f"error: {path} has no user or assistant messages (is it a Claude Code .jsonl log?)", file=sys.stderr)
        return None
    note = f"Loaded {plural(len(load.history), 'message')} from {path.name}"
    if load.skipped_lines:
        note += f" ({load.skipped_lines} unreadable lines skipped)"
    return load.history, Notice(note + ".", "info"), load.message_models


def _flags_to_env(args: argparse.Namespace) -> None:
    """`--cache-1h`, `--thinking-tokens` (Claude Code's variables), `--keep-warm` and `--idle` are variables under a flag:
    set, they reach the session the same way from every door (-p, the TUI, `serve`'s tabs)."""
    if getattr(args, "cache_1h", None):
        os.environ["ENABLE_PROMPT_CACHING_1H"] = "1"
    for name, variable in (("thinking_tokens", "MAX_THINKING_TOKENS"), ("keep_warm", "TUI_AGENT_KEEP_WARM"),
                           ("idle", "TUI_AGENT_IDLE")):
        if getattr(args, name, None) is not None:
            os.environ[variable] = f"{getattr(args, name):g}" if name == "keep_warm" else str(getattr(args, name))


def main(argv: list[str] | None = None) -> int:
    """Every face starts here: a crash in any of them ends with one line and a private log file
    (`tui_agent.core.crash`), never a traceback of the conversation on the terminal; a reader of standard
    output that stopped reading (`| head`) ends it quietly (`tui_agent.faces.process_end`)."""
    from tui_agent.faces.process_end import run_face

    return run_face(lambda: _main(sys.argv[1:] if argv is None else argv))


def _main(argv: list[str]) -> int:
    if argv and argv[0] in SUBCOMMANDS:
        return run_subcommand(argv)
    from tui_agent.core.providers.background_import import import_if_headless

    import_if_headless(argv, os.environ)  # -p: the SDK loads while the flags, settings and session are built
    # Start-up allocates hundreds of thousands of objects that all live on: for the TUI, the cyclic GC pauses
    # from here (the flags and the compaction settings already load much of the core: 32 of the start-up's
    # collections, 7-10 ms) until its first frame, when the app turns it back on (`_run_tui` pauses it again
    # for a TUI this guess missed). Decided from argv and the terminal alone; any other way out resumes it.
    pause = _opens_the_tui(argv, sys.stdin, os.environ)
    if pause:
        gc.disable()
    try:
        return _open_face(argv)
    finally:
        if pause:
            gc.enable()


def _opens_the_tui(argv: list[str], stdin: TextIO | None, environ: Mapping[str, str]) -> bool:
    """Whether this run will very likely open the TUI (`headless_prompt`'s rule, before the flags are parsed):
    no -p, --print-outbound or serve, and a keyboard (or a Textual driver host)."""
    headless = any(arg == "serve" or arg.startswith("--print") or (arg[:1] == "-" and arg[1:2] != "-" and "p" in arg)
                   for arg in argv)  # (-p, -pPROMPT, -cp: a short flag group with p)
    return not headless and (bool(environ.get("TEXTUAL_DRIVER")) or (stdin is not None and stdin.isatty()))


def _open_face(argv: list[str]) -> int:
    args = build_parser(help_defaults() if wants_help(argv) else None).parse_args(argv)
    problem = _usage_problem(args)
    if problem is not None:
        print(f"error: {problem}", file=sys.stderr)
        return exit_codes.USAGE
    compact = _compact_settings(args)
    if compact is None:
        return exit_codes.USAGE
    _flags_to_env(args)
    workspace = (args.cwd or Path.cwd()).resolve()
    if not workspace.is_dir():
        print(f"error: workspace {workspace} is not a directory", file=sys.stderr)
        return exit_codes.USAGE
    if args.command == "serve":
        return _serve(args, workspace)

    prompt = headless_prompt(args.prompt, sys.stdin, os.environ)
    if prompt is not None and not args.print_outbound:
        from tui_agent.core.providers.background_import import import_if_claude

        import_if_claude(args.provider, os.environ)  # -p: the SDK loads while the rest of start-up runs
    if prompt == "-":
        prompt = _read_stdin_prompt()
        if not prompt.strip() and not args.print_outbound:
            print("error: no prompt given (use -p \"PROMPT\" or pipe the prompt on stdin)", file=sys.stderr)
            return exit_codes.USAGE
    resume = resolve_resume(args, workspace, headless=prompt is not None or args.print_outbound)
    if resume is None:
        return exit_codes.USAGE
    workspace = workspace_for(args, resume.load, workspace)
    model, provider = model_for(args, resume.load)
    transcript = None
    if args.transcript is not None:
        transcript = _load_transcript(args.transcript)
        if transcript is None:
            return exit_codes.USAGE
    source = f"transcript {args.transcript}" if args.transcript is not None else None

    if args.print_outbound:
        return _print_outbound(args, workspace, model, provider, prompt or None, resume.load, transcript, compact)
    if prompt is not None:
        if not prompt.strip():
            print("error: no prompt given (use -p \"PROMPT\" or pipe the prompt on stdin)", file=sys.stderr)
            return exit_codes.USAGE
        from tui_agent.faces.headless import run_headless

        waiting = [flag for flag, name in (("--idle", "idle"), ("--keep-warm", "keep_warm"))
                   if getattr(args, name, None) is not None]
        if waiting:  # accepted (a shell alias may carry them), but said: silently ignored is a broken promise
            print(f"note: {' and '.join(waiting)} {'do' if len(waiting) > 1 else 'does'} nothing with -p: it ends "
                  "after its answer, so there is no wait to spend (they act in the TUI, serve and ACP)",
                  file=sys.stderr)
        if transcript is not None:
            print_notice(transcript[1])  # what the answer builds on
        return run_headless(prompt, workspace=workspace, model=model, provider=provider,
                            max_turns=args.max_turns, allow_write=True if args.allow_write else None,
                            history=transcript[0] if transcript else None, context_window=args.context_window,
                            max_output_tokens=args.max_output_tokens, compact=compact,
                            written_by=transcript[2] if transcript else None,
                            prepare=journal_hook(resume.load, source, view=transcript is not None),
                            trust_project_mcp=args.trust_project_mcp)
    return _run_tui(args, workspace, model, provider, compact, transcript, resume, source)


def _usage_problem(args: argparse.Namespace) -> str | None:
    """What is wrong with the flags themselves (a usage error), before anything is read or built."""
    if args.command in SUBCOMMANDS:
        return f"put `{args.command}` first: tui-agent {args.command} [its flags]"
    if args.max_turns is not None and args.max_turns < 1:
        return "--max-turns must be at least 1"
    for flag, value in (("--context-window", args.context_window), ("--max-output-tokens", args.max_output_tokens)):
        if value is not None and value < 1:
            return f"{flag} must be a positive number of tokens"
    return None


def _compact_settings(args: argparse.Namespace):
    """The compaction settings from the flags and the environment, or None after a one-line error."""
    from tui_agent.core.compaction.settings import CompactSettingsError, settings_from

    try:
        compact = settings_from(os.environ, mode=getattr(args, "compact", None),
                                high=getattr(args, "compact_high", None), low=getattr(args, "compact_low", None),
                                summary=getattr(args, "compact_summary", None), budget=getattr(args, "budget", None))
        compact.policy()
    except CompactSettingsError as error:
        print(f"error: {error}", file=sys.stderr)
        return None
    return compact


def _serve(args: argparse.Namespace, workspace: Path) -> int:
    """`tui-agent serve`: each browser tab runs `tui-agent` with the session flags passed on."""
    if args.prompt is not None or args.allow_write:
        print("error: serve opens the TUI for each browser tab; -p and --allow-write do not apply",
              file=sys.stderr)
        return exit_codes.USAGE
    if args.transcript is not None:
        if _load_transcript(args.transcript) is None:  # fail here once, not in every tab
            return exit_codes.USAGE
        args.transcript = args.transcript.resolve()
    from tui_agent.web.launch import serve

    return serve(workspace, host=args.host, port=args.port, max_tabs=args.max_tabs,
                 session_flags={name: getattr(args, name) for name in SERVE_PASSTHROUGH
                                if getattr(args, name) is not None})


def _run_tui(args: argparse.Namespace, workspace: Path, model, provider, compact, transcript, resume,
             source: str | None) -> int:
    """The TUI (also each `serve` tab): the session through the one door, then the app."""
    # Start-up allocates hundreds of thousands of objects that all live on; pausing the cyclic GC until
    # the first frame (the app re-enables it) saves about a tenth of the time to the first frame (usually
    # paused already: `_main`).
    gc.disable()
    from tui_agent.core.agent.door import SessionOptions, SessionRefused, open_session
    from tui_agent.ui.app import run_app, setup_trace_log

    trace_notice = setup_trace_log()  # before any trace line: on the TUI they go to a log file
    try:
        opened = open_session(SessionOptions(
            workspace=workspace, face="tui", model=model, provider=provider, max_turns=args.max_turns,
            demo_delay=0.01, context_window=args.context_window, max_output_tokens=args.max_output_tokens,
            compact=compact, history=transcript[0] if transcript else (),
            history_notice=transcript[1] if transcript else None, written_by=transcript[2] if transcript else {},
            prepare=(journal_hook(resume.load, source, view=transcript is not None),),
            approve_compaction=getattr(args, "approve_compaction", None) or None))
    except SessionRefused as refused:
        print(f"error: {refused}", file=sys.stderr)
        return exit_codes.USAGE
    notices = opened.notices
    if trace_notice is not None:
        notices.insert(0, trace_notice)
    return run_app(opened.session, startup_notices=notices, resumed=resume.load is not None, pick_session=resume.pick)


def _print_outbound(args, workspace: Path, model, provider, prompt, load, transcript, compact) -> int:
    """`--print-outbound`: the session as it would be (new, resumed or a transcript), never journaled."""
    from tui_agent.core.agent.door import SessionOptions, SessionRefused, open_session
    from tui_agent.core.journal.resume import restore
    from tui_agent.faces.sessions import print_notice, print_outbound

    try:
        opened = open_session(SessionOptions(
            workspace=workspace, face="outbound", model=model, provider=provider, headless=True,
            allow_write=True if args.allow_write else None, context_window=args.context_window,
            max_output_tokens=args.max_output_tokens, compact=compact,
            history=transcript[0] if transcript else (), written_by=transcript[2] if transcript else {},
            prepare=(lambda session: restore(session, load).notices,) if load is not None else ()))
    except SessionRefused as refused:
        print(f"error: {refused}", file=sys.stderr)
        return exit_codes.USAGE
    for notice in opened.notices:
        print_notice(notice)  # ("Resumed session <id>": the id comes from the file's header)
    return print_outbound(opened.session, prompt)


if __name__ == "__main__":
    raise SystemExit(main())
