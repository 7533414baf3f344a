"""Reading the small files a user or a repository gives us (settings, state, themes, MCP config, skills,
transcripts) without letting one of them stop the agent.

A path may name anything: a FIFO (reading blocks forever), `/dev/zero` through a symlink (never ends),
a symlink loop, a huge file, or JSON/YAML nested 50,000 deep (the parser raises RecursionError, not its
usual error). Only regular files are read, never past a size cap, and every way of failing becomes an
`UnreadableFile` (an `OSError`, so existing `except OSError` handlers see it) or a `ValueError` with a
message fit for a warning line.
"""

from __future__ import annotations

import errno
import json
import os
import stat
from pathlib import Path
from typing import Any

SMALL_FILE_BYTES = 1024 * 1024  # settings, state, themes, .mcp.json: far beyond any real one


class UnreadableFile(OSError):
    """The path exists but is not something to read (`strerror` says why, in words for the user)."""


def read_bytes_capped(path: Path | str, limit: int = SMALL_FILE_BYTES, *, cut: bool = False) -> bytes | None:
    """The bytes of the regular file at `path` (symlinks followed), or None when nothing is there.

    A file over `limit` is refused, or with `cut=True` read up to `limit + 1` bytes (the caller cuts).

    Opened non-blocking, so a FIFO cannot hang the open; checked with `fstat` on the open descriptor,
    so what is read is what was checked.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return None
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise UnreadableFile(errno.ELOOP, "is a symlink loop") from None
        raise UnreadableFile(error.errno or errno.EIO, error.strerror or str(error)) from None
    try:
        info = os.fstat(fd)
    except OSError:
        os.close(fd)
        raise
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        kind = "a folder" if stat.S_ISDIR(info.st_mode) else "not a regular file (a FIFO, socket or device)"
        raise UnreadableFile(errno.EINVAL, f"is {kind}")
    with os.fdopen(fd, "rb") as handle:
        if info.st_size > limit and not cut:
            raise UnreadableFile(errno.EFBIG, f"is {info.st_size} bytes, over the limit of {limit}")
        data = handle.read(limit + 1)
    if len(data) > limit and not cut:
        raise UnreadableFile(errno.EFBIG, f"is over the limit of {limit} bytes")
    return data


def read_text_capped(path: Path | str, limit: int = SMALL_FILE_BYTES) -> str | None:
    """`read_bytes_capped` decoded as UTF-8 (a BOM is dropped); None when nothing is there."""
    data = read_bytes_capped(path, limit)
    if data is None:
        return None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise UnreadableFile(errno.EILSEQ, f"is not UTF-8 text (byte {error.start})") from None


def parse_json(text: str) -> Any:
    """`json.loads`, with every failure a ValueError whose message says where (or why)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(f"line {error.lineno}, column {error.colno}: {error.msg}") from None
    except RecursionError:
        raise ValueError("nested too deeply to read") from None
