"""Where journals live: `<data dir>/sessions/<session id>.jsonl`.

The data dir is `$TUI_AGENT_DATA_DIR` or the platform's user data dir (`core.settings.data_dir`). The
folder is created 0700 and files 0600: a journal holds the user's code and conversation.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Mapping

from tui_agent.core.settings import data_dir

SUFFIX = ".jsonl"
SESSION_ID = re.compile(r"\d{8}-\d{6}-[0-9a-f]{6}")  # what records.new_session_id writes, and nothing else


def sessions_dir(environ: Mapping[str, str] | None = None) -> Path:
    return data_dir(environ) / "sessions"


def valid_session_id(session_id: object) -> bool:
    """An id in the format we write: no `../../x`, no absolute path, no separator, nothing to escape with."""
    return isinstance(session_id, str) and SESSION_ID.fullmatch(session_id) is not None


def exports_dir(environ: Mapping[str, str] | None = None) -> Path:
    """Where `/export` with no file name writes: beside the journals, never into the repository."""
    return data_dir(environ) / "exports"


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
