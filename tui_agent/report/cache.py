"""Each session's figures kept by the hash of its bytes, so a second report replays only what changed.

An entry is the JSON of one `SessionFigures` (or of its error) in `<cache dir>/report/<engine>/<hash>.json`.
`<engine>` is a fingerprint of what makes the figures: the engine's source (every module of
`tui_agent/core`), the report's settings (idle policy, window) and `FORMAT`; a new version or another
setting reads and writes other entries, never stale ones. Writes go to a temporary file renamed into
place, so a report stopped halfway leaves whole entries only; an entry that cannot be read is a miss.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path

from tui_agent.core.recordings.session_figures import SessionFigures

FORMAT = 1  # bump when SessionFigures changes meaning without the core's source changing
CORE = Path(__file__).resolve().parents[1] / "core"


def content_hash(path: Path) -> str:
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def engine_fingerprint(settings: str) -> str:
    """A short hash of the engine's source and the report's `settings` (what the figures depend on)."""
    digest = hashlib.sha256(f"{FORMAT}\0{settings}".encode())
    for module in sorted(CORE.rglob("*.py")):
        digest.update(module.relative_to(CORE).as_posix().encode() + b"\0")
        digest.update(module.read_bytes())
    return digest.hexdigest()[:20]


class FiguresCache:
    """Entries of one engine fingerprint; `folder` None: nothing kept (`--no-cache`)."""

    def __init__(self, folder: Path | None) -> None:
        self.folder = folder
        self.hits = 0

    def get(self, key: str) -> tuple[SessionFigures | None, str] | None:
        """(figures, error) kept for `key`, or None when nothing usable is kept."""
        if self.folder is None:
            return None
        try:
            data = json.loads((self.folder / f"{key}.json").read_text(encoding="utf-8"))
            error = data.get("error", "")
            figures = SessionFigures.from_json(data["figures"]) if data.get("figures") is not None else None
        except (OSError, ValueError, TypeError, KeyError, AttributeError):
            return None
        if figures is None and not error:
            return None
        self.hits += 1
        return figures, str(error)

    def put(self, key: str, figures: SessionFigures | None, error: str) -> None:
        if self.folder is None:
            return
        body = json.dumps({"figures": figures.json() if figures is not None else None, "error": error})
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(dir=self.folder, prefix=f".{key[:8]}-", suffix=".tmp")
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                out.write(body)
            os.replace(temporary, self.folder / f"{key}.json")
        except OSError:
            pass  # a cache that cannot be written only costs the next run its time
