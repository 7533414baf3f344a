"""Where the UI keeps its state on disk: the user config dir, the user themes dir, the chosen theme.

The config dir is `platformdirs.user_config_path("tui-agent")` unless `TUI_AGENT_CONFIG_DIR` says
otherwise, so tests (and anyone trying things out) never touch the real home directory. The UI's own
state lives in `ui.json` so it cannot collide with the engine's config files in the same directory.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

CONFIG_DIR_ENV = "TUI_AGENT_CONFIG_DIR"
STATE_FILE = "ui.json"


def config_dir() -> Path:
    override = os.environ.get(CONFIG_DIR_ENV)
    if override:
        return Path(override).expanduser()
    import platformdirs

    return platformdirs.user_config_path("tui-agent")


def user_themes_dir(base: Path | None = None) -> Path:
    return (base or config_dir()) / "themes"


def log_dir() -> Path:
    """Trace logs go here: a file the user can `tail -f` (lines on the screen would corrupt it)."""
    override = os.environ.get(CONFIG_DIR_ENV)
    if override:
        return Path(override).expanduser() / "logs"
    import platformdirs

    return platformdirs.user_log_path("tui-agent")


@dataclass
class UIState:
    """The few choices that persist between runs (today: the theme)."""

    theme: str | None = None

    @classmethod
    def load(cls, base: Path | None = None) -> "UIState":
        path = (base or config_dir()) / STATE_FILE
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return cls()
        theme = data.get("theme") if isinstance(data, dict) else None
        return cls(theme=theme if isinstance(theme, str) else None)

    def save(self, base: Path | None = None) -> str | None:
        """Write the state; returns an error message instead of raising (a read-only home is no crash)."""
        directory = base or config_dir()
        try:
            directory.mkdir(parents=True, exist_ok=True)
            (directory / STATE_FILE).write_text(json.dumps({"theme": self.theme}, indent=2) + "\n", encoding="utf-8")
        except OSError as error:
            return f"Could not save the theme choice to {directory}: {error}"
        return None
