"""The terminal guard's parts in-process (issue 21): a dead writer never blocks a write, a pty hang-up is
seen, the watchdog ends a hung shutdown and a second SIGTERM ends it at once. The real-terminal runs
(tmux, the console script) are in test_terminal_loss.py."""

from __future__ import annotations

import errno
import os
import signal
import threading
from typing import Iterator

import pytest
from textual.app import App
from textual.drivers._writer_thread import MAX_QUEUED_WRITES, WriterThread

from tests.waiting import wait_until_sync
from tui_agent.ui import terminal_guard
from tui_agent.ui.terminal_guard import (GRACE_S, LOST_CODE, GuardedLinuxDriver, HangupWatcher, ShutdownWatchdog,
                                         TerminalGuard, grace_from_env)


class DeadTty:
    """What a terminal that went away gives a write: EIO."""

    def write(self, text: str) -> int:
        raise OSError(errno.EIO, "Input/output error")

    def flush(self) -> None:
        raise OSError(errno.EIO, "Input/output error")

    def fileno(self) -> int:
        return -1


@pytest.fixture
def own_signals(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The watchdog installs SIGTERM/SIGHUP handlers: give pytest its own back afterwards; a writer thread
    dying of EIO is the point of these tests, not a failure to report."""
    saved = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGTSTP, signal.SIGCONT)}
    monkeypatch.setattr(threading, "excepthook", lambda args: None)
    yield
    for sig, handler in saved.items():
        signal.signal(sig, handler)


def driver_with_dead_writer(guard: TerminalGuard) -> GuardedLinuxDriver:
    """Needs a running loop (a Driver takes it at construction)."""
    driver = GuardedLinuxDriver.bound_to(guard)(App())
    writer = WriterThread(DeadTty())  # type: ignore[arg-type]
    driver._writer_thread = writer
    writer.start()
    driver.write("first frame")  # the writer dies of EIO on it
    writer.join(5)
    assert not writer.is_alive()
    return driver


def in_thread(work) -> threading.Thread:
    thread = threading.Thread(target=work, daemon=True)
    thread.start()
    thread.join(10)  # a safety net against the hang under test, not a time limit on the work
    return thread


async def test_writes_after_the_writer_died_of_eio_do_not_block(own_signals: None) -> None:
    exits: list[int] = []
    guard = TerminalGuard([], grace=0.05, exit=exits.append)
    driver = driver_with_dead_writer(guard)

    def shutdown_writes() -> None:  # more than the queue holds: the plain driver blocks on the 31st for ever
        for _ in range(MAX_QUEUED_WRITES * 3):
            driver.write("\x1b[?1000l")
        driver.close()

    assert not in_thread(shutdown_writes).is_alive(), "a write blocked on the dead writer's queue"
    assert guard.lost
    assert wait_until_sync(lambda: exits, what="the watchdog to end the process") == [LOST_CODE]


async def test_close_returns_when_the_queue_is_full_and_nothing_drains_it(own_signals: None,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(terminal_guard, "WRITE_STALL_S", 0.2)
    guard = TerminalGuard([], grace=60, exit=lambda code: None)
    guard.exit_requested(143)  # a SIGTERM started the shutdown (before it, a stuck terminal is waited for)
    driver = GuardedLinuxDriver.bound_to(guard)(App())
    writer = WriterThread(DeadTty())  # type: ignore[arg-type]
    driver._writer_thread = writer  # never started; made to look alive and stuck in a write
    monkeypatch.setattr(writer, "is_alive", lambda: True)
    for _ in range(MAX_QUEUED_WRITES):
        writer._queue.put("stuck frame")

    def more() -> None:
        driver.write("one more")
        driver.close()

    assert not in_thread(more).is_alive(), "a write or close waited for a writer that never drains"
    assert guard.lost
    guard.watchdog.cancel()


def test_a_pty_hang_up_is_seen() -> None:
    master, slave = os.openpty()
    seen = threading.Event()
    watcher = HangupWatcher(slave, seen.set, interval=0.05)
    watcher.start()
    try:
        assert not seen.wait(0.2)  # an open terminal is not a hang-up
        os.close(master)  # what tmux kill-server does to the pane
        wait_until_sync(seen.is_set, what="the watcher to report the hang-up")
    finally:
        watcher.stopped.set()
        watcher.join(5)
        os.close(slave)


def test_the_watchdog_ends_a_hung_shutdown_after_the_grace_with_the_journal_flushed(own_signals: None) -> None:
    exits: list[int] = []
    flushed: list[str] = []
    watchdog = ShutdownWatchdog([lambda: flushed.append("journal")], grace=0.05, exit=exits.append)
    watchdog.arm(143)
    watchdog.arm(129)  # a later request does not restart the countdown or change the code
    assert wait_until_sync(lambda: exits, what="the watchdog to fire") == [143]
    assert flushed == ["journal"]


def test_a_second_sigterm_ends_it_at_once(own_signals: None) -> None:
    exits: list[int] = []
    watchdog = ShutdownWatchdog([], grace=600, exit=exits.append)
    watchdog.arm(143)  # the first SIGTERM started a shutdown (which hangs)
    os.kill(os.getpid(), signal.SIGTERM)  # the second one
    assert wait_until_sync(lambda: exits, what="the second SIGTERM to end it") == [128 + signal.SIGTERM]
    watchdog.cancel()


def test_a_cleanup_that_hangs_does_not_keep_the_process_alive(own_signals: None,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(terminal_guard, "CLEANUP_S", 0.05)
    exits: list[int] = []
    stuck = threading.Event()
    watchdog = ShutdownWatchdog([stuck.wait, lambda: None], grace=0.01, exit=exits.append)
    watchdog.arm(129)
    try:
        assert wait_until_sync(lambda: exits, what="the exit despite a stuck cleanup") == [129]
    finally:
        stuck.set()


def test_the_grace_comes_from_the_environment() -> None:
    assert grace_from_env({}) == GRACE_S
    assert grace_from_env({"TUI_AGENT_SHUTDOWN_GRACE": "0.5"}) == 0.5
    assert grace_from_env({"TUI_AGENT_SHUTDOWN_GRACE": "soon"}) == GRACE_S
    assert grace_from_env({"TUI_AGENT_SHUTDOWN_GRACE": "-1"}) == GRACE_S


def test_only_the_plain_linux_driver_is_replaced() -> None:
    from textual.drivers.headless_driver import HeadlessDriver

    app = App()
    app.driver_class = HeadlessDriver
    TerminalGuard([]).attach(app)
    assert app.driver_class is HeadlessDriver  # serve's and the tests' drivers stay


async def test_a_sigcont_without_a_suspend_does_not_start_application_mode_again(
        own_signals: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """The hang-up comes with SIGCONT; LinuxDriver's handler restarted application mode on the dying
    terminal (a second writer, whose full queue then hung the shutdown: the orphan's stack in issue 21)."""
    from textual.drivers.linux_driver import LinuxDriver

    starts: list[str] = []
    monkeypatch.setattr(LinuxDriver, "start_application_mode", lambda self: starts.append("start"))
    monkeypatch.setattr(LinuxDriver, "stop_application_mode", lambda self: starts.append("stop"))
    driver = GuardedLinuxDriver(App())
    driver._sigcont_application()  # what the SIGCONT handler runs
    assert starts == []
    driver.suspend_application_mode()  # Ctrl+Z: a real suspend, then SIGCONT resumes
    driver._sigcont_application()
    assert starts == ["stop", "start"]


def test_the_watchdogs_journal_cleanup_flushes_a_batch_still_in_the_buffer(tmp_path) -> None:
    from tests.ui.support import demo_session, make_repo
    from tui_agent.core.journal.writer import start_journal
    from tui_agent.ui.terminal_guard import journal_flusher

    session = demo_session(make_repo(tmp_path))
    journal = start_journal(session)
    journal.open().append({"type": "note", "text": "batched"}, sync=False)  # buffered until the next sync
    assert b"batched" not in journal.path.read_bytes()
    journal_flusher(session)()
    assert b"batched" in journal.path.read_bytes()
