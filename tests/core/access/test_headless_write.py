"""Headless Write: refused without allow_write (turn "denied", no file), written with it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tui_agent.core import events as ev
from tui_agent.core.access.gate import PermissionPolicy
from tui_agent.core.providers.scripted import ScriptedProvider, text_reply, tool_reply
from tui_agent.core.agent.session import Session
from tui_agent.core.tools import builtin_tools
from tui_agent.core.tools.base import ToolRegistry


async def run_write(workspace: Path, allow_write: bool) -> tuple[ev.TurnEnded, Session]:
    provider = ScriptedProvider(replies=[
        tool_reply("Write", {"file_path": "hello.txt", "content": "hi\n"}, "w1", text="Writing it."),
        text_reply("Wrote hello.txt."),
    ])
    session = Session(provider=provider, tools=ToolRegistry(builtin_tools()), workspace=workspace,
                      permissions=PermissionPolicy.headless(allow_write=allow_write))
    ended = [e async for e in session.run_turn("write hello.txt") if isinstance(e, ev.TurnEnded)]
    return ended[-1], session


async def test_refused_without_allow_write(tmp_path: Path) -> None:
    ended, session = await run_write(tmp_path, allow_write=False)
    assert ended.reason == "denied" and not (tmp_path / "hello.txt").exists()
    result = session.history[2]["content"][0]
    assert result["tool_use_id"] == "w1" and result["is_error"] and "ALLOW_WRITE=1" in result["content"]
    # Headless has nobody to ask: the model is told about the denial and answers (issue 9, item 13).
    assert len(session.provider.requests) == 2
    assert session.provider.requests[1].messages[-1]["content"][0]["content"] == result["content"]
    assert session.history[-1]["content"] == [{"type": "text", "text": "Wrote hello.txt."}]


async def test_written_with_allow_write(tmp_path: Path) -> None:
    ended, session = await run_write(tmp_path, allow_write=True)
    assert ended.reason == "completed" and (tmp_path / "hello.txt").read_text() == "hi\n"
    assert session.history[2]["content"][0]["content"] == "File created successfully at: hello.txt"


async def test_env_allow_write(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ALLOW_WRITE", "1")
    provider = ScriptedProvider(replies=[tool_reply("Write", {"file_path": "a.txt", "content": "x"}, "w1"),
                                         text_reply("ok")])
    session = Session(provider=provider, tools=ToolRegistry(builtin_tools()), workspace=tmp_path,
                      permissions=PermissionPolicy.headless())
    ended = [e async for e in session.run_turn("go") if isinstance(e, ev.TurnEnded)]
    assert ended[-1].reason == "completed" and (tmp_path / "a.txt").read_text() == "x"


async def test_outside_write_refused_even_with_allow_write(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    provider = ScriptedProvider(replies=[tool_reply("Write", {"file_path": "../escape.txt", "content": "x"}, "w1"),
                                         text_reply("ok")])
    session = Session(provider=provider, tools=ToolRegistry(builtin_tools()), workspace=workspace,
                      permissions=PermissionPolicy.headless(allow_write=True))
    ended = [e async for e in session.run_turn("go") if isinstance(e, ev.TurnEnded)]
    assert ended[-1].reason == "denied" and not (tmp_path / "escape.txt").exists()
