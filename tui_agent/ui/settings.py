"""Where the UI keeps its state on disk: the user config dir, the user themes dir, the chosen theme.

The config dir is `platformdirs.user_config_path("tui-agent")` unless `TUI_AGENT_CONFIG_DIR` says
otherwise, so tests (and anyone trying things out) never touch the real home directory. The UI's own
state lives in `ui.json` so it cannot collide with the engine's config files in the same directory.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from tui_agent.core.config_files import parse_json, read_text_capped
from tui_agent.core.paths import config_dir, log_dir

__all__ = ["STATE_FILE", "UIState", "config_dir", "log_dir", "user_themes_dir"]

STATE_FILE = "ui.json"


def user_themes_dir(base: Path | None = None) -> Path:
    return (base or config_dir()) / "themes"


@dataclass
class UIState:
    """The few things that persist between runs: the theme, and the prompts still queued when the user
    quit (they used to be lost silently; the next start puts them in the prompt history)."""

    theme: str | None = None
    unsent: list[str] = field(default_factory=list)

    @classmethod
    def load(cls, base: Path | None = None) -> "UIState":
        path = (base or config_dir()) / STATE_FILE
        try:
            text = read_text_capped(path)
            data = parse_json(text) if text is not None else None
        except (OSError, ValueError):  # unreadable, a FIFO, too big, too deep: start with defaults
            return cls()
        theme = data.get("theme") if isinstance(data, dict) else None
        unsent = data.get("unsent") if isinstance(data, dict) else None
        unsent = [text for text in unsent if isinstance(text, str)] if isinstance(unsent, list) else []
        return cls(theme=theme if isinstance(theme, str) else None, unsent=unsent)

    def save(self, base: Path | None = None) -> str | None:
        """Write the state; returns an error message instead of raising (a read-only home is no crash)."""
        directory = base or config_dir()
        try:
            directory.mkdir(parents=True, exist_ok=True)
            data = {"theme": self.theme, **({"unsent": self.unsent} if self.unsent else {})}
            (directory / STATE_FILE).write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
        except OSError as error:
            return f"Could not save the UI state (theme, unsent prompts) to {directory}: {error}"
        return None
