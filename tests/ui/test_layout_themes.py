"""Narrow layout (the panel folds behind F2) and theme files (bundled, user, broken)."""

from __future__ import annotations

import os
from pathlib import Path

from tui_agent.ui.themes import VARIABLE_DEFAULTS, bundled_themes_dir, load_themes
from tui_agent.ui.widgets.budget_panel import BudgetPanel
from tui_agent.ui.widgets.chat_pane import ChatPane
from tui_agent.ui.widgets.notice_line import NoticeLine

from .support import make_app, make_repo, scripted_session


async def test_narrow_terminal_folds_the_panel_behind_f2(tmp_path) -> None:
    app = make_app(scripted_session(make_repo(tmp_path), []))
    async with app.run_test(size=(80, 30)) as pilot:
        screen = app.screen
        assert screen.has_class("-narrow")
        assert not screen.query_one(BudgetPanel).display or screen.query_one(BudgetPanel).region.width == 0
        shown = {key for key, active in screen.active_bindings.items() if active.binding.show}
        assert "f2" in shown  # the footer hints at the folded panel
        await pilot.press("f2")
        await pilot.pause()
        assert screen.query_one(BudgetPanel).region.width >= 76
        assert screen.query_one(ChatPane).region.width == 0
        await pilot.press("f2")
        await pilot.pause()
        assert screen.query_one(ChatPane).region.width > 0
        await pilot.resize_terminal(130, 36)
        await pilot.pause()
        assert not screen.has_class("-narrow") and screen.query_one(BudgetPanel).region.width > 40


def test_bundled_themes_load_with_every_budget_variable() -> None:
    themes, failures = load_themes(bundled_themes_dir())
    assert failures == []
    assert {"agent-dark", "agent-light", "agent-high-contrast"} <= set(themes)
    assert not themes["agent-light"].dark
    for theme in themes.values():
        assert set(VARIABLE_DEFAULTS) <= set(theme.variables)


async def test_user_theme_is_loaded_and_a_broken_one_is_reported(tmp_path) -> None:
    user_dir = Path(os.environ["TUI_AGENT_CONFIG_DIR"]) / "themes"
    user_dir.mkdir(parents=True)
    (user_dir / "mine.toml").write_text('name = "mine"\nprimary = "#ff0000"\n', encoding="utf-8")
    (user_dir / "broken.toml").write_text('name = "broken"\nprimary = "not-a-colour"\n', encoding="utf-8")
    (user_dir / "garbage.toml").write_text('name = = =\n', encoding="utf-8")
    app = make_app(scripted_session(make_repo(tmp_path), []))
    async with app.run_test(size=(120, 36)) as pilot:
        assert "mine" in app.available_themes
        app.theme = "mine"  # a theme without budget variables still renders (literal defaults, P10)
        await pilot.pause()
        texts = [n.text for n in app.screen.query(NoticeLine) if n.level == "warning"]
        assert any("broken.toml" in t and "not a colour" in t for t in texts)
        assert any("garbage.toml" in t and "TOML" in t for t in texts)


async def test_builtin_textual_theme_works_too(tmp_path) -> None:
    app = make_app(scripted_session(make_repo(tmp_path), []))
    async with app.run_test(size=(120, 36)) as pilot:
        app.theme = "nord"
        await pilot.pause()
        assert app.get_css_variables()["budget-truncated"] == VARIABLE_DEFAULTS["budget-truncated"]
