"""The meter while the cache is kept warm: each ping's line above the cache clock (which starts over, warm),
the pings' cost in the session's, and one quiet chat line when warming stops. Real HTTP: the fake Anthropic
server and the SDK; the pings' waits are opened by the test."""

from __future__ import annotations

import pytest

from tests.fakes.fake_anthropic import FakeAnthropic, error_reply, text
from tests.providers.conftest import FAST_RETRY
from tests.providers.test_keep_warm import MODEL, Ticks
from tui_agent.core.agent.keep_warm import install_keep_warm
from tui_agent.core.agent.session import Session
from tui_agent.core.cache_clock import KeepWarm
from tui_agent.core.providers.anthropic_provider import AnthropicProvider
from tui_agent.core.tools.base import ToolRegistry
from tui_agent.ui.widgets.budget_meter import BudgetMeter
from tui_agent.ui.widgets.notice_line import NoticeLine

from .support import frozen, make_app, make_repo, reading_tools, send, wait_for


def _session(fake: FakeAnthropic, tmp_path) -> Session:
    provider = AnthropicProvider(api_key="test-key", base_url=fake.base_url, model=MODEL, retry=FAST_RETRY)
    return frozen(Session(provider, ToolRegistry(reading_tools()), make_repo(tmp_path)))


def _chat(app) -> list[str]:
    return [n.text for n in app.screen.query(NoticeLine)]


async def test_the_meter_shows_each_ping_and_the_chat_says_when_warming_stops(tmp_path) -> None:
    fake = FakeAnthropic(model=lambda body: text("Hi."))
    with fake:
        session = _session(fake, tmp_path)
        ticks = Ticks()
        install_keep_warm(session, keep=KeepWarm(270, 2), sleep=ticks.sleep)
        app = make_app(session, show_durations=True)
        async with app.run_test(size=(140, 44)) as pilot:
            meter = app.screen.query_one(BudgetMeter)
            await send(pilot, "hello")
            first, outlook = meter.clock_line.split("\n")
            assert first.startswith("keeps warm while idle: first ping in 4:") and first.endswith("(up to 2)")
            assert outlook.startswith("cache warm 4:"), outlook
            call_cost = session.ledger.cost
            since, price, per_token = meter._clock
            meter._clock = (since - 250, price, per_token)  # 250 s idle: the ping is due in 0:20
            meter._warm = (0, 2, 270, since - 250, None)
            meter._tick()
            assert meter.clock_line.startswith("keeps warm while idle: first ping in 0:")
            assert "\ncache warm 0:" in meter.clock_line
            ticks.tick()
            await wait_for(pilot, lambda: session.ledger.pings == 1, "the first ping")
            line = meter.clock_line
            assert line.startswith("kept warm: ping 1 of 2, next in 4:"), line
            assert "pings so far ≈$0.0" in line
            assert "\ncache warm 4:" in line or "\ncache warm 5:" in line  # the outlook agrees: warm again
            assert line.split("\n")[0] in str(meter.render())
            assert session.ledger.cost > call_cost  # the header's session cost counts the ping
            ticks.tick()
            await wait_for(pilot, lambda: any("Stopped keeping" in t for t in _chat(app)), "the stop line")
            assert session.ledger.pings == 2
            assert not meter.clock_line.startswith("kept warm")  # warming over: the clock alone
            assert "cache warm" in meter.clock_line
            (stopped,) = [t for t in _chat(app) if "Stopped keeping" in t]
            assert "after 2 pings" in stopped
            # what they cost stays on the meter (pings after the last call are real money too)
            usd = session.ledger.ping_cost
            assert meter.pings_line == f"keep-warm pings: 2 so far ≈${usd:.4f} (in the session cost)" and usd > 0
            assert meter.pings_line in str(meter.render())
            await send(pilot, "back again")  # armed anew: no ping of this stretch yet, the cost so far stays said
            assert meter.clock_line.startswith("keeps warm while idle: first ping in")
            assert meter.pings_line.startswith("keep-warm pings: 2 so far")
    assert fake.violations == []


async def test_a_failed_ping_is_one_quiet_chat_line(tmp_path) -> None:
    fake = FakeAnthropic(replies=[text("Hi."), error_reply(500, "api_error", "Internal server error")],
                         model=lambda body: text("Again."))
    with fake:
        session = _session(fake, tmp_path)
        ticks = Ticks()
        install_keep_warm(session, keep=KeepWarm(270, 3), sleep=ticks.sleep)
        app = make_app(session, show_durations=True)
        async with app.run_test(size=(140, 44)) as pilot:
            await send(pilot, "hello")
            ticks.tick()
            await wait_for(pilot, lambda: any("a ping failed" in t for t in _chat(app)), "the failure line")
            lines = [n for n in app.screen.query(NoticeLine) if "ping failed" in n.text]
            assert len(lines) == 1 and lines[0].level == "info" and "500" in lines[0].text
            await send(pilot, "still there?")
            assert len(fake.message_requests) == 3


def _money(line: str) -> str:
    return line.split("≈$", 1)[1].split(")")[0].split(" ")[0]


async def test_no_caching_no_line_says_anything_is_cached(tmp_path) -> None:
    """Issue 40: "cached ≈49.2k · next call ≈$0.0050" above "nothing cached … ≈$0.0983". A server that reports
    no caching: the next call's figures, the clock line and the rows all say nothing is cached, one price."""
    from tui_agent.ui.widgets.budget_panel import BudgetPanel

    fake = FakeAnthropic(model=lambda body: text("Hi."), caching=False)
    with fake:
        session = _session(fake, tmp_path)
        ticks = Ticks()
        install_keep_warm(session, keep=KeepWarm(270, 2), sleep=ticks.sleep)
        app = make_app(session, show_durations=True)
        async with app.run_test(size=(140, 44)) as pilot:
            meter = app.screen.query_one(BudgetMeter)
            await send(pilot, "hello")
            await send(pilot, "and again")
            await wait_for(pilot, lambda: meter.meter is not None and meter.meter.call is None, "the next call")
            figures = meter.meter
            assert figures.cached == 0 and figures.new == figures.total > 0
            assert figures.cost.units == pytest.approx(figures.total)  # every token sent uncached, none written
            rendered = str(meter.render())
            assert "cached ≈0" in rendered and "nothing cached" in meter.clock_line
            assert _money(meter.clock_line) == figures.cost.text().lstrip("≈$")  # one price, said twice
            view = app.screen.query_one(BudgetPanel).rows.view
            assert not any(view.in_cache(i) for i in range(len(session.history)))
            assert not meter.clock_line.startswith("keeps warm") and session.ledger.pings == 0
    assert len(fake.message_requests) == 2 and fake.violations == []


async def test_the_meter_clock_runs_from_when_the_call_was_sent(tmp_path) -> None:
    """The answer took a while: the cache clock (and the first ping's countdown) starts from the request."""
    import time

    def slow(body):
        time.sleep(0.6)  # the model answers after the prefix was read and written
        return text("Hi.")

    fake = FakeAnthropic(replies=[slow], model=lambda body: text("x"))
    with fake:
        session = _session(fake, tmp_path)
        install_keep_warm(session, keep=KeepWarm(270, 2), sleep=Ticks().sleep)
        app = make_app(session, show_durations=True)
        async with app.run_test(size=(140, 44)) as pilot:
            meter = app.screen.query_one(BudgetMeter)
            await send(pilot, "hello")
            answered = time.monotonic()
            since = meter._clock[0]
            assert since == session.state.warm_since and answered - since >= 0.6
            assert meter._warm is not None and meter._warm[3] == since


async def test_under_the_auto_idle_policy_the_pings_are_a_ceiling_not_a_plan(tmp_path) -> None:
    """`--idle auto` prices each ping when it is due: "(up to 13)" read as thirteen pings coming. The meter
    now says each comes only if it is the cheapest, once the policy's first choice is known."""
    from tests.fakes.prompt_cache import MovingClock
    from tests.providers.test_idle_policy import Moves
    from tui_agent.core.agent.idle_policy import install_idle_policy
    from tui_agent.core.idle import PRIOR

    clock = MovingClock()
    fake = FakeAnthropic(model=lambda body: text("Hi."), clock=clock)
    with fake:
        session = _session(fake, tmp_path)
        session.state.clock = clock
        install_idle_policy(session, "auto", prior=PRIOR, sleep=Moves(clock).sleep)
        app = make_app(session, show_durations=True)
        async with app.run_test(size=(140, 44)) as pilot:
            meter = app.screen.query_one(BudgetMeter)
            await send(pilot, "hello")
            await wait_for(pilot, lambda: meter.idle_line, "the policy's first choice")
            meter._tick()
            first = meter.clock_line.split("\n")[0]
            assert first.startswith("keeps warm while idle: first ping in ") and \
                first.endswith(", each only if the cheapest)"), first
    assert fake.violations == []
