"""A tui-agent that loses its terminal, or whose shutdown hangs, still ends (issue 21): real console script,
real tmux, and only the processes this test started (the pane's pid, never a name).

Before the fix a `tmux kill-server` right after the first frame left orphans that ignored SIGHUP and
SIGTERM for good (a driver write blocked on a dead writer's queue inside the shutdown).
"""

from __future__ import annotations

import os
import random
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.processes import children, gone, pane_pid, start_time
from tests.tmux import capture
from tests.waiting import wait_until_sync

TMUX = shutil.which("tmux")
CLI = Path(sys.executable).with_name("tui-agent")
HUNG_MAIN = Path(__file__).with_name("hung_shutdown_main.py")
GONE_WITHIN_S = 5.0  # the bound: no process of ours alive this long after the terminal went

pytestmark = pytest.mark.skipif(TMUX is None or not CLI.exists(), reason="needs tmux and the tui-agent console script")


class Pane:
    """One tmux server of our own with one pane. Its shell exec's the command (so the pane pid is the
    agent), or with `code_file` runs it as its one child and writes the exit status there."""

    def __init__(self, socket: str, workdir: Path, argv: list[str], env: dict[str, str],
                 code_file: Path | None = None) -> None:
        self.socket = socket
        settings = {"TERM": "xterm-256color", "TUI_AGENT_CONFIG_DIR": str(workdir / "config"),
                    "TUI_AGENT_DATA_DIR": str(workdir / "data"), **env}
        line = ("env -u COLUMNS -u LINES " + " ".join(f"{k}={shlex.quote(v)}" for k, v in settings.items())
                + " " + " ".join(shlex.quote(a) for a in argv))
        line = f"exec {line}" if code_file is None else f"{line}; echo $? > {shlex.quote(str(code_file))}; sleep 60"
        subprocess.run(["tmux", "-L", socket, "new-session", "-d", "-s", "agent", "-x", "120", "-y", "40",
                        "-c", str(workdir), line], check=True)
        self.root = self.pid = pane_pid(socket)
        self.started = start_time(self.pid)
        if code_file is not None:  # the agent: the shell's one child, the process this test started
            shell = self.pid
            self.pid = wait_until_sync(lambda: children(shell)[0] if len(children(shell)) == 1 else None,
                                       what="the agent under the pane's shell")
            self.started = start_time(self.pid)

    def tmux(self, *args: str) -> str:
        return subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True, text=True).stdout

    def screen(self) -> str:
        return capture(self.socket)

    def ours(self) -> list[tuple[int, int | None]]:
        """The pane's processes (shell, agent and all their descendants), each with its start time."""
        found, todo, seen = [], [self.root, self.pid], set()
        while todo:
            pid = todo.pop()
            if pid not in seen and not gone(pid):
                seen.add(pid)
                found.append((pid, start_time(pid)))
                todo += children(pid)
        return found

    def close(self, leftovers: list[tuple[int, int | None]] = ()) -> None:
        """Kill the server; SIGKILL what of ours is still alive (only processes this test started)."""
        self.tmux("kill-server")
        for pid, started in [*leftovers, (self.pid, self.started)]:
            if not gone(pid, started):
                os.kill(pid, signal.SIGKILL)
        # a killed server leaves its socket file behind: 21 per run of this module otherwise
        (Path(os.environ.get("TMUX_TMPDIR", "/tmp")) / f"tmux-{os.getuid()}" / self.socket).unlink(missing_ok=True)


def first_frame_seconds(tmp_path: Path) -> float:
    """How long start-up takes here: the random moments cover launch to a little after the first prompt."""
    pane = Pane(f"tui-agent-loss-{os.getpid()}-cal", tmp_path / "cal", [str(CLI), "--model", "demo"], {})
    started = time.monotonic()
    try:
        wait_until_sync(lambda: "Context budget" in pane.screen(), what="the first frame", timeout=30,
                        shown=pane.screen)
        return time.monotonic() - started
    finally:
        pane.close(pane.ours())


def kill_the_terminal_at_random_moments(tmp_path: Path, moments: int) -> None:
    seed = int.from_bytes(os.urandom(4), "big")
    chance = random.Random(seed)
    span = first_frame_seconds(tmp_path) * 1.25
    survivors = []
    for n in range(moments):
        delay = chance.uniform(0, span)
        workdir = tmp_path / f"run{n}"
        workdir.mkdir()
        pane = Pane(f"tui-agent-loss-{os.getpid()}-{n}", workdir, [str(CLI), "--model", "demo"], {})
        time.sleep(delay)  # the moment under test, not a wait for something
        ours = pane.ours()
        pane.tmux("kill-server")  # the terminal window closes
        try:
            wait_until_sync(lambda: all(gone(pid, started) for pid, started in ours), timeout=GONE_WITHIN_S,
                            what=f"the agent {pane.pid} to end after losing its terminal at {delay:.2f} s")
        except AssertionError:
            survivors.append((round(delay, 3), [pid for pid, started in ours if not gone(pid, started)]))
        finally:
            pane.close(ours)
    assert survivors == [], f"seed {seed}, span {span:.2f} s: (moment, still alive) {survivors}"


def test_losing_the_terminal_at_twenty_random_moments_of_start_up_ends_the_agent(tmp_path: Path) -> None:
    # ~12 s here (each agent ends at once), so it stays in the default run; before the fix 2 of 20 survived
    kill_the_terminal_at_random_moments(tmp_path, 20)


def read_code(path: Path) -> int | None:
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def start_hung(tmp_path: Path, grace: str) -> tuple[Pane, Path, Path]:
    marker, code = tmp_path / "hanging", tmp_path / "code"
    pane = Pane(f"tui-agent-hung-{os.getpid()}-{grace}", tmp_path,
                [sys.executable, str(HUNG_MAIN), str(marker), "--model", "demo"], {"TUI_AGENT_SHUTDOWN_GRACE": grace},
                code_file=code)
    wait_until_sync(lambda: "Context budget" in pane.screen(), what="the first frame", timeout=30, shown=pane.screen)
    return pane, marker, code


def test_a_second_sigterm_ends_a_hung_shutdown(tmp_path: Path) -> None:
    pane, marker, code = start_hung(tmp_path, grace="600")  # the watchdog is far away: only the signal can end it
    try:
        os.kill(pane.pid, signal.SIGTERM)
        wait_until_sync(marker.exists, what="the shutdown to hang", timeout=30, shown=pane.screen)
        assert not gone(pane.pid, pane.started)  # stuck, as a blocked shutdown was
        os.kill(pane.pid, signal.SIGTERM)
        status = wait_until_sync(lambda: read_code(code), what="the second SIGTERM to end the agent", timeout=15)
        assert status == 128 + signal.SIGTERM
    finally:
        pane.close(pane.ours())


def test_the_watchdog_ends_a_shutdown_that_hangs(tmp_path: Path) -> None:
    pane, marker, code = start_hung(tmp_path, grace="1")
    try:
        os.kill(pane.pid, signal.SIGTERM)  # once: the watchdog ends what the shutdown cannot
        wait_until_sync(marker.exists, what="the shutdown to hang", timeout=30, shown=pane.screen)
        status = wait_until_sync(lambda: read_code(code), what="the watchdog to end the agent", timeout=15)
        assert status == 128 + signal.SIGTERM
        assert "Context budget" not in pane.screen()  # the hard exit still gave the terminal back its screen
    finally:
        pane.close(pane.ours())
