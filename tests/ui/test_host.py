"""The command helpers name their host as a Protocol (`ui/host.py`), not the main screen (issue 16)."""

from __future__ import annotations

import ast
from pathlib import Path

from tui_agent.ui.host import CommandHost
from tui_agent.ui.screens.main import MainScreen

UI = Path(__file__).resolve().parents[2] / "tui_agent" / "ui"


def test_commands_and_session_actions_do_not_import_the_main_screen() -> None:
    for name in ("commands.py", "session_actions.py"):
        tree = ast.parse((UI / name).read_text(encoding="utf-8"))
        modules = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
        assert "tui_agent.ui.screens.main" not in modules, name


def test_the_main_screen_offers_everything_the_host_protocol_names() -> None:
    members = {name for name in vars(CommandHost) if not name.startswith("_")} | set(CommandHost.__annotations__)
    assert {"session", "chat", "panel", "clear_conversation", "run_worker"} <= members
    missing = [name for name in members - {"session"} if not hasattr(MainScreen, name)]
    assert missing == []
    assert "session" in MainScreen.__init__.__code__.co_names or "session" in MainScreen.__init__.__code__.co_varnames
