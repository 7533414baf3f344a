"""Grep: Claude Code's content search, a thin, safe layer over ripgrep (`rg`, shipped by the `ripgrep` wheel).

ripgrep gives us the regex engine, `.gitignore` handling, binary-file skipping and speed; this module
adds what a model needs around it: Claude Code's input schema and output modes, deterministic order
(files newest first, lines by path), `head_limit`/`offset` paging, an output cap with notes that say
what to do next, and clear errors. `rg` runs as an asyncio subprocess that is killed when the turn is
cancelled, and, in content mode, as soon as enough lines have arrived.

What a Read-deny rule hides stays hidden: relative rules become ripgrep exclusions, and every output
line is also checked by its path against all read-deny rules (absolute and `~` ones included), so
`Read(/abs/ws/.env)` keeps `.env` out of the results too. Content lines carry a rare separator
(`\x1f`) after the path, so a path with `:` in it is still parsed right. A search is bounded in time
(SEARCH_TIMEOUT_S), and only directories and regular files are searched (a FIFO would never end). The
rg command line and its run are `ripgrep.py`; this module is what the model asks and reads.
"""

from __future__ import annotations

import asyncio
import os
import re
import stat
from pathlib import Path
from typing import Any

from tui_agent.core.tools.base import Tool, ToolContext, ToolError, ToolOutput
from tui_agent.core.tools.paths import display_path, find_rg, resolve_path
from tui_agent.core.tools.ripgrep import FIELD, build_args, run_rg

DEFAULT_HEAD_LIMIT = 250
MAX_OUTPUT_CHARS = 30_000
NO_MATCHES = "No matches found"
SEARCH_TIMEOUT_S = 60.0
MODES = ("content", "files_with_matches", "count")

DESCRIPTION = """A powerful search tool built on ripgrep.
- ALWAYS use Grep for search tasks; it is faster than reading files one by one.
- Supports full regex syntax (Rust regex, e.g. "log.*Error", "function\\s+\\w+"); literal braces need escaping (`interface\\{\\}` to find `interface{}`).
- Filter files with glob (e.g. "*.js", "**/*.{ts,tsx}") or type (e.g. "py", "js", "rust").
- output_mode: "files_with_matches" (default) lists matching files, newest first; "content" shows matching lines as path:line:text (supports -A/-B/-C context and -n); "count" shows path:count.
- Results are capped by head_limit (default 250, 0 for no limit); use offset to page.
- .gitignore'd files and .git are skipped. Patterns match within single lines unless multiline is true.
- Paths inside the workspace are shown relative to it."""


class GrepTool(Tool):
    name = "Grep"
    description = DESCRIPTION
    input_schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            "pattern": {
                "type": "string",
                "description": "The regular expression pattern to search for in file contents",
            },
            "path": {
                "type": "string",
                "description": "File or directory to search in (rg PATH). Defaults to the workspace root.",
            },
            "glob": {
                "type": "string",
                "description": 'Glob pattern to filter files (e.g. "*.js", "*.{ts,tsx}") - maps to rg --glob',
            },
            "output_mode": {
                "type": "string",
                "enum": ["content", "files_with_matches", "count"],
                "description": 'Output mode: "content" shows matching lines (supports -A/-B/-C context, -n line '
                'numbers, head_limit), "files_with_matches" shows file paths (supports head_limit), "count" '
                'shows match counts (supports head_limit). Defaults to "files_with_matches".',
            },
            "-B": {
                "type": "integer",
                "minimum": 0,
                "description": 'Number of lines to show before each match (rg -B). Requires output_mode: "content", '
                "ignored otherwise.",
            },
            "-A": {
                "type": "integer",
                "minimum": 0,
                "description": 'Number of lines to show after each match (rg -A). Requires output_mode: "content", '
                "ignored otherwise.",
            },
            "-C": {
                "type": "integer",
                "minimum": 0,
                "description": 'Number of lines to show before and after each match (rg -C). Requires output_mode: '
                '"content", ignored otherwise.',
            },
            "-n": {
                "type": "boolean",
                "description": 'Show line numbers in output (rg -n). Requires output_mode: "content", ignored '
                "otherwise. Defaults to true.",
            },
            "-i": {"type": "boolean", "description": "Case insensitive search (rg -i)"},
            "type": {
                "type": "string",
                "description": "File type to search (rg --type). Common types: js, py, rust, go, java, etc. More "
                "efficient than glob for standard file types.",
            },
            "head_limit": {
                "type": "integer",
                "minimum": 0,
                "description": 'Limit output to first N lines/entries, equivalent to "| head -N". Works across all '
                "output modes: content (limits output lines), files_with_matches (limits file paths), count "
                "(limits count entries). Defaults to 250; 0 means no limit.",
            },
            "offset": {
                "type": "integer",
                "minimum": 0,
                "description": 'Skip first N lines/entries before applying head_limit, equivalent to "| tail -n +N '
                '| head -N". Defaults to 0.',
            },
            "multiline": {
                "type": "boolean",
                "description": "Enable multiline mode where . matches newlines and patterns can span lines (rg -U "
                "--multiline-dotall). Default: false.",
            },
        },
        "required": ["pattern"],
        "additionalProperties": False,
    }
    read_only = True

    def summary(self, tool_input: dict[str, Any]) -> str:
        pattern = tool_input.get("pattern")
        path = tool_input.get("path")
        text = pattern if isinstance(pattern, str) else ""
        return f"{text} in {path}" if isinstance(path, str) and path and text else text

    async def call(self, tool_input: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        rg = find_rg()
        if rg is None:
            raise ToolError("ripgrep (rg) is not installed: install the `ripgrep` Python package or put rg on PATH.")
        workspace = Path(ctx.workspace).resolve()
        raw_path = str(tool_input.get("path") or ".")
        if raw_path in ("undefined", "null"):  # models sometimes spell "omitted" this way
            raw_path = "."
        target = resolve_path(raw_path, workspace)
        shown = display_path(target, workspace)
        if not target.exists():
            raise ToolError(f"Path does not exist: {shown}")
        kind = os.stat(target).st_mode
        if not (stat.S_ISDIR(kind) or stat.S_ISREG(kind)):
            raise ToolError(f"{shown} is not a regular file or a directory (a FIFO or device would never end); "
                            "Grep searches files and folders.")
        mode = tool_input.get("output_mode") or "files_with_matches"
        head_limit = tool_input.get("head_limit")
        head_limit = DEFAULT_HEAD_LIMIT if head_limit is None else int(head_limit)
        offset = int(tool_input.get("offset") or 0)
        policy = ctx.permissions
        excludes = policy.read_deny_globs() if policy is not None else []
        args = build_args(rg, tool_input, mode, shown, excludes)
        # Content arrives sorted by path, so we can stop rg once the page (plus one line) is in.
        stop_after = None
        if mode == "content":
            stop_after = offset + head_limit + 1 if head_limit else 1 << 62
        try:
            async with asyncio.timeout(SEARCH_TIMEOUT_S):
                lines, stderr, code = await run_rg(args, workspace, stop_after, offset, MAX_OUTPUT_CHARS)
        except TimeoutError:
            raise ToolError(f"Grep stopped after {SEARCH_TIMEOUT_S:g} s without finishing. Narrow the search "
                            "with path, glob or type.") from None
        if code == 2 and not lines and stderr.strip():
            raise ToolError(_failure(str(tool_input["pattern"]), stderr))
        lines = hide_denied(lines, mode, policy, workspace, numbered=bool(tool_input.get("-n", True)))
        if shown == ".":
            lines = [line[2:] if line.startswith("./") else line for line in lines]
        if not lines:
            return ToolOutput(NO_MATCHES)
        return ToolOutput(format_output(lines, mode, offset, head_limit, workspace, killed=code is None))


def line_path(line: str, mode: str) -> str | None:
    """The file a result line is about (None for a `--` context break)."""
    if mode == "files_with_matches":
        return line
    if mode == "count":
        return line.rsplit(":", 1)[0] if ":" in line else line
    return line.split(FIELD, 1)[0] if FIELD in line else None


def hide_denied(lines: list[str], mode: str, policy: Any, workspace: Path, numbered: bool = True) -> list[str]:
    """Drop lines about files a Read-deny rule forbids; restore the usual `path:line:text` form."""
    verdicts: dict[str, bool] = {}
    kept: list[str] = []
    for line in lines:
        path = line_path(line, mode)
        if path is not None and policy is not None:
            if path not in verdicts:
                verdicts[path] = policy.read_denied(path, workspace) is not None
            if verdicts[path]:
                continue
        if mode == "content":
            line = line.replace(FIELD, "", 2 if numbered else 1)
        kept.append(line)
    if mode == "content":  # no dangling or doubled `--` breaks where a denied file's lines were
        tidy: list[str] = []
        for line in kept:
            if line == "--" and (not tidy or tidy[-1] == "--"):
                continue
            tidy.append(line)
        kept = tidy[:-1] if tidy and tidy[-1] == "--" else tidy
    return kept


def format_output(lines: list[str], mode: str, offset: int, head_limit: int, workspace: Path, killed: bool) -> str:
    """Order, page and cap rg's lines, with a note for everything left out."""
    notes: list[str] = []
    if mode == "files_with_matches":
        lines = _newest_first(lines, workspace)
    elif mode == "count":
        lines = sorted(lines)
    total = len(lines)
    page = lines[offset:]
    if not page:
        return f"No results at offset {offset} ({total} {_unit(mode, total)} in all)."
    more = head_limit and len(page) > head_limit
    if more:
        page = page[:head_limit]
        if killed:
            notes.append(
                f"(Results truncated at {head_limit} {_unit(mode, head_limit)}; more exist. Use offset={offset + head_limit} to see "
                "more, or narrow the search.)"
            )
        else:
            notes.append(
                f"(Results truncated: showing {head_limit} of {total - offset} {_unit(mode, total)}. "
                f"Use offset={offset + head_limit} to see more, or narrow the search.)"
            )
    body_lines, cut = _cap(page)
    if cut:
        notes.append(
            f"(Output truncated at {MAX_OUTPUT_CHARS} characters after {len(body_lines)} "
            f"{_unit(mode, len(body_lines))}. Narrow the search with path, glob or type, or page with "
            f"offset={offset + len(body_lines)}.)"
        )
    body = "\n".join(body_lines)
    if mode == "files_with_matches":
        body = f"Found {total} file{'s' if total != 1 else ''}\n{body}"
    elif mode == "count" and not more and not cut and offset == 0:
        matches = sum(_count_of(line) for line in lines)
        body += f"\n\nFound {matches} matching line{'s' if matches != 1 else ''} across {total} file{'s' if total != 1 else ''}."
    return body + ("\n\n" + "\n".join(notes) if notes else "")


def _newest_first(paths: list[str], workspace: Path) -> list[str]:
    """Claude Code's order for matching files: modification time, newest first; ties by path."""
    dated = []
    for path in paths:
        try:
            mtime = (workspace / path).stat().st_mtime
        except OSError:
            mtime = 0.0
        dated.append((-mtime, path))
    dated.sort()
    return [path for _, path in dated]


def _cap(lines: list[str]) -> tuple[list[str], bool]:
    kept: list[str] = []
    size = 0
    for line in lines:
        size += len(line) + 1
        if size > MAX_OUTPUT_CHARS and kept:
            return kept, True
        kept.append(line[:MAX_OUTPUT_CHARS])
    return kept, False


def _count_of(line: str) -> int:
    match = re.search(r":(\d+)$", line)
    return int(match.group(1)) if match else 0


def _unit(mode: str, n: int) -> str:
    word = {"files_with_matches": "file", "count": "entry", "content": "line"}[mode]
    if n == 1:
        return word
    return "entries" if word == "entry" else word + "s"


def _failure(pattern: str, stderr: str) -> str:
    text = stderr.strip()
    if len(text) > 2000:
        text = text[:2000] + "…"
    if "regex parse error" in text or "error parsing regex" in text:
        return (
            f"Invalid regular expression {pattern!r} (ripgrep uses Rust regex syntax; escape literal characters "
            f"such as ( [ {{ with a backslash):\n{text}"
        )
    if "unrecognized file type" in text:
        return f"Grep failed: {text}. Use a ripgrep type name such as py, js, ts, rust, go, java, or the glob parameter."
    return f"Grep failed: {text}"
