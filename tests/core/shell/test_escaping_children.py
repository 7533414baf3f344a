"""Issue 19 item 11: a child that leaves the Bash command's process group (`setsid`) must not outlive the
timeout, Esc (a cancelled call) or tui-agent's exit. Real processes; each finds its child by the pid the
command writes to a file."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

import pytest

from tests.core.shell.test_process_groups import CLI, fake_with_bash, gone, read_pid, start_headless
from tests.waiting import wait_until, wait_until_sync
from tui_agent.core.shell import process_groups
from tui_agent.core.tools.bash import run_command

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="finding escaped children needs /proc")

SETSID = "setsid sleep 300 > /dev/null 2>&1 & echo $! > esc.pid"
DOUBLE_FORK = "(setsid sleep 300 > /dev/null 2>&1 & echo $! > esc.pid)"


def cleanup(folder: Path) -> None:
    pid = read_pid(folder / "esc.pid")
    if pid and not gone(pid):
        os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize("start", [SETSID, DOUBLE_FORK], ids=["setsid", "setsid-in-a-subshell"])
async def test_a_setsid_child_does_not_outlive_the_timeout(start: str, tmp_path: Path) -> None:
    try:
        out = await run_command(f"{start}; sleep 100", tmp_path, 1.5)
        assert out.is_error and "timed out" in out.content
        pid = read_pid(tmp_path / "esc.pid")
        assert pid is not None
        await wait_until(lambda: gone(pid), what=f"the setsid child {pid} to end after the timeout")
    finally:
        cleanup(tmp_path)


@pytest.mark.parametrize("start", [SETSID, DOUBLE_FORK], ids=["setsid", "setsid-in-a-subshell"])
async def test_a_setsid_child_does_not_outlive_esc(start: str, tmp_path: Path) -> None:
    task = asyncio.ensure_future(run_command(f"{start}; sleep 100", tmp_path, 60))
    try:
        pid = await wait_until(lambda: read_pid(tmp_path / "esc.pid"), what="the child to start")
        task.cancel()  # what Esc does to the running tool call
        with pytest.raises(asyncio.CancelledError):
            await task
        await wait_until(lambda: gone(pid), what=f"the setsid child {pid} to end after Esc")
    finally:
        if not task.done():
            task.cancel()
        cleanup(tmp_path)


async def test_a_setsid_child_left_running_is_ended_at_exit(tmp_path: Path) -> None:
    try:
        out = await run_command(SETSID, tmp_path, 10)
        assert not out.is_error
        pid = read_pid(tmp_path / "esc.pid")
        assert pid is not None and not gone(pid)  # a finished command may leave it running (`server &`)
        assert process_groups.end_all() >= 1
        await wait_until(lambda: gone(pid), what=f"the setsid child {pid} to end at exit")
    finally:
        cleanup(tmp_path)


@pytest.mark.skipif(not CLI.exists(), reason="the tui-agent console script is not installed in this venv")
def test_headless_ends_a_setsid_child_when_it_exits(tmp_path: Path) -> None:
    with fake_with_bash(DOUBLE_FORK) as fake:
        proc = start_headless(fake, tmp_path)
        out, err = proc.communicate(timeout=60)
    try:
        assert proc.returncode == 0, err
        pid = read_pid(tmp_path / "esc.pid")
        assert pid is not None
        wait_until_sync(lambda: gone(pid), what=f"the setsid child {pid} to end when tui-agent exits")
    finally:
        cleanup(tmp_path)


def test_a_pid_taken_by_another_process_is_never_signalled() -> None:
    """What was found is signalled only while it is the same process (pid and start time)."""
    import subprocess

    from tui_agent.core.shell import descendants

    child = subprocess.Popen(["sleep", "300"])
    try:
        started = descendants._stat(child.pid)
        assert started is not None
        descendants.signal_all({child.pid: started[1] + 1}, signal.SIGKILL)  # "a later process"
        assert child.poll() is None and descendants.alive(child.pid)
        descendants.signal_all({child.pid: started[1]}, signal.SIGKILL)
        assert child.wait(timeout=30) == -signal.SIGKILL
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(timeout=30)
