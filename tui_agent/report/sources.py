"""Where `tui-agent report` looks for session logs, and which files under a folder are sessions.

With no path given: this user's Claude Code projects (`$CLAUDE_CONFIG_DIR/projects` or
`~/.claude/projects`), Codex sessions (`$CODEX_HOME/sessions` or `~/.codex/sessions`) and our own journals
(`core.paths.sessions_dir`). A folder is searched recursively for `*.jsonl` files (Claude Code keeps a
subagent's log in a subfolder of its session's: it was paid for too); a file is taken as given. The list is
sorted and has no file twice, so two runs over the same store see the same sessions in the same order.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path

SUFFIX = ".jsonl"


def default_paths(env: Mapping[str, str] | None = None) -> list[Path]:
    from tui_agent.core.paths import sessions_dir
    from tui_agent.core.recordings.claude_logs import config_dir
    from tui_agent.core.recordings.codex_logs import codex_home

    return [config_dir(env) / "projects", codex_home(env) / "sessions", sessions_dir(env)]


def find_sessions(paths: Iterable[Path]) -> tuple[list[Path], list[str]]:
    """(the session files under `paths`, sorted, each once; one line per path that is not there)."""
    found: set[Path] = set()
    missing: list[str] = []
    for path in paths:
        if path.is_file():
            found.add(path.absolute())
        elif path.is_dir():
            found.update(_walk(path))
        else:
            missing.append(f"{path}: no such file or folder")
    return sorted(found), missing


def _walk(folder: Path) -> Iterable[Path]:
    """Every `*.jsonl` regular file under `folder`; folders it cannot list are passed over (symlinked
    folders are not followed: a loop cannot hold the walk)."""
    for root, _dirs, files in os.walk(folder, onerror=lambda error: None):
        for name in files:
            if name.endswith(SUFFIX):
                path = Path(root, name)
                if path.is_file():
                    yield path.absolute()
