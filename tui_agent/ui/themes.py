"""Themes as TOML files: `themes/` in the repository (bundled in the wheel) plus the user's themes dir.

Each file maps field for field onto `textual.theme.Theme`, with a `[variables]` table for the budget
panel's marks. Loading never raises: a broken file becomes a `ThemeFailure` the app shows as a notice,
because one bad user file must not stop the agent from starting.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, fields
from pathlib import Path

from textual.color import Color, ColorParseError
from textual.theme import Theme

from tui_agent.core.config_files import read_text_capped

DEFAULT_THEME = "agent-dark"

# The muted colour for Content spans. Textual's $text-muted is "auto 60%", and an auto colour in a span
# is resolved against the widget's own background: ours are mostly transparent, so "muted" labels came
# out full white. A plain alpha on the foreground blends with whatever is behind, in every theme. 78%
# keeps muted text at WCAG AA (4.5:1) on every panel background of the bundled themes, the cursor row
# included (tests/ui/test_theme_contrast.py measures it on screen); 60% did not.
MUTED = "$foreground 78%"

# Literal defaults for every app variable the TCSS uses (pitfall P10: built-in themes such as
# textual-dark have none of these, and "$accent" here would not be resolved).
VARIABLE_DEFAULTS: dict[str, str] = {
    "budget-baseline": "#bb9af7",
    "budget-messages": "#7aa2f7",
    "budget-reserve": "#e0af68",
    "budget-threshold": "#f7768e",
    "budget-free": "#3b4261",
    "budget-outbound": "#1e2a45",
    "budget-dropped": "#a3aacb",
    "budget-truncated": "#ff9e64",
    "budget-protected": "#9ece6a",
    "budget-cursor": "#2c3c66",
    "budget-bar": "#7aa2f7",
}

_ALLOWED = {f.name for f in fields(Theme)}
_COLOURS = ("primary", "secondary", "warning", "error", "success", "accent",
            "foreground", "background", "surface", "panel", "boost")


@dataclass(frozen=True)
class ThemeFailure:
    path: Path
    message: str

    def __str__(self) -> str:
        return f"Theme file {self.path.name} was skipped: {self.message}"


def bundled_themes_dir() -> Path:
    """`tui_agent/_bundled_themes` in a wheel; the repository's `themes/` in an editable install (P12).
    Found beside this file, not with `importlib.resources.files`: that loads 40 modules (zipfile among
    them) before the first frame, for a package that is always a folder on disk."""
    packaged = Path(__file__).resolve().parents[1] / "_bundled_themes"
    return packaged if packaged.is_dir() else Path(__file__).resolve().parents[2] / "themes"


def load_theme(path: Path) -> Theme:
    """Parse and validate one theme file; raises ValueError with a message fit for the user."""
    text = read_text_capped(path)  # a FIFO or /dev/zero named *.toml must not hang or fill memory
    if text is None:
        raise ValueError("the file is gone")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ValueError(f"not valid TOML ({error})") from None
    except RecursionError:
        raise ValueError("not valid TOML (nested too deeply)") from None
    if not isinstance(data.get("name"), str) or not data["name"].strip():
        raise ValueError("missing `name`")
    if not isinstance(data.get("primary"), str):
        raise ValueError("missing `primary` colour")
    unknown = set(data) - _ALLOWED
    if unknown:
        raise ValueError(f"unknown keys {sorted(unknown)}")
    for key in _COLOURS:
        if key in data:
            _check_colour(key, data[key])
    variables = data.get("variables", {})
    if not isinstance(variables, dict):
        raise ValueError("`variables` must be a table")
    for key, value in variables.items():
        _check_colour(f"variables.{key}", value)
    data["variables"] = {str(k): str(v) for k, v in variables.items()}
    # Textual trusts these types; a string `dark` or a list `text_alpha` would only fail when applied.
    for key in ("dark", "ansi"):
        if key in data and not isinstance(data[key], bool):
            raise ValueError(f"`{key}` must be true or false")
    for key in ("luminosity_spread", "text_alpha"):
        if key in data and (isinstance(data[key], bool) or not isinstance(data[key], (int, float))):
            raise ValueError(f"`{key}` must be a number")
        if key in data:
            data[key] = float(data[key])
    return Theme(**data)


def _check_colour(key: str, value: object) -> None:
    if not isinstance(value, str):
        raise ValueError(f"`{key}` must be a colour string")
    try:
        Color.parse(value)
    except ColorParseError:
        raise ValueError(f"`{key}` = {value!r} is not a colour") from None


def load_themes(*directories: Path) -> tuple[dict[str, Theme], list[ThemeFailure]]:
    """All themes in `directories`; later directories override earlier ones by name."""
    themes: dict[str, Theme] = {}
    failures: list[ThemeFailure] = []
    for directory in directories:
        if not directory.is_dir():
            continue
        for path in sorted(directory.glob("*.toml")):
            try:
                theme = load_theme(path)
            except (OSError, ValueError, TypeError) as error:
                failures.append(ThemeFailure(path, str(error)))
                continue
            themes[theme.name] = theme
    return themes, failures
