"""Edit: Claude Code's exact-string replacement, `{file_path, old_string, new_string, replace_all?}`.

The replacement is literal (`str.replace`: no regex, no `$&` expansion, the seed's JavaScript quirk).
`old_string` must occur exactly once unless `replace_all`, so the model cannot change a place it did not
mean. The file's line endings and UTF-8 BOM are kept: a CRLF file is matched on its LF view (models
send `\\n`) and written back with CRLF. Claude Code's read-first rule applies: the agent must have Read
the file in this session, and the file must not have changed on disk since, or the edit would be based
on text the model never saw.
"""

from __future__ import annotations

import asyncio
import codecs
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tui_agent.core.tools.atomic import write_atomic
from tui_agent.core.tools.base import Tool, ToolContext, ToolError, ToolOutput
from tui_agent.core.tools.paths import display_path, resolve_path
from tui_agent.core.tools.write import check_target, ensure_parent, outside_note, record_mtime, unified_diff

MAX_EDIT_BYTES = 10 * 1024 * 1024
SNIPPET_CONTEXT = 4

DESCRIPTION = """Performs exact string replacements in files.
- You must use the Read tool at least once in the conversation before editing a file; an edit of a file not read, or changed on disk since it was read, fails.
- When copying old_string from Read output, keep the exact indentation after the line-number prefix (spaces, then the line number, then a tab); never include the prefix itself.
- The edit FAILS if old_string is not unique in the file: give more surrounding context to make it unique, or use replace_all to change every instance.
- The replacement is literal: no regular expressions, no special characters in new_string.
- Use replace_all to rename a variable or string across the whole file.
- An empty old_string on a file that does not exist yet creates it with new_string."""


@dataclass
class EditPlan:
    """What an edit would do: the bytes before and after, and where the first change lands."""

    path: Path
    shown: str
    old_text: str
    new_text: str
    count: int
    first_line: int  # 0-based line of the first replacement in the new text
    new_lines: int  # lines spanned by new_string
    prefix: bytes  # the BOM, kept as it was
    created: bool = False


class EditTool(Tool):
    name = "Edit"
    description = DESCRIPTION
    input_schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            "file_path": {
                "type": "string",
                "minLength": 1,
                "description": "The absolute path to the file to modify (relative paths resolve against the workspace root)",
            },
            "old_string": {"type": "string", "description": "The text to replace"},
            "new_string": {
                "type": "string",
                "description": "The text to replace it with (must be different from old_string)",
            },
            "replace_all": {
                "type": "boolean",
                "default": False,
                "description": "Replace all occurrences of old_string (default false)",
            },
        },
        "required": ["file_path", "old_string", "new_string"],
        "additionalProperties": False,
    }
    read_only = False

    def summary(self, tool_input: dict[str, Any]) -> str:
        value = tool_input.get("file_path")
        return value if isinstance(value, str) else ""

    def permission_preview(self, tool_input: dict[str, Any], ctx: ToolContext) -> str:
        """The unified diff of the edit, or why it would fail (so the user is not asked blind)."""
        try:
            plan = plan_edit(tool_input, ctx, check_read=False)
        except ToolError as error:
            raw = tool_input.get("file_path")
            old, new = tool_input.get("old_string"), tool_input.get("new_string")
            head = f"Edit {raw}\n(the edit will fail: {error})"
            if isinstance(old, str) and isinstance(new, str):
                return head + "\n\n" + unified_diff(old, new, str(raw))
            return head
        title = f"Create {plan.shown}" if plan.created else f"Edit {plan.shown}"
        if plan.count > 1:
            title += f" ({plan.count} replacements)"
        if not plan.created and str(plan.path) not in ctx.read_files:
            title += "\n(The file has not been read in this session: Edit will refuse it until it is read.)"
        title = outside_note(plan.path, ctx.workspace) + title
        return title + "\n\n" + unified_diff(plan.old_text, plan.new_text, plan.shown)

    async def call(self, tool_input: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        return await asyncio.to_thread(_edit, tool_input, ctx)


def _edit(tool_input: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    plan = plan_edit(tool_input, ctx, check_read=True)
    if plan.created:
        ensure_parent(plan.path, plan.shown)
    try:
        write_atomic(plan.path, plan.prefix + plan.new_text.encode("utf-8"))
    except PermissionError:
        raise ToolError(f"Cannot write {plan.shown}: permission denied.") from None
    except OSError as error:
        raise ToolError(f"Cannot write {plan.shown}: {error.strerror or error}") from None
    record_mtime(ctx, plan.path)
    return edit_result(plan, tool_input)


def edit_result(plan: EditPlan, tool_input: dict[str, Any]) -> ToolOutput:
    """What the model reads after the edit is written (wherever it was written)."""
    if plan.created:
        return ToolOutput(f"File created successfully at: {plan.shown}")
    if tool_input.get("replace_all"):
        head = (f"The file {plan.shown} has been updated. All {plan.count} occurrence"
                f"{'s' if plan.count != 1 else ''} of old_string were replaced with new_string.")
    else:
        head = f"The file {plan.shown} has been updated successfully."
    return ToolOutput(head + "\n" + _snippet(plan))


def plan_edit(tool_input: dict[str, Any], ctx: ToolContext, check_read: bool, current: bytes | None = None) -> EditPlan:
    """Check the edit in Claude Code's order and compute the new text, without writing anything.
    `current`: the file's text as the editor holds it (its unsaved buffer), instead of the disk's."""
    raw = str(tool_input.get("file_path", ""))
    old = tool_input.get("old_string")
    new = tool_input.get("new_string")
    replace_all = bool(tool_input.get("replace_all", False))
    if not isinstance(old, str) or not isinstance(new, str):
        raise ToolError("old_string and new_string must be strings.")
    if old == new:
        raise ToolError("No changes to make: old_string and new_string are exactly the same.")
    path = resolve_path(raw, ctx.workspace)
    shown = display_path(path, ctx.workspace)
    check_target(path, shown, ctx.workspace)
    try:
        info = path.stat()
    except FileNotFoundError:
        if old == "":
            return EditPlan(path, shown, "", new, 1, 0, new.count("\n") + 1, b"", created=True)
        raise ToolError(
            f"File does not exist: {shown}. Check the path, or create the file with the Write tool."
        ) from None
    except OSError as error:
        raise ToolError(f"Cannot edit {shown}: {error.strerror or error}") from None
    if not stat.S_ISREG(info.st_mode):
        raise ToolError(f"{shown} is not a regular file; Edit only changes files.")
    if info.st_size > MAX_EDIT_BYTES:
        raise ToolError(
            f"File too large to edit: {shown} is {info.st_size} bytes (the limit is {MAX_EDIT_BYTES}). "
            "Change it with a script through Bash instead."
        )
    if check_read:
        seen = ctx.read_files.get(str(path))
        if seen is None:
            raise ToolError(
                f"File has not been read yet: read it first with the Read tool before editing {shown}."
            )
        if info.st_mtime != seen:
            raise ToolError(
                f"File has been modified since it was read (by the user or another program): read it "
                f"first with the Read tool again before editing {shown}."
            )
    if old == "":
        raise ToolError(
            f"old_string is empty but {shown} already exists: give the text to replace, or use Write to "
            "replace the whole file."
        )
    try:
        data = path.read_bytes() if current is None else current
    except OSError as error:
        raise ToolError(f"Cannot read {shown}: {error.strerror or error}") from None
    if b"\x00" in data[:8192]:
        raise ToolError(f"{shown} looks like a binary file (it contains NUL bytes); Edit only changes text files.")
    prefix = codecs.BOM_UTF8 if data.startswith(codecs.BOM_UTF8) else b""
    try:
        text = data[len(prefix):].decode("utf-8")
    except UnicodeDecodeError:
        raise ToolError(f"{shown} is not valid UTF-8 text; Edit only changes UTF-8 text files.") from None
    new_text, count, first_line = _replace_keeping_endings(text, old, new, replace_all, shown)
    new_lines = new.count("\n") + 1
    return EditPlan(path, shown, text, new_text, count, first_line, new_lines, prefix)


def replaced(text: str, old: object, new: object, replace_all: bool = False) -> str | None:
    """`text` after the edit old → new as this tool would make it, or None when the tool would refuse it
    (not found, found more than once without `replace_all`, empty or unchanged). Compaction replays a
    dropped Edit on the Write it follows with this, so the shown file is the one the tool made."""
    if not isinstance(old, str) or not isinstance(new, str) or not old or old == new:
        return None
    try:
        return _replace_keeping_endings(text, old, new, bool(replace_all), "")[0]
    except ToolError:
        return None


def _replace_keeping_endings(text: str, old: str, new: str, replace_all: bool, shown: str) -> tuple[str, int, int]:
    """Replace in `text`, matching a CRLF file on its LF view and writing CRLF back.

    A file with only CRLF line breaks is converted to LF, edited, and converted back. A mixed file is
    edited as it is; when `old_string` (sent with `\\n`) is not found, its CRLF form is tried.
    """
    has_crlf = "\r\n" in text
    crlf_only = has_crlf and "\n" not in text.replace("\r\n", "")
    if crlf_only:
        view = text.replace("\r\n", "\n")
        result, count, line = _replace(view, old.replace("\r\n", "\n"), new.replace("\r\n", "\n"), replace_all, shown)
        return result.replace("\n", "\r\n"), count, line
    if has_crlf and old not in text and "\n" in old:
        as_crlf = old.replace("\r\n", "\n").replace("\n", "\r\n")
        if as_crlf in text:
            return _replace(text, as_crlf, new.replace("\r\n", "\n").replace("\n", "\r\n"), replace_all, shown)
    return _replace(text, old, new, replace_all, shown)


def _replace(text: str, old: str, new: str, replace_all: bool, shown: str) -> tuple[str, int, int]:
    count = text.count(old)
    if count == 0:
        raise ToolError(
            f"String to replace not found in {shown}. Check that old_string matches the file exactly, "
            f"including whitespace and line breaks (Read the file again if unsure).\nString: {_clip(old)}"
        )
    if count > 1 and not replace_all:
        raise ToolError(
            f"Found {count} matches of the string to replace in {shown}, but replace_all is false. To "
            "replace all occurrences, set replace_all to true. To replace only one occurrence, give more "
            f"context to uniquely identify the instance.\nString: {_clip(old)}"
        )
    first_line = text[: text.index(old)].count("\n")
    # str.replace is literal: `$&`, `\1` and friends in new_string stay as they are.
    result = text.replace(old, new) if replace_all else text.replace(old, new, 1)
    return result, count, first_line


def _clip(text: str, limit: int = 500) -> str:
    return text if len(text) <= limit else text[:limit] + f"… ({len(text) - limit} more characters)"


def _snippet(plan: EditPlan) -> str:
    """Numbered lines around the first change, so the model sees the result without a re-Read."""
    lines = plan.new_text.replace("\r\n", "\n").split("\n")
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()  # the final newline does not start a line
    start = max(plan.first_line - SNIPPET_CONTEXT, 0)
    end = min(plan.first_line + plan.new_lines + SNIPPET_CONTEXT, len(lines))
    numbered = "\n".join(f"{n + 1:>6}\t{lines[n]}" for n in range(start, end))
    return f"Here's the result of running `cat -n` on a snippet of the edited file:\n{numbered}"
