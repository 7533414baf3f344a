"""`tui-agent serve`: the command line each tab runs, the exposure warning, and the server's run.

Each tab runs `python -m tui_agent -C WORKSPACE [session flags]`, the very command a terminal user
types, so a web session is built by the same `build_session` as the terminal app and behaves the same.
textual-serve sets TEXTUAL_DRIVER for it, which is how the app knows to open under the web driver
instead of reading its piped stdin as a headless prompt (see `cli.headless_prompt`).
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Mapping

from tui_agent.web.server import DEFAULT_MAX_TABS, AgentServer, is_loopback, url_host

FLAG_NAMES = {
    "approve_compaction": "--approve-compaction",
    "model": "--model",
    "provider": "--provider",
    "max_turns": "--max-turns",
    "context_window": "--context-window",
    "max_output_tokens": "--max-output-tokens",
    "transcript": "--transcript",
    "compact": "--compact",
    "compact_high": "--compact-high",
    "compact_low": "--compact-low",
}


def app_command(workspace: Path, session_flags: Mapping[str, object], python: str = sys.executable) -> str:
    """The shell command textual-serve runs for each browser tab."""
    argv = [python, "-m", "tui_agent", "-C", str(workspace)]
    for name, value in session_flags.items():
        argv += [FLAG_NAMES[name]] if value is True else [FLAG_NAMES[name], str(value)]  # a switch: no value
    return shlex.join(argv)


def exposure_warning(host: str, port: int, workspace: Path) -> str | None:
    """The warning for a non-loopback host (None on loopback)."""
    if is_loopback(host):
        return None
    return (f"warning: listening on {host}: anyone who can reach port {port} can open a session and run tools "
            f"(Bash, Write, Edit, MCP) in {workspace} once they have the URL's token (it travels unencrypted: "
            "plain http). Use 127.0.0.1 and an SSH tunnel unless you trust the whole network.")


def serve(workspace: Path, *, host: str, port: int, session_flags: Mapping[str, object],
          max_tabs: int = DEFAULT_MAX_TABS) -> int:
    """Serve until Ctrl+C or SIGTERM; 0 on a clean stop, 1 when the port cannot be used."""
    if not 1 <= port <= 65535:
        print(f"error: --port {port} is not a port number (1-65535)", file=sys.stderr)
        return 2
    if max_tabs < 1:
        print(f"error: --max-tabs {max_tabs} must be at least 1", file=sys.stderr)
        return 2
    if (warning := exposure_warning(host, port, workspace)) is not None:
        print(warning, file=sys.stderr, flush=True)
    server = AgentServer(app_command(workspace, session_flags), host=host, port=port,
                         title=f"tui-agent · {workspace.name or workspace}", workspace=workspace, max_tabs=max_tabs)
    try:
        server.serve()
    except OSError as error:  # port in use, address not on this machine, permission denied
        print(f"error: cannot listen on {url_host(host)}:{port}: {error.strerror or error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        pass
    return 0
