"""Where Claude Code writes its session logs, and which one is the newest (`tui-agent watch --latest`).

Claude Code writes each session as it goes to `<config>/projects/<folder>/<session id>.jsonl`, where
`<config>` is `$CLAUDE_CONFIG_DIR` or `~/.claude` and `<folder>` is the session's working directory with
every `/`, `\\`, `.` and `:` replaced by `-` (`/Users/j/Code/athena.dev` → `-Users-j-Code-athena-dev`).
Only the folder's own `*.jsonl` files are sessions (subagents write theirs in subfolders).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

_SEPARATORS = re.compile(r"[/\\.:]")


def config_dir(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    configured = env.get("CLAUDE_CONFIG_DIR")
    return Path(configured).expanduser() if configured else Path(env.get("HOME") or Path.home()) / ".claude"


def project_folder(cwd: str | Path) -> str:
    """The folder name Claude Code gives the project at `cwd`."""
    return _SEPARATORS.sub("-", str(cwd))


def project_dir(cwd: str | Path, env: Mapping[str, str] | None = None) -> Path:
    return config_dir(env) / "projects" / project_folder(cwd)


def session_logs(cwd: str | Path, *, all_projects: bool = False, env: Mapping[str, str] | None = None) -> list[Path]:
    """The session logs of the project at `cwd` (or of every project), newest first (by modification
    time, then name, so the order is total)."""
    if all_projects:
        folders = [p for p in (config_dir(env) / "projects").glob("*") if p.is_dir()]
    else:
        folders = [project_dir(cwd, env)]
    found: list[tuple[float, str, Path]] = []
    for folder in folders:
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            if entry.name.endswith(".jsonl") and entry.is_file():
                try:
                    found.append((entry.stat().st_mtime, entry.name, Path(entry.path)))
                except OSError:
                    continue
    found.sort(key=lambda item: (item[0], item[1]), reverse=True)
    return [path for _, _, path in found]

