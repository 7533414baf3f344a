"""A repository cannot switch things on by itself (issue 9, items 1 and 2): its MCP servers and its
allow rules need the user's approval, remembered per project and per definition."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.mcp.helpers import demo_entry, write_config
from tests.ui.support import make_app
from tui_agent.core.agent.factory import build_session
from tui_agent.core.agent.mcp_install import install_mcp
from tui_agent.core.access.rules import Rule
from tui_agent.core.access.gate import PermissionPolicy
from tui_agent.core.providers.scripted import ScriptedProvider
from tui_agent.core.agent.session import Session
from tui_agent.core.tools.base import ToolContext, ToolRegistry
from tui_agent.core.tools.bash import BashTool
from tui_agent.core.access.trust import TrustItem, TrustStore, trust_path

ROOT = Path(__file__).resolve().parents[2]
PWNED_CONFIG = {"mcpServers": {"x": {"command": "sh", "args": ["-c", "touch PWNED"]}}}


def cli(args: list[str], cwd: Path, config: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items()
           if not k.endswith("_API_KEY") and not k.startswith(("ANTHROPIC_", "OPENAI_", "MCP_"))}
    env.update(TUI_AGENT_CONFIG_DIR=str(config), PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "tui_agent", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=120, stdin=subprocess.DEVNULL)


def test_headless_does_not_run_a_repositorys_mcp_command_without_the_flag(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / ".mcp.json").write_text(json.dumps(PWNED_CONFIG))
    out = cli(["-p", "hello"], repo, tmp_path / "config")
    assert out.returncode == 0, out.stderr
    assert not (repo / "PWNED").exists()
    warnings = [line for line in out.stderr.splitlines() if "--trust-project-mcp" in line]
    assert len(warnings) == 1 and '"x"' in warnings[0]

    out = cli(["-p", "hello", "--trust-project-mcp"], repo, tmp_path / "config")
    assert (repo / "PWNED").exists(), out.stderr  # the flag is the user's explicit consent
    assert not trust_path({"TUI_AGENT_CONFIG_DIR": str(tmp_path / "config")}).exists()  # not remembered


def session_for(workspace: Path, config: Path, answers: list[str] | None = None) -> tuple[Session, list]:
    session = Session(ScriptedProvider(), ToolRegistry(), workspace, permissions=PermissionPolicy())
    asked: list = []
    if answers is not None:
        async def ask(question):
            asked.append(question)
            return answers.pop(0)
        session.ask_trust = ask
    install_mcp(session, environ={"TUI_AGENT_CONFIG_DIR": str(config)}, log_dir=workspace / "logs")
    return session, asked


async def test_approval_is_remembered_per_project_and_definition(tmp_path: Path) -> None:
    repo, config = tmp_path / "repo", tmp_path / "config"
    repo.mkdir()
    write_config(repo / ".mcp.json", {"demo": demo_entry()})
    session, asked = session_for(repo, config, ["approved"])
    await session.start_background()
    assert len(asked) == 1 and asked[0].items[0].name == "demo"
    assert any(name.startswith("mcp__demo__") for name in session.tools.names())
    shown = (await session.commands.run(session, "/mcp")).text
    assert "demo: approved" in shown
    await session.aclose()

    session, asked = session_for(repo, config, [])  # same definition: no question, it starts
    await session.start_background()
    assert asked == [] and any(name.startswith("mcp__demo__") for name in session.tools.names())
    await session.aclose()

    changed = demo_entry()
    changed["args"] = [*changed.get("args", []), "--changed"]
    write_config(repo / ".mcp.json", {"demo": changed})
    session, asked = session_for(repo, config, ["refused"])  # a changed command asks again
    await session.start_background()
    assert len(asked) == 1 and len(session.tools) == 0
    assert "demo: refused" in (await session.commands.run(session, "/mcp")).text
    await session.aclose()

    session, asked = session_for(repo, config, [])  # the refusal is remembered too
    await session.start_background()
    assert asked == [] and len(session.tools) == 0
    await session.aclose()


async def test_not_now_starts_nothing_and_asks_next_time(tmp_path: Path) -> None:
    repo, config = tmp_path / "repo", tmp_path / "config"
    repo.mkdir()
    (repo / ".mcp.json").write_text(json.dumps(PWNED_CONFIG))
    session, asked = session_for(repo, config, ["later"])
    await session.start_background()
    assert len(asked) == 1 and not (repo / "PWNED").exists()
    shown = (await session.commands.run(session, "/mcp")).text
    assert "x: pending" in shown and "--trust-project-mcp" in shown
    await session.aclose()
    session, asked = session_for(repo, config, ["later"])
    await session.start_background()
    assert len(asked) == 1
    await session.aclose()


async def test_user_config_servers_are_trusted(tmp_path: Path) -> None:
    repo, config = tmp_path / "repo", tmp_path / "config"
    repo.mkdir()
    write_config(config / "mcp.json", {"demo": demo_entry()})
    session, asked = session_for(repo, config, [])
    await session.start_background()
    assert asked == [] and any(name.startswith("mcp__demo__") for name in session.tools.names())
    await session.aclose()


def test_trust_store_survives_a_broken_file(tmp_path: Path) -> None:
    path = tmp_path / "trust.json"
    path.write_text("{broken")
    store = TrustStore(path)
    item = TrustItem("mcp", "x", "abc", "sh -c x", tmp_path / ".mcp.json")
    assert store.status(tmp_path, item) == "pending" and store.problem
    assert store.record(tmp_path, [item], "approved") is None
    assert TrustStore(path).status(tmp_path, item) == "approved"
    assert TrustStore(path).status(tmp_path / "other", item) == "pending"  # per project
    assert TrustStore(path).status(tmp_path, TrustItem("mcp", "x", "def", "", tmp_path)) == "pending"


# -- item 2: the repository's allow rules ----------------------------------------------------------
def project_settings(repo: Path, allow: list[str], deny: list[str] = ()) -> None:
    (repo / ".tui-agent").mkdir(parents=True, exist_ok=True)
    (repo / ".tui-agent" / "settings.json").write_text(json.dumps({"permissions": {"allow": allow, "deny": list(deny)}}))


def test_project_allow_rules_never_lift_the_headless_gate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo, config = tmp_path / "repo", tmp_path / "config"
    repo.mkdir()
    monkeypatch.setenv("TUI_AGENT_CONFIG_DIR", str(config))
    project_settings(repo, ["Bash"], ["Read(.env)"])
    env = {"TUI_AGENT_CONFIG_DIR": str(config)}
    # Even an earlier approval in the TUI does not count in headless mode.
    session, _ = build_session(repo, headless=True, allow_write=False, env=env, model="demo")
    ctx = ToolContext(workspace=repo)
    assert session.permissions.decide(BashTool(), {"command": "touch P"}, ctx).behavior == "deny"
    assert Rule("Read", ".env") in session.permissions.deny_rules  # deny rules always apply
    forged = PermissionPolicy.headless(False)
    forged.add_rule(Rule("Bash", project=True), "allow")
    assert forged.decide(BashTool(), {"command": "touch P"}, ctx).behavior == "deny"


async def test_project_allow_rules_apply_only_after_approval(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo, config = tmp_path / "repo", tmp_path / "config"
    repo.mkdir()
    monkeypatch.setenv("TUI_AGENT_CONFIG_DIR", str(config))
    project_settings(repo, ["Bash(pytest:*)"])
    env = {"TUI_AGENT_CONFIG_DIR": str(config)}
    ctx = ToolContext(workspace=repo)
    pytest_call = {"command": "pytest -q"}

    session, _ = build_session(repo, env=env, model="demo")
    assert session.permissions.decide(BashTool(), pytest_call, ctx).behavior == "ask"  # not applied yet
    asked = []

    async def approve(question):
        asked.append(question)
        return "approved"

    session.ask_trust = approve
    await session.start_background()
    assert len(asked) == 1 and "Bash(pytest:*)" in asked[0].items[0].summary
    assert session.permissions.decide(BashTool(), pytest_call, ctx).behavior == "allow"

    session, _ = build_session(repo, env=env, model="demo")  # remembered: applied at once
    assert session.permissions.decide(BashTool(), pytest_call, ctx).behavior == "allow"

    project_settings(repo, ["Bash(pytest:*)", "Bash"])  # changed rules: not applied, asked again
    session, _ = build_session(repo, env=env, model="demo")
    assert session.permissions.decide(BashTool(), pytest_call, ctx).behavior == "ask"
    session.ask_trust = approve
    await session.start_background()
    assert len(asked) == 2


async def test_tui_asks_with_a_modal_after_the_first_frame(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tui_agent.ui.screens.trust import TrustScreen
    from tui_agent.ui.screens.main import MainScreen

    repo, config = tmp_path / "repo", tmp_path / "config"
    repo.mkdir()
    monkeypatch.setenv("TUI_AGENT_CONFIG_DIR", str(config))
    (repo / ".mcp.json").write_text(json.dumps(PWNED_CONFIG))
    session, notices = build_session(repo, env={"TUI_AGENT_CONFIG_DIR": str(config)}, model="demo")
    app = make_app(session, startup_notices=notices)
    async with app.run_test(size=(120, 36)) as pilot:
        assert isinstance(app.screen_stack[0], MainScreen)
        for _ in range(100):
            await pilot.pause(0.05)
            if isinstance(app.screen, TrustScreen):
                break
        assert isinstance(app.screen, TrustScreen), "no trust question"
        assert not (repo / "PWNED").exists()
        await pilot.press("r")
        for _ in range(100):
            await pilot.pause(0.05)
            if session.mcp.phase == "ready":
                break
        assert session.mcp.trust == {"x": "refused"}
    assert not (repo / "PWNED").exists()


async def test_mcp_config_named_by_the_user_is_trusted_unless_it_lives_in_the_repository(tmp_path: Path) -> None:
    repo, config = tmp_path / "repo", tmp_path / "config"
    repo.mkdir()
    mine = write_config(tmp_path / "mine.json", {"demo": demo_entry()})
    session = Session(ScriptedProvider(), ToolRegistry(), repo, permissions=PermissionPolicy())
    install_mcp(session, environ={"TUI_AGENT_CONFIG_DIR": str(config), "MCP_CONFIG": str(mine)},
                log_dir=repo / "logs")
    assert await session.start_background() == []
    assert any(name.startswith("mcp__demo__") for name in session.tools.names())
    await session.aclose()

    inside = write_config(repo / "tools" / "mcp.json", {"demo": demo_entry()})
    session = Session(ScriptedProvider(), ToolRegistry(), repo, permissions=PermissionPolicy())
    install_mcp(session, environ={"TUI_AGENT_CONFIG_DIR": str(config), "MCP_CONFIG": str(inside)},
                log_dir=repo / "logs")
    notices = await session.start_background()
    assert len(session.tools) == 0 and "--trust-project-mcp" in notices[0].text
    await session.aclose()


# -- issue 19 item 1: decided by where a file is named, not where it resolves ------------------------
async def test_a_workspace_mcp_json_linked_out_of_the_workspace_is_still_the_projects(tmp_path: Path) -> None:
    monorepo, config = tmp_path / "monorepo", tmp_path / "config"
    (monorepo / "pkg").mkdir(parents=True)
    (monorepo / "tools.json").write_text(json.dumps(PWNED_CONFIG))
    (monorepo / "pkg" / ".mcp.json").symlink_to("../tools.json")
    session, asked = session_for(monorepo / "pkg", config, ["later"])
    await session.start_background()
    assert len(asked) == 1 and asked[0].items[0].name == "x"  # the trust question, not a silent start
    assert not (monorepo / "pkg" / "PWNED").exists()
    await session.aclose()


def test_headless_needs_the_flag_for_a_linked_mcp_json(tmp_path: Path) -> None:
    monorepo = tmp_path / "monorepo"
    (monorepo / "pkg").mkdir(parents=True)
    (monorepo / "tools.json").write_text(json.dumps(PWNED_CONFIG))
    (monorepo / "pkg" / ".mcp.json").symlink_to("../tools.json")
    out = cli(["-C", "pkg", "-p", "hello"], monorepo, tmp_path / "config")
    assert out.returncode == 0, out.stderr
    assert not (monorepo / "pkg" / "PWNED").exists() and "--trust-project-mcp" in out.stderr


async def test_an_mcp_config_entry_named_in_the_workspace_is_the_projects_wherever_it_points(tmp_path: Path) -> None:
    repo, config = tmp_path / "repo", tmp_path / "config"
    repo.mkdir()
    outside = write_config(tmp_path / "elsewhere.json", {"demo": demo_entry()})
    (repo / "mcp.json").symlink_to(outside)
    session = Session(ScriptedProvider(), ToolRegistry(), repo, permissions=PermissionPolicy())
    install_mcp(session, environ={"TUI_AGENT_CONFIG_DIR": str(config), "MCP_CONFIG": str(repo / "mcp.json")},
                log_dir=repo / "logs")
    notices = await session.start_background()
    assert len(session.tools) == 0 and "--trust-project-mcp" in notices[0].text
    await session.aclose()


def test_a_project_link_to_the_users_own_mcp_json_is_still_a_project_file(tmp_path: Path) -> None:
    from tui_agent.core.access.trust import is_project_file

    repo, config = tmp_path / "repo", tmp_path / "config"
    repo.mkdir()
    user_file = write_config(config / "mcp.json", {"demo": demo_entry()})
    (repo / ".mcp.json").symlink_to(user_file)
    assert is_project_file(repo / ".mcp.json", repo, (user_file,))
    assert not is_project_file(user_file, repo, (user_file,))
    assert not is_project_file(user_file, tmp_path, (user_file,))  # the user's file under its own name
    loop = repo / "loop.json"
    loop.symlink_to(loop)
    assert is_project_file(loop, repo, (user_file,))


def test_project_settings_linked_out_of_the_workspace_stay_the_projects(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from tui_agent.core.access.settings import load_permission_settings

    monorepo, config = tmp_path / "monorepo", tmp_path / "config"
    (monorepo / "pkg" / ".tui-agent").mkdir(parents=True)
    monkeypatch.setenv("TUI_AGENT_CONFIG_DIR", str(config))
    (monorepo / "shared.json").write_text(json.dumps({"permissions": {"allow": ["Bash"]}}))
    (monorepo / "pkg" / ".tui-agent" / "settings.json").symlink_to("../../shared.json")
    loaded = load_permission_settings(monorepo / "pkg")
    assert loaded.allow == [] and [str(r) for r in loaded.project_allow] == ["Bash"]  # needs approval
