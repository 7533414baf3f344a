"""Searches cannot show what Read may not (issue 9, item 6), and cannot hang (item 11: FIFO)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tui_agent.core import events as ev
from tui_agent.core.access.rules import Rule
from tui_agent.core.access.gate import PermissionPolicy
from tui_agent.core.providers.scripted import ScriptedProvider, text_reply, tool_reply
from tui_agent.core.agent.session import Session
from tui_agent.core.tools import ToolRegistry, builtin_tools
from tui_agent.core.tools import grep as grep_module
from tui_agent.core.tools.base import ToolContext, ToolError
from tui_agent.core.tools.glob import GlobTool
from tui_agent.core.tools.grep import GrepTool


async def grep_results(workspace: Path, policy: PermissionPolicy, calls: list[dict]) -> list[ev.ToolFinished]:
    replies = [tool_reply("Grep", call, f"g{i}") for i, call in enumerate(calls)] + [text_reply("done")]
    session = Session(ScriptedProvider(replies=replies), ToolRegistry(builtin_tools()), workspace, permissions=policy)
    return [e async for e in session.run_turn("search") if isinstance(e, ev.ToolFinished)]


MODES = [{"pattern": "SECRET"}, {"pattern": "SECRET", "output_mode": "content"},
         {"pattern": "SECRET", "output_mode": "count"}, {"pattern": "SECRET", "output_mode": "content", "-n": False},
         {"pattern": "SECRET", "output_mode": "content", "-C": 1}]


@pytest.mark.parametrize("spelling", ["absolute", "tilde", "double-slash"])
async def test_absolute_and_home_read_deny_rules_hide_grep_results(tmp_path: Path, monkeypatch, spelling: str) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    ws = tmp_path / "ws"
    (ws / "conf:1:x").mkdir(parents=True)  # colons in a folder name must not confuse the line parsing
    (ws / "conf:1:x" / "secret.txt").write_text("SECRET-VALUE\nmore\n")
    (ws / ".env").write_text("API=SECRET-VALUE\n")
    (ws / "app.py").write_text("token = 'SECRET placeholder'\n")
    rules = {"absolute": [f"Read({ws}/.env)", f"Read({ws}/conf:1:x)"],
             "tilde": ["Read(~/ws/.env)", "Read(~/ws/conf:1:x/**)"],
             "double-slash": [f"Read(/{ws}/.env)", f"Read(/{ws}/conf:1:x/secret.txt)"]}[spelling]
    policy = PermissionPolicy.headless(False)
    for rule in rules:
        policy.add_rule(Rule.parse(rule), "deny")
    results = await grep_results(ws, policy, MODES)
    assert len(results) == len(MODES)
    for finished in results:
        assert "app.py" in finished.content
        assert "SECRET-VALUE" not in finished.content and ".env" not in finished.content
        assert "secret.txt" not in finished.content
    content = results[1].content
    assert "app.py:1:token = 'SECRET placeholder'" in content  # the usual path:line:text form


async def test_grep_output_keeps_colons_in_paths(tmp_path: Path) -> None:
    (tmp_path / "a:2:b.txt").write_text("one\nneedle\n")
    out = await GrepTool().call({"pattern": "needle", "output_mode": "content", "-B": 1}, ToolContext(workspace=tmp_path))
    assert out.content.splitlines() == ["a:2:b.txt-1-one", "a:2:b.txt:2:needle"]


def test_glob_through_a_symlinked_folder_counts_as_outside(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "id_rsa").write_text("KEY")
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "link").symlink_to(outside)
    (ws / "src").mkdir()
    ctx = ToolContext(workspace=ws)
    for pattern in ("link/*", "link/**/*", "./link/id_*"):
        assert PermissionPolicy.headless(False).decide(GlobTool(), {"pattern": pattern}, ctx).behavior == "deny"
        assert PermissionPolicy().decide(GlobTool(), {"pattern": pattern}, ctx).behavior == "ask"
    assert PermissionPolicy.headless(False).decide(GlobTool(), {"pattern": "src/**/*.py"}, ctx).behavior == "allow"
    assert PermissionPolicy.headless(False).decide(GlobTool(), {"pattern": "*", "path": "src"}, ctx).behavior == "allow"


async def test_grep_refuses_a_fifo_instead_of_hanging(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "zero").symlink_to("/dev/zero")
    for target in ("pipe", "zero"):
        with pytest.raises(ToolError, match="not a regular file"):
            await GrepTool().call({"pattern": "x", "path": target}, ToolContext(workspace=tmp_path))


async def test_grep_has_a_time_limit(tmp_path: Path, monkeypatch) -> None:
    slow = tmp_path / "slow-rg"
    slow.write_text("#!/bin/sh\nexec sleep 30\n")
    slow.chmod(0o755)
    monkeypatch.setattr(grep_module, "find_rg", lambda: str(slow))
    monkeypatch.setattr(grep_module, "SEARCH_TIMEOUT_S", 0.3)
    (tmp_path / "a.txt").write_text("x\n")
    with pytest.raises(ToolError, match="stopped after 0.3 s"):
        await GrepTool().call({"pattern": "x"}, ToolContext(workspace=tmp_path))
