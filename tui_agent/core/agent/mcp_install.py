"""Wire MCP into a Session: a background start-up task, a closer, and the `/mcp` command.

`install_mcp` itself does no I/O and imports nothing heavy: the config is read and the servers are
started in the session's background start-up (after the TUI's first frame; before the first headless
turn), where the `mcp` SDK's ~1 s import is paid too. No config means no MCP and no notice at all.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import Mapping

from tui_agent.core.agent.commands import Command, CommandHost, CommandResult, McpHost
from tui_agent.core.events import Notice
from tui_agent.core.mcp.state import McpState

NO_CONFIG_TEXT = (
    "No MCP servers configured. Add them to .mcp.json in the workspace, for example:\n"
    '  {{"mcpServers": {{"time": {{"command": "python", "args": ["-m", "mcp_server_time"]}}}}}}\n'
    "(after `pip install mcp-server-time`), or to {user} (user-wide), or list config files in MCP_CONFIG "
    "(comma-separated)."
)


TRUST_FLAG = "--trust-project-mcp"
TRUST_TITLE = "Start this project's MCP servers?"
TRUST_EXPLANATION = (
    "The repository's MCP config wants to run these on your machine. They start with your environment "
    "and run outside the permission gate, so approve only a project you trust. The answer is remembered "
    "for this project; a changed server definition asks again."
)


def install_mcp(
    session: McpHost,
    *,
    environ: Mapping[str, str] | None = None,
    log_dir: Path | None = None,
    start_timeout: float | None = None,
    call_timeout: float | None = None,
    trust_project: bool = False,
) -> None:
    """Add MCP start-up to `session.background_start`, its shutdown to `session.closers`, and `/mcp`.

    Servers defined inside the workspace (the repository's `.mcp.json`, or an `MCP_CONFIG` file inside it)
    start only once approved (see core/access/trust.py): the face is asked through `session.ask_trust`; with
    nobody to ask (headless) they stay off unless `trust_project` (`--trust-project-mcp`) is set. The
    user's own `mcp.json` and `MCP_CONFIG` files outside the workspace are trusted as they are.
    Other keyword arguments exist for tests.
    """
    state = McpState()
    session.mcp = state

    async def start(session: McpHost) -> list[Notice]:
        from tui_agent.core.mcp.config import (
            McpConfigError,
            config_paths,
            load_config,
            user_config_dir,
        )
        env = os.environ if environ is None else environ
        state.user_config = user_config_dir(env) / "mcp.json"
        try:
            config = load_config(config_paths(session.workspace, env), env)
        except McpConfigError as error:
            state.phase, state.error = "error", str(error)
            return [Notice(f"{error}. Running without MCP servers.", "warning")]
        if config is None:
            state.phase = "none"
            return []
        # the manager (and its client) only with a config: `-p` and the TUI import neither for nothing
        from tui_agent.core.mcp.manager import (
            DEFAULT_START_TIMEOUT,
            McpManager,
            call_timeout_from_env,
            default_log_dir,
        )

        notices, startable = await _approve_project_servers(session, config, state, env, trust_project)
        manager = McpManager(
            replace(config, servers=startable),
            cwd=session.workspace,
            log_dir=log_dir or default_log_dir(env),
            start_timeout=start_timeout or DEFAULT_START_TIMEOUT,
            call_timeout=call_timeout or call_timeout_from_env(env),
        )
        state.manager, state.phase = manager, "starting"
        notices += await manager.start()
        for tool in manager.tools:
            session.tools.add(tool)
        state.phase = "ready"
        return notices

    async def close() -> None:
        if state.manager is not None:
            await state.manager.aclose()

    session.background_start.append(start)
    session.closers.append(close)
    session.commands.register(Command("mcp", "Show MCP servers: status, tools, last error, log file", mcp_command))


async def _approve_project_servers(session: McpHost, config, state: McpState, env: Mapping[str, str],
                                   trust_project: bool) -> tuple[list[Notice], dict]:
    """(notices, the servers that may start): trusted ones, and project ones the user approved."""
    from tui_agent.core.access.trust import (
        TrustItem,
        TrustQuestion,
        TrustStore,
        digest,
        is_project_file,
        trust_path,
    )
    from tui_agent.core.mcp.config import USER_CONFIG_NAME, user_config_dir

    user_file = user_config_dir(env) / USER_CONFIG_NAME
    items = {
        name: TrustItem("mcp", name, digest(server.definition or server.describe()), _shown(server),
                        server.source or session.workspace)
        for name, server in config.servers.items()
        if is_project_file(server.source, session.workspace, (user_file,))
    }
    store = TrustStore(trust_path(env))
    status: dict[str, str] = {name: store.status(session.workspace, item) for name, item in items.items()}
    pending = [item for name, item in items.items() if status[name] == "pending"]
    notices: list[Notice] = []
    if pending and trust_project:
        status.update({item.name: "approved for this run" for item in pending})
    elif pending and session.ask_trust is not None:
        question = TrustQuestion(TRUST_TITLE, TRUST_EXPLANATION, pending)
        answer = await session.ask_trust(question)
        if answer in ("approved", "refused"):
            problem = store.record(session.workspace, pending, answer)
            if problem:
                notices.append(Notice(problem, "warning"))
            status.update({item.name: answer for item in pending})
    elif pending:
        names = ", ".join(f'"{item.name}"' for item in pending)
        sources = ", ".join(sorted({str(item.source) for item in pending}))
        notices.append(Notice(f"Project MCP server(s) {names} from {sources} not started: not approved. "
                              f"Re-run with {TRUST_FLAG} to start them.", "warning"))
    state.trust = status
    state.project_servers = {name: item.summary for name, item in items.items()}
    startable = {name: server for name, server in config.servers.items()
                 if name not in items or status[name].startswith("approved")}
    return notices, startable


def _shown(server) -> str:
    """What the approval question shows: the exact command line (quoted) or URL, and what it is given."""
    import shlex

    if server.type == "http":
        text = server.url
        if server.headers:
            text += f"  (headers: {', '.join(sorted(server.headers))})"
        return text
    text = shlex.join([server.command, *server.args])
    if server.env:
        text += f"  (env: {', '.join(sorted(server.env))})"
    return text


def trust_lines(state: McpState) -> list[str]:
    """The /mcp section for project servers: which are approved, refused or waiting for an answer."""
    if not state.project_servers:
        return []
    lines = ["Project servers (defined in the repository; they start only once approved):"]
    for name, summary in state.project_servers.items():
        answer = state.trust.get(name, "pending")
        shown = {"pending": "pending (not approved: not started)", "refused": "refused (not started)"}.get(answer, answer)
        lines.append(f"  {name}: {shown} · {summary}")
    if any(state.trust.get(name, "pending") == "pending" for name in state.project_servers):
        lines.append(f"  (the TUI asks at start-up; headless: {TRUST_FLAG})")
    return lines


def mcp_command(session: CommandHost, args: str) -> CommandResult:
    state = session.mcp
    if state is None or state.phase == "waiting":
        return CommandResult("MCP: not started yet.")
    if state.phase == "error":
        return CommandResult(f"MCP is off: {state.error}", level="warning")
    if state.phase == "none" or state.manager is None:
        return CommandResult(NO_CONFIG_TEXT.format(user=state.user_config or "the user config dir"))
    text = "\n".join([state.manager.status_text(), *trust_lines(state)])
    if state.phase == "starting":
        text = "MCP servers are starting…\n" + text
    return CommandResult(text)
