"""One journal file on disk: 0600, locked while a process writes it, append-only, and never seen
without its header.

A new journal is written beside its final name (a hidden `.part` file), locked, given its header, and
only then linked into place: a reader (`sessions`, `--continue`, a watch, a test polling the folder)
that finds the file always finds a journal. Before, the file was created empty and the header written
just after: a reader in between was told the session "is empty or not a tui-agent session journal"
(about half the reads of a just-created journal, when polled; the kill-and-resume test failed on it
once under load).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import IO, Any

from tui_agent.core.journal import records as rec
from tui_agent.core.redact import Secrets, redact_record
from tui_agent.core.paths import ensure_dir

_FLAGS = os.O_WRONLY | os.O_APPEND | getattr(os, "O_CLOEXEC", 0)


class JournalLocked(OSError):
    """Another live process is writing this journal (it holds the file's lock)."""


def lock_file(fd: int, path: Path) -> None:
    """Take `path`'s exclusive lock, without waiting: two processes appending to one journal would write
    records with the same indices (the reader keeps the first, the other turns vanish). `flock` belongs
    to the open file, so the lock dies with its process, `kill -9` included: a crash never leaves a
    session locked. Raises `JournalLocked` when another process holds it. (No `fcntl`: no lock.)"""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise JournalLocked(f"{path} is in use by another tui-agent process") from None


class JournalFile:
    """One append-only journal file: 0600, locked while open (`lock_file`), each line flushed to the OS
    before `append` returns; `sync()` also makes it durable (fsync). With `header` a file that does not
    exist yet appears with that record already in it (see the module's docstring)."""

    def __init__(self, path: Path, secrets: list[str] | None = None,
                 header: dict[str, Any] | None = None) -> None:
        self.path = path
        self.secrets = secrets or []
        self._secrets = Secrets.of(self.secrets)
        ensure_dir(path.parent)
        fd = None
        if header is not None:
            fd = _create_with(path, self._line(header))
        if fd is None:
            fd = _open_existing(path)
        self._file: IO[bytes] | None = os.fdopen(fd, "ab")
        size = path.stat().st_size
        if not size and header is not None:
            self._write(self._line(header))  # an empty file was already there (an older version's)
        elif size and not _ends_with_newline(path):
            self._write(b"\n")  # a line cut short by a kill: start the next record on its own line

    def _line(self, record: dict[str, Any]) -> bytes:
        return rec.dumps(redact_record(record, self._secrets)).encode("utf-8") + b"\n"

    def append(self, record: dict[str, Any], flush: bool = True) -> None:
        """Write one record; `flush=False` leaves it buffered until the next flushed write, `flush()` or
        `sync()` (a batch, such as a loaded transcript's hundreds of messages, is written at once)."""
        self._write(self._line(record), flush)

    def _write(self, data: bytes, flush: bool = True) -> None:
        if self._file is None:
            return
        self._file.write(data)
        if flush:
            self.flush()

    def flush(self) -> None:
        """Hand what is buffered to the OS: it survives the process being killed."""
        if self._file is not None:
            self._file.flush()

    def sync(self) -> None:
        """Flush and fsync: it survives a power cut too."""
        if self._file is not None:
            self._file.flush()
            os.fsync(self._file.fileno())

    def close(self) -> None:
        if self._file is not None:
            try:
                self.sync()
            except OSError:
                pass  # closing after a failed write (disk full): the problem is already reported
            self._file.close()
            self._file = None


def _open_existing(path: Path) -> int:
    """Open (or create) `path` for appending, locked and 0600 (also when it had looser permissions)."""
    fd = os.open(path, _FLAGS | os.O_CREAT, 0o600)
    try:
        lock_file(fd, path)  # before anything is written to it
        os.fchmod(fd, 0o600)
    except OSError:
        os.close(fd)
        raise
    return fd


def _create_with(path: Path, first: bytes) -> int | None:
    """A new file at `path` holding `first` from the moment it exists, open for appending and locked;
    None when `path` already exists (the caller opens that one)."""
    part = path.with_name(f".{path.name}.{os.getpid()}.part")  # no `.jsonl` ending: never listed
    fd = os.open(part, _FLAGS | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        lock_file(fd, part)  # held before the file can be found under its name
        os.fchmod(fd, 0o600)
        _write_all(fd, first)
        _link_into_place(part, path)
    except FileExistsError:
        os.close(fd)
        return None
    except OSError:
        os.close(fd)
        raise
    finally:
        part.unlink(missing_ok=True)
    return fd


def _link_into_place(part: Path, path: Path) -> None:
    """`link` never replaces a file that appeared meanwhile (FileExistsError); a file system without
    hard links gets a rename, after checking again that nothing is there."""
    try:
        os.link(part, path)
    except FileExistsError:
        raise
    except OSError:
        if path.exists():
            raise FileExistsError(path) from None
        os.rename(part, path)


def _write_all(fd: int, data: bytes) -> None:
    while data:
        data = data[os.write(fd, data):]


def _ends_with_newline(path: Path) -> bool:
    with open(path, "rb") as handle:
        handle.seek(-1, os.SEEK_END)
        return handle.read(1) == b"\n"
