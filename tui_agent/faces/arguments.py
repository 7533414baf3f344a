"""The command line's grammar: every flag of `tui-agent`, `-p` and `serve`, its default and its help text.

Its own concept because it is read, not run: `--help` and the parse build it, the run (`cli.py`) only
reads the namespace it gives. What `--help` states is read from where it is decided (`help_defaults`:
the compaction policy, the model table, the loop's limit), only when `--help` is asked, so the way to a
run or to `--version` imports nothing heavy (< 0.15 s). The subcommands are listed from `faces/table.FACES`.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from tui_agent import __version__
from tui_agent.faces.env_help import ENV_HELP
from tui_agent.faces.sessions import add_session_flags
from tui_agent.faces.table import FACES


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
    from tui_agent.core.agent.loop_state import DEFAULT_MAX_TURNS
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
    provider = parser.add_argument("--provider", default=default, help="force a provider (bedrock/vertex/foundry: "
                                   "Claude on that cloud, configured as Claude Code's CLAUDE_CODE_USE_* variables are)")
    provider.choices = ProviderChoices()  # set after: add_argument lists the choices to check its own formatting
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
                        help=f"compact down to MARK: a fraction of what the working budget leaves above the base (system "
                        f"prompt and tools), or whole tokens; below --compact-high; default {d.low}, "
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
