"""Project context: the `AGENTS.md` / `CLAUDE.md` instructions that go into the system prompt.

Seed rules (§9), kept because users already write their files for them:
- search from the working directory upward; the first directory holding either file wins (nothing is
  merged across levels, so a package's own file overrides the repository's);
- in that directory `AGENTS.md` comes first, then `CLAUDE.md`, joined by `\\n\\n---\\n\\n`;
- the search stops after the directory that contains `.git` (the repository root). Outside a git
  repository it checks at most 6 directories (the start and 5 parents), so a stray file in a home
  folder is not picked up from a deep project;
- over 64 KB (UTF-8) the text is cut and `[project context truncated at 64KB]` is appended.

The text lives in the system prompt, never in the history, so `/clear` keeps it. `ProjectContext`
re-checks the candidate files' mtimes on every use (a dozen `stat` calls) and re-reads only when one
changed, so an edit to AGENTS.md applies to the next model call.
"""

from __future__ import annotations

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


def load_project_context(start: Path) -> LoadedContext | None:
    """The project instructions for `start`, or None when no directory has either file."""
    for directory in search_dirs(start):
        parts: list[str] = []
        files: list[Path] = []
        for name in FILE_NAMES:
            path = directory / name
            try:
                if not path.is_file():
                    continue
                parts.append(path.read_text(encoding="utf-8", errors="replace"))
            except OSError:
                continue  # unreadable counts as absent (seed rule)
            files.append(path)
        if parts:
            text, truncated = truncate_utf8(SEPARATOR.join(parts), MAX_BYTES, TRUNCATED_NOTE)
            return LoadedContext(text, tuple(files), truncated)
    return None


class ProjectContext:
    """A cached `load_project_context` that reloads when a candidate file appears, changes or goes."""

    def __init__(self, start: Path) -> None:
        self.start = Path(start).resolve()
        self._signature: tuple | None = None
        self._loaded: LoadedContext | None = None

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
            self._loaded = load_project_context(self.start)
            self._signature = signature
        return self._loaded
