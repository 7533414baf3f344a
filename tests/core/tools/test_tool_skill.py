"""The Skill tool: `Launching skill: <id>`, base directory, args and body in one tool_result (AC-TL7, AC-S8 adapted)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tui_agent.core import events as ev
from tui_agent.core.access.gate import PermissionPolicy
from tui_agent.core.providers.scripted import ScriptedProvider, text_reply, tool_reply
from tui_agent.core.agent.session import Session
from tui_agent.core.agent.system_prompt import build_system_prompt
from tui_agent.core.tools import builtin_tools
from tui_agent.core.tools.base import ToolContext, ToolError, ToolRegistry, validate_input
from tui_agent.core.tools.skill import SkillTool


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TUI_AGENT_CONFIG_DIR", str(tmp_path / "config"))
    workspace = tmp_path / "ws"
    folder = workspace / ".agents" / "skills" / "echo-demo"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: Echo demo\ndescription: Echo things\n---\n"
                                     "Skill says: repeat $ARGUMENTS back.\n")
    return workspace


async def test_known_skill(ws: Path) -> None:
    out = await SkillTool().call({"skill": "echo-demo"}, ToolContext(workspace=ws))
    folder = (ws / ".agents" / "skills" / "echo-demo").resolve()
    assert not out.is_error
    assert out.content == (f"Launching skill: echo-demo\n\nBase directory for this skill: {folder}\n\n"
                           "Skill says: repeat  back.")


async def test_args_are_passed_literally(ws: Path) -> None:
    out = await SkillTool().call({"skill": "/echo-demo", "args": "$1 and \\1"}, ToolContext(workspace=ws))
    assert "Arguments: $1 and \\1" in out.content and "Skill says: repeat $1 and \\1 back." in out.content


async def test_unknown_skill(ws: Path) -> None:
    with pytest.raises(ToolError, match="Unknown skill: missing. Available skills: echo-demo"):
        await SkillTool().call({"skill": "missing"}, ToolContext(workspace=ws))
    with pytest.raises(ToolError, match="No skills are available"):
        await SkillTool().call({"skill": "x"}, ToolContext(workspace=ws / ".agents"))


def test_registered_read_only_and_schema() -> None:
    names = [tool.name for tool in builtin_tools()]
    assert names[:7] == ["Read", "Glob", "Grep", "Write", "Edit", "Bash", "Skill"]
    tool = SkillTool()
    assert tool.is_read_only({}) and tool.summary({"skill": "review"}) == "review"
    assert "skill" in (validate_input(tool, {}) or "")


async def test_end_to_end_in_headless(ws: Path) -> None:
    provider = ScriptedProvider(replies=[tool_reply("Skill", {"skill": "echo-demo", "args": "hi"}, "s1"),
                                         text_reply("done")])
    session = Session(provider=provider, tools=ToolRegistry([SkillTool()]), workspace=ws,
                      permissions=PermissionPolicy.headless(False))
    session.system_prompt_builder = build_system_prompt
    ended = [e async for e in session.run_turn("use the skill") if isinstance(e, ev.TurnEnded)]
    assert ended[-1].reason == "completed"
    assert "echo-demo" in provider.requests[0].system
    result = session.history[2]["content"][0]
    assert result["tool_use_id"] == "s1" and "Skill says: repeat hi back." in str(result["content"])
    assert not result.get("is_error")
