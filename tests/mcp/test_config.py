"""MCP config: Claude Code's `.mcp.json` format, file order and merging, `${VAR}` expansion, errors.

Pure file handling: no server process is started here.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.mcp.helpers import write_config
from tui_agent.core.mcp.config import McpConfigError, config_paths, expand_vars, load_config


def load(workspace: Path, environ: dict[str, str], cwd: Path | None = None):
    return load_config(config_paths(workspace, environ, cwd=cwd), environ)


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """An environment whose user config dir is empty and private to the test."""
    return {"TUI_AGENT_CONFIG_DIR": str(tmp_path / "user")}


def test_no_config_means_no_mcp(tmp_path, env):  # AC-MC1
    assert load(tmp_path, env) is None


def test_valid_file_round_trips(tmp_path, env):  # AC-MC1
    write_config(tmp_path / ".mcp.json", {"demo": {"command": "npx", "args": ["-y", "some-server"]}})
    config = load(tmp_path, env)
    server = config.servers["demo"]
    assert (server.type, server.command, server.args, server.env) == ("stdio", "npx", ("-y", "some-server"), {})
    assert config.files == (tmp_path / ".mcp.json",)


def test_invalid_json_names_the_file(tmp_path, env):  # AC-MC2
    (tmp_path / ".mcp.json").write_text('{"mcpServers": {', encoding="utf-8")
    with pytest.raises(McpConfigError, match=r"Invalid JSON in MCP config .*\.mcp\.json \(line 1"):
        load(tmp_path, env)


@pytest.mark.parametrize(
    ("servers", "message"),
    [
        ({"demo": {"args": ["x"]}}, 'server "demo".*non-empty "command"'),
        ({"demo": {"command": "  "}}, '"command"'),
        ({"demo": "npx"}, "expected an object"),
        ({"demo": {"command": "x", "args": "one two"}}, '"args" must be an array of strings'),
        ({"demo": {"command": "x", "env": {"N": 1}}}, '"env" must be an object of strings'),
        ({"web": {"type": "http"}}, '"url"'),
    ],
)
def test_invalid_server_entries(tmp_path, env, servers, message):  # AC-MC2
    write_config(tmp_path / ".mcp.json", servers)
    with pytest.raises(McpConfigError, match=message):
        load(tmp_path, env)


def test_missing_mcp_servers_object(tmp_path, env):
    (tmp_path / ".mcp.json").write_text('{"servers": {}}', encoding="utf-8")
    with pytest.raises(McpConfigError, match='"mcpServers" object'):
        load(tmp_path, env)


def test_mcp_config_lists_files_and_later_files_win(tmp_path, env):  # AC-MC3
    write_config(tmp_path / "a.json", {"one": {"command": "one"}, "shared": {"command": "from-a", "args": ["x"]}})
    write_config(tmp_path / "b.json", {"shared": {"command": "from-b"}, "two": {"command": "two"}})
    write_config(tmp_path / ".mcp.json", {"ignored": {"command": "x"}})
    env["MCP_CONFIG"] = " a.json , ,b.json "
    paths = config_paths(tmp_path, env, cwd=tmp_path)
    assert paths[1:] == [tmp_path / "a.json", tmp_path / "b.json"]
    config = load(tmp_path, env, cwd=tmp_path)
    assert list(config.servers) == ["one", "shared", "two"]
    # The later entry replaces the earlier one whole: no args survive from a.json.
    assert (config.servers["shared"].command, config.servers["shared"].args) == ("from-b", ())


def test_missing_listed_file_is_skipped(tmp_path, env):
    write_config(tmp_path / "a.json", {"one": {"command": "one"}})
    env["MCP_CONFIG"] = f"{tmp_path / 'a.json'},{tmp_path / 'gone.json'}"
    assert list(load(tmp_path, env).servers) == ["one"]


def test_user_config_is_merged_under_the_project(tmp_path, env):
    user = Path(env["TUI_AGENT_CONFIG_DIR"]) / "mcp.json"
    write_config(user, {"mine": {"command": "mine"}, "both": {"command": "user"}})
    write_config(tmp_path / ".mcp.json", {"both": {"command": "project"}})
    config = load(tmp_path, env)
    assert {n: s.command for n, s in config.servers.items()} == {"mine": "mine", "both": "project"}
    assert config.files == (user, tmp_path / ".mcp.json")


def test_var_expansion_in_every_value(tmp_path, env):
    env.update(TOKEN="s3cret", BIN="/opt/bin")
    write_config(tmp_path / ".mcp.json", {
        "demo": {"command": "${BIN}/server", "args": ["--token=${TOKEN}", "${MODE:-fast}", "$TOKEN"],
                 "env": {"API_KEY": "${TOKEN}", "LEVEL": "${LEVEL:-}"}},
        "web": {"type": "http", "url": "https://${HOST:-localhost}/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}},
    })
    config = load(tmp_path, env)
    demo, web = config.servers["demo"], config.servers["web"]
    assert demo.command == "/opt/bin/server"
    assert demo.args == ("--token=s3cret", "fast", "$TOKEN")  # only ${...} is expanded, as in Claude Code
    assert demo.env == {"API_KEY": "s3cret", "LEVEL": ""}
    assert (web.type, web.url, web.headers) == ("http", "https://localhost/mcp", {"Authorization": "Bearer s3cret"})
    assert demo.missing_vars == () and web.missing_vars == ()


def test_unset_var_without_default_stays_and_is_reported(tmp_path, env):
    write_config(tmp_path / ".mcp.json", {"demo": {"command": "x", "env": {"KEY": "${NOPE_NOT_SET}"}}})
    server = load(tmp_path, env).servers["demo"]
    assert server.env == {"KEY": "${NOPE_NOT_SET}"}
    assert server.missing_vars == ("NOPE_NOT_SET",)


def test_expand_vars_directly():
    missing: set[str] = set()
    assert expand_vars("${A}-${B:-b}-${C}", {"A": "a"}, missing) == "a-b-${C}"
    assert missing == {"C"}


def test_unsupported_transport_is_skipped_not_fatal(tmp_path, env):
    write_config(tmp_path / ".mcp.json", {"old": {"type": "sse", "url": "http://x"}, "ok": {"command": "x"},
                                          "alias": {"type": "streamable-http", "url": "http://y"}})
    config = load(tmp_path, env)
    assert list(config.servers) == ["ok", "alias"] and config.servers["alias"].type == "http"
    assert "sse" in config.unsupported["old"]
