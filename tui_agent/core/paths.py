"""The folders tui-agent reads and writes, decided in one place: config, logs, data, session journals.

Each honours an environment override first (`$TUI_AGENT_CONFIG_DIR`, `$TUI_AGENT_DATA_DIR`: tests and
portable installs point them elsewhere, so a test never touches the real home), else the platform's folder
(`platformdirs`, imported only when a folder is asked for). This module imports nothing of tui-agent, so
any module may use it without an import circle (settings and trust used to import each other for it).
Journals live in `<data dir>/sessions/<session id>.jsonl`, the folder 0700 (a journal holds the user's code
and conversation).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Mapping

CONFIG_ENV = "TUI_AGENT_CONFIG_DIR"
DATA_ENV = "TUI_AGENT_DATA_DIR"


def config_dir(environ: Mapping[str, str] | None = None) -> Path:
    """The user-level config folder (settings, skills, themes, mcp.json): `$TUI_AGENT_CONFIG_DIR` or the
    platform's. The one place that decides it, so tests that set the variable never touch the real home."""
    override = (os.environ if environ is None else environ).get(CONFIG_ENV, "").strip()
    if override:
        return Path(override).expanduser()
    import platformdirs  # lazy: only paid when settings are read

    return Path(platformdirs.user_config_path("tui-agent"))


def log_dir(environ: Mapping[str, str] | None = None) -> Path:
    """Where logs go (the TUI's trace log, MCP servers' stderr): `$TUI_AGENT_CONFIG_DIR/logs` or the
    platform's log dir. Files the user can `tail -f`; lines on the Textual screen would corrupt it."""
    override = (os.environ if environ is None else environ).get(CONFIG_ENV, "").strip()
    if override:
        return Path(override).expanduser() / "logs"
    import platformdirs

    return Path(platformdirs.user_log_path("tui-agent"))


def data_dir(environ: Mapping[str, str] | None = None) -> Path:
    """Where session journals live: `$TUI_AGENT_DATA_DIR` or the platform's user data dir
    (`platformdirs.user_data_path("tui-agent")`, e.g. `~/.local/share/tui-agent`). Data, not config:
    a user may sync or wipe their config folder without losing their sessions, and vice versa."""
    override = (os.environ if environ is None else environ).get(DATA_ENV, "").strip()
    if override:
        return Path(override).expanduser()
    import platformdirs

    return Path(platformdirs.user_data_path("tui-agent"))


CACHE_ENV = "TUI_AGENT_CACHE_DIR"


def cache_dir(environ: Mapping[str, str] | None = None) -> Path:
    """What can be made again and is kept only to save time (`tui-agent report`'s per-session figures):
    `$TUI_AGENT_CACHE_DIR` or the platform's user cache dir (`~/.cache/tui-agent`). Safe to wipe."""
    override = (os.environ if environ is None else environ).get(CACHE_ENV, "").strip()
    if override:
        return Path(override).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_path("tui-agent"))


SUFFIX = ".jsonl"
SESSION_ID = re.compile(r"\d{8}-\d{6}-[0-9a-f]{6}")  # what records.new_session_id writes, and nothing else


def sessions_dir(environ: Mapping[str, str] | None = None) -> Path:
    return data_dir(environ) / "sessions"


def exports_dir(environ: Mapping[str, str] | None = None) -> Path:
    """Where `/export` with no file name writes: beside the journals, never into the repository."""
    return data_dir(environ) / "exports"


def valid_session_id(session_id: object) -> bool:
    """An id in the format we write: no `../../x`, no absolute path, no separator, nothing to escape with."""
    return isinstance(session_id, str) and SESSION_ID.fullmatch(session_id) is not None


def journal_path(session_id: str, environ: Mapping[str, str] | None = None) -> Path:
    """The journal of `session_id`; a session id that is not ours is a bug, never a path to write to."""
    if not valid_session_id(session_id):
        raise ValueError(f"not a tui-agent session id: {session_id!r}")
    return sessions_dir(environ) / f"{session_id}{SUFFIX}"


def is_own_journal(path: Path, session_id: str, environ: Mapping[str, str] | None = None) -> bool:
    """Is `path` the data dir's own journal of `session_id`? Only then is its header believed (its
    workspace, and appending to it): a file from anywhere else is someone's claim, not our record.
    The file must sit in the sessions folder under its own valid id, and not be a symlink."""
    if not valid_session_id(session_id):
        return False
    path = Path(path)
    try:
        return (path.name == f"{session_id}{SUFFIX}" and not path.is_symlink()
                and path.parent.resolve() == sessions_dir(environ).resolve())
    except (OSError, RuntimeError):
        return False


def ensure_dir(path: Path) -> None:
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    try:
        os.chmod(path, 0o700)
    except OSError:
        pass
