"""Which log a watch follows (`LogSource`: one file, or the newest session of a project, moving on when a
newer one starts) and how far behind it a watch is, in words (`behind_text`).

Below both watch faces (the headless `tui-agent watch --json` in `faces/watch.py` and the watch screens in
`ui/`): each reads them, neither imports the other. Only the standard library at the top (`watch` starts
fast); the log finders load on the first look."""

from __future__ import annotations

import time
from pathlib import Path

LATEST_CHECK_SECONDS = 1.0


class LogSource:
    """The log to follow: one FILE, or the newest session of a project (`latest`), which moves on to a
    session that starts later (a log that did not exist before and is now the newest)."""

    def __init__(self, file: Path | None, latest: bool, all_projects: bool, cwd: Path | None = None,
                 env: dict[str, str] | None = None) -> None:
        self.file, self.latest, self.all_projects = file, latest, all_projects
        self.cwd = cwd or Path.cwd()
        self.env = env
        self.known: set[Path] = set()
        self._next_check = 0.0

    def _logs(self) -> list[Path]:
        from tui_agent.core.recordings.codex_logs import agent_logs  # Claude Code's logs and Codex's rollouts

        return agent_logs(self.cwd, all_projects=self.all_projects, env=self.env)

    def first(self) -> Path | None:
        if not self.latest:
            return self.file
        logs = self._logs()
        self.known = set(logs)
        return logs[0] if logs else None

    def due(self) -> bool:
        return self.latest and time.monotonic() >= self._next_check

    def newer(self, current: Path) -> Path | None:
        """A session started since the last look that is now the newest log (None: keep `current`)."""
        self._next_check = time.monotonic() + LATEST_CHECK_SECONDS
        if not self.latest:
            return None
        logs = self._logs()
        fresh = [p for p in logs if p not in self.known]
        self.known |= set(logs)
        return logs[0] if fresh and logs[0] in fresh and logs[0] != current else None


def behind_text(calls: int, unread_bytes: int) -> str:
    """'1,200 calls read and not replayed yet, 3.1 MB not read yet' (the parts that are not zero)."""
    parts = []
    if calls:
        parts.append(f"{calls:,} call{'s' if calls != 1 else ''} read and not replayed yet")
    if unread_bytes:
        parts.append(f"{unread_bytes / 1e6:.1f} MB not read yet")
    return ", ".join(parts) or "nothing"
