"""Notices, errors and "cancelled" lines in the chat flow (plain text; they quote paths and errors)."""

from __future__ import annotations

from typing import Literal

from textual.widgets import Static

from tui_agent.core.sanitize import strip_controls

ICONS = {"info": "ℹ", "warning": "⚠", "error": "✗"}


class NoticeLine(Static):
    DEFAULT_CSS = """
    NoticeLine { margin: 1 0 0 0; padding: 0 1; color: $text-muted; }
    NoticeLine.-warning { color: $text-warning; }
    NoticeLine.-error { color: $text-error; background: $error 10%; }
    """

    def __init__(self, text: str, level: Literal["info", "warning", "error"] = "info", **kwargs) -> None:
        text = strip_controls(text)  # notices quote server errors, file names, command output
        super().__init__(f"{ICONS.get(level, 'ℹ')} {text}", markup=False, classes=f"-{level}", **kwargs)
        self.text = text
        self.level = level
