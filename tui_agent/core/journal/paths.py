"""Where journals live: `<data dir>/sessions/<session id>.jsonl`.

The data dir is `$TUI_AGENT_DATA_DIR` or the platform's user data dir (`core.settings.data_dir`). The
folder is created 0700 and files 0600: a journal holds the user's code and conversation.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Mapping

from tui_agent.core.settings import data_dir

SUFFIX = ".jsonl"


def sessions_dir(environ: Mapping[str, str] | None = None) -> Path:
    return data_dir(environ) / "sessions"


def exports_dir(environ: Mapping[str, str] | None = None) -> Path:
    """Where `/export` with no file name writes: beside the journals, never into the repository."""
    return data_dir(environ) / "exports"


def journal_path(session_id: str, environ: Mapping[str, str] | None = None) -> Path:
    return sessions_dir(environ) / f"{session_id}{SUFFIX}"


def ensure_dir(path: Path) -> None:
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    try:
        os.chmod(path, 0o700)
    except OSError:
        pass
