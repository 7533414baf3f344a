"""Read: Claude Code's file reader, `{file_path, offset?, limit?}` → `cat -n` style numbered lines.

The numbering (`{n:>6}\\t{line}`) is what models trained on Claude Code expect, and it lets Edit's
`old_string` be copied from the text after the tab. Files are streamed line by line in a worker thread:
a 1 GB log costs only the lines shown, and the event loop (the TUI) never blocks on disk.
"""

from __future__ import annotations

import asyncio
import base64
import difflib
import itertools
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from tui_agent.core.tools.base import Tool, ToolContext, ToolError, ToolOutput
from tui_agent.core.tools.paths import display_path, resolve_path

DEFAULT_LIMIT = 2000
MAX_LINE_CHARS = 2000
# About Claude Code's 25k-token budget for one Read: past it we stop at a line and say how to go on.
MAX_OUTPUT_CHARS = 100_000
BINARY_SNIFF_BYTES = 8192
MAX_IMAGE_BYTES = int(3.75 * 1024 * 1024)  # the Messages API's per-image limit (5 MB base64)
IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".gif", ".webp"}

DESCRIPTION = """Reads a file from the local filesystem.
- file_path should be an absolute path; a relative path resolves against the workspace root.
- By default reads up to 2000 lines from the start of the file. For long files pass offset (1-based line number to start at) and limit (number of lines).
- Lines longer than 2000 characters are cut.
- Output is numbered like `cat -n`: the line number, a tab, then the line. The number and tab are not part of the file.
- Images (PNG, JPEG, GIF, WebP) are returned as images you can see.
- Directories cannot be read: use Glob to list files. Binary files are refused.
- It is fine to read several files in parallel in one response."""


@dataclass
class _Slice:
    """What one streamed pass over the file produced."""

    lines: list[str]
    first: int  # 1-based number of the first line requested
    last: int  # number of the last line included (first - 1 when none)
    total: int | None  # total lines when the pass reached the end of the file
    stopped_for_size: bool = False


class ReadTool(Tool):
    name = "Read"
    description = DESCRIPTION
    input_schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            "file_path": {
                "type": "string",
                "description": "The absolute path to the file to read (relative paths resolve against the workspace root)",
            },
            "offset": {
                "type": "integer",
                "minimum": 0,
                "description": "The line number to start reading from (1-based; 0 also means the first line). "
                "Only provide if the file is too large to read at once",
            },
            "limit": {
                "type": "integer",
                "minimum": 1,
                "description": "The number of lines to read. Only provide if the file is too large to read at once.",
            },
        },
        "required": ["file_path"],
        "additionalProperties": False,
    }
    read_only = True

    def summary(self, tool_input: dict[str, Any]) -> str:
        value = tool_input.get("file_path")
        return value if isinstance(value, str) else ""

    async def call(self, tool_input: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        raw = str(tool_input["file_path"])
        offset = max(int(tool_input.get("offset") or 1), 1)
        limit = int(tool_input.get("limit") or DEFAULT_LIMIT)
        return await asyncio.to_thread(_read, raw, offset, limit, ctx)


def _read(raw: str, offset: int, limit: int, ctx: ToolContext) -> ToolOutput:
    path = resolve_path(raw, ctx.workspace)
    shown = display_path(path, ctx.workspace)
    try:
        info = path.stat()
    except FileNotFoundError:
        raise ToolError(_missing_message(raw, path, ctx.workspace)) from None
    except OSError as error:
        raise ToolError(f"Cannot read {shown}: {error.strerror or error}") from None
    if stat.S_ISDIR(info.st_mode):
        raise ToolError(
            f"{shown} is a directory, not a file. Use Glob to list its files (for example pattern "
            f"'{shown.rstrip('/')}/*' or '{shown.rstrip('/')}/**/*')."
        )
    if not stat.S_ISREG(info.st_mode):
        raise ToolError(f"{shown} is not a regular file (a device, socket or pipe); Read only reads files.")

    try:
        if path.suffix.lower() in IMAGE_SUFFIXES and info.st_size > 0:
            content: str | list[dict[str, Any]] = _image_block(path, shown, info.st_size)
        else:
            content = _text(path, shown, offset, limit, info.st_size)
    except PermissionError:
        raise ToolError(f"Cannot read {shown}: permission denied.") from None
    except OSError as error:
        raise ToolError(f"Cannot read {shown}: {error.strerror or error}") from None
    # Edit (a later issue) refuses files the agent has not read, or that changed since: remember the mtime.
    ctx.read_files[str(path)] = info.st_mtime
    return ToolOutput(content)


def _text(path: Path, shown: str, offset: int, limit: int, size: int) -> str:
    if size == 0:
        return f"(The file {shown} exists but is empty.)"
    with path.open("rb") as handle:
        if b"\x00" in handle.read(BINARY_SNIFF_BYTES):
            raise ToolError(
                f"{shown} looks like a binary file (it contains NUL bytes); Read only shows text files."
            )
    with path.open("r", encoding="utf-8-sig", errors="replace") as handle:
        return numbered_text(handle, shown, offset, limit)


def numbered_text(handle: TextIO, shown: str, offset: int, limit: int) -> str:
    """What Read shows of a text (a file on disk, or an editor's buffer): numbered lines, or why none."""
    part = _stream(handle, offset, limit)
    if not part.lines:
        if part.total == 0:
            return f"(The file {shown} exists but is empty.)"
        return (
            f"(The file {shown} has only {part.total} line{'s' if part.total != 1 else ''}, "
            f"fewer than offset {offset}. Use a smaller offset.)"
        )
    text = "\n".join(part.lines)
    if part.stopped_for_size:
        text += (
            f"\n\n(Output stopped after line {part.last} to stay under {MAX_OUTPUT_CHARS} characters. "
            f"Use offset={part.last + 1} to read on.)"
        )
    elif part.total is None:
        text += f"\n\n(Showing lines {part.first}-{part.last}; the file has more. Use offset={part.last + 1} to read on.)"
    return text


def _stream(handle: TextIO, offset: int, limit: int) -> _Slice:
    """Number the lines offset..offset+limit-1, reading no further than one line past them."""
    lines: list[str] = []
    chars = 0
    number = 0
    while True:
        line, cut = _next_line(handle)
        if line is None:
            return _Slice(lines, offset, offset + len(lines) - 1, number)
        number += 1
        if number < offset:
            continue
        if len(lines) >= limit:
            return _Slice(lines, offset, number - 1, None)
        if cut:
            line += f"… [line truncated: {cut} more characters]"
        entry = f"{number:>6}\t{line}"
        if lines and chars + len(entry) + 1 > MAX_OUTPUT_CHARS:
            return _Slice(lines, offset, number - 1, None, stopped_for_size=True)
        lines.append(entry)
        chars += len(entry) + 1


def _next_line(handle: TextIO) -> tuple[str | None, int]:
    """The next line without its newline, cut at MAX_LINE_CHARS, and how many characters were cut.

    A bounded `readline` keeps a single enormous line (minified JS, a data dump) from being loaded whole.
    """
    chunk = handle.readline(MAX_LINE_CHARS + 1)
    if not chunk:
        return None, 0
    if chunk.endswith("\n"):
        return chunk[:-1], 0
    if len(chunk) <= MAX_LINE_CHARS:
        return chunk, 0  # the last line, without a final newline
    cut = len(chunk) - MAX_LINE_CHARS
    while True:
        more = handle.readline(1 << 16)
        if not more:
            break
        if more.endswith("\n"):
            cut += len(more) - 1
            break
        cut += len(more)
    return chunk[:MAX_LINE_CHARS], cut


def _image_block(path: Path, shown: str, size: int) -> list[dict[str, Any]]:
    if size > MAX_IMAGE_BYTES:
        raise ToolError(
            f"{shown} is too large to show as an image ({size / 1048576:.1f} MB; the limit is "
            f"{MAX_IMAGE_BYTES / 1048576:.2f} MB)."
        )
    data = path.read_bytes()
    media_type = _sniff_image(data)
    if media_type is None:
        raise ToolError(f"{shown} has an image extension but is not a PNG, JPEG, GIF or WebP image.")
    encoded = base64.b64encode(data).decode("ascii")
    return [{"type": "image", "source": {"type": "base64", "media_type": media_type, "data": encoded}}]


def _sniff_image(data: bytes) -> str | None:
    """The media type from the file's magic bytes: the API rejects an image whose type is wrong."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def _missing_message(raw: str, path: Path, workspace: Path) -> str:
    """"File does not exist" plus up to three similar names from the same directory, if it is cheap."""
    message = f"File does not exist: {display_path(path, workspace)}."
    parent = path.parent
    try:
        with os.scandir(parent) as entries:
            names = [entry.name for entry in itertools.islice(entries, 5000)]
    except OSError:
        names = []
    stem = path.stem.lower()
    similar = [n for n in names if Path(n).stem.lower() == stem and n != path.name]
    for name in difflib.get_close_matches(path.name, names, n=3, cutoff=0.6):
        if name not in similar:
            similar.append(name)
    if similar:
        choices = ", ".join(display_path(parent / name, workspace) for name in sorted(similar[:3]))
        message += f" Did you mean {choices}?"
    if not Path(raw).expanduser().is_absolute():
        message += f" (Relative paths resolve against the workspace root {Path(workspace).resolve()}.)"
    return message
