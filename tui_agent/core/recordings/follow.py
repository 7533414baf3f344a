"""Follow a growing JSONL file (a Claude Code log being written) line by line, robustly.

`tui-agent watch` reads a file another process is still appending to, so every read can end inside a
line. This module owns the byte-level questions so the watch only ever sees whole lines, once each:

- a half-written last line stays in the buffer until its newline arrives (never skipped, never parsed
  twice);
- a file truncated below what was read, replaced by another file (a new inode), or rewritten in place
  (its first bytes changed) is reopened from its start, and the batch says so (`reset`): what was read
  before no longer describes the file;
- a line that cannot be read (not UTF-8, or longer than `max_line_bytes`) is counted in `unreadable`
  and dropped, never fatal; a line too long is skipped up to its newline without being held in memory,
  so memory stays bounded by `max_line_bytes` plus one read, whatever the file holds;
- every (re)open checks that the path holds a regular file, before and after the open (non-blocking):
  a path flipped to a FIFO or to `/dev/zero` after start is not read (`not_regular`; a FIFO blocks, a
  device never ends) and is waited on until a regular file is back;
- a poll reads at most `max_poll_bytes` (`behind` says what is left), so a log far ahead is taken in
  steps and its reader can look at its stop flag between them;
- waiting is a sleep that backs off from `min_wait` to `max_wait` while nothing is written (no busy
  polling: an idle watch wakes a few times a second at most), and drops back as soon as data arrives.

Standard library only (`os.stat` on the path against `os.fstat` on the open file); it works the same on
every platform and on network file systems where inotify sees nothing.
"""

from __future__ import annotations

import os
import time
from stat import S_ISREG
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

READ_CHUNK = 1 << 20
POLL_BYTES = 1 << 20  # read per poll at most: a log far ahead is taken in steps, the stop flag looked at between
MAX_LINE_BYTES = 64 << 20  # the largest real log lines (a pasted image, a huge tool result) are a few MB
HEAD_BYTES = 256  # the first bytes of the file, compared on every poll to notice a rewrite in place


@dataclass
class Batch:
    """What one poll found: whole lines (without their newline), in file order."""

    lines: list[str] = field(default_factory=list)
    reset: bool = False  # the file was truncated or replaced: `lines` start again at its beginning
    unreadable: int = 0  # lines dropped in this batch (not UTF-8, or too long)
    missing: bool = False  # the path does not exist right now (it may come back)
    not_regular: bool = False  # the path is there but is not a regular file (a FIFO, a device): not read
    behind: int = 0  # bytes of the file not read yet (the poll's cap was reached): poll again soon

    def __bool__(self) -> bool:
        return bool(self.lines or self.reset or self.unreadable)


class Follower:
    """Reads the whole lines appended to `path` since the last poll (`poll`), or waits for some (`wait`)."""

    def __init__(self, path: str | Path, *, max_line_bytes: int = MAX_LINE_BYTES,
                 min_wait: float = 0.02, max_wait: float = 0.5, sleep: Callable[[float], None] = time.sleep,
                 max_poll_bytes: int = POLL_BYTES) -> None:
        self.path = Path(path)
        self.max_line_bytes = max_line_bytes
        self.min_wait, self.max_wait = min_wait, max_wait
        self._sleep = sleep
        self._fd: int | None = None
        self._inode: tuple[int, int] | None = None
        self._offset = 0  # bytes consumed from the open file
        self._partial = bytearray()  # the unfinished last line
        self._skipping = False  # inside a line too long to keep: drop bytes up to its newline
        self._head = b""
        self.unreadable = 0  # lines dropped since the start (every batch's count added up)
        self.max_poll_bytes = max_poll_bytes
        self.behind = 0  # bytes left to read after the last poll
        self._not_regular = False  # what the last wait saw: a wait returns when this changes
        self.resets = 0
        self._wait = min_wait

    # -- reading ------------------------------------------------------------------------------------
    def poll(self, max_bytes: int | None = None) -> Batch:
        """The whole lines written since the last poll, from at most `max_bytes` read (never blocks: a
        log far ahead is read over several polls, so a caller checks its stop flag between them;
        `Batch.behind` says how much is left)."""
        batch = Batch()
        stat = self._stat_path(batch)
        if stat is None:
            return batch
        if self._fd is not None and self._changed(stat):
            self._close()
            batch.reset = True
            self.resets += 1
        if self._fd is None and not self._open(batch):
            return batch
        assert self._fd is not None  # _open set it
        budget = self.max_poll_bytes if max_bytes is None else max_bytes
        while budget > 0:
            chunk = os.read(self._fd, min(READ_CHUNK, budget))
            if not chunk:
                break
            budget -= len(chunk)
            if len(self._head) < HEAD_BYTES and self._offset < HEAD_BYTES:
                self._head += chunk[: HEAD_BYTES - self._offset]
            self._offset += len(chunk)
            self._split(chunk, batch)
        batch.behind = max(stat.st_size - self._offset, 0)
        self.behind = batch.behind
        self.unreadable += batch.unreadable
        return batch

    def _stat_path(self, batch: Batch) -> os.stat_result | None:
        """The path's file as it is now, or None (missing, or not a regular file: said in `batch`). A
        path that turned into a FIFO or a device (a symlink flipped to `/dev/zero`) is never read: a FIFO
        blocks an open and a read, a device never ends."""
        try:
            stat = os.stat(self.path)
        except OSError:
            batch.missing = True
            return None
        if not S_ISREG(stat.st_mode):
            if self._fd is not None:  # the file read so far is no longer at the path
                self._close()
                batch.reset = True
                self.resets += 1
            batch.missing = batch.not_regular = True
            return None
        return stat

    def _open(self, batch: Batch) -> bool:
        """Open the path non-blocking and check what was opened is a regular file (it may have changed
        between the stat and the open)."""
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0)
                         | getattr(os, "O_CLOEXEC", 0))
        except OSError:
            batch.missing = True
            return False
        opened = os.fstat(fd)
        if not S_ISREG(opened.st_mode):
            os.close(fd)
            batch.missing = batch.not_regular = True
            return False
        self._fd = fd
        self._inode = (opened.st_dev, opened.st_ino)
        return True

    def wait(self, stop: Callable[[], bool] = lambda: False) -> Batch:
        """Poll until something arrives, the path stops (or starts again) being a regular file, or `stop()`
        is true, sleeping longer while nothing is written."""
        while True:
            batch = self.poll()
            turned = batch.not_regular != self._not_regular  # the path became (or stopped being) a non-file
            self._not_regular = batch.not_regular
            if batch or batch.behind or turned or stop():
                self._wait = self.min_wait
                return batch
            self._sleep(self._wait)
            self._wait = min(self._wait * 2, self.max_wait)

    def close(self) -> None:
        self._close()

    def __enter__(self) -> Follower:
        return self

    def __exit__(self, *exc: object) -> None:
        self._close()

    @property
    def pending_bytes(self) -> int:
        """Bytes of a half-written last line held back (waited for, not yet a line)."""
        return len(self._partial)

    # -- internals ----------------------------------------------------------------------------------
    def _changed(self, stat: os.stat_result) -> bool:
        """Whether the path no longer holds the file we read: another inode, shorter than what we read,
        or different first bytes (truncated and written again past where we were)."""
        if (stat.st_dev, stat.st_ino) != self._inode or stat.st_size < self._offset:
            return True
        if self._head and self._fd is not None:
            try:
                return os.pread(self._fd, len(self._head), 0) != self._head
            except OSError:
                return True
        return False

    def _close(self) -> None:
        if self._fd is not None:
            try:
                os.close(self._fd)
            except OSError:
                pass
        self._fd, self._inode, self._offset, self._head = None, None, 0, b""
        self._partial.clear()
        self._skipping = False

    def _split(self, chunk: bytes, batch: Batch) -> None:
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            if end < 0:
                self._hold(chunk[start:], batch)
                return
            piece = chunk[start:end]
            start = end + 1
            if self._skipping:  # the end of a line too long to keep
                self._skipping = False
                self._partial.clear()
                continue
            if len(self._partial) + len(piece) > self.max_line_bytes:
                self._partial.clear()
                batch.unreadable += 1
                continue
            self._partial += piece
            line = bytes(self._partial)
            self._partial.clear()
            try:
                text = line.decode("utf-8")
            except UnicodeDecodeError:
                batch.unreadable += 1
                continue
            text = text.removesuffix("\r")
            batch.lines.append(text)

    def _hold(self, rest: bytes, batch: Batch) -> None:
        if self._skipping:
            return
        if len(self._partial) + len(rest) > self.max_line_bytes:
            self._partial.clear()
            self._skipping = True
            batch.unreadable += 1
            return
        self._partial += rest
