"""The title's session price and the panel's agree after every model call (issue 28: the title lagged the
panel by one call), against the fake Anthropic API over real HTTP with the real SDK."""

from __future__ import annotations

from tests.fakes.fake_anthropic import FakeAnthropic, text, tool_use
from tui_agent.core import events as ev
from tui_agent.core.agent.session import Session
from tui_agent.core.providers.anthropic_provider import AnthropicProvider
from tui_agent.core.tools import ToolRegistry
from tui_agent.core.tools.read import ReadTool
from tui_agent.ui.widgets.budget_panel import BudgetPanel

from .support import make_app, make_repo, send

PRICED = "claude-sonnet-4-5-20250929"


def title_price(screen) -> str:
    return screen.sub_title.rsplit(" · ", 1)[-1]


def header_price(app) -> str:
    """The price the header draws (its rendered sub-title; Textual redraws it from the screen's soon after)."""
    from textual.widgets._header import HeaderTitle

    return str(app.screen.query_one(HeaderTitle).render()).rsplit(" · ", 1)[-1].strip()


def panel_price(panel: BudgetPanel) -> str:
    return str(panel.query_one("#budget-title").render()).rsplit("session ", 1)[-1].strip()


async def test_title_and_panel_show_the_same_session_price_after_each_call(tmp_path) -> None:
    repo = make_repo(tmp_path)
    replies = [tool_use("Read", {"file_path": "src/app.py"}, "toolu_1", "Reading."), text("It serves."),
               tool_use("Read", {"file_path": "README.md"}, "toolu_2"), text("A demo.")]
    with FakeAnthropic(replies=replies) as fake:
        provider = AnthropicProvider(api_key="test-key", base_url=fake.base_url, model=PRICED)
        session = Session(provider, ToolRegistry([ReadTool()]), repo)
        app = make_app(session)
        seen: list[tuple[int, str, str, str]] = []  # per call: (call, title, panel, ledger) once drawn
        async with app.run_test(size=(160, 45)) as pilot:
            screen = app.screen
            panel = screen.query_one(BudgetPanel)

            def after_usage(event: object) -> None:
                if isinstance(event, (ev.CompactionReported, ev.TurnEnded)):  # the next call goes out
                    seen.append((len(fake.message_requests), title_price(screen), panel_price(panel), panel.cost_text))

            session.listeners.append(after_usage)
            for prompt in ("what does the app do?", "and the readme?"):
                await send(pilot, prompt)
                await pilot.pause()
                assert header_price(app) == title_price(screen) == panel_price(panel) == panel.cost_text != ""
        await session.aclose()
    assert fake.violations == []
    # looked at when each call goes out and when each turn ends: every earlier call's usage is drawn by then
    assert [made for made, *_ in seen] == [0, 1, 2, 2, 3, 4]
    for made, in_title, in_panel, ledger in seen[1:]:
        assert in_title == in_panel == ledger, f"after {made} calls: title {in_title}, panel {in_panel}, ledger {ledger}"
