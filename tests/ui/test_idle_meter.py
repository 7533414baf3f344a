"""The idle policy's choice on the meter (`--idle`, `core/agent/idle_policy.py`): what it chose, what that costs
and what the others would have cost, and one quiet chat line when the choice changes. Real HTTP: the fake
Anthropic server with its prompt cache on a clock the test moves (no sleeping, no wall-clock assert)."""

from __future__ import annotations

from tests.fakes.fake_anthropic import FakeAnthropic, text
from tests.fakes.prompt_cache import MovingClock
from tests.providers.conftest import FAST_RETRY
from tests.providers.test_idle_policy import GONE, MODEL, Moves
from tui_agent.core.agent.idle_policy import install_idle_policy
from tui_agent.core.agent.session import Session
from tui_agent.core.idle import PRIOR
from tui_agent.core.providers.anthropic_provider import AnthropicProvider
from tui_agent.core.tools.base import ToolRegistry
from tui_agent.ui.widgets.budget_meter import BudgetMeter
from tui_agent.ui.widgets.notice_line import NoticeLine

from .support import frozen, make_app, make_repo, reading_tools, send, wait_for


def _chat(app) -> list[str]:
    return [n.text for n in app.screen.query(NoticeLine) if "idle" in n.text]


async def test_the_meter_says_the_idle_choice_and_the_chat_says_when_it_changes(tmp_path) -> None:
    clock = MovingClock()
    fake = FakeAnthropic(model=lambda body: text("Hi."), clock=clock)
    with fake:
        provider = AnthropicProvider(api_key="test-key", base_url=fake.base_url, model=MODEL, retry=FAST_RETRY)
        session = frozen(Session(provider, ToolRegistry(reading_tools()), make_repo(tmp_path)))
        session.state.clock = clock
        moves = Moves(clock)
        policy = install_idle_policy(session, "auto", prior=PRIOR, sleep=moves.sleep)
        app = make_app(session)
        async with app.run_test(size=(140, 44)) as pilot:
            meter = app.screen.query_one(BudgetMeter)
            await send(pilot, "hello")
            await wait_for(pilot, lambda: meter.idle_line, "the choice on the meter")
            line = meter.idle_line
            assert line.startswith("idle: ping ≈$0.0") and "(cheapest)" in line, line
            assert " · compact " in line and " · cold ≈$0.0" in line and " · back " in line
            assert line in str(meter.render())
            (said,) = _chat(app)  # the first choice is said once, in words, with the others' prices
            assert said.startswith("At the next idle moment the session keeps the prompt cache warm: ≈$0.0")
            moves.release()  # the moment comes: the same choice, acted on (a ping), nothing more said
            await wait_for(pilot, lambda: session.budget.pings == 1, "the ping")
            assert len(_chat(app)) == 1 and meter.idle_line.startswith("idle: ping ")
            policy.prior = GONE  # this person, it turns out, never comes back: the next moment lets it go cold
            moves.release()
            await wait_for(pilot, lambda: meter.idle_line.startswith("idle: cold"), "the new choice")
            await wait_for(pilot, lambda: len(_chat(app)) == 2, "its chat line")
            assert _chat(app)[1].startswith("While idle the session lets the prompt cache go cold: ≈$0.0000")
            assert not any("Stopped keeping" in n.text for n in app.screen.query(NoticeLine))  # said once, above
            app.save_screenshot(str(tmp_path / "idle.svg"))
            assert session.budget.pings == 1
    assert fake.violations == []
