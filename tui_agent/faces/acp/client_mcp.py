"""MCP servers the client gives in `session/new` / `session/load`, started by our own MCP code.

The editor is the user's own configuration, so its servers are trusted like the user's `mcp.json`: they are
written to a private config file outside the workspace and listed in `MCP_CONFIG` after the files that
would be read anyway (the user's, and the workspace's `.mcp.json`, which still needs the usual approval).
Nothing of the MCP code changes: the same start-up, time-outs, logs, trust rules and `/mcp`.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tui_agent.core.mcp.config import PROJECT_CONFIG_NAME


def server_entries(servers: list[Any]) -> dict[str, dict[str, Any]]:
    """ACP server descriptions → our `mcpServers` entries (stdio and http; others are left out)."""
    entries: dict[str, dict[str, Any]] = {}
    for server in servers or []:
        name = getattr(server, "name", "")
        if not name:
            continue
        if getattr(server, "command", None):
            entries[name] = {"command": server.command, "args": list(server.args or []),
                             "env": {item.name: item.value for item in server.env or []}}
        elif getattr(server, "url", None) and getattr(server, "type", "http") == "http":
            entries[name] = {"type": "http", "url": server.url,
                             "headers": {item.name: item.value for item in server.headers or []}}
    return entries


def env_with_client_servers(servers: list[Any], workspace: Path,
                            env: Mapping[str, str]) -> tuple[dict[str, str], Path | None]:
    """`env` with `MCP_CONFIG` naming a private file of the client's servers, and that file's folder (to
    remove when the session closes); unchanged and None when there are none."""
    entries = server_entries(servers)
    merged = dict(env)
    if not entries:
        return merged, None
    folder = Path(tempfile.mkdtemp(prefix="tui-agent-acp-mcp-"))
    path = folder / "mcp.json"
    path.write_text(json.dumps({"mcpServers": entries}), encoding="utf-8")
    os.chmod(path, 0o600)  # the client's env and headers may carry tokens
    listed = env.get("MCP_CONFIG", "").strip() or str(workspace / PROJECT_CONFIG_NAME)
    merged["MCP_CONFIG"] = f"{listed},{path}"
    return merged, folder
