"""Issue 28 §1 and issue 27: `tui-agent watch` on a log that is truncated (`: > file`) and grows again, or
replaced by a shorter copy (`mv`) that grows again, follows it from its new start (it crashed with an
IndexError in the replay panel, indices from before the reset) and quits with status 0 on `q`; and `q`
far behind a 20,000-call log is obeyed at once (the follower thread ends), under Pilot and in tmux."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.shared import SMALL_LOG, TRANSCRIPTS, shared_log
from tests.tmux import capture
from tests.ui.test_terminal import CLI, TMUX
from tests.waiting import wait_until, wait_until_sync
from tests.watch.fast_log import write_log
from tests.watch.test_watch_tui import _calls_in
from tui_agent.core.recordings.strategy_table import default_policy
from tui_agent.ui.screens.watch import WatchScreen
from tui_agent.ui.watch_app import WatchApp
from tui_agent.faces.watch import LogSource

ATHENA = TRANSCRIPTS / "tensiondriven__athena__f059ad9a-9964-437c-90a1-28f4dd6d245b.jsonl"
SMALL = SMALL_LOG  # the small real log, else the long synthetic one (tests/shared.py)


def _long_and_short() -> tuple[bytes, list[bytes]]:
    """A long log's start (163 calls) and a shorter session's lines (39 calls)."""
    return b"".join(shared_log(ATHENA.name).read_bytes().splitlines(keepends=True)[:660]), SMALL.read_bytes().splitlines(keepends=True)


def _resets(log: Path, tmp_path: Path, short: list[bytes]):
    """The two resets, each followed by a growth: (what to do, the calls expected after it)."""
    def truncate_and_grow() -> None:
        with open(log, "r+b") as handle:
            handle.truncate(0)  # `: > file`
        log.write_bytes(b"".join(short[:30]))

    def grow_from(start: int):
        def grow() -> None:
            with open(log, "ab") as handle:
                handle.write(b"".join(short[start:]))
        return grow

    def replace_by_a_shorter_copy() -> None:
        copy = tmp_path / "copy.jsonl"
        copy.write_bytes(b"".join(short[:20]))
        os.replace(copy, log)  # `mv copy file`

    return [(truncate_and_grow, _calls_in(b"".join(short[:30]))), (grow_from(30), _calls_in(b"".join(short))),
            (replace_by_a_shorter_copy, _calls_in(b"".join(short[:20]))), (grow_from(20), _calls_in(b"".join(short)))]


async def test_a_truncated_or_replaced_log_is_followed_from_its_new_start_and_q_exits_0(tmp_path):
    long, short = _long_and_short()
    log = tmp_path / "live.jsonl"
    log.write_bytes(long)
    app = WatchApp(LogSource(log, False, False), log, default_policy(), session_label="test", show_durations=False)
    app.animation_level = "none"
    async with app.run_test(size=(150, 45)) as pilot:
        screen = app.screen
        assert isinstance(screen, WatchScreen)
        await wait_until(lambda: screen.replay is not None and screen.replay.calls == _calls_in(long),
                         what="the long log's calls", timeout=120, shown=lambda: screen.sub_title)
        await pilot.pause()
        assert screen.current == _calls_in(long) - 1  # the newest call shown: far past the short log's end
        for change, calls in _resets(log, tmp_path, short):
            change()
            await wait_until(lambda n=calls: screen.replay is not None and screen.replay.calls == n
                             and screen.current == n - 1, what=f"{calls} calls after {change.__name__}",
                             timeout=60, shown=lambda: screen.sub_title)
            await pilot.pause()
            assert f"call {calls}/{calls}" in screen.sub_title
        await pilot.press("q")
    assert app.return_code == 0
    assert screen.follower_ended.wait(30)


async def test_q_far_behind_a_20000_call_log_ends_the_follower_at_once(tmp_path):
    log = tmp_path / "big.jsonl"
    write_log(log, 20_000)
    app = WatchApp(LogSource(log, False, False), log, default_policy(), session_label="test", show_durations=False)
    app.animation_level = "none"
    async with app.run_test(size=(150, 45)) as pilot:
        screen = app.screen
        await wait_until(lambda: screen.replay is not None and screen.replay.calls >= 10, what="the first calls",
                         timeout=120, shown=lambda: screen.sub_title)
        await wait_until(lambda: "behind the log" in screen.sub_title, what="the lag shown",
                         shown=lambda: screen.sub_title)
        await pilot.press("q")
    assert app.return_code == 0
    # the old follower made every call it had read before looking at its stop flag (a minute and more)
    assert screen.follower_ended.wait(20), "the follower thread did not end after q"
    assert screen.view.calls < 20_000


def _tmux_watch(tmp_path: Path, log: Path, name: str) -> tuple[str, Path]:
    """`tui-agent watch LOG` in tmux (200×50, its own config dir); the socket and the file its exit status
    goes to."""
    socket = f"tui-agent-{name}-{os.getpid()}"
    status = tmp_path / "status"
    env = f"TUI_AGENT_CONFIG_DIR={tmp_path / 'config'} TERM=xterm-256color"
    command = f"env -u COLUMNS -u LINES {env} {CLI} watch {log}; echo $? > {status}"
    subprocess.run(["tmux", "-L", socket, "new-session", "-d", "-s", "agent", "-x", "200", "-y", "50",
                    "-c", str(tmp_path), "sh", "-c", command], check=True)
    return socket, status


def _quit_and_status(socket: str, status: Path, timeout: float = 30) -> str:
    try:
        subprocess.run(["tmux", "-L", socket, "send-keys", "-t", "agent", "q"], check=True)
        wait_until_sync(lambda: status.exists() and status.read_text().strip(), what="the watch to exit after q",
                        timeout=timeout, shown=lambda: capture(socket))
        return status.read_text().strip()
    finally:
        subprocess.run(["tmux", "-L", socket, "kill-server"], capture_output=True)


@pytest.mark.skipif(TMUX is None, reason="tmux is not installed, so there is no real terminal to drive")
@pytest.mark.skipif(not CLI.exists(), reason="the tui-agent console script is not installed in this venv")
def test_in_tmux_a_truncated_or_replaced_log_is_followed_and_q_exits_0(tmp_path):
    long, short = _long_and_short()
    log = tmp_path / "live.jsonl"
    log.write_bytes(long)
    socket, status = _tmux_watch(tmp_path, log, "watch-reset")
    try:
        wait_until_sync(lambda: f"call {_calls_in(long)}/{_calls_in(long)}" in capture(socket),
                        what="the long log's newest call", timeout=120, shown=lambda: capture(socket))
        for change, calls in _resets(log, tmp_path, short):
            change()
            wait_until_sync(lambda n=calls: f"call {n}/{n} · following" in capture(socket),
                            what=f"call {calls}/{calls} after {change.__name__}", timeout=60,
                            shown=lambda: capture(socket))
    except BaseException:
        subprocess.run(["tmux", "-L", socket, "kill-server"], capture_output=True)
        raise
    assert _quit_and_status(socket, status) == "0"
    assert not any("Traceback" in line for line in capture(socket).splitlines())


@pytest.mark.skipif(TMUX is None, reason="tmux is not installed, so there is no real terminal to drive")
@pytest.mark.skipif(not CLI.exists(), reason="the tui-agent console script is not installed in this venv")
def test_in_tmux_q_far_behind_a_20000_call_log_exits_0(tmp_path):
    log = tmp_path / "big.jsonl"
    write_log(log, 20_000)
    socket, status = _tmux_watch(tmp_path, log, "watch-quit")
    try:
        wait_until_sync(lambda: "behind the log" in capture(socket), what="the watch behind the log",
                        timeout=120, shown=lambda: capture(socket))
    except BaseException:
        subprocess.run(["tmux", "-L", socket, "kill-server"], capture_output=True)
        raise
    assert _quit_and_status(socket, status, timeout=20) == "0"
