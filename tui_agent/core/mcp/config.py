"""MCP server configuration: Claude Code's `.mcp.json` format, read from a user file and the workspace.

Files, lowest priority first: the user-level `mcp.json` (in `platformdirs.user_config_path("tui-agent")`,
or `$TUI_AGENT_CONFIG_DIR`), then either the files listed in `MCP_CONFIG` (comma-separated, relative to
the current directory) or `<workspace>/.mcp.json`. A later file replaces a same-named server entry
entirely (the seed's rule), so a project can override a user's server without merging half an entry.

Nothing here imports the `mcp` SDK: loading a config must stay cheap enough to run before the TUI's
first frame. A file that does not parse or does not fit the format raises `McpConfigError` for the whole
config (one clear warning, no MCP), rather than starting a half-understood set of servers.
"""

from __future__ import annotations

import json

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Mapping

from tui_agent.core.config_files import UnreadableFile, parse_json, read_text_capped

USER_CONFIG_NAME = "mcp.json"
PROJECT_CONFIG_NAME = ".mcp.json"
SUPPORTED_TYPES = ("stdio", "http")
# Other spellings people use for the streamable HTTP transport.
TYPE_ALIASES = {"streamable-http": "http", "streamable_http": "http", "streamableHttp": "http"}

_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


class McpConfigError(Exception):
    """The MCP configuration cannot be used; the message names the file and what is wrong."""


@dataclass(frozen=True)
class ServerConfig:
    """One server entry after validation and `${VAR}` expansion."""

    name: str
    type: Literal["stdio", "http"] = "stdio"
    command: str = ""
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    url: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    source: Path | None = None
    # Variables referenced with `${VAR}` (no default) that were not set: reported as a warning.
    missing_vars: tuple[str, ...] = ()
    # The entry as written in the file (canonical JSON, before `${VAR}` expansion): what a project
    # server's approval is bound to, so any change to it asks again while a rotated token does not.
    definition: str = field(default="", compare=False)

    def describe(self) -> str:
        """`command args` or the URL: what /mcp and warnings show."""
        if self.type == "http":
            return self.url
        return " ".join([self.command, *self.args])


@dataclass(frozen=True)
class McpConfig:
    servers: dict[str, ServerConfig]
    files: tuple[Path, ...]  # the files that existed and were read, in order
    # Servers whose `type` we do not speak (e.g. "sse"): name → reason, shown as warnings.
    unsupported: dict[str, str] = field(default_factory=dict)


def user_config_dir(environ: Mapping[str, str] | None = None) -> Path:
    from tui_agent.core.paths import config_dir

    return config_dir(environ)


def config_paths(workspace: Path, environ: Mapping[str, str] | None = None, cwd: Path | None = None) -> list[Path]:
    """Candidate files in merge order (later wins); missing ones are skipped by `load_config`."""
    environ = os.environ if environ is None else environ
    paths = [user_config_dir(environ) / USER_CONFIG_NAME]
    listed = environ.get("MCP_CONFIG", "").strip()
    if listed:
        base = cwd or Path.cwd()
        for part in listed.split(","):
            part = part.strip()
            if part:
                path = Path(part).expanduser()
                paths.append(path if path.is_absolute() else base / path)
    else:
        paths.append(Path(workspace) / PROJECT_CONFIG_NAME)
    return paths


def expand_vars(value: str, environ: Mapping[str, str], missing: set[str]) -> str:
    """Claude Code's `${VAR}` / `${VAR:-default}`; an unset variable without default stays as written."""

    def replace(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        if name in environ:
            return environ[name]
        if default is not None:
            return default
        missing.add(name)
        return match.group(0)

    return _VAR.sub(replace, value)


def load_config(paths: list[Path], environ: Mapping[str, str] | None = None) -> McpConfig | None:
    """Read and merge `paths`; None when none of them exists ("no MCP, no noise")."""
    environ = os.environ if environ is None else environ
    merged: dict[str, tuple[dict[str, Any], Path]] = {}
    found: list[Path] = []
    for path in paths:
        try:
            text = read_text_capped(path)
        except UnreadableFile as error:
            if error.strerror == "is a folder":
                raise McpConfigError(f"MCP config is a directory, not a file: {path}") from None
            raise McpConfigError(f"Cannot read MCP config {path}: it {error.strerror}") from None
        if text is None:
            continue
        found.append(path)
        for name, entry in _parse_file(text, path).items():
            merged[name] = (entry, path)
    if not found:
        return None
    servers: dict[str, ServerConfig] = {}
    unsupported: dict[str, str] = {}
    for name, (entry, path) in merged.items():
        server = _server(name, entry, path, environ)
        if isinstance(server, str):
            unsupported[name] = server
        else:
            servers[name] = server
    return McpConfig(servers, tuple(found), unsupported)


def _parse_file(text: str, path: Path) -> dict[str, Any]:
    try:
        data = parse_json(text) if text.strip() else None
    except ValueError as error:
        raise McpConfigError(f"Invalid JSON in MCP config {path} ({error})") from None
    if not isinstance(data, dict):
        raise McpConfigError(f"Invalid MCP config {path}: expected a JSON object")
    servers = data.get("mcpServers")
    if not isinstance(servers, dict):
        raise McpConfigError(f'Invalid MCP config {path}: expected an "mcpServers" object')
    return servers


def _server(name: str, entry: Any, path: Path, environ: Mapping[str, str]) -> ServerConfig | str:
    """A validated entry, or a string saying why this (valid) entry uses a transport we lack."""

    def bad(message: str) -> McpConfigError:
        return McpConfigError(f'Invalid MCP server "{name}" in {path}: {message}')

    if not isinstance(entry, dict):
        raise bad("expected an object")
    kind = entry.get("type", "stdio")
    if not isinstance(kind, str):
        raise bad('"type" must be a string')
    kind = TYPE_ALIASES.get(kind, kind)
    if kind not in SUPPORTED_TYPES:
        return f'type "{kind}" is not supported (use "stdio" or "http")'
    missing: set[str] = set()

    def expand(value: str) -> str:
        return expand_vars(value, environ, missing)

    def string_map(key: str) -> dict[str, str]:
        value = entry.get(key, {})
        if value is None:
            return {}
        if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
            raise bad(f'"{key}" must be an object of strings')
        return {str(k): expand(v) for k, v in value.items()}

    if kind == "http":
        url = entry.get("url")
        if not isinstance(url, str) or not url.strip():
            raise bad('an "http" server needs a non-empty "url" string')
        return ServerConfig(name, "http", url=expand(url.strip()), headers=string_map("headers"), source=path,
                            missing_vars=tuple(sorted(missing)), definition=_canonical(entry))
    command = entry.get("command")
    if not isinstance(command, str) or not command.strip():
        raise bad('needs a non-empty "command" string')
    args = entry.get("args", [])
    if args is None:
        args = []
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise bad('"args" must be an array of strings')
    return ServerConfig(
        name,
        "stdio",
        command=expand(command.strip()),
        args=tuple(expand(a) for a in args),
        env=string_map("env"),
        source=path,
        missing_vars=tuple(sorted(missing)),
        definition=_canonical(entry),
    )


def _canonical(entry: dict[str, Any]) -> str:
    return json.dumps(entry, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
