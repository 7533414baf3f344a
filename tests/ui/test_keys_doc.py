"""Issue 40: the README said F2 shows or hides the panel while F2 entered the steering mode. The keys are
described once, beside their bindings (`ui/keys.py`): the README's and the manual's key tables are that
description, `/help` prints it, and F2 is bound to one action on every widget of the main screen."""

from __future__ import annotations

from pathlib import Path

from tui_agent.ui.keys import SCREEN_BINDINGS, key_label, key_rows, keys_markdown

from .support import make_app, make_repo, scripted_session
from .test_steering import notices

ROOT = Path(__file__).resolve().parents[2]


def key_table(path: Path) -> str:
    text = path.read_text(encoding="utf-8")
    start = text.index("| key | action |")
    return text[start:text.index("\n\n", start)]


def test_the_readme_and_the_manual_describe_the_keys_as_bound() -> None:
    assert key_table(ROOT / "README.md") == keys_markdown()
    assert key_table(ROOT / "docs" / "usage.md") == keys_markdown()
    described = {key for key, _ in key_rows()}
    assert {key_label(b.key) for b in SCREEN_BINDINGS if b.tooltip} <= described
    assert "F2" in described and "F4" in described


def test_f2_has_one_meaning_on_every_widget_of_the_main_screen() -> None:
    """No widget of the main screen binds F2 for itself: it falls through to the screen (show / hide)."""
    from tui_agent.ui.screens.main import MainScreen
    from tui_agent.ui.widgets.budget_panel import BudgetPanel
    from tui_agent.ui.widgets.events_list import EventsList
    from tui_agent.ui.widgets.history_rows import HistoryRows
    from tui_agent.ui.widgets.prompt_area import PromptArea
    from tui_agent.ui.widgets.tool_card import ToolCard

    actions = {b.action for b in MainScreen.BINDINGS if "f2" in b.key.split(",")}
    assert actions == {"toggle_panel"}
    for widget in (HistoryRows, BudgetPanel, EventsList, PromptArea, ToolCard):
        assert not any("f2" in b.key.split(",") for b in widget.BINDINGS if hasattr(b, "key")), widget


async def test_help_lists_every_key_with_what_it_does(tmp_path) -> None:
    app = make_app(scripted_session(make_repo(tmp_path), []))
    async with app.run_test(size=(120, 40)) as pilot:
        app.screen.prompt.load_text("/help")
        await pilot.press("enter")
        await pilot.pause()
        text = " ".join(notices(app)[-1].split())
        assert "Keys:" in text
        for key, what in key_rows():
            assert f"{key} {' '.join(what.replace('`', '').split())}" in text, key
