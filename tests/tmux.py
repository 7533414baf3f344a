"""Driving a real terminal (tmux) from a test, defined once: the screen of a test's own pane and the
bounded waits for text on it (tests.waiting's). Each test names its own socket (`-L`), so nothing here
reaches a tmux server the test did not start; the process in a pane is `tests.processes.pane_pid`."""

from __future__ import annotations

import subprocess

from tests.waiting import wait_until_sync


def capture(socket: str, target: str = "agent") -> str:
    """What the pane shows now (plain text)."""
    return subprocess.run(["tmux", "-L", socket, "capture-pane", "-p", "-t", target],
                          capture_output=True, text=True).stdout


def wait_for_all(socket: str, needles: list[str], timeout: float) -> str:
    """The screen once it shows every one of `needles` (the screen is shown if it never does)."""
    def showing() -> str | None:
        screen = capture(socket)
        return screen if all(n in screen for n in needles) else None

    return wait_until_sync(showing, what=f"all of {needles!r} on the screen", timeout=timeout,
                           shown=lambda: capture(socket))


def wait_for(socket: str, needle: str, timeout: float) -> str:
    """The screen once it shows `needle`."""
    def showing() -> str | None:
        screen = capture(socket)
        return screen if needle in screen else None

    return wait_until_sync(showing, what=f"{needle!r} on the screen", timeout=timeout, shown=lambda: capture(socket))
