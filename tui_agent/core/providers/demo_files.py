"""What the demo model knows of files: which paths are files here, which to prefer, and how much to Read.

The workspace path is used only to skip paths that are not readable files and to size a Read so it fits
the demo's small window; what a file holds, the demo learns from its tools like any model.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

READ_SHARE = 8  # one Read takes at most about an eighth of the window: a turn of reads stays in it
READ_MIN_CHARS = 16_000  # files up to this size are always read whole (a window this small is a test's)
READ_LINE_CHARS = 60  # a typical source line, to turn that share into a line limit
HEAD_LINES = 60  # a look at what a file is (the overview's README, the biggest files): its head, as a model pages
SKIP_SUFFIXES = {
    ".png", ".jpg", ".jpeg", ".gif", ".webp", ".ico", ".pdf", ".zip", ".gz", ".tar", ".whl", ".so", ".pyc",
    ".lock", ".svg", ".woff", ".woff2", ".ttf", ".bin", ".db", ".sqlite", ".jsonl",
}
PREFERRED = ("readme", "agents.md", "claude.md", "pyproject.toml", "package.json", "cargo.toml", "go.mod")


@dataclass(frozen=True)
class DemoFiles:
    """The workspace as the demo may use it (None in tests that give no workspace: names decide)."""

    workspace: Path | None
    context_window: int
    max_output_tokens: int

    def is_file(self, path: str) -> bool:
        if self.workspace is None:
            return bool(Path(path).suffix) and " " not in path
        return (self.workspace / path).is_file()

    def exists(self, path: str) -> bool:
        """A file or a folder: a named folder is not a missing file."""
        if self.workspace is None:
            return self.is_file(path)
        return (self.workspace / path.rstrip("/")).exists()

    def read(self, path: str, head: int | None = None) -> tuple[str, dict[str, Any]]:
        """A Read that fits the demo's small window: a file larger than an eighth of the window (in
        characters, about 4 a token; at least READ_MIN_CHARS) is read as its first lines, as a real model
        pages a long file. One huge read would otherwise overflow the window and take the prompt with it."""
        budget_chars = max(4 * max(self.context_window - self.max_output_tokens, 1) // READ_SHARE, READ_MIN_CHARS)
        tool_input: dict[str, Any] = {"file_path": path}
        try:
            size = (self.workspace / path).stat().st_size if self.workspace is not None else 0
        except OSError:
            size = 0
        if size > budget_chars:
            tool_input["limit"] = max(budget_chars // READ_LINE_CHARS, 20)
        if head is not None and size > head * READ_LINE_CHARS:
            tool_input["limit"] = min(tool_input.get("limit", head), head)
        return "Read", tool_input


def pick(candidates: list[str], seen: set[str], keyword: str, count: int) -> list[str]:
    """Prefer READMEs and manifests, then files whose path mentions the keyword, then the listing order."""
    pool = [c for c in dict.fromkeys(candidates) if c not in seen and Path(c).suffix.lower() not in SKIP_SUFFIXES]

    def rank(path: str) -> tuple[int, int]:
        lower = path.lower()
        name = Path(lower).name
        if any(name.startswith(p) for p in PREFERRED) and "/" not in lower:
            return (0, PREFERRED.index(next(p for p in PREFERRED if name.startswith(p))))
        if keyword and keyword.lower() in lower:
            return (1, 0)
        if name.startswith(".") or "/." in lower:
            return (3, 0)
        return (2, 0)

    return sorted(pool, key=rank)[:count]


__all__ = ["HEAD_LINES", "PREFERRED", "SKIP_SUFFIXES", "DemoFiles", "pick"]
