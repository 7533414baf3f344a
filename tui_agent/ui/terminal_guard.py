"""A TUI that loses its terminal ends: a guarded Linux driver, a hang-up watcher, a shutdown watchdog.

Textual's `LinuxDriver` writes through a `WriterThread` that drains a bounded queue (30 writes) into the
tty. When the terminal goes away (the window closed, `tmux kill-server`), the writer's next write fails
with EIO and the thread dies; nothing drains its queue any more, so the 31st `driver.write` (or the
shutdown's `stop()`) blocks the event loop for ever, and with the loop blocked later SIGTERMs (delivered
through asyncio's wakeup fd) never run either: an orphan that only SIGKILL ended. What made it likely:
a SIGCONT arrives with the hang-up, and LinuxDriver answers every SIGCONT by starting application mode
again, i.e. a second writer on the dying terminal. See docs/upstream-textual-writer-queue.md.

Three parts, each enough on its own for a different way of dying:
- `GuardedLinuxDriver`: resumes only after its own suspend; a write never waits on a writer that is
  gone, nor, once a signalled shutdown is under way, on one stuck for `WRITE_STALL_S`; the output is
  dropped and the terminal counted as lost.
  It reaches into `WriterThread._queue` because the put is the thing that blocks; textual is pinned
  exactly and tests/ui/test_terminal_guard.py breaks if that changes.
- `HangupWatcher`: a thread that waits for POLLHUP on the tty, for a terminal that vanishes while the
  app is idle and no SIGHUP reaches us (we are not the session leader, or the signal went elsewhere).
- `ShutdownWatchdog`: once an exit is under way because of a signal or a lost terminal, the process ends
  for sure: after `grace` seconds, or at once on a second SIGTERM/SIGHUP (a plain `signal.signal`
  handler, which runs even while the loop is blocked), flushing the journal and ending Bash's process
  groups first, then `os._exit`.
"""

from __future__ import annotations

import asyncio
import os
import queue
import select
import signal
import termios
import threading
import time
from typing import TYPE_CHECKING, Callable, Mapping

from textual.drivers.linux_driver import LinuxDriver

from tui_agent.core.shell import process_groups

if TYPE_CHECKING:
    from textual.app import App

    from tui_agent.core.agent.session import Session

LOST_CODE = 128 + signal.SIGHUP  # what a lost terminal exits with: the same as dying of the hang-up
WRITE_STALL_S = 2.0  # during a signalled shutdown, a write that cannot be queued this long is dropped
GRACE_S = 3.0  # how long a signalled shutdown may take before the watchdog ends the process
GRACE_ENV = "TUI_AGENT_SHUTDOWN_GRACE"  # seconds; tests set it (a hung shutdown, a second SIGTERM)
CLEANUP_S = 1.5  # the watchdog's cleanups run in a helper thread joined this long (they must not hang it)
_PUT_SLICE_S = 0.1
# paste, wrap, kitty keys, alt screen, cursor, focus, mouse: what LinuxDriver's shutdown would have reset
RESET_MODES = b"\x1b[?2004l\x1b[?7h\x1b[<u\x1b[?1049l\x1b[?25h\x1b[?1004l\x1b[?1000l\x1b[?1003l\x1b[?1015l\x1b[?1006l"
_HANGUP = select.POLLHUP | select.POLLERR | select.POLLNVAL


def grace_from_env(environ: Mapping[str, str] = os.environ) -> float:
    """`TUI_AGENT_SHUTDOWN_GRACE` as seconds; the default for a missing or unusable value."""
    try:
        value = float(environ.get(GRACE_ENV, GRACE_S))
    except ValueError:
        return GRACE_S
    return value if value > 0 else GRACE_S


class ShutdownWatchdog:
    """Ends the process for sure once a shutdown was asked for by a signal or a lost terminal."""

    def __init__(self, cleanups: list[Callable[[], None]], grace: float = GRACE_S,
                 exit: Callable[[int], None] = os._exit) -> None:
        self.cleanups = cleanups  # run (bounded) before the hard exit: journal flush, process groups, tty
        self.grace = grace
        self._exit = exit
        self._lock = threading.Lock()
        self._armed = False
        self._cancelled = threading.Event()

    @property
    def armed(self) -> bool:
        return self._armed

    def arm(self, code: int) -> None:
        """Start the countdown (once; thread-safe). From the main thread, a second SIGTERM/SIGHUP also ends
        the process at once from now on."""
        with self._lock:
            first, self._armed = not self._armed, True
        if first:
            threading.Thread(target=self._countdown, args=(code,), name="shutdown-watchdog", daemon=True).start()
        if threading.current_thread() is threading.main_thread():
            for sig in process_groups.EXIT_SIGNALS:
                try:
                    signal.signal(sig, lambda signum, frame: self.hard_exit(128 + signum))
                except (ValueError, OSError):
                    pass

    def cancel(self) -> None:
        """Stop the countdown (tests; a process that exits on its own needs nothing)."""
        self._cancelled.set()

    def _countdown(self, code: int) -> None:
        if not self._cancelled.wait(self.grace):
            self.hard_exit(code)

    def hard_exit(self, code: int) -> None:
        """Run the cleanups in a helper thread joined at most `CLEANUP_S` (one stuck on a lock or a dead tty
        must not keep the process alive), then exit without unwinding."""
        def run_cleanups() -> None:
            for cleanup in self.cleanups:
                try:
                    cleanup()
                except Exception:  # noqa: BLE001 - flush what can be flushed
                    pass

        helper = threading.Thread(target=run_cleanups, name="shutdown-cleanup", daemon=True)
        helper.start()
        helper.join(CLEANUP_S)
        self._exit(code)


def journal_flusher(session: "Session") -> Callable[[], None]:
    """A cleanup that fsyncs the session's journal (lines written with `flush=False` are still buffered)."""
    def flush() -> None:
        from tui_agent.core.journal.writer import journal_of

        journal = journal_of(session)
        if journal is not None and journal.file is not None:
            journal.file.sync()

    return flush


class HangupWatcher(threading.Thread):
    """Calls `on_hangup` once when the tty `fd` hangs up (poll reports POLLHUP/POLLERR/POLLNVAL)."""

    def __init__(self, fd: int, on_hangup: Callable[[], None], interval: float = 0.5) -> None:
        super().__init__(name="terminal-hangup-watcher", daemon=True)
        self.fd = fd
        self.on_hangup = on_hangup
        self.interval_ms = int(interval * 1000)
        self.stopped = threading.Event()

    def run(self) -> None:
        poller = select.poll()
        poller.register(self.fd, 0)  # no wanted events: poll reports only hang-ups and errors
        while not self.stopped.is_set():
            if any(mask & _HANGUP for _fd, mask in poller.poll(self.interval_ms)):
                self.on_hangup()
                return


class TerminalGuard:
    """What `run_app` attaches to its app: the driver and the watcher report a lost terminal here; signals
    and a lost terminal arm the watchdog and ask the app to exit."""

    def __init__(self, cleanups: list[Callable[[], None]], grace: float = GRACE_S,
                 exit: Callable[[int], None] = os._exit) -> None:
        self.watchdog = ShutdownWatchdog([*cleanups, self.restore_tty], grace, exit)
        self.app: App | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.driver: LinuxDriver | None = None
        self.watcher: HangupWatcher | None = None
        self.lost = False
        self._lost_lock = threading.Lock()

    def attach(self, app: "App") -> None:
        """Use the guarded driver where Textual would use the plain Linux one (not under `serve`'s driver)."""
        self.app = app
        if app.driver_class is LinuxDriver:
            app.driver_class = GuardedLinuxDriver.bound_to(self)

    def exit_requested(self, code: int) -> None:
        """A signal (or a lost terminal) asked the app to exit: from now on the process ends for sure."""
        self.watchdog.arm(code)

    def terminal_lost(self) -> None:
        """The tty is gone: exit as SIGHUP would (once; from any thread)."""
        with self._lost_lock:
            if self.lost:
                return
            self.lost = True
        self.watchdog.arm(LOST_CODE)
        if self.app is not None and self.loop is not None and not self.loop.is_closed():
            try:
                self.loop.call_soon_threadsafe(self._exit_in_loop)
            except RuntimeError:
                pass  # the loop closed meanwhile: the process is on its way out

    def restore_tty(self) -> None:
        """A watchdog cleanup: give a terminal that is still there its modes back (a hard exit skips
        Textual's own restore)."""
        driver = self.driver
        if driver is None or driver.attrs_before is None or self.lost:
            return
        try:
            termios.tcsetattr(driver.fileno, termios.TCSANOW, driver.attrs_before)
            os.write(driver.fileno, RESET_MODES)
        except (OSError, termios.error):
            pass

    def _exit_in_loop(self) -> None:
        self.watchdog.arm(LOST_CODE)  # again, now on the main thread: a later SIGTERM ends it at once
        if self.app is not None:
            self.app.exit(LOST_CODE)


class GuardedLinuxDriver(LinuxDriver):
    """`LinuxDriver` whose writes never block on a terminal that is gone."""

    guard: TerminalGuard | None = None
    _suspended = False  # set by a real suspend (Ctrl+Z, App.suspend); a resume without one is ignored

    @classmethod
    def bound_to(cls, guard: TerminalGuard) -> type["GuardedLinuxDriver"]:
        """A subclass that reports to `guard` (Textual constructs the driver itself, with fixed arguments)."""
        return type(cls.__name__, (cls,), {"guard": guard})

    def start_application_mode(self) -> None:
        guard = self.guard
        if guard is not None:
            guard.loop = asyncio.get_running_loop()
            guard.driver = self
            if guard.watcher is None and os.isatty(self.fileno):  # one per process, resumes included
                guard.watcher = HangupWatcher(self.fileno, guard.terminal_lost)
                guard.watcher.start()  # before application mode: a terminal gone during start-up counts
        super().start_application_mode()

    def suspend_application_mode(self) -> None:
        self._suspended = True
        super().suspend_application_mode()

    def resume_application_mode(self) -> None:
        """Only after a suspend. LinuxDriver resumes on every SIGCONT, and the kernel sends one with the
        hang-up's SIGHUP: application mode then started a second time (a second writer thread and input
        thread) on a terminal about to vanish, and the shutdown hung on the new writer's full queue."""
        if not self._suspended:
            return
        self._suspended = False
        super().resume_application_mode()

    def _lost(self) -> None:
        if self.guard is not None:
            self.guard.terminal_lost()

    def write(self, data: str) -> None:
        writer = self._writer_thread
        if writer is None or (self.guard is not None and self.guard.lost):
            return  # no terminal to write to (start-up found it gone, or it went since)
        deadline = time.monotonic() + WRITE_STALL_S
        while True:
            if not writer.is_alive():
                self._lost()  # the writer died of a failed write (EIO): nothing drains the queue any more
                return
            try:
                writer._queue.put(data, timeout=_PUT_SLICE_S)
                return
            except queue.Full:
                if time.monotonic() >= deadline and self._shutting_down():
                    self._lost()  # a live but stuck terminal waits, as upstream, unless we are on the way out
                    return

    def _shutting_down(self) -> bool:
        return self.guard is None or self.guard.watchdog.armed or self.guard.lost

    def close(self) -> None:
        writer = self._writer_thread
        if writer is None or not writer.is_alive():
            return
        try:
            writer._queue.put(None, timeout=WRITE_STALL_S)
        except queue.Full:
            self._lost()
            return
        writer.join(WRITE_STALL_S)
