"""Replace a file's contents all at once, or not at all.

Writing in place truncates the file first: a write that then fails (disk full, quota, a file-size
limit) leaves half a file where the whole one was. Here the new bytes go to a temporary file in the
same folder (so the rename stays on one file system), are flushed to disk, and `os.replace` swaps it in
atomically; the old file's permission bits are kept. Any failure removes the temporary file and leaves
the original untouched. (A hard-linked file becomes a separate file, as with most editors.)
"""

from __future__ import annotations

import os
import secrets
import stat
from pathlib import Path


def write_atomic(path: Path, data: bytes) -> None:
    """Make `path` (symlinks followed: the link stays a link) hold exactly `data`; raises OSError."""
    target = Path(os.path.realpath(path))
    try:
        mode: int | None = stat.S_IMODE(target.stat().st_mode)
    except FileNotFoundError:
        mode = None  # a new file: 0o666 less the umask, as open() would give it
    temp = target.with_name(f".{target.name}.{secrets.token_hex(4)}.tui-agent.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o666)
    try:
        try:
            if mode is not None:
                os.fchmod(fd, mode)
            view = memoryview(data)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temp, target)
    except BaseException:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise
    _fsync_dir(target.parent)


def _fsync_dir(folder: Path) -> None:
    """Make the rename itself durable (best effort: not every platform can open a folder)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
