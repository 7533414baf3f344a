"""Command line: `tui-agent` opens the TUI; `tui-agent -p PROMPT` runs one request headless;
`tui-agent serve` serves the TUI to browser tabs.

Start-up cost matters (`--version` and `--help` must answer in well under 0.15 s), so this module imports
only the standard library at the top; the core, Textual and the SDKs load when a mode needs them.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
from pathlib import Path
from typing import Mapping, TextIO

from tui_agent import __version__
from tui_agent.faces import exit_codes
from tui_agent.faces.sessions import (add_session_flags, journal_hook, model_for, print_notice,
                                     resolve_resume, workspace_for)
from tui_agent.faces.table import FACES, SUBCOMMANDS, run_subcommand
from tui_agent.core.formats import plural
from tui_agent.faces.env_help import ENV_HELP

# The session flags `serve` passes on to the app it starts for each browser tab.
SERVE_PASSTHROUGH = ("model", "provider", "max_turns", "context_window", "max_output_tokens", "transcript",
                     "compact", "compact_high", "compact_low", "budget", "approve_compaction")


class ProviderChoices:
    """`--provider`'s choices: the rows of `providers/config.PROVIDERS`, then the demo model. Read when
    argparse first asks (a `--provider` given, or `--help`): that table imports half the engine, and
    `--version` must not wait for it."""

    def names(self) -> tuple[str, ...]:
        from tui_agent.core.providers.config import PROVIDER_NAMES

        return (*PROVIDER_NAMES, "demo")

    def __contains__(self, name: object) -> bool:
        return name in self.names()

    def __iter__(self):  # noqa: ANN204
        return iter(self.names())


class HelpDefaults:
    """The defaults `--help` states, read from where they are decided (plain class: `dataclasses` costs
    start-up time). Only `--help` builds the real ones (`help_defaults()`): the policy and the model table
    are not imported on the way to a run or to `--version`."""

    def __init__(self, high: str = "", low: str = "", demo_low: str = "", model: str = "", openai_model: str = "",
                 max_turns: str = "") -> None:
        self.high, self.low, self.demo_low = high, low, demo_low
        self.model, self.openai_model, self.max_turns = model, openai_model, max_turns


def help_defaults() -> HelpDefaults:
    from tui_agent.core.compaction.policy import CompactPolicy
    from tui_agent.core.agent.loop import DEFAULT_MAX_TURNS
    from tui_agent.core.providers.demo import demo_policy
    from tui_agent.core.models import DEFAULT_ANTHROPIC_MODEL, DEFAULT_OPENAI_MODEL

    policy = CompactPolicy()
    return HelpDefaults(f"{policy.high_water:g}", f"{policy.low_water:g}", f"{demo_policy().low_water:g}",
                        DEFAULT_ANTHROPIC_MODEL, DEFAULT_OPENAI_MODEL, str(DEFAULT_MAX_TURNS))


def wants_help(argv: list[str]) -> bool:
    return any(arg in ("-h", "--help") for arg in argv)


def build_parser(defaults: HelpDefaults | None = None) -> argparse.ArgumentParser:
    defaults = defaults or HelpDefaults()
    parser = argparse.ArgumentParser(
        prog="tui-agent",
        description="A terminal coding agent with a live context-budget panel. "
        "With no arguments it opens the TUI; with -p it answers one request headless; "
        "`tui-agent serve` serves the TUI in a browser; `tui-agent sessions` lists saved sessions, "
        "`tui-agent export ID` prints one, `tui-agent replay FILE` steps through a recorded session, `tui-agent watch FILE|--latest` follows one being written.",
        epilog=ENV_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("-p", "--print", dest="prompt", nargs="?", const="-", default=None, metavar="PROMPT",
                        help="run PROMPT headless: the answer streams to stdout, tool activity to stderr "
                        "('-' or no value: read the prompt from stdin)")
    _add_session_flags(parser, defaults=defaults)
    parser.add_argument("--allow-write", action="store_true",
                        help="headless: allow tools that change things (Write, Edit, Bash, MCP)")
    parser.add_argument("--trust-project-mcp", action="store_true",
                        help="headless: start the MCP servers of the workspace's own .mcp.json (the TUI asks)")
    add_session_flags(parser)
    parser.add_argument("--version", action="version", version=f"tui-agent {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", title="commands")
    serve = commands.add_parser(
        "serve", help="serve the TUI in a browser (each tab is its own session in the workspace)",
        description="Serve the TUI to web browsers through textual-serve: each tab runs its own session "
        "in the workspace. Anyone who can reach the port and has the token can run tools there, so it "
        "listens on loopback unless --host says otherwise; open the printed URL (it carries the token).")
    serve.add_argument("--host", default="127.0.0.1",
                       help="address to listen on (default 127.0.0.1; anything else exposes the workspace)")
    serve.add_argument("--port", type=int, default=8000, help="port to listen on (default 8000)")
    serve.add_argument("--max-tabs", type=int, default=8, metavar="N",
                       help="most browser tabs (app processes) running at once (default 8)")
    # SUPPRESS: a flag given before `serve` (`tui-agent --model demo serve`) is not reset by the subcommand.
    _add_session_flags(serve, default=argparse.SUPPRESS, defaults=defaults)
    for face in FACES:  # dispatched before parsing (faces/table.py); listed here for --help
        commands.add_parser(face.name, help=face.help, add_help=False)
    return parser


def _add_session_flags(parser: argparse.ArgumentParser, default: object = None,
                       defaults: HelpDefaults | None = None) -> None:
    """The flags that shape a session, shared by the TUI, -p and `serve`."""
    d = defaults or HelpDefaults()
    parser.add_argument("--model", default=default,
                        help=f"model id, or 'demo' for the offline demo model (default: {d.model} with "
                        f"ANTHROPIC_API_KEY, {d.openai_model} with OPENAI_API_KEY, else demo)")
    parser.add_argument("--provider", choices=ProviderChoices(),
                        default=default, help="force a provider (bedrock/vertex/foundry: Claude on that cloud, "
                        "configured as Claude Code's CLAUDE_CODE_USE_* variables are)")
    parser.add_argument("--max-turns", type=int, default=default, metavar="N",
                        help=f"stop after N model calls in one request (default {d.max_turns})")
    parser.add_argument("--context-window", type=int, default=default, metavar="TOKENS",
                        help="override the model's context window (same as CONTEXT_WINDOW_TOKENS)")
    parser.add_argument("--max-output-tokens", type=int, default=default, metavar="TOKENS",
                        help="max output tokens per call (same as MAX_OUTPUT_TOKENS)")
    parser.add_argument("--transcript", type=Path, default=default, metavar="FILE",
                        help="load a Claude Code session log (.jsonl) into the history, to see what compaction "
                        "would send and continue from it")
    parser.add_argument("--compact", default=default, metavar="MODE",
                        help="compaction strategy: v2 (default: tiered, cache-aware), v1, seed, off, server-clear / "
                        "server-compact (the API's own context editing / compaction)")
    parser.add_argument("--compact-high", default=default, metavar="MARK",
                        help="compact when a request would exceed MARK: a fraction of the working budget "
                        f"(--budget; 0 < MARK <= 1), or whole tokens (>= 1000); default {d.high}")
    parser.add_argument("--compact-low", default=default, metavar="MARK",
                        help=f"compact down to MARK (a fraction or whole tokens, below --compact-high; default {d.low}, "
                        f"{d.demo_low} for the demo model)")
    parser.add_argument("--budget", default=default, metavar="TOKENS",
                        help="the working budget in tokens (e.g. 150000 or 150k) that the compaction marks are "
                        "shares of; default: chosen from the model's cache prices (same as COMPACT_BUDGET)")
    parser.add_argument("--approve-compaction", action="store_true", default=default,
                        help="ask before each compaction event: approve, edit (pin/exclude) or postpone it "
                        "(same as COMPACT_APPROVE=1; /approve toggles; -p and ACP never wait)")
    parser.add_argument("--compact-summary", action="store_true", default=default,
                        help="let the model summarise what compaction drops (one extra call per event)")
    parser.add_argument("--cache-1h", action="store_true", default=default,
                        help="ask Claude for the 1-hour prompt cache: writes cost 2x, the prefix stays an hour "
                        "(same as ENABLE_PROMPT_CACHING_1H=1)")
    parser.add_argument("--thinking-tokens", type=int, default=default, metavar="TOKENS",
                        help="extended thinking with this budget per call (same as MAX_THINKING_TOKENS)")
    parser.add_argument("--keep-warm", type=float, default=default, metavar="MINUTES", help="keep the prompt "
                        "cache warm this long while idle (0 = off; default: what the price pays for; TUI_AGENT_KEEP_WARM)")
    parser.add_argument("--idle", choices=("auto", "ping", "compact", "cold"), default=default, help="what the "
                        "session does while it waits: the cheapest of ping / compact / cold at each moment (auto, "
                        "the default), or always that one (TUI_AGENT_IDLE; -p ends after its answer and never waits)")
    parser.add_argument("-C", "--cwd", type=Path, default=default, metavar="DIR",
                        help="workspace (default: current directory)")


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
    # the first frame (the app re-enables it) saves about a tenth of the time to the first frame.
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
