"""Read, Write and Edit through the client's file system, when it offers one (`clientCapabilities.fs`).

An editor's buffer is what its user sees, saved or not: Read gets the buffer (`fs/read_text_file`), Write
and Edit hand the new text to the editor (`fs/write_text_file`), which shows it, tracks it for undo and
saves it. Only where the text comes from and goes to changes: the permission gate, the refusals (`.git/`,
sizes, binary files, the read-first rule), the numbering and the result texts are the built-in tools'.
What an editor has no text buffer for stays on the disk: a missing path (our message names look-alikes),
a folder, an image, a binary or very large file; a client that fails a request is answered from the disk.
"""

from __future__ import annotations

import asyncio
import io
import stat
from pathlib import Path
from typing import Any

from tui_agent.core.tools.base import ToolContext, ToolError, ToolOutput
from tui_agent.core.tools.edit import EditTool, edit_result, plan_edit
from tui_agent.core.tools.paths import display_path, resolve_path
from tui_agent.core.tools.read import BINARY_SNIFF_BYTES, DEFAULT_LIMIT, IMAGE_SUFFIXES, ReadTool, numbered_text
from tui_agent.core.tools.write import WriteTool, record_mtime, write_target

MAX_BUFFER_BYTES = 10 * 1024 * 1024  # past this a file is read from the disk, not sent over JSON-RPC


class ClientFiles:
    """The client's `fs/read_text_file` and `fs/write_text_file` for one session."""

    def __init__(self, conn: Any, session_id: str) -> None:
        self.conn = conn
        self.session_id = session_id

    async def read(self, path: Path) -> str | None:
        """The editor's text of `path`, or None when it could not give it (the disk answers then)."""
        try:
            response = await self.conn.read_text_file(path=str(path), session_id=self.session_id)
        except Exception:  # noqa: BLE001 - a client that refuses: the disk has the same file
            return None
        return response.content

    async def write(self, path: Path, text: str, shown: str) -> None:
        try:
            await self.conn.write_text_file(content=text, path=str(path), session_id=self.session_id)
        except Exception as error:  # noqa: BLE001 - the editor refused: one line for the model
            raise ToolError(f"The editor could not write {shown}: {error}") from None


def buffered_text_file(path: Path) -> bool:
    """Whether an editor holds `path` as a text buffer: an existing regular text file of sane size."""
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_BUFFER_BYTES:
            return False
        if path.suffix.lower() in IMAGE_SUFFIXES and info.st_size > 0:
            return False
        with path.open("rb") as handle:
            return b"\x00" not in handle.read(BINARY_SNIFF_BYTES)
    except OSError:
        return False


def _disk_mtime(path: Path) -> float | None:
    try:
        return path.stat().st_mtime
    except OSError:
        return None


class ClientRead(ReadTool):
    """Read, answered from the editor's buffer."""

    def __init__(self, files: ClientFiles) -> None:
        self.files = files

    async def call(self, tool_input: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        path = resolve_path(str(tool_input["file_path"]), ctx.workspace)
        text = await self.files.read(path) if await asyncio.to_thread(buffered_text_file, path) else None
        if text is None:
            return await super().call(tool_input, ctx)
        offset = max(int(tool_input.get("offset") or 1), 1)
        limit = int(tool_input.get("limit") or DEFAULT_LIMIT)
        shown = display_path(path, ctx.workspace)
        content = (numbered_text(io.StringIO(text.removeprefix("\ufeff"), newline=None), shown, offset, limit)
                   if text else f"(The file {shown} exists but is empty.)")
        mtime = _disk_mtime(path)  # Edit's read-first rule compares the disk's time, as for a disk Read
        if mtime is not None:
            ctx.read_files[str(path)] = mtime
        return ToolOutput(content)


class ClientWrite(WriteTool):
    """Write, handed to the editor."""

    def __init__(self, files: ClientFiles) -> None:
        self.files = files

    async def call(self, tool_input: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        target = await asyncio.to_thread(write_target, str(tool_input["file_path"]), tool_input["content"], ctx)
        await self.files.write(target.path, target.data.decode("utf-8"), target.shown)
        record_mtime(ctx, target.path)
        return target.result()


class ClientEdit(EditTool):
    """Edit of the editor's buffer: planned on its text, the result handed back to the editor."""

    def __init__(self, files: ClientFiles) -> None:
        self.files = files

    async def call(self, tool_input: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        path = resolve_path(str(tool_input.get("file_path", "")), ctx.workspace)
        text = await self.files.read(path) if await asyncio.to_thread(buffered_text_file, path) else None
        if text is None and path.exists():
            return await super().call(tool_input, ctx)
        current = text.removeprefix("\ufeff").encode("utf-8") if text is not None else None
        plan = await asyncio.to_thread(plan_edit, tool_input, ctx, True, current)
        await self.files.write(plan.path, plan.new_text, plan.shown)
        record_mtime(ctx, plan.path)
        return edit_result(plan, tool_input)


def use_client_files(session: Any, conn: Any, session_id: str, capabilities: Any) -> list[str]:
    """Swap the session's Read / Write / Edit for the client's file system where it offers the methods
    they need (Edit needs both); the names swapped."""
    fs = getattr(capabilities, "fs", None) if capabilities is not None else None
    reads, writes = bool(getattr(fs, "read_text_file", False)), bool(getattr(fs, "write_text_file", False))
    files = ClientFiles(conn, session_id)
    wanted = (("Read", reads, ClientRead), ("Write", writes, ClientWrite), ("Edit", reads and writes, ClientEdit))
    swapped = []
    for name, offered, tool in wanted:
        if offered and session.tools.get(name) is not None:
            session.tools.add(tool(files))  # same name: same place in the tool list
            swapped.append(name)
    return swapped
