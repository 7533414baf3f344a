"""Bash: output, exit codes, timeout, bounded head+tail output, and killing the process group on cancel."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from tests.waiting import wait_until
from tui_agent.core import events as ev
from tui_agent.core.access.gate import PermissionPolicy
from tui_agent.core.providers.scripted import ScriptedProvider, text_reply, tool_reply
from tui_agent.core.agent.session import Session
from tui_agent.core.tools.base import ToolContext, ToolRegistry, validate_input
from tui_agent.core.tools.bash import HEAD_BYTES, MAX_OUTPUT_CHARS, BashTool, _Capture

pytestmark = pytest.mark.skipif(os.name != "posix", reason="process groups are POSIX")


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(workspace=tmp_path)


def live_members(pgid: int) -> list[int]:
    """Processes of group `pgid` that are not zombies (a container's init may not reap orphans)."""
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[2]) == pgid and fields[0] != "Z":
            members.append(int(entry.name))
    return members


async def test_runs_in_the_workspace_with_stderr(ctx: ToolContext, tmp_path: Path) -> None:
    out = await BashTool().call({"command": "pwd; echo oops >&2"}, ctx)
    assert not out.is_error
    assert out.content.splitlines() == [str(tmp_path.resolve()), "oops"] or \
        out.content.splitlines() == [str(tmp_path), "oops"]


async def test_exit_code_is_an_error(ctx: ToolContext) -> None:
    out = await BashTool().call({"command": "echo partial; exit 3"}, ctx)
    assert out.is_error and out.content == "partial\n\nExit code 3"


async def test_no_output_and_stdin_is_empty(ctx: ToolContext) -> None:
    assert (await BashTool().call({"command": "true"}, ctx)).content == "(no output)"
    out = await BashTool().call({"command": "read line; echo got:$line"}, ctx)
    assert "got:" in out.content  # read hits EOF at once instead of hanging


async def test_timeout_kills_and_says_so(ctx: ToolContext) -> None:
    out = await BashTool().call({"command": "echo before; sleep 30", "timeout": 200}, ctx)
    assert out.is_error and out.content.startswith("before") and "timed out after 200 ms" in out.content


async def test_megabytes_of_output_keep_head_and_tail(ctx: ToolContext) -> None:
    out = await BashTool().call(
        {"command": "echo START; head -c 5000000 /dev/zero | tr '\\0' x; echo; echo END"}, ctx)
    assert not out.is_error
    assert out.content.startswith("START") and out.content.endswith("END")
    assert "bytes of output omitted" in out.content
    assert len(out.content) < MAX_OUTPUT_CHARS + 200


def test_capture_is_bounded() -> None:
    capture = _Capture()
    for _ in range(2000):
        capture.add(b"y" * 4096)
    assert len(capture.head) == HEAD_BYTES and len(capture.tail) <= 2 * HEAD_BYTES
    assert capture.total == 2000 * 4096


async def test_background_child_does_not_hold_the_result(ctx: ToolContext, monkeypatch: pytest.MonkeyPatch) -> None:
    from tui_agent.core.tools import bash

    monkeypatch.setattr(bash, "DRAIN_GRACE_S", 0.2)
    out = await BashTool().call({"command": "sleep 30 & echo bg"}, ctx)
    # The result came back while the child still held the pipe (not after its 30 s), and says so.
    assert out.content.startswith("bg") and "a background process kept the output open" in out.content


async def test_cancel_kills_the_whole_process_group(ctx: ToolContext, tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    task = asyncio.create_task(BashTool().call({"command": f"echo $$ > {pidfile}; sleep 30; sleep 30"}, ctx))
    await wait_until(lambda: pidfile.exists() and pidfile.read_text().strip(), what="the shell's pid", task=task)
    pgid = int(pidfile.read_text())
    await wait_until(lambda: len(live_members(pgid)) >= 2, what="the shell and its sleep to run")
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await wait_until(lambda: live_members(pgid) == [], what=f"process group {pgid} to end",
                     shown=lambda: live_members(pgid))


async def test_cancelled_turn_through_the_loop(tmp_path: Path) -> None:
    """A cancelled turn mid-Bash kills the group and leaves a valid history (tool_result present)."""
    pidfile = tmp_path / "pid"
    provider = ScriptedProvider(replies=[tool_reply("Bash", {"command": f"echo $$ > {pidfile}; sleep 30"}, "b1"),
                                 text_reply("done")])
    session = Session(provider=provider, tools=ToolRegistry([BashTool()]), workspace=tmp_path,
                      permissions=PermissionPolicy(mode="allow_all"))

    async def consume() -> None:
        async for _ in session.run_turn("run it"):
            pass

    task = asyncio.create_task(consume())
    await wait_until(lambda: pidfile.exists() and pidfile.read_text().strip(), what="the shell's pid", task=task)
    pgid = int(pidfile.read_text())
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await wait_until(lambda: live_members(pgid) == [], what=f"process group {pgid} to end",
                     shown=lambda: live_members(pgid))
    last = session.history[-1]
    assert last["role"] == "user" and last["content"][0]["tool_use_id"] == "b1"
    assert last["content"][0]["is_error"] is True


async def test_headless_bash_needs_allow_write(tmp_path: Path) -> None:
    marker = tmp_path / "made"
    provider = ScriptedProvider(replies=[tool_reply("Bash", {"command": f"touch {marker}"}, "b1"), text_reply("ok")])
    session = Session(provider=provider, tools=ToolRegistry([BashTool()]), workspace=tmp_path,
                      permissions=PermissionPolicy.headless(allow_write=False))
    ended = [e async for e in session.run_turn("go") if isinstance(e, ev.TurnEnded)]
    assert ended[-1].reason == "denied" and not marker.exists()


def test_schema_summary_preview(ctx: ToolContext) -> None:
    tool = BashTool()
    assert "timeout" in (validate_input(tool, {"command": "ls", "timeout": 700_000}) or "")
    assert "command" in (validate_input(tool, {"command": ""}) or "")
    assert validate_input(tool, {"command": "ls", "timeout": 1000, "description": "List"}) is None
    assert tool.summary({"command": "pytest -q"}) == "pytest -q"
    preview = tool.permission_preview({"command": "pytest -q", "description": "Run tests"}, ctx)
    assert preview.splitlines()[:2] == ["$ pytest -q", "# Run tests"]
    assert not tool.is_read_only({}) and tool.paths({"command": "cat /etc/passwd"}) == []
