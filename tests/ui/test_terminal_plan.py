"""A real terminal (tmux) shows the compaction plan: the demo model over a repository with large files
and a loaded history far over its 16k window. The first call cuts, masks and drops (an event line in
the panel); the user pins a dropped row and the next call sends it.

The app runs in its own process from a small launcher (a v2 session with a smaller mask protection, as
the tests elsewhere use), so the terminal, keys and screen are real.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.tmux import wait_for, wait_for_all

from .support import make_repo
from .test_terminal import TMUX

ROOT = Path(__file__).resolve().parents[2]
LAUNCHER = """
import sys
sys.path.insert(0, {root!r})
from tests.ui.support import make_app
from tests.ui.test_panel_plan import SCENE_POLICY, oversized_history, planned_session
from pathlib import Path

session = planned_session(Path({repo!r}), SCENE_POLICY)
session.history.extend(oversized_history(24))
app = make_app(session)
app.run()
"""


def keys(socket: str, *items: str) -> None:
    for item in items:
        subprocess.run(["tmux", "-L", socket, "send-keys", "-t", "agent", item], check=True)
        # a key right after Esc would arrive as Alt+key: give the terminal its escape delay
        time.sleep(0.5 if item == "Escape" else 0.05)


@pytest.mark.slow
@pytest.mark.skipif(TMUX is None, reason="tmux is not installed, so there is no real terminal to drive")
def test_plan_marks_and_pin_in_a_real_terminal(tmp_path) -> None:
    repo = make_repo(tmp_path)
    launcher = tmp_path / "launch.py"
    launcher.write_text(LAUNCHER.format(root=str(ROOT), repo=str(repo)), encoding="utf-8")
    socket = f"tui-agent-plan-{os.getpid()}"
    env = {"TUI_AGENT_CONFIG_DIR": str(tmp_path / "config"), "TUI_AGENT_DATA_DIR": str(tmp_path / "data"),
           "TERM": "xterm-256color"}
    command = ("env -u COLUMNS -u LINES " + " ".join(f"{k}={v}" for k, v in env.items())
               + f" {sys.executable} {launcher}")
    # 54 lines: the meter has a budget line now (#30), and the first dropped rows must still show
    subprocess.run(["tmux", "-L", socket, "new-session", "-d", "-s", "agent", "-x", "160", "-y", "54",
                    "-c", str(repo), command], check=True)
    try:
        # before any call: the loaded history's next-call plan
        wait_for_all(socket, ["Context budget", "next call · over the", "≡recap for #"], 20)
        keys(socket, "what does the handler do?", "Enter")
        screen = wait_for_all(socket, ["Ask me about any of these files", "call 1 · over the"], 60)
        assert "dropped 38 old messages" in screen.replace("\n", " ") or "dropped 38 old" in screen  # as the snapshot
        rows = [line for line in screen.splitlines() if "│" in line or "▌" in line or "·" in line]
        assert any("✂ " in line and "→" in line for line in rows), "a cut row"
        assert any("▒ placeholder" in line for line in rows), "a masked row"
        assert any("user tool_result Bash 6.0k" in line and "–" in line for line in rows), "a dropped row"
        # /context focuses the first row the request does not send as it is; Home/Down walk to the first
        # dropped one (the recap row names the span it stands for), and in the steering mode p pins it
        start = int(screen.split("≡recap for #", 1)[1].split("–", 1)[0])
        keys(socket, "/context", "Enter")
        wait_for(socket, " · in the cached prefix", 15)
        keys(socket, "Home", *["Down"] * start)
        wait_for(socket, f"#{start} dropped: dropped at call 1", 15)
        keys(socket, "F4")  # /context reads the rows; F4 steers (the title says so)
        wait_for(socket, "STEERING", 15)
        keys(socket, "p")
        wait_for(socket, f"Pinned #{start} (sent as pinned): the next request grows", 15)
        pinned = str(start)
        keys(socket, "Escape", "what does the handler do?", "Enter")
        screen = wait_for_all(socket, ["your pins, excludes or expands", "pins changed"], 60)
        wait_for(socket, "Next call ≈", 60)  # the turn is over
        keys(socket, "/context", "Enter")  # back to the panel's rows
        wait_for(socket, "exact count:", 15)
        keys(socket, "Home", *["Down"] * start)
        screen = wait_for(socket, f"#{pinned} pinned: pinned by you: always sent verbatim", 15)
        row = next(line for line in screen.splitlines() if f" {pinned} user " in line or f" {pinned} asst " in line)
        assert "●" in row and not row.rstrip().endswith("–"), row  # sent in the next call
    finally:
        subprocess.run(["tmux", "-L", socket, "kill-server"], capture_output=True)
