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
- waiting is a sleep that backs off from `min_wait` to `max_wait` while nothing is written (no busy
  polling: an idle watch wakes a few times a second at most), and drops back as soon as data arrives.

Standard library only (`os.stat` on the path against `os.fstat` on the open file); it works the same on
every platform and on network file systems where inotify sees nothing.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

READ_CHUNK = 1 << 20
MAX_LINE_BYTES = 64 << 20  # the largest real log lines (a pasted image, a huge tool result) are a few MB
HEAD_BYTES = 256  # the first bytes of the file, compared on every poll to notice a rewrite in place


@dataclass
class Batch:
    """What one poll found: whole lines (without their newline), in file order."""

    lines: list[str] = field(default_factory=list)
    reset: bool = False  # the file was truncated or replaced: `lines` start again at its beginning
    unreadable: int = 0  # lines dropped in this batch (not UTF-8, or too long)
    missing: bool = False  # the path does not exist right now (it may come back)

    def __bool__(self) -> bool:
        return bool(self.lines or self.reset or self.unreadable)


class Follower:
    """Reads the whole lines appended to `path` since the last poll (`poll`), or waits for some (`wait`)."""

    def __init__(self, path: str | Path, *, max_line_bytes: int = MAX_LINE_BYTES,
                 min_wait: float = 0.02, max_wait: float = 0.5, sleep: Callable[[float], None] = time.sleep) -> None:
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
        self.resets = 0
        self._wait = min_wait

    # -- reading ------------------------------------------------------------------------------------
    def poll(self) -> Batch:
        """The whole lines written since the last poll (never blocks)."""
        batch = Batch()
        try:
            stat = os.stat(self.path)
        except OSError:
            batch.missing = True
            return batch
        if self._fd is not None and self._changed(stat):
            self._close()
            batch.reset = True
            self.resets += 1
        if self._fd is None:
            try:
                self._fd = os.open(self.path, os.O_RDONLY)
            except OSError:
                batch.missing = True
                return batch
            opened = os.fstat(self._fd)
            self._inode = (opened.st_dev, opened.st_ino)
        while True:
            chunk = os.read(self._fd, READ_CHUNK)
            if not chunk:
                break
            if len(self._head) < HEAD_BYTES and self._offset < HEAD_BYTES:
                self._head += chunk[: HEAD_BYTES - self._offset]
            self._offset += len(chunk)
            self._split(chunk, batch)
        self.unreadable += batch.unreadable
        return batch

    def wait(self, stop: Callable[[], bool] = lambda: False) -> Batch:
        """Poll until something arrives or `stop()` is true, sleeping longer while nothing is written."""
        while True:
            batch = self.poll()
            if batch or stop():
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
