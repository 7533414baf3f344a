"""Path helpers shared by the file tools: one place decides how a model-given path is understood.

Models send relative paths (resolved against the workspace root, never the process cwd, so the TUI and
headless runs behave the same wherever they were started) or absolute ones (allowed: the permission gate
has already asked the user when they point outside the workspace). Results show paths relative to the
workspace when inside it, so transcripts stay short and portable.
"""

from __future__ import annotations

import functools
import os
import shutil
import sys
from pathlib import Path

from tui_agent.core.tools.base import ToolError


def resolve_path(raw: str, workspace: Path) -> Path:
    """The absolute, normalised path `raw` names: `~` expanded, relative to `workspace`, symlinks resolved.

    Resolving symlinks gives every tool (and `ToolContext.read_files`) one key per file, which is what
    the permission gate checks too.
    """
    # Never strip: " notes.txt" is another file than "notes.txt" (stripping made Write overwrite it).
    path = Path(raw or ".").expanduser()
    if not path.is_absolute():
        path = Path(workspace) / path
    try:
        return path.resolve()
    except (RuntimeError, OSError) as error:  # a symlink loop (RuntimeError before Python 3.13)
        raise ToolError(f"Cannot resolve {raw}: {_loop_reason(error)}") from None


def _loop_reason(error: BaseException) -> str:
    if isinstance(error, OSError) and error.strerror:
        return error.strerror
    return "too many levels of symbolic links (a symlink loop)"


def is_inside(path: Path, workspace: Path) -> bool:
    """True when the (resolved) `path` is the workspace root or below it."""
    root = Path(workspace).resolve()
    return path == root or root in path.parents


def display_path(path: Path, workspace: Path) -> str:
    """`path` relative to the workspace (forward slashes) when inside it, else absolute."""
    root = Path(workspace).resolve()
    if path == root:
        return "."
    if root in path.parents:
        return path.relative_to(root).as_posix()
    return str(path)


@functools.lru_cache(maxsize=1)
def find_rg() -> str | None:
    """The ripgrep binary: the one the `ripgrep` wheel installs next to our Python first, then PATH.

    Looking beside `sys.executable` first makes a venv install work even when its `bin/` is not on
    PATH (the TUI started by absolute path, an IDE run configuration...). Not resolving symlinks here is
    deliberate: a venv's `python` links to the system interpreter, whose directory has no `rg`.
    """
    name = "rg.exe" if os.name == "nt" else "rg"
    candidates = [Path(sys.executable).parent / name, Path(sys.prefix) / ("Scripts" if os.name == "nt" else "bin") / name]
    for candidate in candidates:
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return shutil.which("rg")


def git_internal(path: Path, workspace: Path) -> bool:
    """True when `path` (resolved or not) lies inside a `.git` directory (or is one)."""
    root = Path(workspace).resolve()
    candidates = [Path(os.path.normpath(root / path)), resolve_path(str(path), root)]
    for candidate in candidates:
        parts = candidate.relative_to(root).parts if is_inside(candidate, root) else candidate.parts
        if ".git" in parts:
            return True
    return False
