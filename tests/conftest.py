"""Determinism for every test: colour on, UTC, no blinking cursors, no real config or data dir.

Snapshot SVGs must be byte-identical across runs and machines (textual-style pitfall P9): NO_COLOR
switches Textual to monochrome, a blinking cursor is a wall-clock timer, and the UI persists the theme
choice, which must never touch the developer's real home directory.
"""

from __future__ import annotations

import os
import time

import pytest

os.environ.pop("NO_COLOR", None)  # before any App is created (App.__init__ reads it)


@pytest.fixture(autouse=True)
def _deterministic(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    monkeypatch.setenv("TUI_AGENT_CONFIG_DIR", str(tmp_path_factory.mktemp("config")))
    monkeypatch.setenv("TUI_AGENT_DATA_DIR", str(tmp_path_factory.mktemp("data")))  # session journals
    # no organisation policy unless a test writes one (a machine's /etc/tui-agent/policy.json is not the test's)
    monkeypatch.setenv("TUI_AGENT_POLICY_FILE", str(tmp_path_factory.mktemp("policy") / "policy.json"))
    monkeypatch.setenv("TUI_AGENT_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))  # `report`'s figures
    monkeypatch.delenv("TRACE", raising=False)
    try:
        from textual.widgets import Input, TextArea
    except ImportError:  # core-only environments
        return
    monkeypatch.setattr(Input, "_toggle_cursor", lambda self: None)
    monkeypatch.setattr(TextArea, "_toggle_cursor_blink_visible", lambda self: None)
