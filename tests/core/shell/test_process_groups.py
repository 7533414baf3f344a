"""Processes Bash starts do not outlive tui-agent (issue 9, item 12): real processes, real signals.

Before, only Ctrl-C cleaned up: `cmd &` kept running after the agent exited, and a running command
survived SIGTERM or SIGHUP of the agent.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fakes.fake_anthropic import FakeAnthropic, text, tool_use
from tests.processes import children, gone, pane_pid
from tests.tmux import capture
from tests.waiting import wait_until, wait_until_sync
from tui_agent.core.shell import process_groups
from tui_agent.core.tools.bash import run_command

CLI = Path(sys.executable).with_name("tui-agent")


def read_pid(path: Path) -> int | None:
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


async def test_a_background_child_is_tracked_and_ended(tmp_path: Path) -> None:
    out = await run_command("sleep 300 & echo $!", tmp_path, 10)
    child = int(out.content.split()[0])
    try:
        assert not gone(child)
        assert os.getpgid(child) in process_groups.tracked()
        assert process_groups.end_all() >= 1
        await wait_until(lambda: gone(child), what=f"background sleep {child} to end")
    finally:
        if not gone(child):
            os.kill(child, signal.SIGKILL)


def fake_with_bash(command: str) -> FakeAnthropic:
    return FakeAnthropic(replies=[tool_use("Bash", {"command": command}, "toolu_bash"), text("Started it.")])


def start_headless(fake: FakeAnthropic, workspace: Path) -> subprocess.Popen:
    env = {**os.environ, "ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": fake.base_url,
           "ANTHROPIC_MODEL": "claude-fake-1", "TUI_AGENT_CONFIG_DIR": str(workspace / ".config")}
    return subprocess.Popen([str(CLI), "-p", "start the server", "--allow-write"], cwd=workspace, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.mark.skipif(not CLI.exists(), reason="the tui-agent console script is not installed in this venv")
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_headless_ends_the_running_command_on(sig: signal.Signals, tmp_path: Path) -> None:
    command = "sleep 300 & echo $! > bg.pid; sleep 301 & echo $! > fg.pid; wait"
    with fake_with_bash(command) as fake:
        proc = start_headless(fake, tmp_path)
        try:
            pids = wait_until_sync(lambda: (read_pid(tmp_path / "bg.pid"), read_pid(tmp_path / "fg.pid"))
                                   if read_pid(tmp_path / "bg.pid") and read_pid(tmp_path / "fg.pid") else None,
                                   what="the command to start", timeout=30,
                                   shown=lambda: proc.poll())
            proc.send_signal(sig)
            proc.wait(timeout=30)
            for pid in pids:
                wait_until_sync(lambda: gone(pid), what=f"process {pid} to end after {sig.name}")
            assert proc.returncode == -sig  # it still dies of the signal, as a caller expects
        finally:
            if proc.poll() is None:
                proc.kill()
            for name in ("bg.pid", "fg.pid"):
                pid = read_pid(tmp_path / name)
                if pid and not gone(pid):
                    os.kill(pid, signal.SIGKILL)


@pytest.mark.skipif(not CLI.exists(), reason="the tui-agent console script is not installed in this venv")
def test_headless_ends_a_background_child_when_it_exits(tmp_path: Path) -> None:
    with fake_with_bash("sleep 300 > /dev/null 2>&1 & echo $! > bg.pid") as fake:
        proc = start_headless(fake, tmp_path)
        out, err = proc.communicate(timeout=60)
    pid = read_pid(tmp_path / "bg.pid")
    try:
        assert proc.returncode == 0, err
        assert "Started it." in out
        assert pid is not None
        wait_until_sync(lambda: gone(pid), what=f"background sleep {pid} to end at exit")
    finally:
        if pid and not gone(pid):
            os.kill(pid, signal.SIGKILL)


TMUX = __import__("shutil").which("tmux")


@pytest.mark.slow
@pytest.mark.skipif(TMUX is None or not CLI.exists(), reason="needs tmux and the tui-agent console script")
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_the_tui_ends_the_running_command_and_quits_on(sig: signal.Signals, tmp_path: Path) -> None:
    import json
    import shlex

    config = tmp_path / ".config"
    config.mkdir()
    (config / "settings.json").write_text(json.dumps({"permissions": {"allow": ["Bash"]}}))  # the user's own rule
    command = "sleep 300 & echo $! > bg.pid; sleep 301 & echo $! > fg.pid; wait"
    socket = f"tui-agent-pg-{os.getpid()}-{sig.name}"
    with fake_with_bash(command) as fake:
        env = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": fake.base_url,
               "ANTHROPIC_MODEL": "claude-fake-1", "TUI_AGENT_CONFIG_DIR": str(config), "TERM": "xterm-256color"}
        line = ("env -u COLUMNS -u LINES " + " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
                + f" {CLI}; echo $? > {shlex.quote(str(tmp_path / 'code'))}; sleep 30")
        subprocess.run(["tmux", "-L", socket, "new-session", "-d", "-s", "agent", "-x", "120", "-y", "40",
                        "-c", str(tmp_path), line], check=True)
        pids: tuple = ()
        try:
            def screen() -> str:
                return capture(socket)

            wait_until_sync(lambda: "Context budget" in screen(), what="the first frame", timeout=30, shown=screen)
            subprocess.run(["tmux", "-L", socket, "send-keys", "-t", "agent", "start the server", "Enter"], check=True)
            pids = wait_until_sync(lambda: (read_pid(tmp_path / "bg.pid"), read_pid(tmp_path / "fg.pid"))
                                   if read_pid(tmp_path / "bg.pid") and read_pid(tmp_path / "fg.pid") else None,
                                   what="the command to start", timeout=30, shown=screen)
            # the agent is the pane shell's one child: the process this test started, never a name match
            shell = pane_pid(socket)
            agent = wait_until_sync(lambda: children(shell)[0] if len(children(shell)) == 1 else None,
                                    what="the agent under the pane's shell", shown=lambda: children(shell))
            os.kill(agent, sig)
            code = wait_until_sync(lambda: read_pid(tmp_path / "code"), what="the TUI to quit", timeout=30, shown=screen)
            assert code == 128 + sig  # quit through the app (terminal restored), not killed mid-frame
            for pid in pids:
                wait_until_sync(lambda: gone(pid), what=f"process {pid} to end after {sig.name}")
        finally:
            subprocess.run(["tmux", "-L", socket, "kill-server"], capture_output=True)
            for pid in pids:
                if pid and not gone(pid):
                    os.kill(pid, signal.SIGKILL)

