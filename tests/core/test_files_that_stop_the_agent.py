"""Files that used to stop the agent (issue 9, item 11): each is now a warning or one call's error.

Every reader runs in a subprocess with a timeout, because the old failure was a hang (a FIFO opened for
reading blocks until a writer comes) or unbounded memory (/dev/zero): in-process, the test itself would
hang instead of failing.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tui_agent.core.config_files import UnreadableFile, parse_json, read_text_capped

DEEP_JSON = "[" * 100_000 + "]" * 100_000
DEEP_YAML = "---\nname: x\ndescription: " + "[" * 50_000 + "]" * 50_000 + "\n---\nbody\n"
KINDS = ["fifo", "dev_zero", "deep"]


def make(path: Path, kind: str, deep: str = DEEP_JSON) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev_zero":
        path.symlink_to("/dev/zero")
    else:
        path.write_text(deep)
    return path


def run_python(code: str, *args: str) -> str:
    """Run `code` in a fresh interpreter; a hang fails the test after 60 s instead of hanging it."""
    env = {**os.environ, "TUI_AGENT_CONFIG_DIR": args[0] if args else os.environ.get("TUI_AGENT_CONFIG_DIR", "")}
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code), *args], capture_output=True, text=True,
                         timeout=60, env=env)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout


@pytest.mark.parametrize("kind", KINDS)
def test_project_settings_json(tmp_path: Path, kind: str) -> None:
    make(tmp_path / "ws" / ".tui-agent" / "settings.json", kind)
    out = run_python("""
        import sys
        from pathlib import Path
        from tui_agent.core.access.settings import load_permission_settings
        print("\\n".join(load_permission_settings(Path(sys.argv[2])).warnings))
    """, str(tmp_path / "config"), str(tmp_path / "ws"))
    assert "settings.json" in out and "ignored" in out
    assert ("nested too deeply" in out) if kind == "deep" else ("not a regular file" in out)


@pytest.mark.parametrize("kind", KINDS)
def test_ui_state_json(tmp_path: Path, kind: str) -> None:
    make(tmp_path / "config" / "ui.json", kind)
    out = run_python("""
        from tui_agent.ui.settings import UIState
        print(UIState.load().theme)
    """, str(tmp_path / "config"))
    assert out.strip() == "None"


@pytest.mark.parametrize("kind", KINDS)
def test_mcp_json(tmp_path: Path, kind: str) -> None:
    make(tmp_path / ".mcp.json", kind)
    out = run_python("""
        import sys
        from pathlib import Path
        from tui_agent.core.mcp.config import McpConfigError, load_config
        try:
            load_config([Path(sys.argv[2])], {})
        except McpConfigError as error:
            print(error)
    """, str(tmp_path / "config"), str(tmp_path / ".mcp.json"))
    assert ".mcp.json" in out
    assert ("nested too deeply" in out) if kind == "deep" else ("not a regular file" in out)


@pytest.mark.parametrize("kind", ["fifo", "dev_zero", "deep", "types"])
def test_theme_file(tmp_path: Path, kind: str) -> None:
    themes = tmp_path / "themes"
    if kind == "types":
        themes.mkdir()
        (themes / "bad.toml").write_text('name = "bad"\nprimary = "#336699"\ndark = "yes"\ntext_alpha = [1]\n')
    else:
        make(themes / "bad.toml", kind, deep='name = "x"\nprimary = "#fff"\nv = ' + "[" * 50_000 + "]" * 50_000)
    (themes / "good.toml").write_text('name = "good"\nprimary = "#336699"\n')
    out = run_python("""
        import sys
        from pathlib import Path
        from tui_agent.ui.themes import load_themes
        themes, failures = load_themes(Path(sys.argv[2]))
        print(sorted(themes)); print("\\n".join(map(str, failures)))
    """, str(tmp_path / "config"), str(themes))
    assert "['good']" in out and "bad.toml was skipped" in out
    if kind == "types":
        assert "`dark` must be true or false" in out


@pytest.mark.parametrize("kind", ["fifo", "dev_zero"])
def test_transcript(tmp_path: Path, kind: str) -> None:
    path = make(tmp_path / "log.jsonl", kind)
    out = subprocess.run([str(Path(sys.executable).with_name("tui-agent")), "-p", "hi", "--transcript", str(path)],
                         capture_output=True, text=True, timeout=60,
                         env={**os.environ, "TUI_AGENT_CONFIG_DIR": str(tmp_path / "config")}, cwd=tmp_path)
    assert out.returncode != 0
    assert "cannot read transcript" in out.stderr and "not a regular file" in out.stderr


@pytest.mark.parametrize("kind", ["fifo", "dev_zero", "deep"])
def test_skill_md(tmp_path: Path, kind: str) -> None:
    make(tmp_path / "ws" / ".claude" / "skills" / "bad" / "SKILL.md", kind, deep=DEEP_YAML)
    good = tmp_path / "ws" / ".claude" / "skills" / "good" / "SKILL.md"
    good.parent.mkdir(parents=True)
    good.write_text("---\nname: good\ndescription: fine\n---\nDo it.\n")
    out = run_python("""
        import sys
        from pathlib import Path
        from tui_agent.core.tools.skill_catalog import discover_skills
        from tui_agent.core.tools.skill_catalog import SkillError, parse_skill
        skills, warnings = discover_skills(Path(sys.argv[2]), None)
        print([s.name for s in skills]); print("\\n".join(warnings))
        try:  # named directly, not only through discovery (which already skips what is not a file)
            parse_skill(Path(sys.argv[2]) / ".claude/skills/bad/SKILL.md", "bad")
        except SkillError as error:
            print("parse:", error)
    """, str(tmp_path / "config"), str(tmp_path / "ws"))
    assert "['good']" in out
    if kind == "deep":
        assert "Skipped skill" in out and "nested too deeply" in out
    else:
        assert "parse: cannot be read (it is not a regular file" in out


def test_the_reader_itself(tmp_path: Path) -> None:
    assert read_text_capped(tmp_path / "missing.json") is None
    (tmp_path / "big.json").write_text("x" * 20)
    with pytest.raises(UnreadableFile, match="over the limit"):
        read_text_capped(tmp_path / "big.json", limit=10)
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    with pytest.raises(UnreadableFile, match="symlink loop"):
        read_text_capped(tmp_path / "loop")
    with pytest.raises(UnreadableFile, match="folder"):
        read_text_capped(tmp_path)
    with pytest.raises(ValueError, match="nested too deeply"):
        parse_json(DEEP_JSON)
    assert parse_json(json.dumps({"a": [1]})) == {"a": [1]}


# -- tools -----------------------------------------------------------------------------------------
async def test_a_symlink_loop_named_by_a_tool_fails_only_that_call(tmp_path: Path) -> None:
    from tui_agent.core.messages import protocol_errors, tool_results
    from tui_agent.core.access.gate import PermissionPolicy
    from tui_agent.core.providers.scripted import ScriptedProvider, text_reply
    from tui_agent.core.agent.session import Session
    from tui_agent.core.tools import builtin_tools
    from tui_agent.core.tools.base import ToolRegistry

    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    (tmp_path / "ok.txt").write_text("fine\n")
    reply = [{"type": "tool_use", "id": "r1", "name": "Read", "input": {"file_path": "a"}},
             {"type": "tool_use", "id": "r2", "name": "Read", "input": {"file_path": "ok.txt"}},
             {"type": "tool_use", "id": "w1", "name": "Write", "input": {"file_path": "a/x.txt", "content": "x"}}]
    session = Session(ScriptedProvider(replies=[reply, text_reply("done")]), ToolRegistry(builtin_tools()), tmp_path,
                      permissions=PermissionPolicy(mode="allow_all"))
    events = [e async for e in session.run_turn("read")]
    assert events[-1].reason == "completed"  # before: the whole round was "Not run"
    results = {b["tool_use_id"]: b for m in session.history for b in tool_results(m)}
    assert results["r1"]["is_error"] and "symlink loop" in results["r1"]["content"]
    assert "fine" in results["r2"]["content"] and not results["r2"].get("is_error")
    assert results["w1"]["is_error"] and "symlink loop" in results["w1"]["content"]
    assert protocol_errors(session.history) == []


async def test_a_path_with_a_leading_space_is_its_own_file(tmp_path: Path) -> None:
    from tui_agent.core.tools.base import ToolContext
    from tui_agent.core.tools.write import WriteTool

    (tmp_path / "notes.txt").write_text("keep me\n")
    out = await WriteTool().call({"file_path": " notes.txt", "content": "other\n"}, ToolContext(workspace=tmp_path))
    assert "created" in out.content
    assert (tmp_path / "notes.txt").read_text() == "keep me\n"  # before: overwritten
    assert (tmp_path / " notes.txt").read_text() == "other\n"
