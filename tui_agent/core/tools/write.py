"""Write: Claude Code's whole-file writer, `{file_path, content}`.

It creates missing parent folders (models write `src/new/module.py` without a mkdir first) and says
whether it created or replaced the file, so the model knows it did not just clobber something it never
saw. `.git/` internals are refused here as well as by the permission gate: defence in depth for the one
folder where a stray write corrupts the repository.
"""

from __future__ import annotations

import asyncio
import difflib
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tui_agent.core.tools.atomic import write_atomic
from tui_agent.core.tools.base import Tool, ToolContext, ToolError, ToolOutput
from tui_agent.core.tools.paths import display_path, git_internal, is_inside, resolve_path
from tui_agent.core.formats import plural

# One tool call carrying more than this is a runaway generation, not a source file.
MAX_WRITE_BYTES = 1024 * 1024
PREVIEW_LINES = 200

DESCRIPTION = """Writes a file to the local filesystem.
- This tool overwrites the existing file if there is one at the provided path; missing parent folders are created.
- file_path should be an absolute path; a relative path resolves against the workspace root.
- If this is an existing file, Read it first, and prefer the Edit tool for changing part of a file: it sends only the change.
- Never write files inside .git/.
- Only create documentation files (*.md, README) if the user asked for them."""


def record_mtime(ctx: ToolContext, path: Path) -> None:
    """After our own write, the file is "read" at its new mtime: a following Edit needs no re-Read."""
    try:
        ctx.read_files[str(path)] = path.stat().st_mtime
    except OSError:
        ctx.read_files.pop(str(path), None)


def unified_diff(old: str, new: str, shown: str, max_lines: int = PREVIEW_LINES) -> str:
    """A unified diff for the permission prompt, cut after `max_lines` lines with a note."""
    old, new = old.replace("\r\n", "\n"), new.replace("\r\n", "\n")  # no stray \r in the prompt
    lines = list(
        difflib.unified_diff(
            old.splitlines(keepends=True), new.splitlines(keepends=True), f"a/{shown}", f"b/{shown}", n=3
        )
    )
    lines = [line if line.endswith("\n") else line + "\n" for line in lines]
    if len(lines) > max_lines:
        extra = len(lines) - max_lines
        lines = lines[:max_lines] + [f"… {extra} more diff line{'s' if extra != 1 else ''}\n"]
    return "".join(lines).rstrip("\n") or "(no changes)"


def outside_note(path: Path, workspace: Path) -> str:
    """A warning line for the permission prompt when the file is outside the workspace, else ""."""
    if is_inside(path, Path(workspace).resolve()):
        return ""
    return f"Warning: {path} is OUTSIDE the workspace {Path(workspace).resolve()}.\n"


def check_target(path: Path, shown: str, workspace: Path) -> None:
    """Refusals shared by Write and Edit: `.git/` internals and directories."""
    if git_internal(path, workspace):
        raise ToolError(f"Refused: {shown} is inside a .git/ directory; the agent never writes git internals.")
    if path.is_dir():
        raise ToolError(f"{shown} is a directory, not a file.")


def ensure_parent(path: Path, shown: str) -> None:
    """Create the missing parent folders, with a clear error when a file stands in the way."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise ToolError(f"Cannot create the folder for {shown}: a file is in the way of {path.parent}.") from None
    except PermissionError:
        raise ToolError(f"Cannot create the folder for {shown}: permission denied.") from None


class WriteTool(Tool):
    name = "Write"
    description = DESCRIPTION
    input_schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            "file_path": {
                "type": "string",
                "minLength": 1,
                "description": "The absolute path to the file to write (relative paths resolve against the workspace root)",
            },
            "content": {"type": "string", "description": "The content to write to the file"},
        },
        "required": ["file_path", "content"],
        "additionalProperties": False,
    }
    read_only = False

    def summary(self, tool_input: dict[str, Any]) -> str:
        value = tool_input.get("file_path")
        return value if isinstance(value, str) else ""

    def permission_preview(self, tool_input: dict[str, Any], ctx: ToolContext) -> str:
        raw, content = tool_input.get("file_path"), tool_input.get("content")
        if not isinstance(raw, str) or not isinstance(content, str):
            return ""
        path = resolve_path(raw, ctx.workspace)
        shown = display_path(path, ctx.workspace)
        size = len(content.encode("utf-8"))
        lines = content.count("\n") + (0 if content.endswith("\n") or not content else 1)
        note = outside_note(path, ctx.workspace)
        old = _existing_text(path)
        if old is not None:
            return f"{note}Overwrite {shown} ({plural(lines, 'line')}, {plural(size, 'byte')})\n\n" + unified_diff(old, content, shown)
        verb = "Overwrite" if path.exists() else "Create"
        body = content.splitlines()
        preview = "\n".join(body[:PREVIEW_LINES])
        if len(body) > PREVIEW_LINES:
            preview += f"\n… {plural(len(body) - PREVIEW_LINES, 'more line')}"
        return f"{note}{verb} {shown} ({plural(lines, 'line')}, {plural(size, 'byte')})\n\n{preview}"

    async def call(self, tool_input: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        return await asyncio.to_thread(_write, str(tool_input["file_path"]), tool_input["content"], ctx)


def _existing_text(path: Path) -> str | None:
    """The current text of a small existing UTF-8 file (for a diff), else None."""
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_WRITE_BYTES:
            return None
        data = path.read_bytes()
        if b"\x00" in data[:8192]:
            return None
        return data.decode("utf-8-sig")
    except (OSError, UnicodeDecodeError):
        return None


@dataclass(frozen=True)
class WriteTarget:
    """A write that passed every check: where, as shown to the model, the bytes, and whether it existed."""

    path: Path
    shown: str
    data: bytes
    existed: bool

    def result(self) -> ToolOutput:
        if self.existed:
            return ToolOutput(f"File at {self.shown} has been updated successfully.")
        return ToolOutput(f"File created successfully at: {self.shown}")


def write_target(raw: str, content: str, ctx: ToolContext) -> WriteTarget:
    """Write's refusals (too large, `.git/`, not a file), then its missing folders; raises ToolError."""
    data = content.encode("utf-8", errors="replace")
    if len(data) > MAX_WRITE_BYTES:
        raise ToolError(
            f"Content too large: {len(data)} bytes is over Write's limit of {MAX_WRITE_BYTES} bytes. "
            "Write a smaller file, or generate a large one with a script through Bash."
        )
    path = resolve_path(raw, ctx.workspace)
    shown = display_path(path, ctx.workspace)
    check_target(path, shown, ctx.workspace)
    existed = path.exists()
    if existed and not path.is_file():
        raise ToolError(f"{shown} is not a regular file; Write only writes files.")
    ensure_parent(path, shown)
    return WriteTarget(path, shown, data, existed)


def _write(raw: str, content: str, ctx: ToolContext) -> ToolOutput:
    target = write_target(raw, content, ctx)
    path, shown, data = target.path, target.shown, target.data
    try:
        write_atomic(path, data)
    except PermissionError:
        raise ToolError(f"Cannot write {shown}: permission denied.") from None
    except OSError as error:
        raise ToolError(f"Cannot write {shown}: {error.strerror or error}") from None
    record_mtime(ctx, path)
    return target.result()
