"""`tui-agent proxy -- AGENT` inside tmux: the agent keeps this pane and its terminal, the watch face on the
recording opens in a pane beside it and closes when the agent exits, and the agent's exit code is ours."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys

from tests.waiting import wait_until_sync


def _panes(socket: str) -> list[str]:
    done = subprocess.run(["tmux", "-L", socket, "list-panes", "-a", "-F", "#{pane_id} #{pane_current_command}"],
                          capture_output=True, text=True)
    return done.stdout.split("\n")[:-1] if done.returncode == 0 else []


def test_the_panel_opens_beside_the_agent_and_closes_with_it(tmp_path):
    socket = f"tui-agent-proxy-{os.getpid()}"
    done_file, agent_ran = tmp_path / "rc", tmp_path / "ran"
    agent = f"touch {shlex.quote(str(agent_ran))}; while [ ! -e {shlex.quote(str(tmp_path / 'go'))} ]; do sleep 0.1; done; exit 5"
    command = (f"env -u COLUMNS -u LINES {shlex.quote(sys.executable)} -m tui_agent proxy --record-dir "
               f"{shlex.quote(str(tmp_path / 'rec'))} -- sh -c {shlex.quote(agent)}; echo $? > {shlex.quote(str(done_file))}; "
               "sleep 60")
    subprocess.run(["tmux", "-L", socket, "new-session", "-d", "-s", "agent", "-x", "200", "-y", "50", command],
                   check=True, cwd=os.getcwd())
    try:
        wait_until_sync(agent_ran.exists, what="the agent started", timeout=30)
        panes = wait_until_sync(lambda: len(_panes(socket)) == 2 and _panes(socket), what="the panel's pane",
                                timeout=30)
        [recording] = list((tmp_path / "rec").glob("proxy-*.jsonl"))
        started = subprocess.run(["tmux", "-L", socket, "list-panes", "-a", "-F", "#{pane_start_command}"],
                                 capture_output=True, text=True).stdout
        assert f"tui_agent watch {recording}" in started  # the watch face on this run's recording
        (tmp_path / "go").touch()
        wait_until_sync(done_file.exists, what="the proxy to exit", timeout=30)
        assert done_file.read_text().strip() == "5"
        wait_until_sync(lambda: len(_panes(socket)) == 1, what="the panel's pane closed", timeout=30)
        assert panes[0].split()[0] == _panes(socket)[0].split()[0]  # the agent's pane is the one left
    finally:
        subprocess.run(["tmux", "-L", socket, "kill-server"], capture_output=True)
