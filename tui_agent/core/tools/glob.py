"""Glob: Claude Code's file finder, `{pattern, path?}` → matching files, newest first.

It walks with `os.walk` and prunes as it goes (ignored directories, `.git`, directories deeper than a
non-recursive pattern can reach, names that cannot match), so a pattern over a big repository with a
large `node_modules` or build tree stays fast. `.gitignore` files (root, nested and the ancestors up to
the repository root) are honoured with git's own rules via `pathspec`. Results are sorted by mtime,
newest first, ties by path, so the output is deterministic (the seed's came in directory order).
"""

from __future__ import annotations

import asyncio
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tui_agent.core.tools.base import Tool, ToolContext, ToolError, ToolOutput
from tui_agent.core.tools.paths import display_path, resolve_path

MAX_RESULTS = 100
NO_FILES = "No files found"
ALWAYS_SKIPPED = {".git"}
MAGIC = re.compile(r"[*?\[{\\]")

DESCRIPTION = """Fast file pattern matching that works with any codebase size.
- Supports glob patterns like "**/*.js" or "src/**/*.ts" ("**/" also matches the top directory; braces like "*.{ts,tsx}" work).
- Returns matching file paths sorted by modification time, newest first (at most 100; a note says how many more exist).
- Files ignored by .gitignore and the .git directory are skipped; other dotfiles are included.
- Paths inside the workspace are shown relative to it.
- Use Grep to search file contents; use this tool to find files by name."""


class GlobTool(Tool):
    name = "Glob"
    description = DESCRIPTION
    input_schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "description": "The glob pattern to match files against"},
            "path": {
                "type": "string",
                "description": "The directory to search in. If not specified, the workspace root is used. "
                "IMPORTANT: Omit this field to use the default directory. DO NOT enter \"undefined\" or "
                "\"null\" - simply omit it for the default behavior. Must be a valid directory path if provided.",
            },
        },
        "required": ["pattern"],
        "additionalProperties": False,
    }
    read_only = True

    def paths(self, tool_input: dict[str, Any]) -> list[str]:
        """The search directory, plus the pattern's fixed prefix: where the walk really starts.

        The gate resolves these (symlinks too), so `/etc/*`, `../x/*` and `link/*` with `link` a symlink
        to a folder outside the workspace all count as reaching outside it."""
        found = super().paths(tool_input)
        pattern = tool_input.get("pattern")
        if isinstance(pattern, str):
            base, _ = split_pattern(pattern.strip())
            if base:
                start = tool_input.get("path") if isinstance(tool_input.get("path"), str) else ""
                found.append(base if Path(base).expanduser().is_absolute() or not start else f"{start}/{base}")
        return found

    def summary(self, tool_input: dict[str, Any]) -> str:
        pattern = tool_input.get("pattern")
        path = tool_input.get("path")
        text = pattern if isinstance(pattern, str) else ""
        return f"{text} in {path}" if isinstance(path, str) and path and text else text

    async def call(self, tool_input: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        pattern = str(tool_input["pattern"]).strip()
        raw_path = tool_input.get("path") or "."
        if raw_path in ("undefined", "null"):  # models sometimes spell "omitted" this way
            raw_path = "."
        return ToolOutput(await asyncio.to_thread(run_glob, pattern, str(raw_path), ctx.workspace))


def run_glob(pattern: str, raw_path: str, workspace: Path, max_results: int = MAX_RESULTS) -> str:
    """The Glob tool's text: newest-first paths, a truncation note, or "No files found"."""
    if not pattern:
        raise ToolError("The pattern is empty. Give a glob such as '**/*.py'.")
    root = resolve_path(raw_path, workspace)
    shown = display_path(root, workspace)
    if not root.exists():
        raise ToolError(f"Directory does not exist: {shown}")
    if not root.is_dir():
        raise ToolError(f"{shown} is not a directory. Give a directory as path (or use Read for a file).")
    base, rest = split_pattern(pattern)
    start = resolve_path(base, root) if base else root
    if not rest:
        # A fixed path: the file itself, if it exists.
        found = [str(start)] if start.is_file() else []
    elif not start.is_dir():
        found = []
    else:
        found = _walk(start, rest, IgnoreRules.for_root(start, workspace))
    if not found:
        return NO_FILES
    dated = []
    for path in found:
        try:
            mtime = os.stat(path).st_mtime
        except OSError:
            mtime = 0.0  # a broken symlink still matched by name
        dated.append((-mtime, path))
    # All results share the walk start, so absolute paths order ties as the shown ones would.
    dated.sort()
    lines = [display_path(Path(item[1]), workspace) for item in dated[:max_results]]
    if len(dated) > max_results:
        more = len(dated) - max_results
        lines.append(
            f"(Results are truncated: showing the {max_results} newest of {len(dated)} files, {more} more. "
            "Use a more specific path or pattern.)"
        )
    return "\n".join(lines)


def split_pattern(pattern: str) -> tuple[str, str]:
    """Split into the leading fixed directories and the part with wildcards.

    `src/**/*.ts` → (`src`, `**/*.ts`); `*.py` → (``, `*.py`); `/abs/dir/*.md` → (`/abs/dir`, `*.md`);
    a pattern without wildcards gives (`the/path`, ``).
    """
    text = pattern.replace("\\", "/") if os.name == "nt" else pattern
    while text.startswith("./"):
        text = text[2:]
    parts = text.split("/")
    fixed: list[str] = []
    for index, part in enumerate(parts):
        if MAGIC.search(part):
            rest = "/".join(parts[index:])
            return _join(fixed, text.startswith("/")), rest
        fixed.append(part)
    return _join(fixed, text.startswith("/")), ""


def _join(parts: list[str], absolute: bool) -> str:
    joined = "/".join(p for p in parts if p)
    return "/" + joined if absolute else joined


def glob_to_regex(pattern: str) -> str:
    """A regex (without anchors) for a glob over `/`-separated relative paths.

    `*` and `?` stay within one path segment, `**` as a whole segment spans any number of directories
    (zero included: `**/*.ts` matches `a.ts`), `[...]`/`[!...]` are classes, `{a,b}` are alternatives.
    """
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "*":
            j = i
            while j < n and pattern[j] == "*":
                j += 1
            whole_segment = (i == 0 or pattern[i - 1] == "/") and (j == n or pattern[j] == "/")
            if j - i >= 2 and whole_segment:
                if j == n:
                    out.append(".*")
                    i = j
                else:
                    out.append("(?:[^/]*/)*")
                    i = j + 1
            else:
                out.append("[^/]*")
                i = j
            continue
        if c == "?":
            out.append("[^/]")
        elif c == "[":
            first = i + 2 if i + 1 < n and pattern[i + 1] in "!^" else i + 1
            end = pattern.find("]", first + 1)  # a `]` right after `[` or `[!` is a literal member
            if end == -1:
                out.append(re.escape(c))
            else:
                body = pattern[i + 1 : end]
                negate = body[:1] in ("!", "^")
                if negate:
                    body = body[1:]
                body = body.replace("\\", "\\\\").replace("[", "\\[")
                out.append(f"[{'^/' if negate else ''}{body}]")
                i = end + 1
                continue
        elif c == "{":
            end, alternatives = _braces(pattern, i)
            if end == -1:
                out.append(re.escape(c))
            else:
                out.append("(?:" + "|".join(glob_to_regex(a) for a in alternatives) + ")")
                i = end + 1
                continue
        elif c == "\\" and i + 1 < n:
            out.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


def _braces(pattern: str, start: int) -> tuple[int, list[str]]:
    """The index of the `}` closing the `{` at `start` and the top-level alternatives (-1 if none)."""
    depth = 0
    pieces: list[str] = []
    current = start + 1
    for index in range(start, len(pattern)):
        char = pattern[index]
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                pieces.append(pattern[current:index])
                return (index, pieces) if len(pieces) > 1 else (-1, [])
        elif char == "," and depth == 1:
            pieces.append(pattern[current:index])
            current = index + 1
    return -1, []


@dataclass
class _Spec:
    base: str  # directory of the .gitignore, relative to the walk start ("" for the start itself)
    spec: Any


@dataclass
class IgnoreRules:
    """The ancestors' `.gitignore` rules that govern the walk start (the walk adds the nested ones).

    `outer` holds (spec, prefix, directory) for each ancestor directory with a `.gitignore`; `prefix` is
    the walk start relative to that directory, so a path below the start is checked as `prefix/path`,
    as git would.
    """

    outer: list[tuple[Any, str, Path]] = field(default_factory=list)

    @classmethod
    def for_root(cls, start: Path, workspace: Path) -> "IgnoreRules":
        """Load the ancestors' `.gitignore` files up to the repository root (the nearest directory with
        `.git`) or, outside a repository, up to the workspace root when `start` is inside it.

        When those rules ignore the start itself (Glob asked explicitly for `node_modules/**`), they
        are dropped: an explicit request wins, as with `rg PATH`.
        """
        chain = [start, *start.parents]
        stop = next((d for d in chain if (d / ".git").exists()), None)
        if stop is None:
            ws = Path(workspace).resolve()
            stop = ws if ws == start or ws in start.parents else start
        ancestors = chain[1 : chain.index(stop) + 1]
        rules = cls()
        for directory in reversed(ancestors):  # shallowest first: deeper files take precedence
            spec = _load_spec(directory)
            if spec is not None:
                rules.outer.append((spec, start.relative_to(directory).as_posix(), directory))
        if rules.outer and any(rules._outer_ignores(d) for d in chain[: len(ancestors)]):
            rules.outer = []
        return rules

    def _outer_ignores(self, directory: Path) -> bool:
        """Whether the ancestors' rules ignore `directory` (the start or a directory above it)."""
        for spec, _, base in reversed(self.outer):
            if base not in directory.parents:
                continue
            result = spec.check_file(directory.relative_to(base).as_posix() + "/")
            if result.include is not None:
                return bool(result.include)
        return False

    def ignored(self, rel: str, is_dir: bool, local: list[_Spec]) -> bool:
        """Whether `rel` (relative to the walk start) is ignored; the deepest deciding rule wins."""
        suffix = "/" if is_dir else ""
        for entry in reversed(local):
            sub = rel[len(entry.base) + 1 :] if entry.base else rel
            result = entry.spec.check_file(sub + suffix)
            if result.include is not None:
                return bool(result.include)
        for spec, prefix, _ in reversed(self.outer):
            result = spec.check_file(f"{prefix}/{rel}{suffix}")
            if result.include is not None:
                return bool(result.include)
        return False


def _load_spec(directory: Path) -> Any:
    try:
        text = (directory / ".gitignore").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    lines = text.splitlines()
    if not any(line.strip() and not line.startswith("#") for line in lines):
        return None
    import pathspec  # lazy: only paid when a .gitignore exists

    return pathspec.GitIgnoreSpec.from_lines(lines)


def _walk(start: Path, rest: str, rules: IgnoreRules) -> list[str]:
    """Files below `start` whose relative path matches `rest`, pruning what cannot match.

    Plain strings, not `Path` objects: on a large tree building paths costs more than the walk.
    """
    matcher = re.compile(glob_to_regex(rest) + r"\Z", re.DOTALL)
    segments = None if ("**" in rest or "{" in rest) else [re.compile(glob_to_regex(s) + r"\Z") for s in rest.split("/")]
    found: list[str] = []
    # Each directory's .gitignore stack (inherited from its parent), keyed by its relative path.
    stacks: dict[str, list[_Spec]] = {}
    for current, dirnames, filenames in os.walk(start):
        rel_dir = os.path.relpath(current, start).replace(os.sep, "/")
        rel_dir = "" if rel_dir == "." else rel_dir
        local = list(stacks.pop(rel_dir, [])) if rel_dir else []
        spec = _load_spec(Path(current)) if ".gitignore" in filenames else None
        if spec is not None:
            local.append(_Spec(rel_dir, spec))
        depth = rel_dir.count("/") + 1 if rel_dir else 0
        prefix = f"{rel_dir}/" if rel_dir else ""

        kept = []
        for name in sorted(dirnames):
            if name in ALWAYS_SKIPPED:
                continue
            if segments is not None and (depth + 1 >= len(segments) or not segments[depth].match(name)):
                continue
            if rules.ignored(prefix + name, True, local):
                continue
            kept.append(name)
            stacks[prefix + name] = local
        dirnames[:] = kept

        if segments is not None and depth != len(segments) - 1:
            continue
        for name in filenames:
            rel = prefix + name
            if matcher.match(rel) and not rules.ignored(rel, False, local):
                found.append(os.path.join(current, name))
    return found
