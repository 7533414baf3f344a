"""Project context: the `AGENTS.md` / `CLAUDE.md` instructions that go into the system prompt.

Seed rules (§9), kept because users already write their files for them:
- search from the working directory upward; the first directory holding either file wins (nothing is
  merged across levels, so a package's own file overrides the repository's);
- in that directory `AGENTS.md` comes first, then `CLAUDE.md`, joined by `\\n\\n---\\n\\n`;
- the search stops after the directory that contains `.git` (the repository root). Outside a git
  repository it checks at most 6 directories (the start and 5 parents), so a stray file in a home
  folder is not picked up from a deep project;
- over 64 KB (UTF-8) the text is cut and `[project context truncated at 64KB]` is appended;
- a symlinked file is used only when it resolves inside the workspace: the text goes to the model's
  provider, so `CLAUDE.md -> ~/.aws/credentials` in a cloned repository must not send the user's
  secrets (Read refuses that file too). A skipped file (a symlink loop too) becomes a warning. Only
  regular files are read.

The text lives in the system prompt, never in the history, so `/clear` keeps it. `ProjectContext`
re-checks the candidate files' mtimes on every use (a dozen `stat` calls) and re-reads only when one
changed, so an edit to AGENTS.md applies to the next model call.

It lives on the tools floor because `ToolContext` keeps the session's `ProjectContext` (created on first
use, kept by `/clear`); it reads only the workspace, so the agent above it and the tools below share it.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

FILE_NAMES = ("AGENTS.md", "CLAUDE.md")
SEPARATOR = "\n\n---\n\n"
MAX_BYTES = 64 * 1024
TRUNCATED_NOTE = "\n\n[project context truncated at 64KB]"
MAX_DIRS_WITHOUT_GIT = 6


@dataclass(frozen=True)
class LoadedContext:
    text: str
    files: tuple[Path, ...]
    truncated: bool = False


def search_dirs(start: Path) -> list[Path]:
    """The directories searched, nearest first: up to the git root, or 6 levels without one."""
    start = Path(start).resolve()
    chain = [start, *start.parents]
    for index, directory in enumerate(chain):
        if (directory / ".git").exists():
            return chain[: index + 1]
    return chain[:MAX_DIRS_WITHOUT_GIT]


def truncate_utf8(text: str, max_bytes: int, note: str) -> tuple[str, bool]:
    """`text` when it fits in `max_bytes` (UTF-8), else its longest prefix that fits with `note`."""
    data = text.encode("utf-8")
    if len(data) <= max_bytes:
        return text, False
    room = max_bytes - len(note.encode("utf-8"))
    return data[:room].decode("utf-8", errors="ignore") + note, True


def usable(path: Path, workspace: Path) -> tuple[bool, str]:
    """(use it?, why not): a regular file that is not a symlink, or one resolving inside the workspace.
    A symlink loop is skipped with a warning: it must not fail every turn."""
    try:
        resolved = path.resolve()
    except (OSError, RuntimeError):  # Python 3.11 raises RuntimeError("Symlink loop from ...")
        return False, f"{path} is a symlink loop; it was not loaded."
    root = Path(workspace).resolve()
    if path.is_symlink() and not (resolved == root or root in resolved.parents):
        return False, f"{path} is a symlink to {resolved}, outside the workspace; it was not loaded."
    try:
        info = os.stat(resolved)
    except OSError:
        return False, ""  # absent or unreadable counts as absent (seed rule)
    if stat.S_ISDIR(info.st_mode):
        return False, ""
    if not stat.S_ISREG(info.st_mode):  # a FIFO or a device would hang or never end
        return False, f"{path} is not a regular file; it was not loaded."
    return True, ""


def load_with_warnings(start: Path) -> tuple[LoadedContext | None, list[str]]:
    """The project instructions for `start` (None when no directory has a usable file) and warnings."""
    warnings: list[str] = []
    for directory in search_dirs(start):
        parts: list[str] = []
        files: list[Path] = []
        for name in FILE_NAMES:
            path = directory / name
            ok, why = usable(path, start)
            if why:
                warnings.append(why)
            if not ok:
                continue
            try:
                with path.open("rb") as handle:
                    data = handle.read(MAX_BYTES + 1)
            except OSError:
                continue
            parts.append(data.decode("utf-8", errors="replace"))
            files.append(path)
        if parts:
            text, truncated = truncate_utf8(SEPARATOR.join(parts), MAX_BYTES, TRUNCATED_NOTE)
            return LoadedContext(text, tuple(files), truncated), warnings
    return None, warnings


def load_project_context(start: Path) -> LoadedContext | None:
    """The project instructions for `start`, or None when no directory has either file."""
    return load_with_warnings(start)[0]


class ProjectContext:
    """A cached `load_project_context` that reloads when a candidate file appears, changes or goes."""

    def __init__(self, start: Path) -> None:
        self.start = Path(start).resolve()
        self._signature: tuple | None = None
        self._loaded: LoadedContext | None = None
        self.warnings: list[str] = []  # files skipped at the last load (a symlink out of the workspace)

    def _current_signature(self) -> tuple:
        signature = []
        for directory in search_dirs(self.start):
            for name in FILE_NAMES:
                try:
                    info = (directory / name).stat()
                    signature.append((str(directory / name), info.st_mtime_ns, info.st_size))
                except OSError:
                    pass
        return tuple(signature)

    def get(self) -> LoadedContext | None:
        signature = self._current_signature()
        if signature != self._signature:
            self._loaded, self.warnings = load_with_warnings(self.start)
            self._signature = signature
        return self._loaded
