"""A real terminal: tmux starts `tui-agent`, a prompt is typed, and the screen shows the demo model's
answer in the chat and history rows in the panel. Also reports how long the first frame took."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.tmux import wait_for
from tests.waiting import wait_until_sync

from .support import make_repo

TMUX = shutil.which("tmux")
CLI = Path(sys.executable).with_name("tui-agent")


@pytest.mark.skipif(TMUX is None, reason="tmux is not installed, so there is no real terminal to drive")
@pytest.mark.skipif(not CLI.exists(), reason="the tui-agent console script is not installed in this venv")
def test_tui_agent_in_tmux(tmp_path) -> None:
    repo = make_repo(tmp_path)
    socket = f"tui-agent-test-{os.getpid()}"
    env = {"TUI_AGENT_CONFIG_DIR": str(tmp_path / "config"), "TUI_AGENT_DATA_DIR": str(tmp_path / "data"),
           "TERM": "xterm-256color"}
    # COLUMNS/LINES inherited from a CI shell would override the real size (shutil.get_terminal_size)
    command = "env -u COLUMNS -u LINES " + " ".join(f"{k}={v}" for k, v in env.items()) + f" {CLI} --model demo"
    started = time.monotonic()
    subprocess.run(["tmux", "-L", socket, "new-session", "-d", "-s", "agent", "-x", "120", "-y", "40",
                    "-c", str(repo), command], check=True)
    try:
        wait_for(socket, "Context budget", 15)
        first_frame = time.monotonic() - started
        print(f"first frame after {first_frame:.2f}s")
        subprocess.run(["tmux", "-L", socket, "send-keys", "-t", "agent", "what does the handler do?"], check=True)
        subprocess.run(["tmux", "-L", socket, "send-keys", "-t", "agent", "Enter"], check=True)
        screen = wait_for(socket, "Here is what I found", 60)
        assert "what does the handler do?" in screen
        assert "tool_result Read" in screen and "tool_use Read(" in screen  # rows in the panel
        assert "Next call" in wait_for(socket, "Next call", 10)
        subprocess.run(["tmux", "-L", socket, "send-keys", "-t", "agent", "C-c"], check=True)
        wait_for(socket, "again to quit", 10)  # the first Ctrl+C was heard (no fixed sleep)
        subprocess.run(["tmux", "-L", socket, "send-keys", "-t", "agent", "C-c"], check=True)
        wait_until_sync(lambda: subprocess.run(["tmux", "-L", socket, "has-session", "-t", "agent"],
                                               capture_output=True).returncode != 0,
                        what="tui-agent to quit on Ctrl+C twice", timeout=10)
    finally:
        subprocess.run(["tmux", "-L", socket, "kill-server"], capture_output=True)
